// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The API trace and its requests: GR_SHM_TRACE_SET, _DUMP and _INFO.

#include "trace.h"
#include "config.h"
#include "type_stats.h"

#include <rte_cycles.h>

#include <gr_shm.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool trace_recording;

// The ring (handler lock): entries[head] is written next; held entries end
// there, the oldest at (head - held) modulo size.
static struct {
	struct gr_shm_trace_entry *entries; // size of them, NULL until first on
	unsigned size;
	unsigned head;
	unsigned held;
	uint64_t recorded;
	bool capture;
} trace;

// Whether type is a request of the trace itself: those are not recorded,
// so that a dump shows the traffic it was switched on for.
static bool trace_own_type(uint32_t type) {
	return type == GR_SHM_TRACE_SET || type == GR_SHM_TRACE_DUMP || type == GR_SHM_TRACE_INFO;
}

// The entry to write next, the oldest overwritten when the ring is full.
static struct gr_shm_trace_entry *trace_next(void) {
	struct gr_shm_trace_entry *e = &trace.entries[trace.head];

	trace.head = (trace.head + 1) % trace.size;
	if (trace.held < trace.size)
		trace.held++;
	trace.recorded++;
	return e;
}

static void entry_client(struct gr_shm_trace_entry *e, const struct gr_api_ctx *ctx) {
	e->pid = ctx->peer_pid;
	e->transport = ctx->sock_fd < 0 ? GR_SHM_TRANSPORT_SHM : GR_SHM_TRANSPORT_SOCKET;
}

void trace_record_locked(
	const struct gr_api_ctx *ctx,
	const struct gr_api_request *req,
	const void *payload,
	uint32_t status,
	uint32_t resp_len,
	uint32_t flags,
	uint64_t taken,
	uint64_t start,
	uint64_t end
) {
	struct gr_shm_trace_entry *e;
	uint32_t captured;

	if (trace_own_type(req->type))
		return;
	e = trace_next();
	e->time_ns = tsc_to_epoch_ns(taken);
	entry_client(e, ctx);
	e->id = req->id;
	e->type = req->type;
	e->req_len = req->payload_len;
	e->status = status;
	e->resp_len = resp_len;
	e->responses = ctx->responses;
	e->handle_ns = tsc_to_ns(end - start);
	e->queue_ns = tsc_to_ns(start - taken);
	captured = 0;
	if (trace.capture && payload != NULL) {
		captured = req->payload_len < GR_SHM_TRACE_CAPTURE_LEN ? req->payload_len
								       : GR_SHM_TRACE_CAPTURE_LEN;
		memcpy(e->payload, payload, captured);
		flags |= GR_SHM_TRACE_CAPTURED;
	} else if (trace.capture) {
		flags |= GR_SHM_TRACE_CAPTURED; // an empty payload, captured whole
	}
	// What an overwritten entry held of another request's payload goes.
	memset(e->payload + captured, 0, sizeof(e->payload) - captured);
	e->captured_len = captured;
	e->flags = flags;
}

void trace_reply_locked(
	const struct gr_api_ctx *ctx,
	uint32_t id,
	uint32_t type,
	uint32_t status,
	uint32_t len
) {
	struct gr_shm_trace_entry *e = trace_next();

	memset(e, 0, sizeof(*e));
	e->time_ns = tsc_to_epoch_ns(rte_rdtsc());
	entry_client(e, ctx);
	e->id = id;
	e->type = type;
	e->status = status;
	e->resp_len = len;
	e->responses = 1;
	e->flags = GR_SHM_TRACE_REPLY;
}

void trace_fini(void) {
	api_lock();
	trace_recording = false;
	free(trace.entries);
	memset(&trace, 0, sizeof(trace));
	api_unlock();
}

// Whether ctx's client may switch or read the trace: root, or the server's
// own uid (its payloads may hold what only they may see). Else recorded
// as a fault, logged after the lock.
static bool trace_allowed(struct gr_api_ctx *ctx, uint32_t type) {
	if (ctx->peer_uid == 0 || ctx->peer_uid == geteuid())
		return true;
	api_fault(ctx, API_FAULT_TRACE_DENIED, NULL, type, (uint32_t)ctx->peer_uid);
	return false;
}

static struct gr_api_out trace_set(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct gr_shm_trace_set_req *req = request;

	(void)len;
	if (!trace_allowed(ctx, GR_SHM_TRACE_SET))
		return gr_api_out(EPERM, 0, NULL);
	if (req->flags & ~GR_SHM_TRACE_FLAGS)
		return gr_api_out(EINVAL, 0, NULL);
	if (server_conf.trace_size == 0)
		return gr_api_out(ENOTSUP, 0, NULL);
	if (trace.entries == NULL && (req->flags & GR_SHM_TRACE_ON)) {
		// Bounded by GR_API_SERVER_TRACE_SIZE_MAX entries (config.c).
		trace.entries = calloc(server_conf.trace_size, sizeof(*trace.entries));
		if (trace.entries == NULL)
			return gr_api_out(ENOMEM, 0, NULL);
		trace.size = server_conf.trace_size;
	}
	if (req->flags & GR_SHM_TRACE_CLEAR) {
		trace.head = 0;
		trace.held = 0;
	}
	trace.capture = (req->flags & GR_SHM_TRACE_CAPTURE) != 0;
	trace_recording = (req->flags & GR_SHM_TRACE_ON) != 0;
	api_fault_text(
		ctx,
		API_FAULT_TRACE_SET,
		"API trace %s%s%s (uid %u)",
		trace_recording ? "on" : "off",
		trace.capture ? ", payload capture on" : "",
		req->flags & GR_SHM_TRACE_CLEAR ? ", cleared" : "",
		(unsigned)ctx->peer_uid
	);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out trace_dump(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	unsigned first;
	int ret;

	(void)request;
	(void)len;
	if (!trace_allowed(ctx, GR_SHM_TRACE_DUMP))
		return gr_api_out(EPERM, 0, NULL);
	if (trace.held == 0)
		return gr_api_out(0, 0, NULL);
	first = (trace.head + trace.size - trace.held) % trace.size;
	for (unsigned i = 0; i < trace.held; i++) {
		ret = gr_api_send(
			ctx,
			sizeof(struct gr_shm_trace_entry),
			&trace.entries[(first + i) % trace.size]
		);
		if (ret < 0)
			return gr_api_out(-ret, 0, NULL);
	}
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out trace_info(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_shm_trace_info *info = calloc(1, sizeof(*info));

	(void)request;
	(void)len;
	(void)ctx;
	if (info == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	info->flags = (trace_recording ? GR_SHM_TRACE_ON : 0) |
		      (trace.capture ? GR_SHM_TRACE_CAPTURE : 0);
	info->size = server_conf.trace_size;
	info->recorded = trace.recorded;
	info->held = trace.held;
	info->entry_len = sizeof(struct gr_shm_trace_entry);
	return gr_api_out(0, sizeof(*info), info);
}

static struct gr_api_handler trace_handlers[] = {
	GR_API_HANDLER_INIT(GR_SHM_TRACE_SET, trace_set),
	GR_API_HANDLER_INIT(GR_SHM_TRACE_DUMP, trace_dump),
	GR_API_HANDLER_INIT(GR_SHM_TRACE_INFO, trace_info),
};
API_HANDLER_TABLE(handlers_trace, trace_handlers);
