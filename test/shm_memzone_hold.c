// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A memzone taken from a client that may still write into it stays out of
// the pool (GR_SHM_STATS counts it in use) until every process that may
// write there has let go of it. Raw clients attach memzone channels (the
// daemon hands one to whoever asks; mapping it would need EAL, which these
// writes do not), with a daemon that runs with hugepages:
//  1. cut: the daemon closes a live client's connection (an oversized
//     request): its zone stays held while the client lives, and goes back
//     once it has exited;
//  2. forked: the same, but the client forked a child that keeps the socket,
//     then exited: the zone stays held while the child holds the socket, and
//     goes back once it has closed it;
//  3. disconnect: a client that closes its own connection is let go at
//     once: its zone goes back while it still runs. Meanwhile it cost the
//     daemon the descriptors the daemon counts for it (server/fd_budget.h):
//     its connection's and a memzone channel's, in /proc/PID/fd.
//
// usage: shm_memzone_hold SOCK (against a daemon with --hugepages on)

#include "check.h"
#include "raw_sock.h"

#include <gr_api.h>
#include <gr_shm.h>
#include <shmchan.h>

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// How long the daemon may take to free a channel (its grace period) and to
// see a process exit, on a loaded machine; how long a held zone is watched
// to stay held.
#define SETTLE_MS 3000
#define HELD_WATCH_MS 500
#define POLL_US 10000
#define SETTLE_STEP_US 100000
// What a client with a memzone channel costs the daemon: its connection and
// CHANNEL_FDS_MEMZONE (server/channel.h).
#define MEMZONE_CLIENT_FDS (1 + 4)

static const char *sock_path;

// Memzones in use (handed out or held), as GR_SHM_STATS says.
static uint32_t memzones_in_use(void) {
	struct gr_shm_stats_resp st;
	struct gr_api_response resp;
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	CHECK(raw_send_request(fd, 2, GR_SHM_STATS, 0, NULL, 0) == 0, "stats: connection closed");
	CHECK(raw_recv_response(fd, &resp, &st, sizeof(st)) == 1 && resp.status == 0,
	      "stats: no answer");
	close(fd);
	return st.memzones;
}

// Wait until want memzones are in use; fail after SETTLE_MS.
static void expect_in_use(uint32_t want, const char *what) {
	uint64_t deadline = monotonic_ns() + SETTLE_MS * 1000000ull;
	uint32_t n;

	while ((n = memzones_in_use()) != want && monotonic_ns() < deadline)
		usleep(POLL_US);
	CHECK(n == want, "%s: %u memzones in use, expected %u", what, n, want);
}

// Check that want memzones stay in use for HELD_WATCH_MS.
static void expect_held(uint32_t want, const char *what) {
	uint64_t deadline = monotonic_ns() + HELD_WATCH_MS * 1000000ull;

	while (monotonic_ns() < deadline) {
		uint32_t n = memzones_in_use();
		CHECK(n == want, "%s: %u memzones in use, expected %u held", what, n, want);
		usleep(POLL_US);
	}
	printf("%s: %u memzone held\n", what, want);
}

// A connection with a memzone channel attached.
static int attach_memzone(void) {
	struct raw_attach_reply r;
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	raw_attach(fd, 2, GR_SHM_BACKING_MEMZONE, SHMCHAN_LAYOUT_VERSION, &r);
	CHECK(r.resp.status == 0 && r.attach.backing == GR_SHM_BACKING_MEMZONE,
	      "attach: status %u, backing %u: does the daemon run with hugepages?",
	      r.resp.status,
	      r.attach.backing);
	raw_close_fds(r.fds, r.n_fds);
	return fd;
}

// Make the daemon close the connection: a request over the maximum is
// answered EMSGSIZE, then the connection ends.
static void get_cut(int fd) {
	struct gr_api_request hdr = {
		.id = 3,
		.type = GR_PING,
		.payload_len = GR_API_MAX_MSG_LEN + 1};
	struct pollfd pfd = {.fd = fd, .events = POLLRDHUP};

	CHECK(raw_send_bytes(fd, &hdr, sizeof(hdr)) == 0, "oversized request: connection closed");
	raw_expect_status(fd, 3, EMSGSIZE, "oversized request");
	CHECK(poll(&pfd, 1, SETTLE_MS) == 1, "the daemon did not close the connection");
}

// Wait for the EOF of a pipe that the test closes to let a helper end.
static void end_wait(int rd) {
	char byte;
	(void)!read(rd, &byte, 1);
}

// 1. (keeper false) The client lives on after the cut, until told.
// 2. (keeper true) The client forks a child that keeps its socket, is cut,
//    and exits; the child lives on, until told.
// Either way the zone stays held until the last of them has gone.
static void cut(bool keeper) {
	const char *what = keeper ? "forked" : "cut";
	int up[2], end[2];
	char byte;

	CHECK(pipe(up) == 0 && pipe(end) == 0, "pipe");
	pid_t client = child_fork();
	if (client == 0) {
		close(end[1]);
		int fd = attach_memzone();
		// Not child_fork(): it outlives its parent, and ends when this
		// test closes end[1] (or dies).
		pid_t child = keeper ? fork() : 0;
		CHECK(child >= 0, "fork: %s", strerror(errno));
		if (keeper && child == 0) {
			end_wait(end[0]);
			close(fd);
			CHECK(write(up[1], "k", 1) == 1, "write");
			_exit(EXIT_SUCCESS);
		}
		get_cut(fd);
		CHECK(write(up[1], "c", 1) == 1, "write");
		if (!keeper)
			end_wait(end[0]);
		_exit(EXIT_SUCCESS);
	}
	CHECK(read(up[0], &byte, 1) == 1 && byte == 'c', "%s: the client died", what);
	if (keeper)
		CHECK(child_reap(client) == 0, "%s: the client failed", what);
	expect_held(
		1,
		keeper ? "forked, client exited, its child holds the socket" : "cut, client alive"
	);
	close(end[1]);
	if (keeper)
		CHECK(read(up[0], &byte, 1) == 1 && byte == 'k', "%s: the child died", what);
	else
		CHECK(child_reap(client) == 0, "%s: the client failed", what);
	expect_in_use(0, keeper ? "forked, the child closed the socket" : "cut, client exited");
	printf("%s: memzone back once %s\n",
	       what,
	       keeper ? "the socket was closed everywhere" : "the client exited");
	close(up[0]);
	close(up[1]);
	close(end[0]);
}

// 3. A client that disconnects itself, and lives on.
static void disconnect(void) {
	pid_t daemon = daemon_pid_from_env();
	// The connections of memzones_in_use() and the channels freed before
	// end a little later.
	unsigned before = proc_count_settled(daemon, "fd", SETTLE_STEP_US);
	int fd = attach_memzone();
	unsigned held = proc_count_entries(daemon, "fd");

	CHECK(held == before + MEMZONE_CLIENT_FDS,
	      "a client with a memzone channel holds %u of the daemon's descriptors, expected %d",
	      held - before,
	      MEMZONE_CLIENT_FDS);
	close(fd);
	expect_in_use(0, "disconnect, client alive");
	printf("disconnect: memzone back while the client runs on\n");
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	sock_path = argv[1];
	watchdog_start(TEST_WATCHDOG_S);
	children_guard();
	expect_in_use(0, "start");
	cut(false);
	cut(true);
	disconnect();
	return EXIT_SUCCESS;
}
