// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Channel clients killed with SIGKILL in the middle of their requests: the
// daemon must see each lease end, detach the channel and free everything it
// held. After KILL_ROUNDS such clients, the daemon's channel and memzone
// counts and open descriptors come back to what they were before, none of
// the killed clients' regions is still mapped, and GR_SHM_STATS counts each
// end as a lease detach.
//
// usage: shm_client_kill SOCK (under test/with_daemon.sh)

#include "check.h"
#include "ping2_load.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define KILL_ROUNDS 20
// The child is killed 1 to KILL_DELAY_MAX_US after it reported its first
// echo: it is then deep in its pipelined loop.
#define KILL_DELAY_MIN_US 1000
#define KILL_DELAY_MAX_US 5000
// Requests in flight in each child.
#define CHILD_DEPTH 8
// Bound of a child's connect, attach and first echo.
#define CHILD_READY_MS 5000
// Bound of the daemon's cleanup after the last kill, and its polling period.
#define CLEANUP_WAIT_NS (2 * 1000000000ull)
#define CLEANUP_POLL_US 10000
// A channel's memfd region, as /proc/PID/maps names it: "/memfd:NAME (deleted)".
#define CHANNEL_MAP_FMT "/memfd:%s "

struct daemon_state {
	unsigned fds; // entries of /proc/PID/fd
	unsigned channel_maps; // regions of the killed clients' channels still mapped
	struct gr_shm_stats_resp stats;
};

static const char *sock_path;
static pid_t daemon_pid;
static struct gr_api_client *ctl; // control client, on the socket
// Requests of the last client, counted exactly in the totals after it
// detached; watched that long (the channel is freed within a grace period).
#define COUNTED_CALLS 100
#define COUNT_WATCH_POLLS 20
#define COUNT_WATCH_US 10000
// The channels of the killed clients, from GR_SHM_CHANNEL_LIST.
static char channel_names[KILL_ROUNDS][GR_SHM_NAME_LEN];
static unsigned n_channel_names;

// Mappings of pid that belong to the channels named in names.
static unsigned count_channel_maps(pid_t pid, char (*names)[GR_SHM_NAME_LEN], unsigned n_names) {
	char path[64], line[512], tag[GR_SHM_NAME_LEN + 16];
	unsigned n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		for (unsigned i = 0; i < n_names; i++) {
			snprintf(tag, sizeof(tag), CHANNEL_MAP_FMT, names[i]);
			if (strstr(line, tag) != NULL)
				n++;
		}
	}
	fclose(f);
	return n;
}

// The name of client_pid's channel, from GR_SHM_CHANNEL_LIST.
static void channel_name_of(pid_t client_pid, char *name) {
	long id = gr_api_client_send(ctl, GR_SHM_CHANNEL_LIST, 0, NULL);
	bool found = false;
	void *rx;
	size_t len;
	int ret;

	CHECK(id > 0, "send GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	while ((ret = gr_api_client_stream_next(ctl, (uint32_t)id, &rx, &len)) == 1) {
		struct gr_shm_channel_info info;
		CHECK(len == sizeof(info), "channel info of %zu bytes", len);
		memcpy(&info, rx, sizeof(info));
		free(rx);
		if (info.client_pid == client_pid) {
			CHECK(!found, "two channels of pid %d", (int)client_pid);
			found = true;
			memcpy(name, info.name, GR_SHM_NAME_LEN);
			name[GR_SHM_NAME_LEN - 1] = '\0';
		}
	}
	CHECK(ret == 0, "GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	CHECK(found, "no channel of pid %d in GR_SHM_CHANNEL_LIST", (int)client_pid);
}

static void daemon_state_get(struct daemon_state *s) {
	long id = gr_api_client_send(ctl, GR_SHM_STATS, 0, NULL);
	CHECK(id > 0, "send GR_SHM_STATS: %s", strerror(errno));
	long len = gr_api_client_recv_into(ctl, (uint32_t)id, &s->stats, sizeof(s->stats));
	CHECK(len == (long)sizeof(s->stats), "GR_SHM_STATS: %ld: %s", len, strerror(errno));
	s->fds = proc_count_entries(daemon_pid, "fd");
	s->channel_maps = count_channel_maps(daemon_pid, channel_names, n_channel_names);
}

static void daemon_state_print(const char *when, const struct daemon_state *s) {
	printf("%s: %u channels, %u memzones, %u fds, %u channel maps, detaches %llu (lease %llu, "
	       "corrupt "
	       "%llu, slow %llu), requests %llu\n",
	       when,
	       s->stats.channels,
	       s->stats.memzones,
	       s->fds,
	       s->channel_maps,
	       (unsigned long long)s->stats.total.detaches,
	       (unsigned long long)s->stats.total.detach_lease,
	       (unsigned long long)s->stats.total.detach_corrupt,
	       (unsigned long long)s->stats.total.detach_slow,
	       (unsigned long long)s->stats.total.requests);
}

// The child: attach, tell the parent after the first echo, then keep
// pipelined GR_PING2 requests in flight until killed.
static void __attribute__((noreturn)) child_run(int ready_fd) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SHM,
		.spin_us = -1,
		.version = "shm_client_kill child",
	};
	static _Atomic uint64_t done;

	struct gr_api_client *c = gr_api_client_connect_opts(sock_path, &opts);
	CHECK(c != NULL, "child: connect over shm: %s", strerror(errno));
	long len = gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL);
	CHECK(len == 0, "child: GR_PING: %ld: %s", len, strerror(errno));
	CHECK(write(ready_fd, "r", 1) == 1, "child: write: %s", strerror(errno));
	ping2_load_until_killed(c, CHILD_DEPTH, &done);
}

// One round: a child attached and busy, killed with SIGKILL, reaped.
static void kill_round(unsigned round) {
	int pipe_fds[2];
	char byte;

	CHECK(pipe(pipe_fds) == 0, "pipe: %s", strerror(errno));
	pid_t pid = child_fork();
	if (pid == 0) {
		close(pipe_fds[0]);
		child_run(pipe_fds[1]);
	}
	close(pipe_fds[1]);

	struct pollfd pfd = {.fd = pipe_fds[0], .events = POLLIN};
	int n = poll(&pfd, 1, CHILD_READY_MS);
	ssize_t got = n > 0 ? read(pipe_fds[0], &byte, 1) : 0;
	close(pipe_fds[0]);
	if (got != 1) {
		// The child failed (it said why) or hung: end it and fail.
		child_kill(pid);
		CHECK(false,
		      "round %u: child %d not ready within %d ms",
		      round,
		      (int)pid,
		      CHILD_READY_MS);
	}
	// Its channel, and the region the daemon maps for it: they must go.
	char *name = channel_names[n_channel_names++];
	channel_name_of(pid, name);
	CHECK(count_channel_maps(daemon_pid, &channel_names[n_channel_names - 1], 1) > 0,
	      "round %u: the daemon does not map channel %s",
	      round,
	      name);
	usleep(KILL_DELAY_MIN_US + (unsigned)random() % (KILL_DELAY_MAX_US - KILL_DELAY_MIN_US));

	int status = child_kill(pid);
	// Exited on its own: it met an error before the kill (its message is above).
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "round %u: child %d ended with status %#x before it was killed",
	      round,
	      (int)pid,
	      status);
}

static bool back_to_baseline(const struct daemon_state *now, const struct daemon_state *base) {
	return now->stats.channels == base->stats.channels &&
	       now->stats.memzones == base->stats.memzones && now->fds == base->fds &&
	       now->channel_maps == 0;
}

int main(int argc, char **argv) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SOCKET,
		.spin_us = -1,
		.version = "shm_client_kill control",
	};
	struct daemon_state base, now;

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	sock_path = argv[1];
	daemon_pid = daemon_pid_from_env();
	watchdog_start(TEST_WATCHDOG_S);
	// No child outlives the test, however it fails.
	children_guard();
	unsigned seed = (unsigned)monotonic_ns();
	srandom(seed);
	printf("kill delay seed %u\n", seed);

	ctl = gr_api_client_connect_opts(sock_path, &opts);
	CHECK(ctl != NULL, "control client: connect: %s", strerror(errno));
	daemon_state_get(&base);
	daemon_state_print("baseline", &base);

	for (unsigned round = 0; round < KILL_ROUNDS; round++)
		kill_round(round);

	uint64_t start = monotonic_ns();
	for (;;) {
		daemon_state_get(&now);
		if (back_to_baseline(&now, &base) || monotonic_ns() - start > CLEANUP_WAIT_NS)
			break;
		usleep(CLEANUP_POLL_US);
	}
	daemon_state_print("after the kills", &now);
	printf("cleanup took %.1f ms\n", (double)(monotonic_ns() - start) / 1e6);

	CHECK(now.stats.channels == base.stats.channels,
	      "%u channels left, %u before",
	      now.stats.channels,
	      base.stats.channels);
	CHECK(now.fds == base.fds, "the daemon holds %u fds, %u before", now.fds, base.fds);
	CHECK(now.stats.memzones == base.stats.memzones,
	      "%u memzones left, %u before",
	      now.stats.memzones,
	      base.stats.memzones);
	CHECK(now.channel_maps == 0,
	      "the daemon still maps %u regions of the killed clients' channels",
	      now.channel_maps);
	CHECK(now.stats.total.detach_lease - base.stats.total.detach_lease == KILL_ROUNDS,
	      "%llu lease detaches counted, %d clients killed",
	      (unsigned long long)(now.stats.total.detach_lease - base.stats.total.detach_lease),
	      KILL_ROUNDS);
	CHECK(now.stats.total.detaches - base.stats.total.detaches == KILL_ROUNDS,
	      "%llu detaches counted, %d clients killed",
	      (unsigned long long)(now.stats.total.detaches - base.stats.total.detaches),
	      KILL_ROUNDS);
	CHECK(now.stats.total.detach_corrupt == base.stats.total.detach_corrupt &&
		      now.stats.total.detach_slow == base.stats.total.detach_slow,
	      "killed clients counted as corrupt or slow");
	// Each child had its first answer on the channel before it was killed.
	CHECK(now.stats.total.requests - base.stats.total.requests >= KILL_ROUNDS,
	      "only %llu channel requests served",
	      (unsigned long long)(now.stats.total.requests - base.stats.total.requests));

	// The daemon still serves: the control client, and a fresh channel.
	long len = gr_api_client_send_recv_len(ctl, GR_PING, 0, NULL, NULL);
	CHECK(len == 0, "control GR_PING: %ld: %s", len, strerror(errno));
	opts.transport = GR_API_TRANSPORT_SHM;
	struct gr_api_client *c = gr_api_client_connect_opts(sock_path, &opts);
	CHECK(c != NULL, "fresh client: connect over shm: %s", strerror(errno));
	daemon_state_get(&base);
	for (int i = 0; i < COUNTED_CALLS; i++) {
		len = gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL);
		CHECK(len == 0, "fresh client GR_PING: %ld: %s", len, strerror(errno));
	}
	gr_api_client_disconnect(c);

	// Its requests stay counted exactly once: retired at the detach, and
	// what the poller counted since added when the channel is freed after
	// the grace period (none here: every request was answered).
	for (int i = 0; i < COUNT_WATCH_POLLS; i++) {
		daemon_state_get(&now);
		CHECK(now.stats.channels <= base.stats.channels,
		      "%u channels after the disconnect, %u before",
		      now.stats.channels,
		      base.stats.channels);
		if (now.stats.channels == base.stats.channels - 1)
			CHECK(now.stats.total.requests - base.stats.total.requests == COUNTED_CALLS,
			      "%llu requests counted for %d served",
			      (unsigned long long
			      )(now.stats.total.requests - base.stats.total.requests),
			      COUNTED_CALLS);
		usleep(COUNT_WATCH_US);
	}
	CHECK(now.stats.channels == base.stats.channels - 1,
	      "the fresh client's channel was not detached");
	gr_api_client_disconnect(ctl);
	return EXIT_SUCCESS;
}
