// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// gr_api_client_fd() wakes when the daemon dies: a controller asleep on it
// (poll_prepare said so, epoll_wait) with a request in flight sees it readable once
// the daemon is killed with SIGKILL, and its next call, the try_recv after
// poll_done, fails with ECONNRESET. The daemon is stopped (SIGSTOP) while
// the request goes, so that no response can be what wakes the fd.
//
// usage: client_fd_daemon_death SOCK socket|shm
// (under test/with_daemon.sh --daemon-killed)

#include "check.h"
#include "daemon_stop.h"
#include "transport_arg.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The fd must not be readable while the daemon is stopped: a wait of this
// long shows it.
#define QUIET_MS 200
// ... and must become readable promptly once the daemon is dead: its
// sockets close as it dies, within a scheduling delay.
#define WAKE_MS 5000

// An epoll_wait() on ep, which holds the client's fd, as a controller's.
static int fd_wait(int ep, int ms) {
	struct epoll_event ev;
	int n;
	do
		n = epoll_wait(ep, &ev, 1, ms);
	while (n < 0 && errno == EINTR);
	CHECK(n >= 0, "epoll_wait: %s", strerror(errno));
	return n;
}

int main(int argc, char **argv) {
	CHECK(argc == 3, "usage: %s SOCK socket|shm", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	pid_t daemon = daemon_pid_from_env();

	struct gr_api_client *c = connect_forced(argv[1], argv[2], "client_fd_daemon_death");
	int fd = gr_api_client_fd(c);
	CHECK(fd >= 0, "gr_api_client_fd: %s", strerror(errno));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN};
	CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll: %s", strerror(errno));

	daemon_stop(daemon);
	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	CHECK(id > 0, "send: %s", strerror(errno));
	CHECK(gr_api_client_poll_prepare(c) == 0, "poll_prepare: something waits already");
	CHECK(fd_wait(ep, QUIET_MS) == 0, "fd readable while the daemon is stopped");

	uint64_t start = monotonic_ns();
	CHECK(kill(daemon, SIGKILL) == 0, "SIGKILL: %s", strerror(errno));
	CHECK(fd_wait(ep, WAKE_MS) == 1, "fd not readable %d ms after the daemon died", WAKE_MS);
	uint64_t took_us = (monotonic_ns() - start) / 1000;

	CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));
	long len = gr_api_client_try_recv(c, (uint32_t)id, NULL);
	CHECK(len < 0 && errno == ECONNRESET,
	      "try_recv after the daemon died: %ld, %s (expected ECONNRESET)",
	      len,
	      strerror(errno));
	CHECK(gr_api_client_poll_prepare(c) < 0 && errno == ECONNRESET,
	      "poll_prepare after the daemon died: expected ECONNRESET");
	printf("%s: fd readable %llu us after SIGKILL, try_recv: ECONNRESET: ok\n",
	       argv[2],
	       (unsigned long long)took_us);
	close(ep);
	gr_api_client_disconnect(c);
	return EXIT_SUCCESS;
}
