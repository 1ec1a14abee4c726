// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// One DPDK secondary connects and disconnects 1000 times, each time on a
// fresh memzone channel that answers a GR_PING2. The daemon reserves a
// memzone per attach and frees it after each detach: afterwards the channel
// memzones are back to their count before the cycles, and no channel is
// left (within a bounded wait: the last frees follow an RCU grace period).
//
// usage: shm_memzone_cycles SOCK (under test/with_daemon.sh --hugepages on)

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

#define CYCLES 1000
// Every this many cycles the daemon's channel list is asked too.
#define LIST_EVERY 100
#define FREE_WAIT_MS 5000
// A detached channel's zone goes back to the daemon's pool of 32 only after
// an RCU grace period: every this many cycles (fewer than the pool holds)
// wait until every zone is back, so that each attach finds one.
#define POOL_REFILL_EVERY 16

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	const char *sock = argv[1];
	watchdog_start(TEST_WATCHDOG_S);

	secondary_eal_init(sock);
	// On the socket: it reserves no memzone of its own.
	struct gr_api_client *mon = secondary_connect(sock, GR_API_TRANSPORT_SOCKET, "monitor");
	struct gr_shm_stats_resp before, after;
	secondary_stats(mon, &before);

	uint64_t start = monotonic_ns();
	for (unsigned i = 0; i < CYCLES; i++) {
		if (i % POOL_REFILL_EVERY == 0)
			secondary_wait_stats(mon, before.memzones, 0, FREE_WAIT_MS, &after);
		struct gr_api_client *c = secondary_connect(sock, GR_API_TRANSPORT_SHM, "cycles");
		if (i % LIST_EVERY == 0) {
			uint32_t backing = secondary_channel_list(c, getpid(), NULL);
			CHECK(backing == GR_SHM_BACKING_MEMZONE,
			      "cycle %u: backing %#x, expected memzone",
			      i,
			      backing);
		}
		secondary_pipeline(c, GR_PING2, GR_PING2_LEN, 1);
		CHECK(gr_api_client_disconnect(c) == 0,
		      "cycle %u: disconnect: %s",
		      i,
		      strerror(errno));
	}
	printf("%d memzone attach/detach cycles in %llu ms: ok\n",
	       CYCLES,
	       (unsigned long long)((monotonic_ns() - start) / 1000000));

	secondary_wait_stats(mon, before.memzones, 0, FREE_WAIT_MS, &after);
	CHECK(after.total.detaches == before.total.detaches + CYCLES,
	      "%llu detaches, expected %llu",
	      (unsigned long long)after.total.detaches,
	      (unsigned long long)before.total.detaches + CYCLES);
	printf("memzones back to %u, no channel left: ok\n", after.memzones);

	CHECK(gr_api_client_disconnect(mon) == 0, "disconnect: %s", strerror(errno));
	CHECK(rte_eal_cleanup() == 0, "EAL cleanup failed");
	return EXIT_SUCCESS;
}
