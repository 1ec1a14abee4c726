// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Streams produced in turns: a handler starts one (gr_api_stream_start())
// and returns; the thread that serves the client calls its producer again,
// under the handler lock, each time the client has room and its turn comes
// (channel_serve.c for a channel, sock.c for a socket connection), until
// the producer says it is done. Then the state is released and the end of
// the stream sent. A client that goes first has its stream released by
// whoever frees it. Nothing is held for a paused stream but the producer's
// own state: its responses are made when there is room for them.

#include "stream.h"
#include "config.h"
#include "trace.h"

#include <errno.h>
#include <stdlib.h>

// Largest errno value a producer may return negated: past it, the value is
// no -errno (Linux's errno values stay below 4096, MAX_ERRNO).
#define STREAM_ERRNO_MAX 4095

struct api_stream {
	gr_api_stream_func produce;
	gr_api_stream_release_func release;
	void *state;
	uint32_t req_id;
	// A copy of the handler that started it: the stream may outlive its
	// registration (gr_api_server_handler_unregister()). The logs name it.
	struct gr_api_handler handler;
	// The error of a response gr_api_send() refused, which a producer's
	// end of 0 ends the stream with.
	uint32_t stream_status;
};

GR_API_EXPORT int gr_api_stream_start(
	struct gr_api_ctx *ctx,
	gr_api_stream_func produce,
	gr_api_stream_release_func release,
	void *state
) {
	struct api_stream *s;

	if (ctx == NULL || produce == NULL) {
		api_misuse(
			API_MISUSE_STREAM,
			"gr_api_stream_start() with %s: refused (EINVAL)",
			ctx == NULL ? "no client (ctx NULL)" : "no producer (NULL)"
		);
		return -EINVAL;
	}
	if (ctx != api_current_ctx()) {
		api_misuse(
			API_MISUSE_STREAM,
			"gr_api_stream_start() outside the handler serving that client: refused"
			" (EPERM)"
		);
		return -EPERM;
	}
	if (ctx->stream != NULL || ctx->deferred_now) {
		api_misuse(
			API_MISUSE_STREAM,
			"handler %s: gr_api_stream_start() %s: refused (EALREADY)",
			ctx->handler->name,
			ctx->deferred_now  ? "after gr_api_defer()"
			: ctx->stream_turn ? "in its stream's producer"
					   : "twice for one request"
		);
		return -EALREADY;
	}
	if (!ctx->transport->streams)
		return -ENOTSUP;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->produce = produce;
	s->release = release;
	s->state = state;
	s->req_id = ctx->req_id;
	s->handler = *ctx->handler;
	ctx->stream = s;
	ctx->stream_now = true;
	return 0;
}

// Release the state of s and free it. Handler lock held.
static void stream_free(struct api_stream *s) {
	if (s->release != NULL)
		s->release(s->state);
	free(s);
}

int api_stream_turn_locked(struct gr_api_ctx *ctx) {
	struct api_stream *s = ctx->stream;
	uint32_t status, req_id = s->req_id, req_type = s->handler.request_type;
	int ret;

	ctx->req_id = s->req_id;
	ctx->handler = &s->handler;
	ctx->stream_status = s->stream_status;
	ctx->stream_full = false;
	ctx->turn_sent = 0;
	ctx->turn_sent_bytes = 0;
	ctx->stream_turn = true;
	api_current_set(ctx);
	ret = s->produce(ctx, s->state);
	api_current_set(NULL);
	ctx->stream_turn = false;
	ctx->handler = NULL;
	if (ret == -EAGAIN) {
		s->stream_status = ctx->stream_status;
		return 0;
	}
	if (ret > 0 || ret < -STREAM_ERRNO_MAX) {
		api_misuse(
			API_MISUSE_STREAM,
			"handler %s: its producer returned %d, neither 0, -EAGAIN nor a -errno:"
			" the stream ends with EINVAL",
			s->handler.name,
			ret
		);
		status = EINVAL;
	} else if (ret < 0) {
		status = (uint32_t)-ret;
	} else {
		status = ctx->stream_status;
	}
	ctx->stream = NULL;
	stream_free(s);
	ret = api_reject_locked(ctx, req_id, status);
	// Its handler's run was counted when it returned.
	api_type_reply_locked(req_type, status);
	if (trace_recording)
		trace_reply_locked(ctx, req_id, req_type, status, 0);
	return ret;
}

void api_stream_close(struct gr_api_ctx *ctx) {
	struct api_stream *s = ctx->stream;

	if (s == NULL)
		return;
	ctx->stream = NULL;
	api_lock();
	stream_free(s);
	api_unlock();
}
