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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Requests in flight: enough to keep the ring busy, not to fill it.
#define PING2_LOOP_DEPTH 8
// The daemon answers a ping2 in microseconds; a loaded 2-core machine may
// deschedule it for some milliseconds. No answer for this long is a stall.
#define PING2_LOOP_STALL_MS 2000

int main(int argc, char **argv) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SHM,
		.spin_us = -1,
		.version = "ping2_loop",
	};

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	ping2_load_stop_on_term();

	struct gr_api_client *c = gr_api_client_connect_opts(argv[1], &opts);
	CHECK(c != NULL, "connect %s over shm: %s", argv[1], strerror(errno));
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SHM, "not on the shm channel");
	long len = gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL);
	CHECK(len == 0, "first GR_PING: %ld: %s", len, strerror(errno));
	printf("ready\n");
	fflush(stdout);

	uint64_t done =
		ping2_load_until_term(c, PING2_LOOP_DEPTH, PING2_LOOP_STALL_MS, "ping2_loop");

	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	printf("%llu echoes checked\n", (unsigned long long)done);
	return EXIT_SUCCESS;
}
