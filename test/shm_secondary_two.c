// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Two DPDK secondaries and one memfd client on one daemon at once: while all
// three are attached the daemon lists 2 memzone channels (the secondaries'
// pids) and 1 memfd channel (the parent's), then all three run pipelined
// GR_PING2 and GR_SHM_ECHO side by side, every answer checked.
//
// usage: shm_secondary_two SOCK (under test/with_daemon.sh --hugepages on)

#include "check.h"
#include "secondary.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <rte_eal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SECONDARIES 2
#define PING2_CALLS 4000
#define ECHO_SIZE 3000
#define ECHO_CALLS 2000

// Both kinds of request, on whichever channel c has.
static void run_load(struct gr_api_client *c) {
	secondary_pipeline(c, GR_PING2, GR_PING2_LEN, PING2_CALLS);
	secondary_pipeline(c, GR_SHM_ECHO, ECHO_SIZE, ECHO_CALLS);
}

// One secondary: attach, say so, wait for the start (EOF on go_fd), load.
static void __attribute__((noreturn)) secondary(const char *sock, int ready_fd, int go_fd) {
	char byte;

	secondary_eal_init(sock);
	struct gr_api_client *c = secondary_connect(sock, GR_API_TRANSPORT_AUTO, "secondary");
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SHM,
	      "secondary %d: not on shm: %s",
	      (int)getpid(),
	      gr_api_client_transport_reason(c));
	CHECK(write(ready_fd, "r", 1) == 1, "write: %s", strerror(errno));
	CHECK(read(go_fd, &byte, 1) == 0, "go pipe: expected EOF");
	run_load(c);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	CHECK(rte_eal_cleanup() == 0, "EAL cleanup failed");
	exit(EXIT_SUCCESS);
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	const char *sock = argv[1];
	watchdog_start(TEST_WATCHDOG_S);
	// No secondary outlives the test, however it fails.
	children_guard();

	pid_t pids[SECONDARIES];
	int ready[2], go[2];
	CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipe: %s", strerror(errno));
	for (unsigned i = 0; i < SECONDARIES; i++) {
		pids[i] = child_fork();
		if (pids[i] == 0) {
			close(ready[0]);
			close(go[1]);
			secondary(sock, ready[1], go[0]);
		}
	}
	close(ready[1]);
	close(go[0]);

	// The parent is no secondary: a memfd channel.
	struct gr_api_client *c = secondary_connect(sock, GR_API_TRANSPORT_SHM, "memfd client");
	for (unsigned i = 0; i < SECONDARIES; i++) {
		char byte;
		CHECK(read(ready[0], &byte, 1) == 1, "a secondary died before it attached");
	}

	struct secondary_channels counts;
	CHECK(secondary_channel_list(c, getpid(), &counts) == GR_SHM_BACKING_MEMFD,
	      "the parent's channel is not listed as memfd");
	for (unsigned i = 0; i < SECONDARIES; i++)
		CHECK(secondary_channel_list(c, pids[i], NULL) == GR_SHM_BACKING_MEMZONE,
		      "secondary %d: its channel is not listed as a memzone",
		      (int)pids[i]);
	CHECK(counts.memzone == SECONDARIES && counts.memfd == 1 && counts.total == SECONDARIES + 1,
	      "channels: %u memzone, %u memfd, %u in all; expected %d, 1, %d",
	      counts.memzone,
	      counts.memfd,
	      counts.total,
	      SECONDARIES,
	      SECONDARIES + 1);
	struct gr_shm_stats_resp stats;
	secondary_stats(c, &stats);
	CHECK(stats.memzones == SECONDARIES,
	      "%u channel memzones, expected %d",
	      stats.memzones,
	      SECONDARIES);
	printf("2 memzone channels and 1 memfd channel listed: ok\n");

	// Everyone at once.
	close(go[1]);
	run_load(c);
	for (unsigned i = 0; i < SECONDARIES; i++) {
		int status = child_reap(pids[i]);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "secondary %d ended with status %#x",
		      (int)pids[i],
		      status);
	}
	printf("3 clients, every answer checked: ok\n");

	secondary_wait_stats(c, 0, 1, 5000, &stats);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
