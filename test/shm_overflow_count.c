// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A channel's overflows counter counts what waited for room in its response
// ring, each response or event once, however many passes of its poller find
// the ring still full. Two raw channel clients stop reading: one subscribed
// to events while EVENTS events of EVENT_LEN bytes are published, the other
// after sending ECHOES echoes of ECHO_LEN bytes; their rings hold a few of
// either. Meanwhile a third client keeps their poller busy with pings for
// BUSY_MS, so that the poller passes over their full rings again and again.
// Each channel's overflows is then at least 1 and at most what waited
// (EVENTS, ECHOES); so it is still once both have read everything: every
// echo, and every event kept or counted lost.
//
// usage: shm_overflow_count SOCK (under test/with_daemon.sh, one poller)

#include "check.h"
#include "event_util.h"
#include "ping2_load.h"
#include "raw_chan.h"

#include <gr_api.h>
#include <gr_shm.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EVENTS 200
#define EVENT_LEN 4096
// Echoes of 64 KiB: the response ring takes three, the daemon holds the
// fourth back and reads no more requests, and the request ring takes the
// rest.
#define ECHOES 6
#define ECHO_LEN (64u << 10)
// How long the poller stays busy beside the full rings: below the daemon's
// slow-client limit (2 s), after which it detaches the echo client.
#define BUSY_MS 1000
#define BUSY_DEPTH 4
#define WAIT_MS 3000

static uint8_t buf[sizeof(struct gr_api_response) + ECHO_LEN];
static volatile sig_atomic_t busy_stop;
static _Atomic uint64_t busy_done;

static void *busy_run(void *arg) {
	ping2_load(arg, BUSY_DEPTH, &busy_stop, &busy_done);
	return NULL;
}

// The overflows counter of the channel named name.
static uint64_t overflows_of(struct gr_api_client *mon, const char *name) {
	struct gr_shm_channel_info *info;
	uint64_t overflows = 0;
	bool found = false;
	size_t len;
	int ret;

	long id = gr_api_client_send(mon, GR_SHM_CHANNEL_LIST, 0, NULL);
	CHECK(id > 0, "send GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	while ((ret = gr_api_client_stream_next(mon, (uint32_t)id, (void **)&info, &len)) == 1) {
		CHECK(len == sizeof(*info), "channel list entry of %zu bytes", len);
		if (strncmp(info->name, name, sizeof(info->name)) == 0) {
			overflows = info->counters.overflows;
			found = true;
		}
		free(info);
	}
	CHECK(ret == 0, "GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	CHECK(found, "no channel %s", name);
	return overflows;
}

int main(int argc, char **argv) {
	struct gr_event_subscribe_req req = {.ev_type = GR_SHM_EVENT_TEST};
	static uint8_t payload[ECHO_LEN];
	struct raw_chan events, echoes;
	struct gr_api_response resp;
	pthread_t busy_thread;

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	struct gr_api_client *mon = event_client(argv[1], GR_API_TRANSPORT_SOCKET);
	struct gr_api_client *busy = event_client(argv[1], GR_API_TRANSPORT_SHM);
	raw_chan_attach(&events, argv[1]);
	raw_chan_attach(&echoes, argv[1]);
	uint32_t id = raw_chan_send(&events, GR_SHM_EVENT_SUBSCRIBE, &req, sizeof(req));
	CHECK(raw_chan_recv(&events, &resp, sizeof(resp), WAIT_MS) == sizeof(resp) &&
		      resp.for_id == id && resp.status == 0,
	      "subscribe refused");

	CHECK(pthread_create(&busy_thread, NULL, busy_run, busy) == 0, "pthread_create");
	for (uint32_t i = 0; i < EVENTS; i++) {
		event_fill(payload, EVENT_LEN, i);
		event_publish(mon, payload, EVENT_LEN);
	}
	uint32_t first_echo = 0;
	for (uint32_t i = 0; i < ECHOES; i++) {
		event_fill(payload, ECHO_LEN, i);
		uint32_t echo_id = raw_chan_send(&echoes, GR_SHM_ECHO, payload, ECHO_LEN);
		if (i == 0)
			first_echo = echo_id;
	}
	usleep(BUSY_MS * 1000);
	uint64_t ev_over = overflows_of(mon, events.attach.name);
	uint64_t echo_over = overflows_of(mon, echoes.attach.name);
	busy_stop = 1;
	pthread_join(busy_thread, NULL);
	printf("beside %llu pings: overflows %llu for %d events, %llu for %d echoes\n",
	       (unsigned long long)busy_done,
	       (unsigned long long)ev_over,
	       EVENTS,
	       (unsigned long long)echo_over,
	       ECHOES);
	CHECK(ev_over >= 1 && ev_over <= EVENTS,
	      "events channel: %llu overflows for %d events",
	      (unsigned long long)ev_over,
	      EVENTS);
	CHECK(echo_over >= 1 && echo_over <= ECHOES,
	      "echo channel: %llu overflows for %d echoes",
	      (unsigned long long)echo_over,
	      ECHOES);

	for (uint32_t i = 0; i < ECHOES; i++) {
		int n = raw_chan_recv(&echoes, buf, sizeof(buf), WAIT_MS);
		memcpy(&resp, buf, sizeof(resp));
		CHECK(n == (int)sizeof(buf) && resp.for_id == first_echo + i && resp.status == 0 &&
			      event_check_fill(buf + sizeof(resp), ECHO_LEN, i),
		      "echo %u missing or wrong",
		      i);
	}
	uint64_t kept = 0, lost = 0;
	while (kept + lost < EVENTS) {
		struct gr_api_event ev;
		int n = raw_chan_recv(&events, buf, sizeof(buf), WAIT_MS);
		CHECK(n >= (int)(sizeof(resp) + sizeof(ev)), "events: no event");
		memcpy(&ev, buf + sizeof(resp), sizeof(ev));
		if (ev.ev_type == GR_SHM_EVENT_LOST) {
			struct gr_shm_event_lost l;
			memcpy(&l, buf + sizeof(resp) + sizeof(ev), sizeof(l));
			lost += l.count;
		} else {
			CHECK(ev.ev_type == GR_SHM_EVENT_TEST &&
				      event_check_fill(
					      buf + sizeof(resp) + sizeof(ev),
					      EVENT_LEN,
					      (uint32_t)kept
				      ),
			      "event %llu missing or wrong",
			      (unsigned long long)kept);
			kept++;
		}
	}
	CHECK(lost == 0,
	      "%llu events lost beside a backlog that holds them all",
	      (unsigned long long)lost);
	printf("every echo and every event read after: ok\n");
	// Read slowly, each message may have found the ring full once.
	ev_over = overflows_of(mon, events.attach.name);
	echo_over = overflows_of(mon, echoes.attach.name);
	printf("after: overflows %llu for %d events, %llu for %d echoes\n",
	       (unsigned long long)ev_over,
	       EVENTS,
	       (unsigned long long)echo_over,
	       ECHOES);
	CHECK(ev_over <= EVENTS && echo_over <= ECHOES, "a message counted twice");
	raw_chan_close(&events);
	raw_chan_close(&echoes);
	gr_api_client_disconnect(busy);
	gr_api_client_disconnect(mon);
	return 0;
}
