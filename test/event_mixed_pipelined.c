// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Events and responses mixed on one client handle, pipelined, through the
// client library: the handle publishes events to itself between GR_PING2
// requests, all in flight at once; the responses are received out of order
// (matched by id) and the events come out of gr_api_client_event_recv() in
// publish order with their payloads. The largest event (128 KiB of payload,
// a response 16 bytes over the request maximum) arrives whole. Then, with
// the daemon and the subscriber idle (asleep), another process publishes over
// the other transport (so the event crosses from the main thread to the
// channel's poller, or from a poller to the main thread) and the sleeping
// subscriber gets it.
//
// usage: event_mixed_pipelined SOCK shm|socket (under test/with_daemon.sh)

#include "check.h"
#include "event_util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Publishes and pings in flight at once: well past a batch of the poller
// (32) and below the default event backlog (1024).
#define IN_FLIGHT 200
// Every third event is this large (crosses cells, many per ring), the
// others small.
#define BIG_EVENT 4096
#define SMALL_EVENT 64
// Long enough for the daemon's poller and the client to go to sleep.
#define IDLE_MS 100
#define LATE_EVENT_SEQ 0x1a7e

static size_t event_len(uint32_t i) {
	return i % 3 == 0 ? BIG_EVENT : SMALL_EVENT;
}

static void check_pipelined(struct gr_api_client *c) {
	static long pub_id[IN_FLIGHT], ping_id[IN_FLIGHT];
	static uint8_t buf[BIG_EVENT];
	struct gr_ping2 ping, echo;

	for (uint32_t i = 0; i < IN_FLIGHT; i++) {
		event_fill(buf, event_len(i), i);
		pub_id[i] = gr_api_client_send_more(c, GR_SHM_EVENT_PUBLISH, event_len(i), buf);
		CHECK(pub_id[i] > 0, "publish %u: %s", i, strerror(errno));
		event_fill((uint8_t *)ping.payload, sizeof(ping.payload), i + IN_FLIGHT);
		ping_id[i] = gr_api_client_send_more(c, GR_PING2, sizeof(ping), &ping);
		CHECK(ping_id[i] > 0, "ping %u: %s", i, strerror(errno));
	}
	CHECK(gr_api_client_flush(c) == 0, "flush");
	// Newest first: every older response is stashed on the way.
	for (int i = IN_FLIGHT - 1; i >= 0; i--) {
		long len = gr_api_client_recv_into(c, (uint32_t)ping_id[i], &echo, sizeof(echo));
		CHECK(len == sizeof(echo), "ping %d: %ld: %s", i, len, strerror(errno));
		CHECK(event_check_fill(
			      (uint8_t *)echo.payload,
			      sizeof(echo.payload),
			      (uint32_t)i + IN_FLIGHT
		      ),
		      "ping %d: echo differs",
		      i);
		CHECK(gr_api_client_recv_len(c, (uint32_t)pub_id[i], NULL) == 0,
		      "publish %d: %s",
		      i,
		      strerror(errno));
	}
	for (uint32_t i = 0; i < IN_FLIGHT; i++) {
		size_t len = event_expect(c, GR_SHM_EVENT_TEST, buf, sizeof(buf));
		CHECK(len == event_len(i), "event %u: %zu bytes, expected %zu", i, len, event_len(i)
		);
		CHECK(event_check_fill(buf, len, i), "event %u: payload differs (out of order?)", i
		);
	}
	printf("%d publishes and %d pings in flight, events in order: ok\n", IN_FLIGHT, IN_FLIGHT);
}

static void check_largest(struct gr_api_client *c) {
	uint8_t *tx = malloc(GR_API_MAX_MSG_LEN), *rx = malloc(GR_API_MAX_MSG_LEN);

	CHECK(tx != NULL && rx != NULL, "malloc");
	event_fill(tx, GR_API_MAX_MSG_LEN, LATE_EVENT_SEQ + 1);
	event_publish(c, tx, GR_API_MAX_MSG_LEN);
	size_t len = event_expect(c, GR_SHM_EVENT_TEST, rx, GR_API_MAX_MSG_LEN);
	CHECK(len == GR_API_MAX_MSG_LEN && memcmp(rx, tx, len) == 0, "largest event differs");
	free(tx);
	free(rx);
	printf("largest event: ok\n");
}

static void publish_late(const char *sock, enum gr_api_transport t) {
	uint8_t buf[SMALL_EVENT];
	struct gr_api_client *p = event_client(sock, t);

	usleep(IDLE_MS * 1000);
	event_fill(buf, sizeof(buf), LATE_EVENT_SEQ);
	event_publish(p, buf, sizeof(buf));
	gr_api_client_disconnect(p);
}

int main(int argc, char **argv) {
	uint8_t buf[SMALL_EVENT];

	CHECK(argc == 3, "usage: %s SOCK shm|socket", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	children_guard();
	enum gr_api_transport t =
		strcmp(argv[2], "shm") == 0 ? GR_API_TRANSPORT_SHM : GR_API_TRANSPORT_SOCKET;
	struct gr_api_client *c = event_client(argv[1], t);
	event_subscribe(c, GR_SHM_EVENT_TEST, false);
	check_pipelined(c);
	check_largest(c);

	pid_t child = child_fork();
	CHECK(child >= 0, "fork");
	if (child == 0) {
		publish_late(
			argv[1],
			t == GR_API_TRANSPORT_SHM ? GR_API_TRANSPORT_SOCKET : GR_API_TRANSPORT_SHM
		);
		_exit(0);
	}
	size_t len = event_expect(c, GR_SHM_EVENT_TEST, buf, sizeof(buf));
	CHECK(len == sizeof(buf) && event_check_fill(buf, len, LATE_EVENT_SEQ),
	      "late event differs");
	int status = child_reap(child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "publisher failed: %#x", status);
	printf("event published while the subscriber sleeps: ok\n");
	gr_api_client_disconnect(c);
	return 0;
}
