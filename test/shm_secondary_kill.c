// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A DPDK secondary killed with SIGKILL while its requests are in flight: the
// daemon sees its lease end, detaches the channel and frees its memzone
// (GR_SHM_STATS memzones and channels back to where they were, within a
// bounded wait), and goes on serving: a client that was connected all along
// and a new channel client both get their answers.
//
// usage: shm_secondary_kill SOCK (under test/with_daemon.sh --hugepages on)

#include "check.h"
#include "secondary.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <rte_eal.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

// Requests the victim answers before it tells the parent it is busy, so the
// kill lands while it keeps 16 in flight.
#define WARM_CALLS 1000
// Big echoes: the kill is likely to land while one is half copied.
#define ECHO_SIZE (64 * 1024)
// The daemon frees a memzone one RCU grace period after the lease ends: a
// few milliseconds; the bound leaves room for a loaded machine.
#define FREE_WAIT_MS 5000
#define SERVE_CALLS 1000

// The victim: a secondary that pipelines echoes until it is killed.
static void __attribute__((noreturn)) victim(const char *sock, int ready_fd) {
	secondary_eal_init(sock);
	struct gr_api_client *c = secondary_connect(sock, GR_API_TRANSPORT_SHM, "victim");
	uint32_t backing = secondary_channel_list(c, getpid(), NULL);
	CHECK(backing == GR_SHM_BACKING_MEMZONE, "victim: backing %#x, expected memzone", backing);
	secondary_pipeline(c, GR_SHM_ECHO, ECHO_SIZE, WARM_CALLS);
	CHECK(write(ready_fd, "r", 1) == 1, "victim: write: %s", strerror(errno));
	for (;;)
		secondary_pipeline(c, GR_SHM_ECHO, ECHO_SIZE, WARM_CALLS);
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	const char *sock = argv[1];
	watchdog_start(TEST_WATCHDOG_S);
	// No victim outlives the test, however it fails.
	children_guard();

	// The parent is no secondary: it watches from the socket.
	struct gr_api_client *mon = secondary_connect(sock, GR_API_TRANSPORT_SOCKET, "monitor");
	struct gr_shm_stats_resp before, during, after;
	secondary_stats(mon, &before);

	int ready[2];
	CHECK(pipe(ready) == 0, "pipe: %s", strerror(errno));
	pid_t pid = child_fork();
	if (pid == 0) {
		close(ready[0]);
		victim(sock, ready[1]);
	}
	close(ready[1]);
	char byte;
	CHECK(read(ready[0], &byte, 1) == 1, "the victim died before it was busy");
	close(ready[0]);

	secondary_stats(mon, &during);
	CHECK(during.memzones == before.memzones + 1 && during.channels == before.channels + 1,
	      "with the victim attached: %u memzones, %u channels (before: %u, %u)",
	      during.memzones,
	      during.channels,
	      before.memzones,
	      before.channels);
	CHECK(secondary_channel_list(mon, pid, NULL) == GR_SHM_BACKING_MEMZONE,
	      "the victim's channel is not listed as a memzone");

	uint64_t start = monotonic_ns();
	int status = child_kill(pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "the victim ended with status %#x before the kill",
	      status);

	secondary_wait_stats(mon, before.memzones, before.channels, FREE_WAIT_MS, &after);
	printf("victim killed: memzone freed after %llu ms: ok\n",
	       (unsigned long long)((monotonic_ns() - start) / 1000000));
	CHECK(after.total.detach_lease == before.total.detach_lease + 1,
	      "detaches by lease: %llu, expected %llu",
	      (unsigned long long)after.total.detach_lease,
	      (unsigned long long)before.total.detach_lease + 1);
	CHECK(secondary_channel_list(mon, pid, NULL) == 0, "the victim's channel is still listed");

	// The daemon still serves: the monitor, and a new channel client.
	secondary_pipeline(mon, GR_PING2, GR_PING2_LEN, SERVE_CALLS);
	struct gr_api_client *c = secondary_connect(sock, GR_API_TRANSPORT_SHM, "after the kill");
	secondary_pipeline(c, GR_PING2, GR_PING2_LEN, SERVE_CALLS);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	printf("daemon still serves socket and channel clients: ok\n");

	CHECK(gr_api_client_disconnect(mon) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
