// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Readers never pay for subscribers that do not read. Under a daemon with
// --event-memory MEMORY (less than one subscriber's backlog may hold),
// IDLE socket connections of this one process subscribe and never read:
// past what their sockets take, their backlogs alone could hold the whole
// event memory. A subscriber that reads gets every one of PUBLISHED events
// all the same, each right after it is published, and no loss: the idle
// ones, the largest holders, give back their newest events to make room.
// Then each idle one reads everything: the events it kept, in order, and
// GR_SHM_EVENT_LOST counts that fill the gaps exactly; and the daemon's
// dropped total is what they were told they lost.
//
// usage: event_memory_fair_share SOCK (under test/with_daemon.sh,
//        --event-memory 1048576)

#include "check.h"
#include "event_util.h"

#include <gr_api.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMORY (1u << 20) // the daemon's --event-memory
// As many as the case: within the daemon's default of connections
// per process (64), with the publisher and the reader.
#define IDLE 31
#define PUBLISHED 1000
#define EVENT_LEN 4096

static uint8_t payload[EVENT_LEN];

// The next event of c: its type, and its payload checked as event seq's if
// it is a test event. Returns the count of a GR_SHM_EVENT_LOST, else 0.
static uint64_t next_event(struct gr_api_client *c, const char *who, uint32_t seq) {
	struct gr_api_event *ev = NULL;
	struct gr_shm_event_lost lost;
	int ret = gr_api_client_event_recv(c, &ev);

	CHECK(ret == 0, "%s: no event where %u was due: %s", who, seq, strerror(-ret));
	if (ev->ev_type == GR_SHM_EVENT_LOST) {
		CHECK(ev->payload_len == sizeof(lost),
		      "%s: lost event of %zu bytes",
		      who,
		      ev->payload_len);
		memcpy(&lost, ev + 1, sizeof(lost));
		free(ev);
		CHECK(lost.count > 0, "%s: a loss of 0 events", who);
		return lost.count;
	}
	CHECK(ev->ev_type == GR_SHM_EVENT_TEST && ev->payload_len == EVENT_LEN,
	      "%s: event %#x of %zu bytes",
	      who,
	      ev->ev_type,
	      ev->payload_len);
	CHECK(event_check_fill((const uint8_t *)(ev + 1), EVENT_LEN, seq),
	      "%s: not event %u",
	      who,
	      seq);
	free(ev);
	return 0;
}

int main(int argc, char **argv) {
	struct gr_api_client *idle[IDLE];
	uint64_t dropped = 0;
	char who[32];

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	struct gr_api_client *pub = event_client(argv[1], GR_API_TRANSPORT_SOCKET);
	struct gr_api_client *reader = event_client(argv[1], GR_API_TRANSPORT_SOCKET);
	for (unsigned k = 0; k < IDLE; k++) {
		idle[k] = event_client(argv[1], GR_API_TRANSPORT_SOCKET);
		event_subscribe(idle[k], GR_SHM_EVENT_TEST, false);
	}
	event_subscribe(reader, GR_SHM_EVENT_TEST, false);

	for (uint32_t i = 0; i < PUBLISHED; i++) {
		event_fill(payload, sizeof(payload), i);
		event_publish(pub, payload, sizeof(payload));
		uint64_t lost = next_event(reader, "reader", i);
		CHECK(lost == 0, "reader: lost %llu events at %u", (unsigned long long)lost, i);
	}
	printf("reader: %d events, each as it was published, none lost: ok\n", PUBLISHED);

	for (unsigned k = 0; k < IDLE; k++) {
		uint32_t next = 0, kept = 0;

		snprintf(who, sizeof(who), "idle subscriber %u", k);
		while (next < PUBLISHED) {
			uint64_t lost = next_event(idle[k], who, next);
			CHECK(next + lost <= PUBLISHED,
			      "%s: lost %llu at %u",
			      who,
			      (unsigned long long)lost,
			      next);
			if (lost == 0)
				kept++;
			next += lost > 0 ? (uint32_t)lost : 1;
			dropped += lost;
		}
		CHECK(kept < PUBLISHED, "%s: kept everything: the test needs the memory full", who);
		if (k == 0)
			printf("%s: %u kept in order, %u lost, counted exactly: ok\n",
			       who,
			       kept,
			       PUBLISHED - kept);
		gr_api_client_disconnect(idle[k]);
	}
	printf("%d idle subscribers: every event kept or counted lost\n", IDLE);
	event_expect_dropped(pub, dropped);
	printf("the daemon's dropped total, %llu, is what they were told: ok\n",
	       (unsigned long long)dropped);
	gr_api_client_disconnect(reader);
	gr_api_client_disconnect(pub);
	return 0;
}
