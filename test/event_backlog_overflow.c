// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A subscriber that stops reading loses its own events only, and learns how
// many. Under a daemon with --event-backlog 8: two subscribers never read
// while 300 events are published (one on a channel, one a Grout-framed raw
// socket subscribed to GR_SHM_EVENT_LOST too), a third reads each event as
// it comes. Every publish is answered (the daemon never waits for the
// stalled ones) and the reader gets all 300. Then each stalled subscriber
// reads: a prefix of the events, in order, then GR_SHM_EVENT_LOST whose
// count is exactly the rest; the daemon's dropped total agrees; a later
// event reaches them again.
//
// usage: event_backlog_overflow SOCK (under test/with_daemon.sh, --event-backlog 8)

#include "check.h"
#include "event_util.h"
#include "raw_sock.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PUBLISHED 300
#define EVENT_LEN 4096
#define AFTER_SEQ 0xafe7

static uint8_t buf[EVENT_LEN];

// Read what a stalled channel subscriber kept: events 0.. in order, then the
// lost event. Returns the lost count.
static uint64_t drain_shm(struct gr_api_client *c) {
	struct gr_api_event *ev;
	uint32_t next = 0;

	for (;;) {
		CHECK(gr_api_client_event_recv(c, &ev) == 0, "event_recv: %s", strerror(errno));
		if (ev->ev_type == GR_SHM_EVENT_LOST) {
			struct gr_shm_event_lost lost;
			CHECK(ev->payload_len == sizeof(lost),
			      "lost event of %zu bytes",
			      ev->payload_len);
			memcpy(&lost, ev + 1, sizeof(lost));
			free(ev);
			CHECK(next + lost.count == PUBLISHED,
			      "shm: %u received + %llu lost != %d",
			      next,
			      (unsigned long long)lost.count,
			      PUBLISHED);
			printf("shm subscriber: %u kept, %llu lost: ok\n",
			       next,
			       (unsigned long long)lost.count);
			return lost.count;
		}
		CHECK(ev->ev_type == GR_SHM_EVENT_TEST, "event %#x", ev->ev_type);
		CHECK(ev->payload_len == EVENT_LEN &&
			      event_check_fill((void *)(ev + 1), EVENT_LEN, next),
		      "shm: event %u missing or out of order",
		      next);
		free(ev);
		next++;
	}
}

static uint64_t drain_raw(int fd) {
	uint32_t next = 0, type;
	size_t len;

	for (;;) {
		CHECK(raw_recv_grout_event(fd, &type, buf, sizeof(buf), &len) == 1,
		      "raw: no event");
		if (type == GR_SHM_EVENT_LOST) {
			struct gr_shm_event_lost lost;
			CHECK(len == sizeof(lost), "lost event of %zu bytes", len);
			memcpy(&lost, buf, sizeof(lost));
			CHECK(next + lost.count == PUBLISHED,
			      "raw: %u received + %llu lost != %d",
			      next,
			      (unsigned long long)lost.count,
			      PUBLISHED);
			printf("grout-framed subscriber: %u kept, %llu lost: ok\n",
			       next,
			       (unsigned long long)lost.count);
			return lost.count;
		}
		CHECK(type == GR_SHM_EVENT_TEST && len == EVENT_LEN &&
			      event_check_fill(buf, len, next),
		      "raw: event %u missing or out of order",
		      next);
		next++;
	}
}

int main(int argc, char **argv) {
	uint32_t type;
	size_t len;

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	struct gr_api_client *pub = event_client(argv[1], GR_API_TRANSPORT_SOCKET);
	struct gr_api_client *reader = event_client(argv[1], GR_API_TRANSPORT_SHM);
	struct gr_api_client *stalled = event_client(argv[1], GR_API_TRANSPORT_SHM);
	int raw = raw_connect(argv[1]);
	raw_hello(raw, 1);
	raw_subscribe(raw, 2, WIRE_GR_EVENT_SUBSCRIBE, GR_SHM_EVENT_TEST, false, 0);
	raw_subscribe(raw, 3, WIRE_GR_EVENT_SUBSCRIBE, GR_SHM_EVENT_LOST, false, 0);
	event_subscribe(reader, GR_SHM_EVENT_TEST, false);
	event_subscribe(stalled, GR_SHM_EVENT_TEST, false);

	for (uint32_t i = 0; i < PUBLISHED; i++) {
		event_fill(buf, sizeof(buf), i);
		event_publish(pub, buf, sizeof(buf));
		len = event_expect(reader, GR_SHM_EVENT_TEST, buf, sizeof(buf));
		CHECK(len == EVENT_LEN && event_check_fill(buf, len, i), "reader: event %u", i);
	}
	printf("%d publishes answered, the reader got every event: ok\n", PUBLISHED);

	uint64_t lost = drain_shm(stalled) + drain_raw(raw);
	event_expect_dropped(pub, lost);

	event_fill(buf, sizeof(buf), AFTER_SEQ);
	event_publish(pub, buf, sizeof(buf));
	CHECK(event_expect(stalled, GR_SHM_EVENT_TEST, buf, sizeof(buf)) == EVENT_LEN &&
		      event_check_fill(buf, EVENT_LEN, AFTER_SEQ),
	      "shm: no event after the loss");
	CHECK(raw_recv_grout_event(raw, &type, buf, sizeof(buf), &len) == 1 &&
		      type == GR_SHM_EVENT_TEST && event_check_fill(buf, len, AFTER_SEQ),
	      "raw: no event after the loss");
	printf("events flow again after the loss: ok\n");

	close(raw);
	gr_api_client_disconnect(stalled);
	gr_api_client_disconnect(reader);
	gr_api_client_disconnect(pub);
	return 0;
}
