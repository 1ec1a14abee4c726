// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Every event published to a subscriber that falls behind is accounted for,
// exactly: the events it takes plus the counts of the GR_SHM_EVENT_LOST it
// takes are the events published. Under the daemon's default backlog, a
// subscriber on the given transport reads nothing while PUBLISHED events of
// EVENT_LEN bytes are published (the daemon drops most of them and counts
// them), then only waits for responses for a while (its own queue fills, and
// the daemon's GR_SHM_EVENT_LOST arrives while it is full), then takes its
// events.
//
// usage: event_lost_count SOCK socket|shm (under test/with_daemon.sh)

#include "check.h"
#include "event_util.h"
#include "transport_arg.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PUBLISHED 3000
#define EVENT_LEN 4096
// Round trips the subscriber makes after the publishing, a few ms apart:
// the daemon refills what each read frees and sends its loss count meanwhile.
#define PINGS 100
#define PING_GAP_US 2000

static uint8_t buf[EVENT_LEN];

int main(int argc, char **argv) {
	struct gr_shm_event_stats_resp stats;
	struct gr_api_event *ev;
	uint64_t kept = 0, lost = 0;

	CHECK(argc == 3, "usage: %s SOCK socket|shm", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	struct gr_api_client *pub = event_client(argv[1], GR_API_TRANSPORT_SOCKET);
	struct gr_api_client *sub = event_client(argv[1], transport_arg(argv[2]));
	event_subscribe(sub, GR_SHM_EVENT_TEST, false);

	for (uint32_t i = 0; i < PUBLISHED; i++) {
		event_fill(buf, sizeof(buf), i);
		event_publish(pub, buf, sizeof(buf));
	}
	for (unsigned i = 0; i < PINGS; i++) {
		CHECK(gr_api_client_ping(sub) == 0, "ping: %s", strerror(errno));
		usleep(PING_GAP_US);
	}
	while (kept + lost < PUBLISHED) {
		int ret = gr_api_client_event_recv(sub, &ev);
		CHECK(ret == 0,
		      "event_recv: %s, after %llu kept + %llu lost of %d",
		      strerror(-ret),
		      (unsigned long long)kept,
		      (unsigned long long)lost,
		      PUBLISHED);
		if (ev->ev_type == GR_SHM_EVENT_LOST) {
			struct gr_shm_event_lost l;
			memcpy(&l, ev + 1, sizeof(l));
			lost += l.count;
		} else {
			CHECK(ev->ev_type == GR_SHM_EVENT_TEST && ev->payload_len == EVENT_LEN,
			      "event 0x%08x of %zu bytes",
			      ev->ev_type,
			      ev->payload_len);
			kept++;
		}
		free(ev);
	}
	CHECK(kept + lost == PUBLISHED,
	      "%llu kept + %llu lost != %d",
	      (unsigned long long)kept,
	      (unsigned long long)lost,
	      PUBLISHED);
	CHECK(gr_api_client_ping(sub) == 0, "ping: %s", strerror(errno));
	CHECK(gr_api_client_event_try_recv(sub, &ev) == -EAGAIN, "an event past the count");
	event_stats(pub, &stats);
	CHECK(stats.dropped > 0, "the daemon dropped none: the test needs it to");
	printf("%s: %llu kept + %llu lost = %d published (the daemon dropped %llu): ok\n",
	       argv[2],
	       (unsigned long long)kept,
	       (unsigned long long)lost,
	       PUBLISHED,
	       (unsigned long long)stats.dropped);
	gr_api_client_disconnect(sub);
	gr_api_client_disconnect(pub);
	return 0;
}
