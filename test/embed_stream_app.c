// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A DPDK application on libgr_api_server whose handlers stream
// (embed_stream.h): tagged requests whose order of service its clients read
// back, and a request that holds the server until a file appears. Run as
// test/with_daemon.sh runs a daemon: it serves until SIGTERM or SIGINT,
// then stops the server and exits 0.
//
// usage: embed_stream_app -s SOCK [-- EAL args] (embed_app.h)

#include "embed_app.h"
#include "embed_stream.h"

#include <gr_api_server.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// How long EMBED_STREAM_HOLD holds at most, and how often it looks.
#define HOLD_MAX_MS 20000
#define HOLD_POLL_US 1000

// The order of service (handler lock held).
static uint8_t order[EMBED_STREAM_ORDER_MAX];
static unsigned n_order;

static void order_add(uint8_t tag) {
	if (n_order < EMBED_STREAM_ORDER_MAX)
		order[n_order++] = tag;
}

static struct gr_api_out tagged(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	static uint8_t payload[GR_API_MAX_MSG_LEN];
	const struct embed_stream_tagged_req *req = request;

	(void)len;
	if (req->len > GR_API_MAX_MSG_LEN)
		return gr_api_out(EINVAL, 0, NULL);
	order_add(req->tag);
	for (uint32_t i = 0; i < req->responses; i++) {
		// Numbered, for the clients that check the order.
		if (req->len >= sizeof(i))
			memcpy(payload, &i, sizeof(i));
		if (gr_api_send(ctx, req->len, payload) < 0)
			break;
	}
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(EMBED_STREAM_TAGGED, tagged);

static struct gr_api_out hold(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct embed_stream_hold_req *req = request;
	char held[PATH_MAX + 32], release[PATH_MAX + 32];
	FILE *f;

	(void)len;
	(void)ctx;
	order_add(req->tag);
	snprintf(held, sizeof(held), "%s/%s", embed_app_dir(), EMBED_STREAM_HELD_FILE);
	snprintf(release, sizeof(release), "%s/%s", embed_app_dir(), EMBED_STREAM_RELEASE_FILE);
	f = fopen(held, "w");
	if (f == NULL)
		return gr_api_out(errno, 0, NULL);
	fclose(f);
	for (unsigned i = 0; i < HOLD_MAX_MS * 1000 / HOLD_POLL_US && access(release, F_OK) < 0;
	     i++)
		usleep(HOLD_POLL_US);
	unlink(held);
	unlink(release);
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(EMBED_STREAM_HOLD, hold);

static struct gr_api_out order_get(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	uint8_t *copy = malloc(n_order > 0 ? n_order : 1);
	unsigned n = n_order;

	(void)request;
	(void)len;
	(void)ctx;
	if (copy == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	memcpy(copy, order, n);
	n_order = 0;
	return gr_api_out(0, n, copy);
}
GR_API_HANDLER(EMBED_STREAM_ORDER, order_get);

int main(int argc, char **argv) {
	return embed_app_main(argc, argv, "embed_stream_app", NULL);
}
