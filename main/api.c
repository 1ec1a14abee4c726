// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Handler registry and dispatch, shared by every transport.
//
// Concurrency: the registry is written only by constructors (before main)
// and by tests before they dispatch, then only read. Dispatch runs on the
// main thread (socket clients) and on the poller threads (channels); every
// handler, and every response a transport sends, runs under handler_lock, so
// two handlers never run at once and a handler written for the socket is
// correct on a channel.

#include "api.h"
#include "shmchand.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

// The registry: an open-addressing hash table of request types, at most
// half full, so a lookup ends after one or two probes on average (the first
// empty slot ends a miss).
#define HANDLER_SLOTS (2 * API_HANDLERS_MAX)
#define HANDLER_SLOT_BITS 9
_Static_assert(HANDLER_SLOTS == 1u << HANDLER_SLOT_BITS, "the hash yields a slot index");

static const struct api_handler *handlers[HANDLER_SLOTS];
// The client pid of the request whose handler this thread runs.
static __thread pid_t current_pid;
static unsigned n_handlers;

// Held while a handler runs and while any response is sent.
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;

// Fibonacci hashing: the types of one module differ in their low bits only,
// and the multiply spreads them over the top bits kept.
static unsigned handler_slot(uint32_t request_type) {
	return (uint32_t)(request_type * 2654435761u) >> (32 - HANDLER_SLOT_BITS);
}

void api_handler_register(struct api_handler *handler) {
	const struct api_handler *other = api_handler_lookup(handler->request_type);
	unsigned slot;

	if (other != NULL) {
		LOG(CRIT,
		    "%s and %s both claim request type 0x%08x",
		    other->name,
		    handler->name,
		    handler->request_type);
		abort();
	}
	if (n_handlers >= API_HANDLERS_MAX) {
		LOG(CRIT,
		    "%s: more than %u request handlers (API_HANDLERS_MAX)",
		    handler->name,
		    API_HANDLERS_MAX);
		abort();
	}
	slot = handler_slot(handler->request_type);
	while (handlers[slot] != NULL)
		slot = (slot + 1) % HANDLER_SLOTS;
	handlers[slot] = handler;
	n_handlers++;
}

const struct api_handler *api_handler_lookup(uint32_t request_type) {
	const struct api_handler *handler;
	unsigned slot = handler_slot(request_type);

	// Ends: the table always has empty slots (at most half full).
	while ((handler = handlers[slot]) != NULL) {
		if (handler->request_type == request_type)
			return handler;
		slot = (slot + 1) % HANDLER_SLOTS;
	}
	return NULL;
}

pid_t api_current_pid(void) {
	return current_pid;
}

unsigned api_handler_count(void) {
	return n_handlers;
}

int api_check_header(const struct gr_api_request *req) {
	if (req->payload_len > GR_API_MAX_MSG_LEN)
		return -EMSGSIZE;
	return 0;
}

// Send one response. Caller holds handler_lock.
static int send_locked(struct api_ctx *ctx, uint32_t for_id, const struct api_out *out) {
	return ctx->transport->send(ctx, for_id, out);
}

int api_reject_locked(struct api_ctx *ctx, uint32_t for_id, uint32_t status) {
	struct api_out out = api_out(status, 0, NULL);
	return send_locked(ctx, for_id, &out);
}

void api_lock(void) {
	pthread_mutex_lock(&handler_lock);
}

void api_unlock(void) {
	pthread_mutex_unlock(&handler_lock);
}

int api_reject(struct api_ctx *ctx, uint32_t for_id, uint32_t status) {
	int ret;

	pthread_mutex_lock(&handler_lock);
	ret = api_reject_locked(ctx, for_id, status);
	pthread_mutex_unlock(&handler_lock);
	return ret;
}

int api_send(struct api_ctx *ctx, uint32_t len, const void *payload) {
	// The transport copies the payload before returning.
	struct api_out out = api_out_borrowed(0, len, payload);
	return send_locked(ctx, ctx->req_id, &out);
}

int api_dispatch_locked(
	struct api_ctx *ctx,
	const struct gr_api_request *req,
	const void *payload
) {
	const struct api_handler *handler;
	struct api_out out;
	int ret;

	if (!ctx->hello_done && req->type != GR_HELLO) {
		LOG(INFO,
		    "%s client pid %d: request type 0x%08x before GR_HELLO",
		    ctx->transport->name,
		    (int)ctx->peer_pid,
		    req->type);
		return api_reject_locked(ctx, req->id, EPERM);
	}
	handler = api_handler_lookup(req->type);
	if (handler == NULL) {
		LOG(DEBUG,
		    "%s client pid %d: unknown request type 0x%08x",
		    ctx->transport->name,
		    (int)ctx->peer_pid,
		    req->type);
		return api_reject_locked(ctx, req->id, ENOTSUP);
	}
	if (req->payload_len < handler->request_len) {
		LOG(INFO,
		    "%s client pid %d: %s payload is %u bytes, expected at least %u",
		    ctx->transport->name,
		    (int)ctx->peer_pid,
		    handler->name,
		    req->payload_len,
		    handler->request_len);
		return api_reject_locked(ctx, req->id, EMSGSIZE);
	}

	ctx->req_id = req->id;
	current_pid = ctx->peer_pid;
	out = handler->callback(payload, req->payload_len, ctx);
	current_pid = 0;
	ret = send_locked(ctx, req->id, &out);
	if (!out.borrowed)
		free(out.payload);
	return ret;
}

int api_dispatch(struct api_ctx *ctx, const struct gr_api_request *req, const void *payload) {
	int ret;

	pthread_mutex_lock(&handler_lock);
	ret = api_dispatch_locked(ctx, req, payload);
	pthread_mutex_unlock(&handler_lock);
	return ret;
}
