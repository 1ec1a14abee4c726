// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The handlers of the event requests: Grout's subscribe and unsubscribe,
// the shm module's subscribe, test publish and event statistics.

#include "api.h"
#include "config.h"
#include "event.h"

#include <gr_api.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdlib.h>

static int subscribe_common(
	const struct gr_event_subscribe_req *req,
	struct gr_api_ctx *ctx,
	enum event_framing framing
) {
	struct event_sub *sub = ctx->events;

	// A channel has one framing: tagged, in its response ring.
	if (ctx->sock_fd < 0)
		framing = EVENT_FRAMING_TAGGED;
	// One subscriber per connection: once a channel is attached over the
	// socket (it holds the lease), the connection's events go over the
	// channel, and the channel's attach refuses a socket that has a
	// subscriber busy (server/channel.c).
	if (ctx->sock_fd >= 0 && ctx->lease_lost != NULL) {
		api_fault(ctx, API_FAULT_SUBSCRIBE_CHANNEL, NULL, 0, 0);
		return EBUSY;
	}
	if (sub == NULL) {
		if (ctx->transport->events_open == NULL)
			return ENOTSUP;
		sub = ctx->transport->events_open(ctx);
		if (sub == NULL)
			return ENOMEM;
		// Release: the main thread reads a channel's subscriber when the
		// channel ends (server/channel.c), while its poller may still run.
		__atomic_store_n(&ctx->events, sub, __ATOMIC_RELEASE);
	}
	struct event_sub_opts opts = {
		.framing = framing,
		.suppress_self = req->suppress_self_events,
		.grout_types_only = framing == EVENT_FRAMING_GROUT &&
				    (ctx->api_version == GR_API_VERSION_GROUT_0_17 ||
				     ctx->api_version == GR_API_VERSION_GROUT_MAIN),
	};
	int ret = event_subscribe(sub, req->ev_type, &opts);
	// Logged outside the handler lock, at a bounded rate: a client can
	// repeat them at will.
	if (ret == -EBUSY)
		api_fault(ctx, API_FAULT_SUBSCRIBE_FRAMING, NULL, 0, 0);
	else if (ret == -ENOSPC)
		api_fault(ctx, API_FAULT_SUBSCRIBE_LIMIT, NULL, server_conf.event_subs_max, 0);
	return -ret;
}

// Grout's subscribe: Grout's framing on the socket.
static struct gr_api_out subscribe(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)len;
	return gr_api_out((uint32_t)subscribe_common(request, ctx, EVENT_FRAMING_GROUT), 0, NULL);
}

static struct gr_api_out shm_subscribe(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)len;
	return gr_api_out((uint32_t)subscribe_common(request, ctx, EVENT_FRAMING_TAGGED), 0, NULL);
}

static struct gr_api_out unsubscribe(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	if (ctx->events != NULL)
		event_unsubscribe_all(ctx->events);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out publish(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)ctx;
	return gr_api_out(
		(uint32_t)-gr_api_event_publish(GR_SHM_EVENT_TEST, request, len),
		0,
		NULL
	);
}

static struct gr_api_out stats(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_shm_event_stats_resp *resp = calloc(1, sizeof(*resp));
	struct event_totals t;

	(void)request;
	(void)len;
	(void)ctx;
	if (resp == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	event_totals_get(&t);
	resp->subscribers = t.subscribers;
	resp->subscriptions = t.subscriptions;
	resp->published = t.published;
	resp->queued = t.queued;
	resp->dropped = t.dropped;
	return gr_api_out(0, sizeof(*resp), resp);
}

static struct gr_api_handler handlers_event_array[] = {
	GR_API_HANDLER_INIT(GR_EVENT_SUBSCRIBE, subscribe),
	GR_API_HANDLER_INIT(GR_EVENT_UNSUBSCRIBE, unsubscribe),
	GR_API_HANDLER_INIT(GR_SHM_EVENT_SUBSCRIBE, shm_subscribe),
	GR_API_HANDLER_INIT(GR_SHM_EVENT_PUBLISH, publish),
	GR_API_HANDLER_INIT(GR_SHM_EVENT_STATS, stats),
};
API_HANDLER_TABLE(handlers_event, handlers_event_array);
