// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The client half of shm_syscall_count.sh: GR_PING2 calls over the channel
// (ping2), the same calls as an event-loop controller makes them (fd), or
// events a second handle publishes and a subscriber receives, both on
// channels (events), between two marker system calls,
// close(SYSCALL_MARK_START) and close(SYSCALL_MARK_END), which fail with
// EBADF and stand out in strace's log. Between them a busy channel should
// make next to no system call. The fd controller sends, then calls
// gr_api_client_try_recv_into() until the response is there, sleeping on
// gr_api_client_fd() (poll_prepare, epoll_wait, poll_done) only after a
// spin budget of its own, which a busy daemon never lets it reach.
//
// usage: syscall_count_client SOCK ping2|fd|events

#include "check.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

// Descriptors no process has: close() fails with EBADF, and strace shows
// the number (shm_syscall_count.sh looks for them).
#define SYSCALL_MARK_START -1000
#define SYSCALL_MARK_END -1001
#define WARMUP_CALLS 10000
#define MEASURED_CALLS 100000
#define EVENT_LEN 64
// The fd controller's spin budget: try_recv calls (tens of ns each) before
// it sleeps on the fd, some 50 us, as the library's own default budget.
#define FD_SPIN_TRIES 2048
// Its sleep: a response is owed, so a wake-up comes; this only bounds a bug.
#define FD_SLEEP_MS 1000

// The event-loop controller's epoll descriptor, -1 for blocking calls.
static int fd_ep = -1;

// Wait for the response to id as an event-loop controller does.
static long fd_recv(struct gr_api_client *c, int ep, uint32_t id, struct gr_ping2 *resp) {
	unsigned tries = 0;
	long len;
	while ((len = gr_api_client_try_recv_into(c, id, resp, sizeof(*resp))) < 0) {
		CHECK(errno == EAGAIN, "try_recv %u: %s", id, strerror(errno));
		if (++tries % FD_SPIN_TRIES != 0)
			continue;
		int ready = gr_api_client_poll_prepare(c);
		CHECK(ready >= 0, "poll_prepare: %s", strerror(errno));
		struct epoll_event ev;
		if (ready == 0)
			CHECK(epoll_wait(ep, &ev, 1, FD_SLEEP_MS) >= 0,
			      "epoll_wait: %s",
			      strerror(errno));
		CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));
	}
	return len;
}

static void ping2_calls(struct gr_api_client *c, unsigned n, unsigned salt) {
	struct gr_ping2 req, resp;

	for (unsigned i = 0; i < n; i++) {
		memcpy(req.payload, &i, sizeof(i));
		memset(req.payload + sizeof(i),
		       (int)(uint8_t)(i + salt),
		       sizeof(req.payload) - sizeof(i));
		long id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
		CHECK(id > 0, "send GR_PING2 %u: %s", i, strerror(errno));
		long len = fd_ep >= 0
				   ? fd_recv(c, fd_ep, (uint32_t)id, &resp)
				   : gr_api_client_recv_into(c, (uint32_t)id, &resp, sizeof(resp));
		CHECK(len == (long)sizeof(resp), "GR_PING2 %u: %ld: %s", i, len, strerror(errno));
		CHECK(memcmp(&req, &resp, sizeof(req)) == 0, "GR_PING2 %u: echo differs", i);
	}
}

// pub publishes n events, sub receives each before the next is published.
static void event_calls(struct gr_api_client *pub, struct gr_api_client *sub, unsigned n) {
	uint8_t payload[EVENT_LEN] = {0};
	struct gr_api_event *ev;

	for (unsigned i = 0; i < n; i++) {
		memcpy(payload, &i, sizeof(i));
		long ret = gr_api_client_send_recv_len(
			pub,
			GR_SHM_EVENT_PUBLISH,
			sizeof(payload),
			payload,
			NULL
		);
		CHECK(ret == 0, "publish %u: %s", i, strerror(errno));
		CHECK(gr_api_client_event_recv(sub, &ev) == 0, "event %u: %s", i, strerror(errno));
		CHECK(ev->ev_type == GR_SHM_EVENT_TEST && ev->payload_len == sizeof(payload) &&
			      memcmp(ev + 1, payload, sizeof(payload)) == 0,
		      "event %u differs",
		      i);
		free(ev);
	}
}

static struct gr_api_client *connect_shm(const char *sock) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SHM,
		.spin_us = -1, // the client's default spin budget
		.version = "syscall_count_client",
	};
	struct gr_api_client *c = gr_api_client_connect_opts(sock, &opts);

	CHECK(c != NULL, "connect %s over shm: %s", sock, strerror(errno));
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SHM,
	      "not on the channel: %s",
	      gr_api_client_transport_reason(c));
	return c;
}

static void calls(struct gr_api_client *c, struct gr_api_client *sub, unsigned n, unsigned salt) {
	if (sub != NULL)
		event_calls(c, sub, n);
	else
		ping2_calls(c, n, salt);
}

int main(int argc, char **argv) {
	struct gr_api_client *sub = NULL;

	CHECK(argc == 3 &&
		      (strcmp(argv[2], "ping2") == 0 || strcmp(argv[2], "fd") == 0 ||
		       strcmp(argv[2], "events") == 0),
	      "usage: %s SOCK ping2|fd|events",
	      argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	struct gr_api_client *c = connect_shm(argv[1]);
	if (strcmp(argv[2], "events") == 0) {
		struct gr_event_subscribe_req req = {.ev_type = GR_SHM_EVENT_TEST};
		sub = connect_shm(argv[1]);
		CHECK(gr_api_client_send_recv(sub, GR_EVENT_SUBSCRIBE, sizeof(req), &req, NULL) ==
			      0,
		      "subscribe: %s",
		      strerror(errno));
	} else if (strcmp(argv[2], "fd") == 0) {
		int fd = gr_api_client_fd(c);
		CHECK(fd >= 0, "gr_api_client_fd: %s", strerror(errno));
		fd_ep = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = {.events = EPOLLIN};
		CHECK(fd_ep >= 0 && epoll_ctl(fd_ep, EPOLL_CTL_ADD, fd, &ev) == 0,
		      "epoll: %s",
		      strerror(errno));
	}

	calls(c, sub, WARMUP_CALLS, 0);
	uint64_t start = monotonic_ns();
	CHECK(close(SYSCALL_MARK_START) < 0 && errno == EBADF, "start marker");
	calls(c, sub, MEASURED_CALLS, 1);
	CHECK(close(SYSCALL_MARK_END) < 0 && errno == EBADF, "end marker");
	double s = (double)(monotonic_ns() - start) / 1e9;
	printf("%d %s in %.3f s: %.0f/s\n",
	       MEASURED_CALLS,
	       sub != NULL	 ? "events published and received"
	       : fd_ep >= 0 ? "GR_PING2 calls through the fd path"
			    : "GR_PING2 calls",
	       s,
	       MEASURED_CALLS / s);

	if (fd_ep >= 0)
		close(fd_ep);
	if (sub != NULL)
		CHECK(gr_api_client_disconnect(sub) == 0, "disconnect: %s", strerror(errno));
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
