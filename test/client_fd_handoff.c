// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Request/response hand-offs through the event-loop path of the client
// library, as a controller drives it: gr_api_client_poll_prepare(), then
// epoll_wait() on gr_api_client_fd() only when it says nothing waits, then
// gr_api_client_poll_done() and gr_api_client_try_recv_into() for every
// request in flight, each answered one replaced by a new one. A lost
// wake-up leaves epoll_wait() asleep with requests in flight: any wait over
// STALL_MS fails the test. Every echo is checked. Run with the daemon
// spinning and with it always sleeping (-S 0): each hand-off then goes
// through both doorbells.
//
// usage: client_fd_handoff SOCK socket|shm COUNT DEPTH
// (under test/with_daemon.sh)

#include "check.h"
#include "transport_arg.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

// A wake-up the daemon owes us comes within microseconds when it is not
// descheduled; 2 s is far beyond any scheduling delay of a loaded machine,
// and a lost wake-up never comes at all.
#define STALL_MS 2000
// After a stall, how long to wait for a late wake-up, to tell a stall from a
// lost wake-up in the failure message.
#define LATE_WAIT_MS 10000
// Most requests in flight.
#define DEPTH_MAX 64
// Whole-run bound: the tests' 100,000 hand-offs on a loaded 2-CPU machine, with the
// daemon sleeping, take well under this.
#define RUN_BOUND_S 200

struct in_flight {
	uint32_t id;
	uint64_t seq; // the echo's contents
};

static void fill(struct gr_ping2 *p, uint64_t seq) {
	for (size_t i = 0; i < sizeof(p->payload); i += sizeof(seq))
		memcpy(p->payload + i, &seq, sizeof(seq));
}

static uint32_t send_one(struct gr_api_client *c, uint64_t seq) {
	struct gr_ping2 req;
	fill(&req, seq);
	// send_more: poll_prepare() wakes a sleeping daemon for the batch.
	long id = gr_api_client_send_more(c, GR_PING2, sizeof(req), &req);
	CHECK(id > 0, "send %llu: %s", (unsigned long long)seq, strerror(errno));
	return (uint32_t)id;
}

// After a wait of STALL_MS with requests in flight: say which side lost the
// wake-up (a response that waits in the ring was not rung for; a request
// not answered was not seen), and whether the wake-up came later after all
// (a stall, not a loss). Fails the test.
static void
stalled(struct gr_api_client *c, int ep, const struct in_flight *fl, unsigned n_fl, uint64_t done) {
	struct gr_ping2 rx;
	unsigned answered = 0;
	CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));
	for (unsigned i = 0; i < n_fl; i++)
		if (gr_api_client_try_recv_into(c, fl[i].id, &rx, sizeof(rx)) >= 0)
			answered++;
	long late_ms = -1;
	if (answered == 0) {
		struct epoll_event got;
		uint64_t start = monotonic_ns();
		CHECK(gr_api_client_poll_prepare(c) >= 0, "poll_prepare: %s", strerror(errno));
		if (epoll_wait(ep, &got, 1, LATE_WAIT_MS) == 1)
			late_ms = (long)((monotonic_ns() - start) / 1000000);
	}
	CHECK(false,
	      "stall: no wake-up within %d ms with %u requests in flight, after %llu hand-offs: "
	      "%u of them answered in the ring (%s); %s",
	      STALL_MS,
	      n_fl,
	      (unsigned long long)done,
	      answered,
	      answered > 0 ? "the client's wake-up was lost" : "the daemon did not answer",
	      answered > 0   ? "-"
	      : late_ms >= 0 ? "the fd woke later: a stall, not a loss"
			     : "nothing came later either: a lost wake-up");
}

int main(int argc, char **argv) {
	CHECK(argc == 5, "usage: %s SOCK socket|shm COUNT DEPTH", argv[0]);
	const char *sock = argv[1];
	struct gr_api_client_opts opts = {
		.transport = transport_arg(argv[2]),
		.spin_us = -1,
		.version = "client_fd_handoff",
	};
	uint64_t count = strtoull(argv[3], NULL, 10);
	unsigned depth = (unsigned)strtoul(argv[4], NULL, 10);
	CHECK(count > 0 && depth > 0 && depth <= DEPTH_MAX, "bad COUNT or DEPTH");
	watchdog_start(RUN_BOUND_S);

	struct gr_api_client *c = gr_api_client_connect_opts(sock, &opts);
	CHECK(c != NULL, "connect %s: %s", sock, strerror(errno));
	CHECK(gr_api_client_transport(c) == opts.transport,
	      "%s transport was forced: %s",
	      argv[2],
	      gr_api_client_transport_reason(c));
	int fd = gr_api_client_fd(c);
	CHECK(fd >= 0, "gr_api_client_fd: %s", strerror(errno));
	CHECK(gr_api_client_fd(c) == fd, "gr_api_client_fd changed");
	int ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0, "epoll_create1: %s", strerror(errno));
	struct epoll_event ev = {.events = EPOLLIN};
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl: %s", strerror(errno));

	struct in_flight fl[DEPTH_MAX];
	uint64_t sent = 0, done = 0, sleeps = 0, ready = 0, spurious = 0;
	for (unsigned i = 0; i < depth && sent < count; i++, sent++)
		fl[i] = (struct in_flight){send_one(c, sent), sent};
	unsigned n_fl = (unsigned)sent;

	uint64_t start = monotonic_ns();
	while (done < count) {
		int r = gr_api_client_poll_prepare(c);
		CHECK(r >= 0, "poll_prepare: %s", strerror(errno));
		if (r == 0) {
			sleeps++;
			struct epoll_event got;
			int n;
			do
				n = epoll_wait(ep, &got, 1, STALL_MS);
			while (n < 0 && errno == EINTR);
			CHECK(n >= 0, "epoll_wait: %s", strerror(errno));
			if (n == 0)
				stalled(c, ep, fl, n_fl, done);
		} else {
			ready++;
		}
		CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));

		unsigned taken = 0;
		for (unsigned i = 0; i < n_fl;) {
			struct gr_ping2 rx, want;
			long len = gr_api_client_try_recv_into(c, fl[i].id, &rx, sizeof(rx));
			if (len < 0) {
				CHECK(errno == EAGAIN, "try_recv %u: %s", fl[i].id, strerror(errno)
				);
				i++;
				continue;
			}
			CHECK(len == GR_PING2_LEN, "try_recv %u: %ld bytes", fl[i].id, len);
			fill(&want, fl[i].seq);
			CHECK(memcmp(&rx, &want, sizeof(rx)) == 0,
			      "echo of %llu differs",
			      (unsigned long long)fl[i].seq);
			done++;
			taken++;
			if (sent < count) {
				fl[i] = (struct in_flight){send_one(c, sent), sent};
				sent++;
				i++;
			} else {
				fl[i] = fl[--n_fl];
			}
		}
		if (taken == 0 && r == 0)
			spurious++;
	}
	double s = (double)(monotonic_ns() - start) / 1e9;
	printf("%s: %llu hand-offs, depth %u, in %.2f s: %llu sleeps, %llu found ready, %llu "
	       "wake-ups with nothing to take\n",
	       argv[2],
	       (unsigned long long)done,
	       depth,
	       s,
	       (unsigned long long)sleeps,
	       (unsigned long long)ready,
	       (unsigned long long)spurious);
	CHECK(gr_api_client_poll_prepare(c) == 0, "something waits after the last response");
	CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));
	close(ep);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
