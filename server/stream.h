// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Streams produced in turns (gr_api_stream_start()): what the transports
// call. A client has one at most (its next requests wait for its end),
// hanging off ctx->stream. Its serving thread runs the producer's turns,
// under the handler lock, when the client has room; whoever frees the
// client releases a stream left unfinished.

#pragma once

#include "api.h"

#include <stdbool.h>

// Whether the client has a stream still to produce. Its serving thread.
static inline bool api_stream_active(const struct gr_api_ctx *ctx) {
	return ctx->stream != NULL;
}

// Run one turn of the client's stream: the producer sends until
// gr_api_send() answers -EAGAIN (the turn's bound, or ctx->stream_full set
// by the transport). A producer done (or failed) ends the stream: its state
// is released and its end sent. Handler lock held, the client's serving
// thread, ctx->stream not NULL. Returns 0, or the transport's -errno if
// sending the end failed (the transport closed the client).
int api_stream_turn_locked(struct gr_api_ctx *ctx);

// The client is gone: release its stream's state, if it has one. The
// thread that frees the client, once no other thread serves it; the handler
// lock not held (it takes it).
void api_stream_close(struct gr_api_ctx *ctx);
