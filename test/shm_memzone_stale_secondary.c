// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A DPDK secondary the daemon detached while it was stopped cannot write into
// a memzone the daemon handed to someone else. Secondary A fills its response
// ring and never reads it, then stops itself (SIGSTOP); the daemon detaches
// it as a slow client. Secondary B attaches while A is stopped: it is not
// given A's zone, which stays out of the pool while A lives. A resumes and
// sends: the send fails with ECONNRESET. B's channel sees exactly the
// requests B sent, and B is served throughout. Once A has exited, its zone
// goes back to the pool.
//
// usage: shm_memzone_stale_secondary SOCK (under test/with_daemon.sh --hugepages on)

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

// The daemon detaches a client whose response ring stays full for 2 s; the
// bound leaves room for a loaded machine.
#define DETACH_WAIT_MS 10000
// Bound of a wait for the daemon's counters of a channel, and its polling.
#define COUNTERS_WAIT_MS 5000
#define COUNTERS_POLL_US 2000
// The daemon frees a zone one RCU grace period after the lease ends, or once
// the process that had it has exited: milliseconds.
#define FREE_WAIT_MS 5000
// B's requests before and after A's attempt.
#define B_CALLS_BEFORE 1000
#define B_CALLS_AFTER 1000

// A's channel, as the daemon lists it (GR_SHM_CHANNEL_LIST). Returns true if
// pid has a channel.
static bool channel_info_of(struct gr_api_client *c, pid_t pid, struct gr_shm_channel_info *out) {
	struct gr_shm_channel_info *info;
	bool found = false;
	size_t len;
	int ret;

	long id = gr_api_client_send(c, GR_SHM_CHANNEL_LIST, 0, NULL);
	CHECK(id > 0, "send GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, (void **)&info, &len)) == 1) {
		CHECK(len == sizeof(*info), "channel list entry of %zu bytes", len);
		if (info->client_pid == pid) {
			CHECK(!found, "pid %d has two channels", (int)pid);
			*out = *info;
			out->name[sizeof(out->name) - 1] = '\0';
			found = true;
		}
		free(info);
	}
	CHECK(ret == 0, "GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	return found;
}

enum counter {
	COUNTER_RESPONSES,
	COUNTER_OVERFLOWS,
};

// Poll the daemon until pid's channel counted at least n responses or
// overflows (what).
static void wait_counter(struct gr_api_client *mon, pid_t pid, enum counter what, uint64_t n) {
	uint64_t deadline = monotonic_ns() + COUNTERS_WAIT_MS * 1000000ull;
	struct gr_shm_channel_info info;

	for (;;) {
		CHECK(channel_info_of(mon, pid, &info), "pid %d has no channel", (int)pid);
		uint64_t v = what == COUNTER_RESPONSES ? info.counters.responses
						       : info.counters.overflows;
		if (v >= n)
			return;
		CHECK(monotonic_ns() < deadline,
		      "pid %d: %s %llu after %d ms, expected %llu",
		      (int)pid,
		      what == COUNTER_RESPONSES ? "responses" : "overflows",
		      (unsigned long long)v,
		      COUNTERS_WAIT_MS,
		      (unsigned long long)n);
		usleep(COUNTERS_POLL_US);
	}
}

// Secondary A: attach, write its zone's name to ready_fd, make the daemon
// hold responses it cannot take, say so, stop; once continued, send.
static void __attribute__((noreturn)) stale_secondary(const char *sock, int ready_fd) {
	static uint8_t echo[GR_API_MAX_MSG_LEN];
	uint8_t ping[GR_PING2_LEN] = {0};
	struct gr_shm_channel_info info;

	secondary_eal_init(sock);
	struct gr_api_client *mon = secondary_connect(sock, GR_API_TRANSPORT_SOCKET, "A monitor");
	struct gr_api_client *c = secondary_connect(sock, GR_API_TRANSPORT_SHM, "A");
	CHECK(channel_info_of(mon, getpid(), &info) && info.backing == GR_SHM_BACKING_MEMZONE,
	      "A: no memzone channel");
	CHECK(write(ready_fd, info.name, sizeof(info.name)) == sizeof(info.name),
	      "A: write: %s",
	      strerror(errno));

	// Two echoes of the longest payload, never read: one response fills
	// the response ring, the daemon keeps the second in its backlog. The
	// second goes once the first is answered, so that the request ring is
	// empty both times and no send has to take responses to make room.
	memset(echo, 0xa5, sizeof(echo));
	CHECK(gr_api_client_send(c, GR_SHM_ECHO, sizeof(echo), echo) > 0,
	      "A: send: %s",
	      strerror(errno));
	wait_counter(mon, getpid(), COUNTER_RESPONSES, 1);
	CHECK(gr_api_client_send(c, GR_SHM_ECHO, sizeof(echo), echo) > 0,
	      "A: send: %s",
	      strerror(errno));
	wait_counter(mon, getpid(), COUNTER_OVERFLOWS, 1);
	CHECK(write(ready_fd, "s", 1) == 1, "A: write: %s", strerror(errno));
	CHECK(raise(SIGSTOP) == 0, "A: raise(SIGSTOP): %s", strerror(errno));

	// Continued: the daemon detached this channel meanwhile.
	long id = gr_api_client_send(c, GR_PING2, sizeof(ping), ping);
	CHECK(id < 0 && errno == ECONNRESET,
	      "A: send after the detach returned %ld (%s), expected ECONNRESET",
	      id,
	      id < 0 ? strerror(errno) : "sent");
	printf("A: send after the detach: ECONNRESET: ok\n");
	// The handle is dead: its disconnect only frees it.
	gr_api_client_disconnect(c);
	CHECK(gr_api_client_disconnect(mon) == 0, "A: disconnect: %s", strerror(errno));
	exit(EXIT_SUCCESS);
}

// Secondary B: attach, B_CALLS_BEFORE requests, say so, wait for go_fd,
// B_CALLS_AFTER requests, say so, wait for EOF on go_fd, disconnect.
static void __attribute__((noreturn)) next_secondary(const char *sock, int ready_fd, int go_fd) {
	char byte;

	secondary_eal_init(sock);
	struct gr_api_client *c = secondary_connect(sock, GR_API_TRANSPORT_SHM, "B");
	secondary_pipeline(c, GR_PING2, GR_PING2_LEN, B_CALLS_BEFORE);
	CHECK(write(ready_fd, "r", 1) == 1, "B: write: %s", strerror(errno));
	CHECK(read(go_fd, &byte, 1) == 1, "B: go pipe: %s", strerror(errno));
	secondary_pipeline(c, GR_PING2, GR_PING2_LEN, B_CALLS_AFTER);
	CHECK(write(ready_fd, "d", 1) == 1, "B: write: %s", strerror(errno));
	CHECK(read(go_fd, &byte, 1) == 0, "B: go pipe: expected EOF");
	CHECK(gr_api_client_disconnect(c) == 0, "B: disconnect: %s", strerror(errno));
	CHECK(rte_eal_cleanup() == 0, "B: EAL cleanup failed");
	exit(EXIT_SUCCESS);
}

static void read_byte(int fd, char want, const char *who) {
	char byte;

	CHECK(read(fd, &byte, 1) == 1 && byte == want, "%s died before it said '%c'", who, want);
}

// The daemon's stats once A's channel is gone: detached as slow.
static void wait_detached(struct gr_api_client *mon, const struct gr_shm_stats_resp *before) {
	uint64_t deadline = monotonic_ns() + DETACH_WAIT_MS * 1000000ull;
	struct gr_shm_stats_resp now;

	for (;;) {
		secondary_stats(mon, &now);
		if (now.channels == before->channels &&
		    now.total.detach_slow == before->total.detach_slow + 1)
			return;
		CHECK(monotonic_ns() < deadline,
		      "A still attached after %d ms (%u channels, %llu slow detaches)",
		      DETACH_WAIT_MS,
		      now.channels,
		      (unsigned long long)now.total.detach_slow);
		usleep(COUNTERS_POLL_US);
	}
}

// The parent's monitor: a global, so that the secondaries, which inherit
// it and exit without it, hold it reachable (LeakSanitizer).
static struct gr_api_client *mon;

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	const char *sock = argv[1];
	watchdog_start(TEST_WATCHDOG_S);
	// No secondary outlives the test, however it fails.
	children_guard();

	// The parent is no secondary: it watches from the socket.
	mon = secondary_connect(sock, GR_API_TRANSPORT_SOCKET, "monitor");
	struct gr_shm_stats_resp before, now;
	secondary_stats(mon, &before);

	int a_ready[2], b_ready[2], b_go[2];
	CHECK(pipe(a_ready) == 0, "pipe: %s", strerror(errno));
	pid_t a = child_fork();
	if (a == 0) {
		close(a_ready[0]);
		stale_secondary(sock, a_ready[1]);
	}
	close(a_ready[1]);
	char a_zone[GR_SHM_NAME_LEN];
	CHECK(read(a_ready[0], a_zone, sizeof(a_zone)) == sizeof(a_zone),
	      "A died before it attached");
	a_zone[sizeof(a_zone) - 1] = '\0';
	read_byte(a_ready[0], 's', "A");
	int status;
	CHECK(waitpid(a, &status, WUNTRACED) == a && WIFSTOPPED(status),
	      "A did not stop (status %#x)",
	      status);
	printf("A on zone %s holds a response backlog, stopped\n", a_zone);

	wait_detached(mon, &before);
	printf("A detached as a slow client while stopped\n");

	CHECK(pipe(b_ready) == 0 && pipe(b_go) == 0, "pipe: %s", strerror(errno));
	pid_t b = child_fork();
	if (b == 0) {
		close(b_ready[0]);
		close(b_go[1]);
		next_secondary(sock, b_ready[1], b_go[0]);
	}
	close(b_ready[1]);
	close(b_go[0]);
	read_byte(b_ready[0], 'r', "B");
	struct gr_shm_channel_info b_info;
	CHECK(channel_info_of(mon, b, &b_info) && b_info.backing == GR_SHM_BACKING_MEMZONE,
	      "B has no memzone channel");
	CHECK(strcmp(b_info.name, a_zone) != 0, "B was given A's zone %s while A lives", a_zone);
	secondary_stats(mon, &now);
	CHECK(now.memzones == before.memzones + 2,
	      "%u memzones in use, expected %u: B's and A's, held while A lives",
	      now.memzones,
	      before.memzones + 2);
	printf("B on zone %s; A's zone held while A lives: ok\n", b_info.name);

	CHECK(kill(a, SIGCONT) == 0, "kill -CONT %d: %s", (int)a, strerror(errno));
	status = child_reap(a);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "A ended with status %#x", status);

	CHECK(write(b_go[1], "g", 1) == 1, "write: %s", strerror(errno));
	read_byte(b_ready[0], 'd', "B");
	CHECK(channel_info_of(mon, b, &b_info), "B's channel is gone");
	CHECK(b_info.counters.requests == B_CALLS_BEFORE + B_CALLS_AFTER,
	      "B's channel counted %llu requests, B sent %d",
	      (unsigned long long)b_info.counters.requests,
	      B_CALLS_BEFORE + B_CALLS_AFTER);
	printf("B served throughout, its channel saw only its own %d requests: ok\n",
	       B_CALLS_BEFORE + B_CALLS_AFTER);

	// A has exited: its zone is back; then B's too.
	secondary_wait_stats(mon, before.memzones + 1, before.channels + 1, FREE_WAIT_MS, &now);
	close(b_go[1]);
	status = child_reap(b);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "B ended with status %#x", status);
	secondary_wait_stats(mon, before.memzones, before.channels, FREE_WAIT_MS, &now);
	printf("A's and B's zones back in the pool: ok\n");

	CHECK(gr_api_client_disconnect(mon) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
