// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A DPDK secondary of the daemon gets a memzone channel: it connects with the
// default transport, lands on the channel with no reason given, the daemon
// lists its channel with the memzone backing under its pid, and pipelined
// GR_PING, GR_PING2 and large GR_SHM_ECHO requests (16 in flight) all come
// back right. A process of the same program that is no secondary (before
// EAL init) gets a memfd channel instead.
//
// usage: shm_secondary_ping SOCK (under test/with_daemon.sh --hugepages on)

#include "check.h"
#include "secondary.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <rte_eal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PING_CALLS 5000
#define PING2_CALLS 5000
// Large echoes cross the ring's wrap-around many times.
#define ECHO_SIZE (100 * 1024)
#define ECHO_CALLS 200

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	const char *sock = argv[1];
	watchdog_start(TEST_WATCHDOG_S);

	// Not a secondary yet: memfd.
	struct gr_api_client *c = secondary_connect(sock, GR_API_TRANSPORT_AUTO, "before EAL");
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SHM,
	      "before EAL: not on shm: %s",
	      gr_api_client_transport_reason(c));
	uint32_t backing = secondary_channel_list(c, getpid(), NULL);
	CHECK(backing == GR_SHM_BACKING_MEMFD, "before EAL: backing %#x, expected memfd", backing);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	printf("before EAL init: memfd channel: ok\n");

	secondary_eal_init(sock);
	c = secondary_connect(sock, GR_API_TRANSPORT_AUTO, "shm_secondary_ping");
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SHM,
	      "secondary: not on shm: %s",
	      gr_api_client_transport_reason(c));
	CHECK(strcmp(gr_api_client_transport_reason(c), "") == 0,
	      "secondary on shm, but with a reason: %s",
	      gr_api_client_transport_reason(c));
	struct secondary_channels counts;
	backing = secondary_channel_list(c, getpid(), &counts);
	CHECK(backing == GR_SHM_BACKING_MEMZONE,
	      "secondary: backing %#x, expected memzone (%#x)",
	      backing,
	      GR_SHM_BACKING_MEMZONE);
	CHECK(counts.total == 1, "%u channels listed, expected 1", counts.total);
	struct gr_shm_stats_resp stats;
	secondary_stats(c, &stats);
	CHECK(stats.memzones == 1,
	      "the daemon reserves %u channel memzones, expected 1",
	      stats.memzones);
	printf("secondary: memzone channel: ok\n");

	secondary_pipeline(c, GR_PING, 0, PING_CALLS);
	printf("%d pipelined GR_PING: ok\n", PING_CALLS);
	secondary_pipeline(c, GR_PING2, GR_PING2_LEN, PING2_CALLS);
	printf("%d pipelined GR_PING2: ok\n", PING2_CALLS);
	secondary_pipeline(c, GR_SHM_ECHO, ECHO_SIZE, ECHO_CALLS);
	printf("%d pipelined GR_SHM_ECHO of %d bytes: ok\n", ECHO_CALLS, ECHO_SIZE);

	// Every request went through the channel, none over the socket.
	secondary_stats(c, &stats);
	CHECK(stats.total.requests >= PING_CALLS + PING2_CALLS + ECHO_CALLS,
	      "the channels counted %llu requests",
	      (unsigned long long)stats.total.requests);

	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	CHECK(rte_eal_cleanup() == 0, "EAL cleanup failed");
	return EXIT_SUCCESS;
}
