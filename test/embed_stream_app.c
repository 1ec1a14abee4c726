// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A DPDK application on libgr_api_server whose handlers stream
// (embed_stream.h): tagged requests whose order of service its clients read
// back, a request that holds the server until a file appears, and streams
// produced in turns, with their counts and a misuse of their calls; it logs
// those counts as the server's stop begins and once it is over. Run as
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

// ---- Streams produced in turns ----

struct lazy_state {
	uint32_t next, responses, len;
};

static struct embed_stream_lazy_stats_resp lazy_stats; // handler lock
static uint8_t lazy_payload[GR_API_MAX_MSG_LEN];

static int lazy_produce(struct gr_api_ctx *ctx, void *arg) {
	struct lazy_state *st = arg;
	int ret;

	lazy_stats.turns++;
	// Turns with nothing served between them are one mark.
	if (n_order == 0 || order[n_order - 1] != 'l')
		order_add('l');
	while (st->next < st->responses) {
		memcpy(lazy_payload, &st->next, sizeof(st->next));
		ret = gr_api_send(ctx, st->len, lazy_payload);
		if (ret < 0)
			return ret; // -EAGAIN: the same number next turn
		st->next++;
		lazy_stats.produced++;
	}
	return 0;
}

static void lazy_release(void *arg) {
	free(arg);
	lazy_stats.released++;
}

static struct gr_api_out lazy(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct embed_stream_lazy_req *req = request;
	struct lazy_state *st;
	int ret;

	(void)len;
	if (req->len < sizeof(uint32_t) || req->len > GR_API_MAX_MSG_LEN)
		return gr_api_out(EINVAL, 0, NULL);
	if (lazy_stats.started - lazy_stats.released >= EMBED_STREAM_LAZY_MAX)
		return gr_api_out(EBUSY, 0, NULL);
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	st->responses = req->responses;
	st->len = req->len;
	order_add('L');
	ret = gr_api_stream_start(ctx, lazy_produce, lazy_release, st);
	if (ret < 0) {
		free(st);
		return gr_api_out((uint32_t)-ret, 0, NULL);
	}
	lazy_stats.started++;
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(EMBED_STREAM_LAZY, lazy);

static struct gr_api_out lazy_stats_get(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out_borrowed(0, sizeof(lazy_stats), &lazy_stats);
}
GR_API_HANDLER(EMBED_STREAM_LAZY_STATS, lazy_stats_get);

// What the misuse handler's calls returned, sent by its producer.
static struct embed_stream_misuse_resp misuse;

// A producer that returns what no producer may: the stream ends with EINVAL.
#define MISUSE_PRODUCER_RETURN 7

static int misuse_produce(struct gr_api_ctx *ctx, void *arg) {
	int ret;

	(void)arg;
	misuse.producer_start = gr_api_stream_start(ctx, misuse_produce, NULL, NULL);
	misuse.producer_defer_errno = gr_api_defer(ctx) == NULL ? errno : 0;
	ret = gr_api_send(ctx, sizeof(misuse), &misuse);
	return ret < 0 ? ret : MISUSE_PRODUCER_RETURN;
}

static struct gr_api_out misuse_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	// Never dereferenced: the call compares it with the handler's.
	static uint8_t not_a_ctx;
	uint32_t *payload = malloc(sizeof(*payload));

	(void)request;
	(void)len;
	memset(&misuse, 0, sizeof(misuse));
	misuse.ctx_null = gr_api_stream_start(NULL, misuse_produce, NULL, NULL);
	misuse.produce_null = gr_api_stream_start(ctx, NULL, NULL, NULL);
	misuse.other_ctx =
		gr_api_stream_start((struct gr_api_ctx *)&not_a_ctx, misuse_produce, NULL, NULL);
	misuse.started = gr_api_stream_start(ctx, misuse_produce, NULL, NULL);
	misuse.twice = gr_api_stream_start(ctx, misuse_produce, NULL, NULL);
	misuse.defer_errno = gr_api_defer(ctx) == NULL ? errno : 0;
	misuse.handler_send = gr_api_send(ctx, sizeof(misuse), &misuse);
	// A payload returned after the start: freed, not sent.
	if (payload == NULL)
		return gr_api_out(0, 0, NULL);
	*payload = 0xbad;
	return gr_api_out(0, sizeof(*payload), payload);
}
GR_API_HANDLER(EMBED_STREAM_MISUSE, misuse_handler);

// The streams' counts in the log, with when: the server's stop, which
// releases the streams still open, comes between "stopping" and "stopped"
// (test/stream_server_stop.sh reads them).
static void lazy_stats_log(const char *when) {
	fprintf(stderr,
		"embed_stream_app: %s: streams started=%u released=%u\n",
		when,
		lazy_stats.started,
		lazy_stats.released);
}

static void stopping(void) {
	// The handlers and the producers may still run: their lock.
	if (gr_api_server_lock() < 0)
		return;
	lazy_stats_log("stopping");
	gr_api_server_unlock();
}

static void stopped(void) {
	lazy_stats_log("stopped");
}

int main(int argc, char **argv) {
	static const struct embed_app_hooks hooks = {.stopping = stopping, .stopped = stopped};

	return embed_app_main(argc, argv, "embed_stream_app", &hooks);
}
