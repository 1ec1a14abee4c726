// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// suppress_self_events, as in Grout: a subscriber that asks for it gets no
// event caused by a request of its own pid (from any of its handles, on
// either transport), and still gets those of other processes; subscribing
// again to the type without the flag updates it. Order is checked with a
// marker event published by another process, which must be the next event.
//
// usage: event_suppress_self SOCK (under test/with_daemon.sh)

#include "check.h"
#include "event_util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEQ_OWN 1
#define SEQ_OWN_OTHER_HANDLE 2
#define SEQ_MARKER 3
#define SEQ_OWN_AFTER_UPDATE 4
#define PAYLOAD_LEN 16

static const char *sock_path;

static void publish_seq(struct gr_api_client *c, uint32_t seq) {
	uint8_t buf[PAYLOAD_LEN];
	event_fill(buf, sizeof(buf), seq);
	event_publish(c, buf, sizeof(buf));
}

// Publish seq from another process, over the socket.
static void publish_from_child(uint32_t seq) {
	pid_t child = child_fork();
	CHECK(child >= 0, "fork");
	if (child == 0) {
		struct gr_api_client *c = event_client(sock_path, GR_API_TRANSPORT_SOCKET);
		publish_seq(c, seq);
		gr_api_client_disconnect(c);
		_exit(0);
	}
	int status = child_reap(child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "publisher failed: %#x", status);
}

static void expect_seq(struct gr_api_client *c, uint32_t seq, const char *what) {
	uint8_t buf[PAYLOAD_LEN];
	size_t len = event_expect(c, GR_SHM_EVENT_TEST, buf, sizeof(buf));
	uint32_t got;
	memcpy(&got, buf, sizeof(got));
	CHECK(len == sizeof(buf) && got == seq, "%s: event %u, expected %u", what, got, seq);
	printf("%s: ok\n", what);
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	children_guard();
	sock_path = argv[1];
	struct gr_api_client *sub = event_client(sock_path, GR_API_TRANSPORT_SHM);
	struct gr_api_client *own = event_client(sock_path, GR_API_TRANSPORT_SOCKET);

	event_subscribe(sub, GR_SHM_EVENT_TEST, true);
	publish_seq(sub, SEQ_OWN);
	publish_seq(own, SEQ_OWN_OTHER_HANDLE);
	publish_from_child(SEQ_MARKER);
	expect_seq(sub, SEQ_MARKER, "own pid's events suppressed, another's delivered");

	event_subscribe(sub, GR_SHM_EVENT_TEST, false);
	publish_seq(own, SEQ_OWN_AFTER_UPDATE);
	expect_seq(sub, SEQ_OWN_AFTER_UPDATE, "subscribing again clears suppression");

	gr_api_client_disconnect(own);
	gr_api_client_disconnect(sub);
	return 0;
}
