// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Requests of Grout's main module served by shmchand: hello and the seed's
// two pings. The other main-module types are not registered and answer
// ENOTSUP.

#include "api.h"
#include "shmchand.h"

#include <errno.h>
#include <string.h>

// Main thread or poller, under the handler lock.
static struct api_out hello(const void *request, uint32_t len, struct api_ctx *ctx) {
	const struct gr_hello_req *req = request;

	(void)len;
	if (req->api_version != GR_API_VERSION) {
		api_fault(ctx, API_FAULT_HELLO_VERSION, NULL, req->api_version, GR_API_VERSION);
		return api_out(EBADMSG, 0, NULL);
	}
	if (memchr(req->version, '\0', sizeof(req->version)) == NULL) {
		api_fault(ctx, API_FAULT_HELLO_STRING, NULL, 0, 0);
		return api_out(EINVAL, 0, NULL);
	}
	// A repeated hello passed the same version check: accepting it again
	// changes nothing.
	if (!ctx->hello_done)
		LOG(INFO,
		    "%s client pid %d: hello from '%s'",
		    ctx->transport->name,
		    (int)ctx->peer_pid,
		    req->version);
	ctx->hello_done = true;
	return api_out(0, 0, NULL);
}

static struct api_out ping(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return api_out(0, 0, NULL);
}

// Echo exactly GR_PING2_LEN bytes, whatever the request's length beyond it
// (the dispatcher checked it has at least that many). The response is the
// request's own payload: the transport copies it out before the dispatch
// returns, so the busiest request of a benchmark allocates nothing.
static struct api_out ping2(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)len;
	(void)ctx;
	return api_out_borrowed(0, sizeof(struct gr_ping2), request);
}

API_HANDLER(GR_HELLO, hello);
API_HANDLER(GR_PING, ping);
API_HANDLER(GR_PING2, ping2);
