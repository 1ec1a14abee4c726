// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// An event-loop subscriber: gr_api_client_event_try_recv() fails with EAGAIN
// exactly when no event waits, and the fd protocol (poll_prepare, a wait on
// gr_api_client_fd(), poll_done) never sleeps through an event, including
// one that a receive of a response already took from the stream and queued
// in the handle (poll_prepare then says so instead of sleeping).
//
// usage: event_try_recv SOCK shm|socket (under test/with_daemon.sh)

#include "check.h"
#include "event_util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define ROUNDS 200
#define EVENT_LEN 64
// A wait on the fd for an event that was published: it comes well before.
#define WAKE_BOUND_MS 2000

// Wait for and take the next event through the fd protocol alone. Counts in
// *queued the rounds where poll_prepare() found it waiting already.
static struct gr_api_event *fd_event(struct gr_api_client *c, int ep, unsigned *queued) {
	struct gr_api_event *ev;
	struct epoll_event e;

	for (;;) {
		int ready = gr_api_client_poll_prepare(c);
		CHECK(ready >= 0, "poll_prepare: %s", strerror(errno));
		if (ready == 1) {
			CHECK(gr_api_client_event_try_recv(c, &ev) == 0,
			      "poll_prepare said something waits, try_recv: %s",
			      strerror(errno));
			(*queued)++;
			return ev;
		}
		CHECK(epoll_wait(ep, &e, 1, WAKE_BOUND_MS) == 1,
		      "no wake-up within %d ms for a published event",
		      WAKE_BOUND_MS);
		CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));
		int ret = gr_api_client_event_try_recv(c, &ev);
		if (ret == 0)
			return ev;
		CHECK(ret == -EAGAIN && errno == EAGAIN, "try_recv: %s", strerror(-ret));
	}
}

int main(int argc, char **argv) {
	uint8_t payload[EVENT_LEN];
	struct gr_api_event *ev;
	struct gr_ping2 ping = {0}, echo;
	unsigned queued = 0;

	CHECK(argc == 3, "usage: %s SOCK shm|socket", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	enum gr_api_transport t =
		strcmp(argv[2], "shm") == 0 ? GR_API_TRANSPORT_SHM : GR_API_TRANSPORT_SOCKET;
	struct gr_api_client *c = event_client(argv[1], t);
	event_subscribe(c, GR_SHM_EVENT_TEST, false);

	CHECK(gr_api_client_event_try_recv(c, &ev) == -EAGAIN && errno == EAGAIN && ev == NULL,
	      "try_recv with no event published: not EAGAIN");
	int fd = gr_api_client_fd(c);
	CHECK(fd >= 0, "gr_api_client_fd: %s", strerror(errno));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event e = {.events = EPOLLIN};
	CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) == 0, "epoll: %s", strerror(errno));

	for (uint32_t i = 0; i < ROUNDS; i++) {
		// The event and a ping, pipelined: receiving the ping's answer
		// queues the event in the handle when it came first.
		event_fill(payload, sizeof(payload), i);
		long pub = gr_api_client_send_more(c, GR_SHM_EVENT_PUBLISH, sizeof(payload), payload);
		long id = gr_api_client_send(c, GR_PING2, sizeof(ping), &ping);
		CHECK(pub > 0 && id > 0, "send: %s", strerror(errno));
		CHECK(gr_api_client_recv_len(c, (uint32_t)pub, NULL) == 0,
		      "publish: %s",
		      strerror(errno));
		CHECK(gr_api_client_recv_into(c, (uint32_t)id, &echo, sizeof(echo)) == sizeof(echo),
		      "ping: %s",
		      strerror(errno));
		ev = fd_event(c, ep, &queued);
		CHECK(ev->ev_type == GR_SHM_EVENT_TEST && ev->payload_len == sizeof(payload) &&
			      event_check_fill((const uint8_t *)(ev + 1), sizeof(payload), i),
		      "event %u differs",
		      i);
		free(ev);
		CHECK(gr_api_client_event_try_recv(c, &ev) == -EAGAIN,
		      "round %u: a second event where one was published",
		      i);
	}
	printf("%s: %d events through the fd, %u of them already queued: ok\n",
	       argv[2],
	       ROUNDS,
	       queued);
	close(ep);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return 0;
}
