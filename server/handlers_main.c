// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Requests of Grout's main module served by shmchand: hello and the two
// pings (GR_PING, GR_PING2). Events and log levels have files of their own.

#include "api.h"
#include "log_escape.h"
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

// The hello response to a Grout main-branch client. shmchand serves no
// interface, so it can hold none: 0.
static const struct gr_hello_resp hello_resp_grout_main = {.max_ifaces = 0};

// The hello response of a version: its length, and its payload (borrowed).
// Returns false for a version the daemon does not speak.
static bool hello_resp_of(uint32_t api_version, uint32_t *len, const void **payload) {
	switch (api_version) {
	case GR_API_VERSION:
	case GR_API_VERSION_GROUT_0_17:
		*len = 0;
		*payload = NULL;
		return true;
	case GR_API_VERSION_GROUT_MAIN:
		*len = sizeof(hello_resp_grout_main);
		*payload = &hello_resp_grout_main;
		return true;
	}
	return false;
}

// Main thread or poller, under the handler lock.
static struct gr_api_out hello(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct gr_hello_req *req = request;
	char version[LOG_ESCAPE_LEN(sizeof(req->version))];
	const void *resp;
	uint32_t resp_len;

	(void)len;
	if (!hello_resp_of(req->api_version, &resp_len, &resp)) {
		api_fault(ctx, API_FAULT_HELLO_VERSION, NULL, req->api_version, GR_API_VERSION);
		return gr_api_out(EBADMSG, 0, NULL);
	}
	if (memchr(req->version, '\0', sizeof(req->version)) == NULL) {
		api_fault(ctx, API_FAULT_HELLO_STRING, NULL, 0, 0);
		return gr_api_out(EINVAL, 0, NULL);
	}
	// A repeated hello passed the same checks: it only sets the version
	// whose layouts the client gets from now on.
	if (!ctx->hello_done && !ctx->log_quiet)
		LOG(INFO,
		    "%s client pid %d: hello from '%s', API version %u",
		    ctx->transport->name,
		    (int)ctx->peer_pid,
		    log_escape(version, sizeof(version), req->version),
		    req->api_version);
	ctx->hello_done = true;
	ctx->api_version = req->api_version;
	return gr_api_out_borrowed(0, resp_len, resp);
}

static struct gr_api_out ping(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(0, 0, NULL);
}

// Echo exactly GR_PING2_LEN bytes, whatever the request's length beyond it
// (the dispatcher checked it has at least that many). The response is the
// request's own payload: the transport copies it out before the dispatch
// returns, so the busiest request of a benchmark allocates nothing.
static struct gr_api_out ping2(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)len;
	(void)ctx;
	return gr_api_out_borrowed(0, sizeof(struct gr_ping2), request);
}

static struct gr_api_handler handlers_main_array[] = {
	GR_API_HANDLER_INIT(GR_HELLO, hello),
	GR_API_HANDLER_INIT(GR_PING, ping),
	GR_API_HANDLER_INIT(GR_PING2, ping2),
};
API_HANDLER_TABLE(handlers_main, handlers_main_array);
