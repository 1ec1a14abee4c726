// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A connected client whose daemon is killed with SIGKILL: its next calls
// fail promptly with ECONNRESET or EPIPE, never hang, and never raise
// SIGPIPE (left at its default action here, so it would kill the test).
//
// usage: dead_daemon SOCK socket|shm
// (under test/with_daemon.sh --daemon-killed)

#include "check.h"
#include "transport_arg.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A failure the client sees from a dead daemon comes from the socket at once;
// a second is far beyond any scheduling delay.
#define PROMPT_NS 1000000000ull
// How long the kernel may take to tear down a killed process.
#define DEATH_WAIT_NS (5 * 1000000000ull)
#define DEATH_POLL_US 1000

// True once pid has exited (gone, or a zombie: its files are closed).
static bool process_dead(pid_t pid) {
	char path[64], stat[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return true;
	size_t n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	const char *state = strrchr(stat, ')');
	return state == NULL || state[1] == '\0' || state[2] == 'Z' || state[2] == 'X';
}

static void kill_daemon(pid_t pid) {
	CHECK(kill(pid, SIGKILL) == 0, "kill -9 %d: %s", (int)pid, strerror(errno));
	uint64_t deadline = monotonic_ns() + DEATH_WAIT_NS;
	while (!process_dead(pid)) {
		CHECK(monotonic_ns() < deadline, "daemon %d still runs after SIGKILL", (int)pid);
		usleep(DEATH_POLL_US);
	}
}

static bool daemon_offers_channels(const char *sock) {
	struct gr_api_client_opts opts = {.transport = GR_API_TRANSPORT_SOCKET, .spin_us = -1};
	struct gr_api_client *c = gr_api_client_connect_opts(sock, &opts);
	struct gr_shm_daemon_info info;

	CHECK(c != NULL, "connect %s: %s", sock, strerror(errno));
	long id = gr_api_client_send(c, GR_SHM_DAEMON_INFO, 0, NULL);
	CHECK(id > 0, "send GR_SHM_DAEMON_INFO: %s", strerror(errno));
	long len = gr_api_client_recv_into(c, (uint32_t)id, &info, sizeof(info));
	CHECK(len == (long)sizeof(info), "GR_SHM_DAEMON_INFO: %ld: %s", len, strerror(errno));
	gr_api_client_disconnect(c);
	return info.backings != 0;
}

// A call on the dead daemon's client must fail with ECONNRESET or EPIPE
// within PROMPT_NS.
#define CHECK_FAILS_PROMPTLY(call, what)                                                           \
	do {                                                                                       \
		uint64_t start = monotonic_ns();                                                   \
		long ret = (call);                                                                 \
		int err = errno;                                                                   \
		uint64_t took = monotonic_ns() - start;                                            \
		CHECK(ret < 0, "%s succeeded after the daemon died", what);                        \
		CHECK(err == ECONNRESET || err == EPIPE,                                           \
		      "%s: errno %d (%s), expected ECONNRESET or EPIPE",                           \
		      what,                                                                        \
		      err,                                                                         \
		      strerror(err));                                                              \
		CHECK(took < PROMPT_NS,                                                            \
		      "%s took %llu ms to fail",                                                   \
		      what,                                                                        \
		      (unsigned long long)(took / 1000000));                                       \
		printf("%s: %s after %llu us: ok\n",                                               \
		       what,                                                                       \
		       strerror(err),                                                              \
		       (unsigned long long)(took / 1000));                                         \
	} while (0)

int main(int argc, char **argv) {
	CHECK(argc == 3, "usage: %s SOCK socket|shm", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	signal(SIGPIPE, SIG_DFL);

	const char *sock = argv[1];
	struct gr_api_client_opts opts = {
		.transport = transport_arg(argv[2]),
		.spin_us = -1,
		.version = "sock_dead_daemon",
	};

	struct gr_api_client *c = gr_api_client_connect_opts(sock, &opts);
	if (c == NULL && errno == ENOTSUP && opts.transport == GR_API_TRANSPORT_SHM &&
	    !daemon_offers_channels(sock)) {
		printf("SKIP: the daemon offers no shm channel\n");
		return TEST_SKIP;
	}
	CHECK(c != NULL, "connect %s (%s): %s", sock, argv[2], strerror(errno));
	CHECK(gr_api_client_transport(c) == opts.transport, "%s transport was forced", argv[2]);

	long len = gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL);
	CHECK(len == 0, "GR_PING before the kill: %ld: %s", len, strerror(errno));

	kill_daemon(daemon_pid_from_env());

	CHECK_FAILS_PROMPTLY(gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL), "GR_PING");

	// A large send is where a socket would raise SIGPIPE.
	void *big = calloc(1, GR_API_MAX_MSG_LEN);
	CHECK(big != NULL, "calloc");
	CHECK_FAILS_PROMPTLY(
		gr_api_client_send_recv_len(c, GR_SHM_ECHO, GR_API_MAX_MSG_LEN, big, NULL),
		"GR_SHM_ECHO of 128 KiB"
	);
	CHECK_FAILS_PROMPTLY(gr_api_client_send(c, GR_PING, 0, NULL), "send GR_PING");
	free(big);

	gr_api_client_disconnect(c);
	return EXIT_SUCCESS;
}
