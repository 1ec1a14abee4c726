// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The events all backlogs hold together are bounded, however subscribers
// come and go. Under a daemon with --event-memory MEMORY: SUBSCRIBERS raw
// channel clients subscribe one after the other, and PER_PHASE events are
// published after each one subscribes, none of them read: without a global
// bound each backlog would keep its own PER_PHASE events and more. Then each
// subscriber reads everything: the events it got, in order, and
// GR_SHM_EVENT_LOST counts that add up exactly to the rest of what was
// published since it subscribed. The distinct events kept by all of them
// together fit in MEMORY, beside what their response rings took before the
// daemon's backlogs filled; the daemon's dropped total agrees with the
// counts; and events flow again once they are read.
//
// usage: event_memory_bound SOCK (under test/with_daemon.sh,
//        --event-memory 1048576)

#include "check.h"
#include "event_util.h"
#include "raw_chan.h"

#include <gr_api.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMORY (1u << 20) // the daemon's --event-memory
#define SUBSCRIBERS 4
#define PER_PHASE 300
#define EVENTS (SUBSCRIBERS * PER_PHASE)
#define EVENT_LEN 4096
#define WAIT_MS 3000
// What the daemon holds for one event at least: its payload and headers.
#define EVENT_HELD_MIN (EVENT_LEN + sizeof(struct gr_api_response) + sizeof(struct gr_api_event))
#define AFTER_SEQ 0xafe7

static uint8_t buf[sizeof(struct gr_api_response) + sizeof(struct gr_api_event) + EVENT_LEN];
static uint8_t payload[EVENT_LEN];
static bool kept[EVENTS];

// Take the next message of rc: an event (its type and payload into buf).
// Returns its payload length.
static size_t next_event(struct raw_chan *rc, uint32_t *type) {
	struct gr_api_response resp;
	struct gr_api_event ev;
	int n = raw_chan_recv(rc, buf, sizeof(buf), WAIT_MS);

	CHECK(n >= (int)(sizeof(resp) + sizeof(ev)), "no event (%d bytes)", n);
	memcpy(&resp, buf, sizeof(resp));
	memcpy(&ev, buf + sizeof(resp), sizeof(ev));
	CHECK(resp.for_id == 0 && resp.status == 0, "not an event: for_id %u", resp.for_id);
	CHECK(n == (int)(sizeof(resp) + sizeof(ev) + ev.payload_len), "event cut");
	*type = ev.ev_type;
	return ev.payload_len;
}

// Read everything subscriber k got: events from first on, in order, and the
// counts of those lost. Returns the number it lost.
static uint64_t drain(struct raw_chan *rc, unsigned k, uint32_t first) {
	const uint8_t *p = buf + sizeof(struct gr_api_response) + sizeof(struct gr_api_event);
	uint32_t next = first, type, seq;
	unsigned got = 0;
	uint64_t lost = 0;

	while (next < EVENTS) {
		size_t len = next_event(rc, &type);
		if (type == GR_SHM_EVENT_LOST) {
			struct gr_shm_event_lost l;
			CHECK(len == sizeof(l), "lost event of %zu bytes", len);
			memcpy(&l, p, sizeof(l));
			CHECK(l.count > 0 && next + l.count <= EVENTS,
			      "subscriber %u: lost %llu at event %u",
			      k,
			      (unsigned long long)l.count,
			      next);
			lost += l.count;
			next += (uint32_t)l.count;
			continue;
		}
		CHECK(type == GR_SHM_EVENT_TEST && len == EVENT_LEN, "event %#x of %zu", type, len);
		memcpy(&seq, p, sizeof(seq));
		CHECK(seq == next && event_check_fill(p, len, seq),
		      "subscriber %u: event %u where %u was due",
		      k,
		      seq,
		      next);
		kept[seq] = true;
		got++;
		next++;
	}
	printf("subscriber %u: %u events since it subscribed: %u kept, %llu lost: ok\n",
	       k,
	       EVENTS - first,
	       got,
	       (unsigned long long)lost);
	return lost;
}

int main(int argc, char **argv) {
	struct gr_event_subscribe_req req = {.ev_type = GR_SHM_EVENT_TEST};
	struct raw_chan subs[SUBSCRIBERS];
	uint64_t lost = 0;
	uint32_t type;

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	struct gr_api_client *pub = event_client(argv[1], GR_API_TRANSPORT_SOCKET);
	for (unsigned k = 0; k < SUBSCRIBERS; k++) {
		raw_chan_attach(&subs[k], argv[1]);
		uint32_t id = raw_chan_send(&subs[k], GR_SHM_EVENT_SUBSCRIBE, &req, sizeof(req));
		struct gr_api_response resp;
		CHECK(raw_chan_recv(&subs[k], &resp, sizeof(resp), WAIT_MS) == sizeof(resp) &&
			      resp.for_id == id && resp.status == 0,
		      "subscriber %u: subscribe refused",
		      k);
		for (uint32_t i = k * PER_PHASE; i < (k + 1) * PER_PHASE; i++) {
			event_fill(payload, sizeof(payload), i);
			event_publish(pub, payload, sizeof(payload));
		}
	}
	printf("%d subscribers, %d events published in %d phases\n",
	       SUBSCRIBERS,
	       EVENTS,
	       SUBSCRIBERS);

	unsigned slack = 0;
	for (unsigned k = 0; k < SUBSCRIBERS; k++) {
		// What the response ring took before the backlog began to fill.
		slack += subs[k].attach.ring_cells * subs[k].attach.cell_size / EVENT_LEN;
		lost += drain(&subs[k], k, k * PER_PHASE);
	}
	unsigned distinct = 0;
	for (unsigned i = 0; i < EVENTS; i++)
		distinct += kept[i];
	unsigned bound = (unsigned)(MEMORY / EVENT_HELD_MIN) + slack;
	printf("distinct events kept: %u (at most %u: --event-memory %u, and %u in the rings)\n",
	       distinct,
	       bound,
	       MEMORY,
	       slack);
	CHECK(distinct <= bound, "the backlogs together held more than --event-memory");
	event_expect_dropped(pub, lost);

	event_fill(payload, sizeof(payload), AFTER_SEQ);
	event_publish(pub, payload, sizeof(payload));
	for (unsigned k = 0; k < SUBSCRIBERS; k++) {
		CHECK(next_event(&subs[k], &type) == EVENT_LEN && type == GR_SHM_EVENT_TEST,
		      "subscriber %u: no event after the losses",
		      k);
		raw_chan_close(&subs[k]);
	}
	printf("events flow again once read: ok\n");
	gr_api_client_disconnect(pub);
	return 0;
}
