// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A DPDK application on libgr_api_server whose handler keeps its requests
// open (embed_deferred.h), as one that waits for its datapath would: a
// thread of its own answers them, in the order they came, when told to.
//
// usage: embed_deferred_app -s SOCK [-- EAL args] (embed_app.h)

#include "embed_app.h"
#include "embed_deferred.h"

#include <gr_api_server.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The stream responses of EMBED_DEFERRED_STREAM before its deferral.
#define STREAM_RESPONSES 3

struct held {
	struct held *next;
	struct gr_api_deferred *d;
	uint32_t value;
	uint32_t mode;
};

// Everything below: lock. The handlers hold the handler lock too, the
// thread does not.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct held *head, **tail = &head;
static struct embed_deferred_stats stats;
static uint32_t to_release; // requests the thread answers next
static bool release_all;
static uint32_t release_len;
static bool stopping;
static pthread_t replier;
static bool replier_runs;

static struct gr_api_out hold(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct embed_deferred_hold_req *req = request;
	struct held *h = calloc(1, sizeof(*h));
	uint32_t value = req->value;
	int ret;

	(void)len;
	if (h == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	if (req->mode == EMBED_DEFERRED_STREAM)
		for (int i = 0; i < STREAM_RESPONSES; i++)
			gr_api_send(ctx, sizeof(value), &value);
	h->d = gr_api_defer(ctx);
	if (h->d == NULL) {
		ret = errno;
		free(h);
		return gr_api_out((uint32_t)ret, 0, NULL);
	}
	if (req->mode == EMBED_DEFERRED_TWICE)
		value = gr_api_defer(ctx) == NULL ? (uint32_t)errno : 0;
	if (req->mode == EMBED_DEFERRED_SEND_AFTER)
		value = (uint32_t)-gr_api_send(ctx, sizeof(value), &value);
	h->value = value;
	h->mode = req->mode;
	pthread_mutex_lock(&lock);
	*tail = h;
	tail = &h->next;
	stats.held++;
	pthread_mutex_unlock(&lock);
	if (req->mode == EMBED_DEFERRED_RETURN) {
		uint32_t *other = malloc(sizeof(*other));
		if (other != NULL)
			*other = value + 1;
		return gr_api_out(0, other != NULL ? sizeof(*other) : 0, other);
	}
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(EMBED_DEFERRED_HOLD, hold);

static struct gr_api_out release(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct embed_deferred_release_req *req = request;

	(void)len;
	(void)ctx;
	pthread_mutex_lock(&lock);
	if (req->count == 0)
		release_all = true;
	to_release += req->count;
	release_len = req->reply_len;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(EMBED_DEFERRED_RELEASE, release);

static struct gr_api_out stats_get(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct embed_deferred_stats *s = malloc(sizeof(*s));

	(void)request;
	(void)len;
	(void)ctx;
	if (s == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	pthread_mutex_lock(&lock);
	*s = stats;
	pthread_mutex_unlock(&lock);
	return gr_api_out(0, sizeof(*s), s);
}
GR_API_HANDLER(EMBED_DEFERRED_STATS, stats_get);

// Answer h, outside the lock (the reply never blocks, but it needs none).
static int answer(const struct held *h, uint32_t len) {
	static uint8_t big[GR_API_MAX_MSG_LEN + 1];

	if (h->mode == EMBED_DEFERRED_STREAM)
		return gr_api_deferred_reply(h->d, 0, 0, NULL);
	if (len == 0)
		return gr_api_deferred_reply(h->d, 0, sizeof(h->value), &h->value);
	if (len > sizeof(big))
		len = sizeof(big);
	memcpy(big, &h->value, sizeof(h->value));
	return gr_api_deferred_reply(h->d, 0, len, big);
}

// The application's thread: answers what it is told to, oldest first.
static void *replier_main(void *arg) {
	struct held *h;
	uint32_t len;
	int ret;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!stopping && (head == NULL || (!release_all && to_release == 0)))
			pthread_cond_wait(&wake, &lock);
		if (head == NULL && stopping)
			break;
		h = head;
		head = h->next;
		if (head == NULL) {
			tail = &head;
			release_all = false;
		}
		if (to_release > 0)
			to_release--;
		stats.held--;
		len = release_len;
		pthread_mutex_unlock(&lock);
		ret = answer(h, stopping ? 0 : len);
		free(h);
		pthread_mutex_lock(&lock);
		if (ret == 0)
			stats.replied++;
		else if (ret == -ECONNRESET)
			stats.reset++;
		else if (ret == -EMSGSIZE || ret == -EINVAL)
			stats.refused++;
		else
			stats.other++;
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int started(void) {
	int ret = pthread_create(&replier, NULL, replier_main, NULL);

	replier_runs = ret == 0;
	return -ret;
}

// Every request still held is answered (or finds its client gone) before
// the server stops.
static void stop(void) {
	if (!replier_runs)
		return;
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
	pthread_join(replier, NULL);
}

int main(int argc, char **argv) {
	static const struct embed_app_hooks hooks = {.started = started, .stopping = stop};

	return embed_app_main(argc, argv, "embed_deferred_app", &hooks);
}
