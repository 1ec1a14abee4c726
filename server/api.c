// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Handler registry and dispatch, shared by every transport.
//
// Concurrency: the registry is written under handler_lock (by the
// application's registrations, on any thread, constructors included, and by
// the server's start and stop) and read under it by every dispatch.
// Dispatch runs on the socket's thread (socket clients) and on the poller
// threads (channels); every handler, and every response a transport sends,
// runs under handler_lock, so two handlers never run at once and a handler
// written for the socket is correct on a channel. Nothing a client can
// repeat is logged under handler_lock: its faults are counted in its
// gr_api_ctx and logged after the lock is released (api_faults_log(),
// api_fault.c), at a bounded rate.

#include "api.h"
#include "stream.h"
#include "config.h"
#include "trace.h"
#include "type_stats.h"

#include <rte_branch_prediction.h>
#include <rte_cycles.h>

#include <shmchan_probes.h>

#include <gr_shm.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The registry: an open-addressing hash table of request types, at most
// half full, so a lookup ends after one or two probes on average (the first
// empty slot ends a miss).
#define HANDLER_SLOTS (2 * GR_API_SERVER_HANDLERS_MAX)
#define HANDLER_SLOT_BITS 9
_Static_assert(HANDLER_SLOTS == 1u << HANDLER_SLOT_BITS, "the hash yields a slot index");

static const struct gr_api_handler *handlers[HANDLER_SLOTS];
// The index in registered[] of the handler of each slot of handlers[].
static uint16_t handler_index[HANDLER_SLOTS];
_Static_assert(GR_API_SERVER_HANDLERS_MAX <= UINT16_MAX + 1, "an index fits handler_index");
// Every handler registered, in order, whether the server's own, and its
// figures: the table is rebuilt from it when those are dropped
// (api_tables_drop()).
static struct {
	const struct gr_api_handler *handler;
	bool own;
	struct type_stats stats;
} registered[GR_API_SERVER_HANDLERS_MAX];
static unsigned n_handlers;
// The client whose request this thread's handler serves, NULL outside a
// handler; and whether this thread holds handler_lock, and whether it took
// it through gr_api_server_lock(). Set and cleared around every handler and
// every hold of the lock: initial-exec, a load and a store relative to the
// thread pointer, where the default model of a shared library calls
// __tls_get_addr() each time (16 bytes of the static TLS reserve that the
// loader keeps for libraries, whether linked or opened with dlopen()).
static __thread struct gr_api_ctx *current_ctx __attribute__((tls_model("initial-exec")));
static __thread bool lock_held __attribute__((tls_model("initial-exec")));
static __thread bool app_lock_held __attribute__((tls_model("initial-exec")));

// The server's own tables (api_tables_reserve()): their request types are
// refused to the application's handlers, whether the server runs or not.
static const struct api_handler_table *const *reserved_tables;
static unsigned n_reserved_tables;

// A misuse of the API by the application, logged at most once per
// LOG_LIMIT_INTERVAL_MS per thread and kind (a handler may repeat it for
// every request): its own limit per thread, so that no lock is needed.
static __thread struct log_limit misuse_limits[API_MISUSES];

// The first registration from a constructor that failed (GR_API_HANDLER),
// for gr_api_server_start() to report, and how many did.
static struct {
	const char *name;
	uint32_t request_type;
	int error;
	unsigned failures;
} ctor_failure;

// Held while a handler runs and while any response is sent.
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;

// Fibonacci hashing: the types of one module differ in their low bits only,
// and the multiply spreads them over the top bits kept.
static unsigned handler_slot(uint32_t request_type) {
	return (uint32_t)(request_type * 2654435761u) >> (32 - HANDLER_SLOT_BITS);
}

static void slot_put(const struct gr_api_handler *handler, unsigned index) {
	unsigned slot = handler_slot(handler->request_type);

	while (handlers[slot] != NULL)
		slot = (slot + 1) % HANDLER_SLOTS;
	handlers[slot] = handler;
	handler_index[slot] = (uint16_t)index;
}

void api_misuse(enum api_misuse kind, const char *fmt, ...) {
	struct log_limit *limit = &misuse_limits[kind];
	char line[API_MISUSE_LINE_LEN];
	va_list ap;
	uint64_t n;

	log_limit_count(limit);
	n = log_limit_due(limit, log_limit_now_ns(), false);
	if (n == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n == 1)
		LOG(ERR, "%s", line);
	else
		LOG(ERR,
		    "%s (and %" PRIu64 " more such calls on this thread since the last line)",
		    line,
		    n - 1);
}

void api_tables_reserve(const struct api_handler_table *const *tables, unsigned n) {
	reserved_tables = tables;
	n_reserved_tables = n;
}

// The server's own handler of request_type, NULL if the type is not one
// the server serves itself.
static const struct gr_api_handler *reserved_lookup(uint32_t request_type) {
	for (unsigned t = 0; t < n_reserved_tables; t++)
		for (unsigned i = 0; i < reserved_tables[t]->n; i++)
			if (reserved_tables[t]->handlers[i].request_type == request_type)
				return &reserved_tables[t]->handlers[i];
	return NULL;
}

static void table_rebuild_locked(void);

// handler_lock held.
static int register_locked(struct gr_api_handler *handler, bool own) {
	const struct gr_api_handler *other;

	if (handler == NULL || handler->name == NULL || handler->callback == NULL) {
		LOG(ERR, "a handler needs a name and a callback");
		return -EINVAL;
	}
	if (handler->request_len > GR_API_MAX_MSG_LEN) {
		LOG(ERR,
		    "%s: request_len %u is above GR_API_MAX_MSG_LEN (%u): no request could reach "
		    "it",
		    handler->name,
		    handler->request_len,
		    GR_API_MAX_MSG_LEN);
		return -EINVAL;
	}
	other = own ? NULL : reserved_lookup(handler->request_type);
	if (other != NULL) {
		LOG(ERR,
		    "%s: request type 0x%08x is %s, which the server serves itself: refused",
		    handler->name,
		    handler->request_type,
		    other->name);
		return -EEXIST;
	}
	other = api_handler_lookup(handler->request_type);
	if (other != NULL) {
		LOG(ERR,
		    "%s and %s both claim request type 0x%08x",
		    other->name,
		    handler->name,
		    handler->request_type);
		return -EEXIST;
	}
	if (n_handlers >= GR_API_SERVER_HANDLERS_MAX) {
		LOG(ERR,
		    "%s: more than %u request handlers (GR_API_SERVER_HANDLERS_MAX)",
		    handler->name,
		    GR_API_SERVER_HANDLERS_MAX);
		return -ENOSPC;
	}
	slot_put(handler, n_handlers);
	registered[n_handlers].handler = handler;
	registered[n_handlers].own = own;
	memset(&registered[n_handlers].stats, 0, sizeof(registered[n_handlers].stats));
	n_handlers++;
	return 0;
}

GR_API_EXPORT int gr_api_server_handler_register(struct gr_api_handler *handler) {
	int ret;

	if (lock_held) {
		api_misuse(
			API_MISUSE_REGISTER,
			"gr_api_server_handler_register(%s) %s: refused (EDEADLK)",
			handler != NULL && handler->name != NULL ? handler->name : "NULL",
			api_lock_holder()
		);
		return -EDEADLK;
	}
	api_lock();
	ret = register_locked(handler, false);
	api_unlock();
	return ret;
}

// handler_lock held: the index of the handler of request_type in
// registered[], or -1.
static int registered_index(uint32_t request_type) {
	for (unsigned i = 0; i < n_handlers; i++)
		if (registered[i].handler->request_type == request_type)
			return (int)i;
	return -1;
}

GR_API_EXPORT int gr_api_server_handler_unregister(uint32_t request_type) {
	const struct gr_api_handler *own;
	int i, ret = 0;

	if (lock_held) {
		api_misuse(
			API_MISUSE_REGISTER,
			"gr_api_server_handler_unregister(0x%08x) %s: refused (EDEADLK)",
			request_type,
			api_lock_holder()
		);
		return -EDEADLK;
	}
	own = reserved_lookup(request_type);
	if (own != NULL) {
		LOG(ERR,
		    "request type 0x%08x is %s, which the server serves itself: not"
		    " unregistered (EPERM)",
		    request_type,
		    own->name);
		return -EPERM;
	}
	api_lock();
	i = registered_index(request_type);
	if (i < 0) {
		ret = -ENOENT;
	} else {
		// Keep the order of registration: the type list reads it.
		memmove(&registered[i],
			&registered[i + 1],
			(n_handlers - (unsigned)i - 1) * sizeof(registered[0]));
		n_handlers--;
		// Open addressing: a slot emptied in place would cut the probe
		// chains that pass through it.
		table_rebuild_locked();
	}
	api_unlock();
	if (ret == -ENOENT)
		LOG(ERR,
		    "gr_api_server_handler_unregister(0x%08x): no handler of that type (ENOENT)",
		    request_type);
	return ret;
}

unsigned api_handlers_copy(struct api_handler_entry *entries, unsigned max) {
	unsigned n = n_handlers < max ? n_handlers : max;

	for (unsigned i = 0; i < n; i++) {
		entries[i].handler = registered[i].handler;
		entries[i].own = registered[i].own;
	}
	return n;
}

GR_API_EXPORT void __gr_api_server_handler_register_ctor(struct gr_api_handler *handler) {
	int ret = gr_api_server_handler_register(handler);

	if (ret == 0)
		return;
	if (ctor_failure.failures++ > 0)
		return;
	ctor_failure.name = handler != NULL ? handler->name : NULL;
	ctor_failure.request_type = handler != NULL ? handler->request_type : 0;
	ctor_failure.error = ret;
}

int api_ctor_error(void) {
	if (ctor_failure.failures == 0)
		return 0;
	LOG(ERR,
	    "handler %s of request type 0x%08x, registered by a constructor (GR_API_HANDLER),"
	    " failed: %s%s",
	    ctor_failure.name != NULL ? ctor_failure.name : "(none)",
	    ctor_failure.request_type,
	    strerror(-ctor_failure.error),
	    ctor_failure.failures > 1 ? " (and more after it: see the lines above)" : "");
	return ctor_failure.error;
}

// handler_lock held: rebuild the table from what is left in registered[].
static void table_rebuild_locked(void) {
	memset(handlers, 0, sizeof(handlers));
	for (unsigned i = 0; i < n_handlers; i++)
		slot_put(registered[i].handler, i);
}

// handler_lock held: drop the server's own handlers registered from index
// from on.
static void drop_own_locked(unsigned from) {
	unsigned kept = from;

	for (unsigned i = from; i < n_handlers; i++)
		if (!registered[i].own)
			registered[kept++] = registered[i];
	n_handlers = kept;
	table_rebuild_locked();
}

int api_table_register(const struct api_handler_table *table) {
	unsigned from;
	int ret = 0;

	api_lock();
	from = n_handlers;
	for (unsigned i = 0; i < table->n && ret == 0; i++)
		ret = register_locked(&table->handlers[i], true);
	if (ret < 0)
		drop_own_locked(from);
	api_unlock();
	return ret;
}

void api_tables_drop(void) {
	api_lock();
	drop_own_locked(0);
	api_unlock();
}

// A NULL ctx given to an accessor: said, and answered as "unknown".
static void ctx_null(const char *call) {
	api_misuse(API_MISUSE_ARGUMENT, "%s(NULL): no client", call);
}

GR_API_EXPORT pid_t gr_api_ctx_pid(const struct gr_api_ctx *ctx) {
	if (ctx == NULL) {
		ctx_null(__func__);
		return 0;
	}
	return ctx->peer_pid;
}

GR_API_EXPORT uid_t gr_api_ctx_uid(const struct gr_api_ctx *ctx) {
	if (ctx == NULL) {
		ctx_null(__func__);
		return (uid_t)-1;
	}
	return ctx->peer_uid;
}

GR_API_EXPORT gid_t gr_api_ctx_gid(const struct gr_api_ctx *ctx) {
	if (ctx == NULL) {
		ctx_null(__func__);
		return (gid_t)-1;
	}
	return ctx->peer_gid;
}

// The slot of request_type's handler in handlers[], -1 if none.
static int slot_lookup(uint32_t request_type) {
	const struct gr_api_handler *handler;
	unsigned slot = handler_slot(request_type);

	// Ends: the table always has empty slots (at most half full).
	while ((handler = handlers[slot]) != NULL) {
		if (handler->request_type == request_type)
			return (int)slot;
		slot = (slot + 1) % HANDLER_SLOTS;
	}
	return -1;
}

const struct gr_api_handler *api_handler_lookup(uint32_t request_type) {
	int slot = slot_lookup(request_type);

	return slot < 0 ? NULL : handlers[slot];
}

const struct gr_api_handler *api_handler_at(unsigned i, const struct type_stats **stats) {
	if (i >= n_handlers)
		return NULL;
	*stats = &registered[i].stats;
	return registered[i].handler;
}

void api_type_stats_reset(void) {
	api_lock();
	for (unsigned i = 0; i < n_handlers; i++)
		memset(&registered[i].stats, 0, sizeof(registered[i].stats));
	api_unlock();
}

void api_type_reply_locked(uint32_t request_type, uint32_t status) {
	int slot = slot_lookup(request_type);

	// Its handler may be gone since it deferred (a stop dropped it).
	if (slot >= 0 && status != 0)
		registered[handler_index[slot]].stats.errors++;
}

pid_t api_current_pid(void) {
	return current_ctx != NULL ? current_ctx->peer_pid : 0;
}

struct gr_api_ctx *api_current_ctx(void) {
	return current_ctx;
}

void api_current_set(struct gr_api_ctx *ctx) {
	current_ctx = ctx;
}

unsigned api_handler_count(void) {
	return n_handlers;
}

// Send one response. Caller holds handler_lock.
static int send_locked(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	int ret = ctx->transport->send(ctx, for_id, out);

	ctx->responses++;
	SHMCHAN_PROBE(response, ctx, for_id, out->status, out->len, ret);
	return ret;
}

int api_reject_locked(struct gr_api_ctx *ctx, uint32_t for_id, uint32_t status) {
	struct gr_api_out out = gr_api_out(status, 0, NULL);
	return send_locked(ctx, for_id, &out);
}

void api_lock(void) {
	pthread_mutex_lock(&handler_lock);
	lock_held = true;
}

bool api_lock_waited(void) {
	if (pthread_mutex_trylock(&handler_lock) == 0) {
		lock_held = true;
		return false;
	}
	api_lock();
	return true;
}

void api_unlock(void) {
	lock_held = false;
	pthread_mutex_unlock(&handler_lock);
}

bool api_lock_held(void) {
	return lock_held;
}

const char *api_lock_holder(void) {
	if (current_ctx != NULL)
		return "in a handler, which holds the handler lock";
	if (app_lock_held)
		return "with the handler lock held (gr_api_server_lock())";
	return "with the handler lock held";
}

int api_app_lock(void) {
	if (lock_held) {
		api_misuse(
			API_MISUSE_LOCK,
			"gr_api_server_lock() %s: the lock is not recursive: refused (EDEADLK)",
			api_lock_holder()
		);
		return -EDEADLK;
	}
	api_lock();
	app_lock_held = true;
	return 0;
}

int api_app_unlock(void) {
	if (!app_lock_held) {
		api_misuse(
			API_MISUSE_UNLOCK,
			"gr_api_server_unlock() %s: refused (EPERM)",
			current_ctx != NULL ? "in a handler, whose lock is the server's to release"
					    : "without gr_api_server_lock() on this thread"
		);
		return -EPERM;
	}
	app_lock_held = false;
	api_unlock();
	return 0;
}

int api_reject(struct gr_api_ctx *ctx, uint32_t for_id, uint32_t status) {
	int ret;

	api_lock();
	ret = api_reject_locked(ctx, for_id, status);
	api_unlock();
	return ret;
}

// Whether handler is one of the server's own.
static bool handler_own(const struct gr_api_handler *handler) {
	for (unsigned i = 0; i < n_handlers; i++)
		if (registered[i].handler == handler)
			return registered[i].own;
	return false;
}

// What the client gets instead of a response its handler made (how: "sent"
// for gr_api_send(), "returned"), if it cannot be sent: 0 if it can, or the
// status that answers it, the misuse logged: EMSGSIZE for a payload above
// GR_API_MAX_MSG_LEN, EINVAL for no payload where len says one, ENOTSUP
// for descriptors (only the server's own handlers pass them, over the
// socket: an application's would reach a socket client and never a
// channel's). handler_lock held.
static uint32_t
response_refusal(const struct gr_api_ctx *ctx, const struct gr_api_out *out, const char *how) {
	const char *name = ctx->handler != NULL ? ctx->handler->name : "(none)";
	uint32_t refused = 0;

	if (out->len > GR_API_MAX_MSG_LEN) {
		api_misuse(
			API_MISUSE_RESPONSE_SIZE,
			"handler %s %s a response of %u bytes, above GR_API_MAX_MSG_LEN (%u): the"
			" client gets EMSGSIZE instead",
			name,
			how,
			out->len,
			GR_API_MAX_MSG_LEN
		);
		refused = EMSGSIZE;
	} else if (out->len > 0 && out->payload == NULL) {
		api_misuse(
			API_MISUSE_RESPONSE_NULL,
			"handler %s %s a response of %u bytes with no payload (NULL): the client"
			" gets EINVAL instead",
			name,
			how,
			out->len
		);
		refused = EINVAL;
	} else if (out->n_fds > 0 && (out->fds == NULL || !handler_own(ctx->handler))) {
		api_misuse(
			API_MISUSE_RESPONSE_FDS,
			"handler %s %s a response with %u file descriptors, which the API does not"
			" carry: the client gets ENOTSUP instead",
			name,
			how,
			out->n_fds
		);
		refused = ENOTSUP;
	}
	return refused;
}

GR_API_EXPORT int gr_api_send(struct gr_api_ctx *ctx, uint32_t len, const void *payload) {
	// The transport copies the payload before returning.
	struct gr_api_out out = gr_api_out_borrowed(0, len, payload);
	uint32_t refused;

	if (ctx == NULL || ctx != current_ctx) {
		api_misuse(
			ctx == NULL ? API_MISUSE_SEND_NO_CLIENT : API_MISUSE_SEND_ELSEWHERE,
			"gr_api_send() %s: refused (%s)",
			ctx == NULL ? "with no client (ctx NULL)"
				    : "outside the handler serving that client",
			ctx == NULL ? "EINVAL" : "EPERM"
		);
		return ctx == NULL ? -EINVAL : -EPERM;
	}
	if (ctx->deferred_now) {
		api_misuse(
			API_MISUSE_DEFERRED,
			"handler %s: gr_api_send() after gr_api_defer(): refused (EPERM), the"
			" deferred reply ends the stream",
			ctx->handler->name
		);
		return -EPERM;
	}
	if (ctx->stream_now) {
		api_misuse(
			API_MISUSE_STREAM,
			"handler %s: gr_api_send() after gr_api_stream_start(): refused (EPERM),"
			" its producer sends the stream",
			ctx->handler->name
		);
		return -EPERM;
	}
	// A producer's turn ends on its bound or when the transport has no
	// room: the response waits for the next turn, the producer's to keep.
	if (ctx->stream_turn &&
	    (ctx->stream_full || ctx->turn_sent >= GR_API_STREAM_TURN_RESPONSES ||
	     ctx->turn_sent_bytes >= GR_API_STREAM_TURN_BYTES))
		return -EAGAIN;
	refused = response_refusal(ctx, &out, "sent");
	if (refused != 0) {
		// The stream's end says it to the client (api_dispatch_locked()).
		if (ctx->stream_status == 0)
			ctx->stream_status = refused;
		return -(int)refused;
	}
	if (ctx->stream_turn) {
		ctx->turn_sent++;
		ctx->turn_sent_bytes += (uint32_t)sizeof(struct gr_api_response) + len;
	}
	return send_locked(ctx, ctx->req_id, &out);
}

// Answer req with status before any handler ran, and trace it.
static int reject_traced(
	struct gr_api_ctx *ctx,
	const struct gr_api_request *req,
	const void *payload,
	uint32_t status,
	uint64_t taken
) {
	int ret = api_reject_locked(ctx, req->id, status);
	uint64_t now;

	if (unlikely(trace_recording)) {
		now = rte_rdtsc();
		trace_record_locked(
			ctx,
			req,
			payload,
			status,
			0,
			0,
			taken != 0 ? taken : now,
			now,
			now
		);
	}
	return ret;
}

int api_dispatch_locked(
	struct gr_api_ctx *ctx,
	const struct gr_api_request *req,
	const void *payload
) {
	// When the transport took the request (0: not said, no wait counted).
	uint64_t taken = ctx->taken_tsc, start = 0, end;
	const struct gr_api_handler *handler;
	uint32_t refused = 0, status, flags = 0;
	bool stream_started = false;
	struct type_stats *stats;
	struct gr_api_out out;
	int ret, slot;

	ctx->taken_tsc = 0;
	ctx->responses = 0;

	// On a channel (sock_fd -1) or the socket.
	SHMCHAN_PROBE(
		request,
		ctx,
		ctx->peer_pid,
		req->id,
		req->type,
		req->payload_len,
		ctx->sock_fd < 0
	);
	if (!ctx->hello_done && req->type != GR_HELLO) {
		api_fault(ctx, API_FAULT_BEFORE_HELLO, NULL, req->type, 0);
		return reject_traced(ctx, req, payload, EPERM, taken);
	}
	slot = slot_lookup(req->type);
	if (slot < 0) {
		api_fault(ctx, API_FAULT_UNKNOWN_TYPE, NULL, req->type, 0);
		return reject_traced(ctx, req, payload, ENOTSUP, taken);
	}
	handler = handlers[slot];
	stats = &registered[handler_index[slot]].stats;
	if (req->payload_len < handler->request_len) {
		api_fault(
			ctx,
			API_FAULT_SHORT_PAYLOAD,
			handler->name,
			req->payload_len,
			handler->request_len
		);
		stats->rejected++;
		return reject_traced(ctx, req, payload, EMSGSIZE, taken);
	}

	ctx->req_id = req->id;
	ctx->handler = handler;
	ctx->stream_status = 0;
	current_ctx = ctx;
	// Two TSC reads per request: the handler's start is the request's
	// taking when the lock was free (the checks between take a few ns,
	// counted as handling), a read of its own only after a wait for it.
	if (taken == 0 || ctx->lock_waited)
		start = rte_rdtsc();
	else
		start = taken;
	out = handler->callback(payload, req->payload_len, ctx);
	end = rte_rdtsc();
	current_ctx = NULL;
	// TSCs of one socket agree; a request taken on another CPU's may read
	// a little ahead of this one's.
	if (taken == 0 || taken > start)
		taken = start;
	SHMCHAN_PROBE(dispatch, ctx, req->id, req->type, out.status, out.len);
	if (ctx->deferred_now || ctx->stream_now) {
		// The request stays open: gr_api_deferred_reply() answers it, or
		// the stream's producer (its first turn below).
		if (out.status != 0 || out.len > 0)
			api_misuse(
				ctx->deferred_now ? API_MISUSE_DEFERRED : API_MISUSE_STREAM,
				"handler %s returned a response (status %u, %u bytes) after"
				" %s: not sent, %s",
				handler->name,
				out.status,
				out.len,
				ctx->deferred_now ? "gr_api_defer()" : "gr_api_stream_start()",
				ctx->deferred_now ? "the deferred reply answers"
						  : "its producer sends the stream"
			);
		stream_started = ctx->stream_now;
		ctx->deferred_now = false;
		ctx->stream_now = false;
		flags = GR_SHM_TRACE_DEFERRED;
		status = 0;
		ret = 0;
		goto done;
	}
	// A response the transport cannot carry is answered with an error, and
	// so is the end of a stream one of whose responses was refused (unless
	// the handler ends it with an error of its own): the client learns that
	// it got less than the handler meant, and its connection stays.
	refused = response_refusal(ctx, &out, "returned");
	if (refused == 0 && out.status == 0)
		refused = ctx->stream_status;
	if (refused != 0)
		ret = api_reject_locked(ctx, req->id, refused);
	else
		ret = send_locked(ctx, req->id, &out);
	status = refused != 0 ? refused : out.status;
done:
	type_stats_record(stats, start - taken, end - start, status != 0, flags != 0);
	if (unlikely(trace_recording))
		trace_record_locked(
			ctx,
			req,
			payload,
			status,
			flags != 0 || refused != 0 ? 0 : out.len,
			flags,
			taken,
			start,
			end
		);
	ctx->handler = NULL;
	if (!out.borrowed)
		free(out.payload);
	// A stream started: its first turn now, under the same hold of the
	// lock; the transport gives it the next ones.
	if (stream_started)
		ret = api_stream_turn_locked(ctx);
	return ret;
}

int api_dispatch(struct gr_api_ctx *ctx, const struct gr_api_request *req, const void *payload) {
	int ret;

	// The wait for the handler lock counts as the request's queueing.
	ctx->taken_tsc = rte_rdtsc();
	ctx->lock_waited = api_lock_waited();
	ret = api_dispatch_locked(ctx, req, payload);
	api_unlock();
	api_faults_log(ctx, false);
	return ret;
}
