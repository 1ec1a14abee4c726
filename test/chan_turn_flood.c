// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Channel clients that keep expensive requests in flight: CLIENTS threads of
// one process, each on a channel of its own, each keeping DEPTH
// GR_LOG_LEVEL_LIST with show_all in flight (about 200 streamed responses
// each): it reads the oldest stream to its end and sends another request in
// its place, so that the daemon always finds DEPTH of them in each ring.
// test/chan_turn_fairness.sh runs it beside a latency probe on a channel.
//
// Prints "ready" once every client has read one whole stream. Runs until
// SIGTERM. Then prints one line of key=value: the streams read and their
// responses.
//
// usage: chan_turn_flood SOCK CLIENTS DEPTH

#include "check.h"
#include "transport_arg.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Clients and requests in flight at most: the daemon serves 64 connections
// of one process by default (--max-conn-per-pid).
#define FLOOD_CLIENTS_MAX 60
#define FLOOD_DEPTH_MAX 1024

struct flooder {
	pthread_t thread;
	const char *sock;
	unsigned depth;
	uint64_t streams, responses;
};

static atomic_bool stop;
static atomic_uint ready;
static unsigned n_clients;

static void on_term(int sig) {
	(void)sig;
	atomic_store(&stop, true);
}

static long list_send(struct gr_api_client *c) {
	struct gr_log_level_list_req req = {.show_all = true};
	long id = gr_api_client_send(c, GR_LOG_LEVEL_LIST, sizeof(req), &req);

	CHECK(id > 0, "send GR_LOG_LEVEL_LIST: %s", strerror(errno));
	return id;
}

static void *flood(void *arg) {
	struct flooder *f = arg;
	struct gr_api_client *c = connect_forced(f->sock, "shm", "chan_turn_flood");
	long ids[FLOOD_DEPTH_MAX];
	unsigned oldest = 0;
	bool counted = false;

	for (unsigned i = 0; i < f->depth; i++)
		ids[i] = list_send(c);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		void *rx = NULL;
		size_t len;
		int ret = gr_api_client_stream_next(c, (uint32_t)ids[oldest], &rx, &len);

		CHECK(ret >= 0, "stream %ld: %s", ids[oldest], strerror(errno));
		free(rx);
		if (ret > 0) {
			f->responses++;
			continue;
		}
		f->streams++;
		if (!counted) {
			counted = true;
			if (atomic_fetch_add(&ready, 1) + 1 == n_clients) {
				printf("ready\n");
				fflush(stdout);
			}
		}
		ids[oldest] = list_send(c);
		oldest = (oldest + 1) % f->depth;
	}
	gr_api_client_disconnect(c);
	return NULL;
}

int main(int argc, char **argv) {
	static struct flooder flooders[FLOOD_CLIENTS_MAX];
	struct sigaction sa = {.sa_handler = on_term};
	uint64_t streams = 0, responses = 0;
	unsigned depth;
	char *end;

	CHECK(argc == 4, "usage: %s SOCK CLIENTS DEPTH", argv[0]);
	n_clients = (unsigned)strtoul(argv[2], &end, 10);
	CHECK(*end == '\0' && n_clients > 0 && n_clients <= FLOOD_CLIENTS_MAX,
	      "CLIENTS '%s' is not 1 to %d",
	      argv[2],
	      FLOOD_CLIENTS_MAX);
	depth = (unsigned)strtoul(argv[3], &end, 10);
	CHECK(*end == '\0' && depth > 0 && depth <= FLOOD_DEPTH_MAX,
	      "DEPTH '%s' is not 1 to %d",
	      argv[3],
	      FLOOD_DEPTH_MAX);
	CHECK(sigaction(SIGTERM, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
	for (unsigned i = 0; i < n_clients; i++) {
		flooders[i] = (struct flooder){.sock = argv[1], .depth = depth};
		CHECK(pthread_create(&flooders[i].thread, NULL, flood, &flooders[i]) == 0,
		      "pthread_create");
	}
	for (unsigned i = 0; i < n_clients; i++) {
		pthread_join(flooders[i].thread, NULL);
		streams += flooders[i].streams;
		responses += flooders[i].responses;
	}
	printf("clients=%u depth=%u streams=%" PRIu64 " responses=%" PRIu64 "\n",
	       n_clients,
	       depth,
	       streams,
	       responses);
	return EXIT_SUCCESS;
}
