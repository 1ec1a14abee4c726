// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A DPDK application on libgr_api_server whose handlers misuse it
// (embed_misuse.h): a response too long, one with a descriptor, one with no
// payload, a stream of such responses, and the calls that would wait for
// the handler itself. Run as test/with_daemon.sh runs a daemon: it serves
// until SIGTERM or SIGINT, then stops the server and exits 0 if the stop
// returned 0, 1 otherwise.
//
// usage: embed_misuse_app -s SOCK [-- EAL args] (embed_app.h)

#include "embed_app.h"
#include "embed_misuse.h"

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

static struct gr_api_out big(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(0, GR_API_MAX_MSG_LEN + 1, calloc(1, GR_API_MAX_MSG_LEN + 1));
}
GR_API_HANDLER(EMBED_MISUSE_BIG, big);

static struct gr_api_out fds(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	static const int fd = STDIN_FILENO;
	struct gr_api_out out = gr_api_out(0, 0, NULL);

	(void)request;
	(void)len;
	(void)ctx;
	out.fds = &fd;
	out.n_fds = 1;
	return out;
}
GR_API_HANDLER(EMBED_MISUSE_FDS, fds);

static struct gr_api_out no_payload(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(0, 8, NULL);
}
GR_API_HANDLER(EMBED_MISUSE_NULL, no_payload);

static struct gr_api_out stream(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	static const uint8_t huge[GR_API_MAX_MSG_LEN + 1];
	struct embed_misuse_item item = {.value = 1};

	(void)request;
	(void)len;
	gr_api_send(ctx, sizeof(item), &item);
	item.value = gr_api_send(ctx, sizeof(huge), huge);
	gr_api_send(ctx, sizeof(item), &item);
	item.value = gr_api_send(ctx, sizeof(item), NULL);
	gr_api_send(ctx, sizeof(item), &item);
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(EMBED_MISUSE_STREAM, stream);

static struct gr_api_out lock_misuse(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	static struct gr_api_handler again = GR_API_HANDLER_INIT(EMBED_MISUSE_LOCK, lock_misuse);
	struct embed_misuse_lock_resp *resp = malloc(sizeof(*resp));
	struct gr_api_server_conf conf;

	(void)request;
	(void)len;
	(void)ctx;
	if (resp == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	gr_api_server_conf_init(&conf);
	resp->lock = gr_api_server_lock();
	resp->unlock = gr_api_server_unlock();
	resp->register_ = gr_api_server_handler_register(&again);
	resp->start = gr_api_server_start(&conf);
	resp->stop = gr_api_server_stop();
	return gr_api_out(0, sizeof(*resp), resp);
}
GR_API_HANDLER(EMBED_MISUSE_LOCK, lock_misuse);

int main(int argc, char **argv) {
	return embed_app_main(argc, argv, "embed_misuse_app", NULL);
}
