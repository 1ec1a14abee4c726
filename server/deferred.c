// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Deferred replies: a handler keeps its request open (gr_api_defer()), and
// any thread answers it later (gr_api_deferred_reply()). The reply is
// copied into the handle and queued on the client's struct
// deferred_client; the thread that serves the client (a poller, or the
// socket's loop) is woken and sends it, under the handler lock, as it sends
// any response. A client that goes meanwhile drops what is queued and
// makes the replies still to come answer -ECONNRESET; the structure lives
// until its last handle is freed. One leaf lock guards it all.

#include "deferred.h"
#include "config.h"
#include "trace.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// A request kept open, then its answer queued for the serving thread.
struct gr_api_deferred {
	struct deferred_client *dc;
	struct gr_api_deferred *next; // in dc's done list
	uint32_t req_id;
	uint32_t req_type; // for its type's figures and the trace
	// The error of a response of its stream gr_api_send() refused before
	// gr_api_defer(): what a reply of status 0 ends the stream with.
	uint32_t stream_status;
	uint32_t status;
	uint32_t len;
	void *payload; // malloc'ed copy, len bytes
};

static pthread_mutex_t deferred_lock = PTHREAD_MUTEX_INITIALIZER;
// Handles not sent yet, of every client (deferred_lock).
static unsigned open_total;

// Drop a reference of dc; free it with the last. deferred_lock held.
static void dc_put_locked(struct deferred_client *dc) {
	if (--dc->refs == 0)
		free(dc);
}

// Free a handle and its payload. Any lock.
static void handle_free(struct gr_api_deferred *d) {
	free(d->payload);
	free(d);
}

GR_API_EXPORT struct gr_api_deferred *gr_api_defer(struct gr_api_ctx *ctx) {
	struct deferred_client *dc;
	struct gr_api_deferred *d;
	int err = 0;

	if (ctx == NULL || ctx != api_current_ctx()) {
		api_misuse(
			API_MISUSE_DEFERRED,
			"gr_api_defer() %s: refused (%s)",
			ctx == NULL ? "with no client (ctx NULL)"
				    : "outside the handler serving that client",
			ctx == NULL ? "EINVAL" : "EPERM"
		);
		errno = ctx == NULL ? EINVAL : EPERM;
		return NULL;
	}
	if (ctx->deferred_now || ctx->stream_now || ctx->stream_turn) {
		api_misuse(
			API_MISUSE_DEFERRED,
			"handler %s: gr_api_defer() %s: refused (EALREADY)",
			ctx->handler->name,
			ctx->deferred_now ? "twice for one request"
			: ctx->stream_now ? "after gr_api_stream_start()"
					  : "in a stream's producer"
		);
		errno = EALREADY;
		return NULL;
	}
	if (ctx->transport->deferred_wake == NULL) {
		errno = ENOTSUP; // a transport of the tests: nothing could send the reply
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&deferred_lock);
	dc = ctx->deferred;
	if (ctx->deferred_closed) {
		err = ECONNRESET;
	} else if (open_total >= GR_API_SERVER_DEFERRED_MAX || (dc != NULL && dc->open >= GR_API_SERVER_DEFERRED_PER_CLIENT)) {
		err = ENOSPC;
	} else if (dc == NULL) {
		dc = calloc(1, sizeof(*dc));
		if (dc == NULL) {
			err = ENOMEM;
		} else {
			dc->ctx = ctx;
			dc->refs = 1; // the client's, until api_deferred_release()
			dc->done_tail = &dc->done_head;
			ctx->deferred = dc;
		}
	}
	if (err == 0) {
		d->dc = dc;
		d->req_id = ctx->req_id;
		d->req_type = ctx->handler->request_type;
		d->stream_status = ctx->stream_status;
		dc->refs++;
		dc->open++;
		open_total++;
		ctx->deferred_now = true;
	}
	pthread_mutex_unlock(&deferred_lock);
	if (err != 0) {
		free(d);
		errno = err;
		return NULL;
	}
	return d;
}

// The status a reply of len bytes at payload ends with, if it cannot be
// sent as it is (logged as a misuse), else 0: the checks of a handler's
// return (api.c).
static uint32_t reply_refusal(uint32_t len, const void *payload) {
	if (len > GR_API_MAX_MSG_LEN) {
		api_misuse(
			API_MISUSE_RESPONSE_SIZE,
			"gr_api_deferred_reply() of %u bytes, above GR_API_MAX_MSG_LEN (%u): the"
			" client gets EMSGSIZE instead",
			len,
			GR_API_MAX_MSG_LEN
		);
		return EMSGSIZE;
	}
	if (len > 0 && payload == NULL) {
		api_misuse(
			API_MISUSE_RESPONSE_NULL,
			"gr_api_deferred_reply() of %u bytes with no payload (NULL): the client "
			"gets"
			" EINVAL instead",
			len
		);
		return EINVAL;
	}
	return 0;
}

GR_API_EXPORT int gr_api_deferred_reply(
	struct gr_api_deferred *d,
	uint32_t status,
	uint32_t len,
	const void *payload
) {
	struct deferred_client *dc;
	uint32_t refused;
	int ret = 0;

	if (d == NULL) {
		api_misuse(API_MISUSE_DEFERRED, "gr_api_deferred_reply(NULL): nothing to answer");
		return -EINVAL;
	}
	refused = reply_refusal(len, payload);
	if (refused != 0) {
		status = refused;
		len = 0;
		ret = -(int)refused;
	} else if (len > 0) {
		// Copied outside the lock, before we know whether the client is
		// still there: the lock is every reply's.
		d->payload = malloc(len);
		if (d->payload == NULL) {
			status = ENOMEM;
			len = 0;
			ret = -ENOMEM;
		} else {
			memcpy(d->payload, payload, len);
		}
	}
	if (status == 0)
		status = d->stream_status;
	d->status = status;
	d->len = len;

	pthread_mutex_lock(&deferred_lock);
	dc = d->dc;
	if (dc->ctx == NULL) {
		dc->open--;
		open_total--;
		dc_put_locked(dc);
		pthread_mutex_unlock(&deferred_lock);
		handle_free(d);
		return -ECONNRESET;
	}
	d->next = NULL;
	*dc->done_tail = d;
	dc->done_tail = &d->next;
	if (!atomic_load_explicit(&dc->pending, memory_order_relaxed)) {
		// Before the wake: the serving thread that wakes sees it (the
		// wake is a full barrier for a sleeping poller, and the socket's
		// loop reads it after an eventfd read).
		atomic_store_explicit(&dc->pending, true, memory_order_seq_cst);
		dc->ctx->transport->deferred_wake(dc->ctx);
	}
	pthread_mutex_unlock(&deferred_lock);
	return ret;
}

unsigned api_deferred_flush(struct gr_api_ctx *ctx) {
	struct deferred_client *dc = ctx->deferred;
	struct gr_api_deferred *d, *next;
	unsigned n = 0;
	bool failed = false;

	if (dc == NULL || !atomic_load_explicit(&dc->pending, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&deferred_lock);
	d = dc->done_head;
	dc->done_head = NULL;
	dc->done_tail = &dc->done_head;
	atomic_store_explicit(&dc->pending, false, memory_order_relaxed);
	pthread_mutex_unlock(&deferred_lock);

	api_lock();
	for (; d != NULL; d = next) {
		struct gr_api_out out = gr_api_out_borrowed(d->status, d->len, d->payload);

		next = d->next;
		// After a failed send the transport has closed the client:
		// the rest are dropped.
		if (!failed && ctx->transport->send(ctx, d->req_id, &out) < 0)
			failed = true;
		// Its handler's run was counted when it returned.
		api_type_reply_locked(d->req_type, d->status);
		if (trace_recording)
			trace_reply_locked(ctx, d->req_id, d->req_type, d->status, d->len);
		handle_free(d);
		n++;
	}
	api_unlock();

	pthread_mutex_lock(&deferred_lock);
	dc->open -= n;
	open_total -= n;
	dc->refs -= n; // never the last: the client holds one
	pthread_mutex_unlock(&deferred_lock);
	return n;
}

void api_deferred_close(struct gr_api_ctx *ctx) {
	struct deferred_client *dc;
	struct gr_api_deferred *d, *next;
	unsigned n = 0;

	pthread_mutex_lock(&deferred_lock);
	ctx->deferred_closed = true;
	dc = ctx->deferred;
	if (dc == NULL || dc->ctx == NULL) {
		pthread_mutex_unlock(&deferred_lock);
		return;
	}
	dc->ctx = NULL;
	d = dc->done_head;
	dc->done_head = NULL;
	dc->done_tail = &dc->done_head;
	atomic_store_explicit(&dc->pending, false, memory_order_relaxed);
	for (struct gr_api_deferred *q = d; q != NULL; q = q->next)
		n++;
	dc->open -= n;
	open_total -= n;
	dc->refs -= n; // never the last: the client holds one
	pthread_mutex_unlock(&deferred_lock);
	for (; d != NULL; d = next) {
		next = d->next;
		handle_free(d);
	}
}

void api_deferred_release(struct gr_api_ctx *ctx) {
	pthread_mutex_lock(&deferred_lock);
	if (ctx->deferred != NULL) {
		dc_put_locked(ctx->deferred);
		ctx->deferred = NULL;
	}
	pthread_mutex_unlock(&deferred_lock);
}

unsigned api_deferred_open(void) {
	unsigned n;

	pthread_mutex_lock(&deferred_lock);
	n = open_total;
	pthread_mutex_unlock(&deferred_lock);
	return n;
}
