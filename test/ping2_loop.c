// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A healthy shared-memory client that runs beside hostile ones: pipelined
// GR_PING2 requests, every echo checked, until SIGTERM. It prints "ready"
// once its channel is attached and serving, and at the end the number of
// echoes checked. Any error, or no progress for PING2_LOOP_STALL_MS, fails
// it at once (exit 1): the daemon hurt a client that did nothing wrong.
//
// usage: ping2_loop SOCK

#include "check.h"
#include "ping2_load.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Requests in flight: enough to keep the ring busy, not to fill it.
#define PING2_LOOP_DEPTH 8
// The daemon answers a ping2 in microseconds; a loaded 2-core machine may
// deschedule it for some milliseconds. No answer for this long is a stall.
#define PING2_LOOP_STALL_MS 2000
// Period of the stall check.
#define PING2_LOOP_CHECK_MS 50

static volatile sig_atomic_t stop;
static _Atomic uint64_t done;
static _Atomic bool finished;

static void on_term(int sig) {
	(void)sig;
	stop = 1;
}

// Fail the process if no echo arrives for PING2_LOOP_STALL_MS.
static void *stall_watch(void *arg) {
	uint64_t last = 0, last_ns = monotonic_ns();

	(void)arg;
	while (!atomic_load(&finished)) {
		usleep(PING2_LOOP_CHECK_MS * 1000);
		uint64_t now = atomic_load_explicit(&done, memory_order_relaxed);
		uint64_t now_ns = monotonic_ns();
		if (now != last) {
			last = now;
			last_ns = now_ns;
		} else if (now_ns - last_ns > PING2_LOOP_STALL_MS * 1000000ull) {
			fprintf(stderr,
				"ping2_loop: no echo for %d ms after %llu: stalled\n",
				PING2_LOOP_STALL_MS,
				(unsigned long long)now);
			_exit(EXIT_FAILURE);
		}
	}
	return NULL;
}

int main(int argc, char **argv) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SHM,
		.spin_us = -1,
		.version = "ping2_loop",
	};
	struct sigaction sa = {.sa_handler = on_term};
	pthread_t watch;

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	CHECK(sigaction(SIGTERM, &sa, NULL) == 0, "sigaction: %s", strerror(errno));

	struct gr_api_client *c = gr_api_client_connect_opts(argv[1], &opts);
	CHECK(c != NULL, "connect %s over shm: %s", argv[1], strerror(errno));
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SHM, "not on the shm channel");
	long len = gr_api_client_send_recv(c, GR_PING, 0, NULL, NULL);
	CHECK(len == 0, "first GR_PING: %ld: %s", len, strerror(errno));
	printf("ready\n");
	fflush(stdout);

	CHECK(pthread_create(&watch, NULL, stall_watch, NULL) == 0, "pthread_create");
	ping2_load(c, PING2_LOOP_DEPTH, &stop, &done);
	atomic_store(&finished, true);
	pthread_join(watch, NULL);

	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	printf("%llu echoes checked\n", (unsigned long long)atomic_load(&done));
	return EXIT_SUCCESS;
}
