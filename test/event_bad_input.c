// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Bad event requests, as raw bytes: a subscribe payload shorter than its 8
// bytes (EMSGSIZE), a subscribe before hello (EPERM), an event type nobody
// publishes (accepted, as in Grout, and silent), more subscriptions than a
// client may hold (ENOSPC), Grout's and the shm module's subscribe mixed on
// one connection (EBUSY), a publish over the maximum payload (EMSGSIZE, then
// the connection is closed). After each, the daemon still serves.
//
// usage: event_bad_input SOCK (under test/with_daemon.sh)

#include "check.h"
#include "event_util.h"
#include "raw_sock.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIRE_EMSGSIZE 90u
#define WIRE_EPERM 1u
#define WIRE_ENOSPC 28u
#define WIRE_EBUSY 16u
// Subscriptions a client may hold (the daemon's EVENT_SUBS_PER_CLIENT_MAX).
#define SUBS_PER_CLIENT_MAX 4096
#define SILENCE_MS 300

static const char *sock_path;

static void check_serves(const char *after) {
	int fd = raw_connect(sock_path);
	raw_hello(fd, 1);
	raw_ping(fd, 2, after);
	close(fd);
	printf("%s: ok\n", after);
}

static void check_short_subscribe(void) {
	uint8_t four[4] = {0};
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	CHECK(raw_send_request(fd, 2, WIRE_GR_EVENT_SUBSCRIBE, sizeof(four), four, sizeof(four)) ==
		      0,
	      "send");
	raw_expect_status(fd, 2, WIRE_EMSGSIZE, "4-byte subscribe");
	CHECK(raw_send_request(fd, 3, GR_SHM_EVENT_SUBSCRIBE, 0, NULL, 0) == 0, "send");
	raw_expect_status(fd, 3, WIRE_EMSGSIZE, "empty shm subscribe");
	raw_ping(fd, 4, "ping after short subscribes");
	close(fd);
	check_serves("short subscribe payloads: EMSGSIZE");
}

static void check_before_hello(void) {
	int fd = raw_connect(sock_path);
	raw_subscribe(fd, 1, WIRE_GR_EVENT_SUBSCRIBE, GR_SHM_EVENT_TEST, false, WIRE_EPERM);
	close(fd);
	check_serves("subscribe before hello: EPERM");
}

static void check_unknown_type(struct gr_api_client *pub) {
	uint32_t type;
	size_t len;
	uint8_t buf[64];
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	raw_subscribe(fd, 2, WIRE_GR_EVENT_SUBSCRIBE, GR_MSG_TYPE(0x7777, 0x4242), false, 0);
	event_publish(pub, "x", 1);
	raw_set_timeout(fd, SILENCE_MS);
	CHECK(raw_recv_grout_event(fd, &type, buf, sizeof(buf), &len) == -EAGAIN,
	      "an event of type %#x came to a subscriber of another type",
	      type);
	close(fd);
	check_serves("unknown event type: accepted, nothing delivered");
}

static void check_too_many(struct gr_api_client *mon) {
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	for (uint32_t i = 0; i < SUBS_PER_CLIENT_MAX; i++)
		raw_subscribe(fd, 2 + i, GR_SHM_EVENT_SUBSCRIBE, GR_MSG_TYPE(0x7000, i), false, 0);
	raw_subscribe(
		fd,
		2 + SUBS_PER_CLIENT_MAX,
		GR_SHM_EVENT_SUBSCRIBE,
		GR_MSG_TYPE(0x7001, 0),
		false,
		WIRE_ENOSPC
	);
	// Again to a type it has: an update, still allowed.
	raw_subscribe(
		fd,
		3 + SUBS_PER_CLIENT_MAX,
		GR_SHM_EVENT_SUBSCRIBE,
		GR_MSG_TYPE(0x7000, 0),
		true,
		0
	);
	close(fd);
	CHECK(event_wait_subscriptions(mon, 0, 5000) == 0, "subscriptions left after close");
	check_serves("subscription limit: ENOSPC");
}

static void check_mixed_framing(void) {
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	raw_subscribe(fd, 2, GR_SHM_EVENT_SUBSCRIBE, GR_SHM_EVENT_TEST, false, 0);
	raw_subscribe(fd, 3, WIRE_GR_EVENT_SUBSCRIBE, GR_SHM_EVENT_TEST, false, WIRE_EBUSY);
	CHECK(raw_send_request(fd, 4, WIRE_GR_EVENT_UNSUBSCRIBE, 0, NULL, 0) == 0, "unsubscribe");
	raw_expect_status(fd, 4, 0, "unsubscribe");
	raw_subscribe(fd, 5, WIRE_GR_EVENT_SUBSCRIBE, GR_SHM_EVENT_TEST, false, 0);
	close(fd);
	check_serves("two framings on one connection: EBUSY until unsubscribed");
}

static void check_oversized_publish(void) {
	struct gr_api_response resp;
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	CHECK(raw_send_request(fd, 2, GR_SHM_EVENT_PUBLISH, GR_API_MAX_MSG_LEN + 1, NULL, 0) == 0,
	      "send");
	raw_expect_status(fd, 2, WIRE_EMSGSIZE, "oversized publish");
	CHECK(raw_recv_response(fd, &resp, NULL, 0) == 0, "connection not closed");
	close(fd);
	check_serves("oversized publish: EMSGSIZE and closed");
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	sock_path = argv[1];
	struct gr_api_client *pub = event_client(sock_path, GR_API_TRANSPORT_SOCKET);

	check_short_subscribe();
	check_before_hello();
	check_unknown_type(pub);
	check_too_many(pub);
	check_mixed_framing();
	check_oversized_publish();
	gr_api_client_disconnect(pub);
	return 0;
}
