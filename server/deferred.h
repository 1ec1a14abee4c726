// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Deferred replies (gr_api_defer(), gr_api_deferred_reply()): what the
// transports call. A client's requests kept open hang off its struct
// deferred_client, made at its first gr_api_defer(). A reply, from any
// thread, is queued there and the client's serving thread is woken
// (transport->deferred_wake); that thread sends it at its next turn
// (api_deferred_flush()). Every structure here is guarded by one leaf
// lock, never held across a call into anything else but the wake.

#pragma once

#include "api.h"

#include <stdatomic.h>
#include <stdbool.h>

struct gr_api_deferred;

struct deferred_client {
	// The client, NULL once it is gone (api_deferred_close()).
	struct gr_api_ctx *ctx;
	// One for the client until api_deferred_release(), one per handle
	// not freed yet.
	unsigned refs;
	// Handles not sent yet: open, or answered and queued.
	unsigned open;
	// Answered, waiting for the serving thread, oldest first.
	struct gr_api_deferred *done_head;
	struct gr_api_deferred **done_tail;
	// done_head is not NULL: what the serving thread reads without the
	// lock to know whether to flush.
	atomic_bool pending;
};

// Whether the client has replies to send: the serving thread's cheap
// check, with no lock.
static inline bool api_deferred_pending(const struct gr_api_ctx *ctx) {
	const struct deferred_client *dc = ctx->deferred;

	return dc != NULL && atomic_load_explicit(&dc->pending, memory_order_acquire);
}

// Send the client's queued replies. Its serving thread, the handler lock
// not held (it takes it). Returns the number sent (or dropped: the
// client failed meanwhile).
unsigned api_deferred_flush(struct gr_api_ctx *ctx);

// The client is gone: no more handles for it, its queued replies are
// dropped, and its open ones will answer -ECONNRESET. Any thread; after
// it, the transport's deferred_wake is no longer called for ctx.
void api_deferred_close(struct gr_api_ctx *ctx);

// Drop the client's reference, once no thread reads ctx->deferred any more
// (after api_deferred_close()). Its serving thread, or after the grace
// period that ends every read.
void api_deferred_release(struct gr_api_ctx *ctx);

// Handles open in all, for the server's counters.
unsigned api_deferred_open(void);
