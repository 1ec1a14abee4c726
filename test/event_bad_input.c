// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Bad event requests, as raw bytes: a subscribe payload shorter than its 8
// bytes (EMSGSIZE), a subscribe before hello (EPERM), an event type nobody
// publishes (accepted, as in Grout, and silent), more subscriptions than a
// connection may hold (ENOSPC), Grout's and the shm module's subscribe mixed
// on one connection (EBUSY), a second subscriber on one connection (a
// subscribe on the socket of an attached channel, an attach of a socket that
// has subscriptions: EBUSY), a publish over the maximum payload (EMSGSIZE,
// then the connection is closed). After each, the daemon still serves.
//
// usage: event_bad_input SOCK (under test/with_daemon.sh)

#include "check.h"
#include "event_util.h"
#include "raw_chan.h"
#include "raw_sock.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIRE_EMSGSIZE 90u
#define WIRE_EPERM 1u
#define WIRE_ENOSPC 28u
#define WIRE_EBUSY 16u
// Subscriptions a connection may hold (the daemon's default
// --event-subscriptions).
#define SUBS_PER_CLIENT_MAX 256
#define SILENCE_MS 300
// Bound of the wait for a response or an event on a channel.
#define CHAN_WAIT_MS 3000

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

// The response to request id on a raw channel: its status.
static uint32_t chan_status(struct raw_chan *rc, uint32_t id) {
	uint8_t buf[sizeof(struct gr_api_response) + 64];
	struct gr_api_response resp;
	int n = raw_chan_recv(rc, buf, sizeof(buf), CHAN_WAIT_MS);

	CHECK(n >= (int)sizeof(resp), "channel: no response to request %u", id);
	memcpy(&resp, buf, sizeof(resp));
	CHECK(resp.for_id == id, "channel: response to %u, expected %u", resp.for_id, id);
	return resp.status;
}

static void check_one_subscriber(struct gr_api_client *pub) {
	struct gr_event_subscribe_req req = {.ev_type = GR_SHM_EVENT_TEST};
	uint8_t buf[sizeof(struct gr_api_response) + sizeof(struct gr_api_event) + 64];
	struct gr_shm_event_stats_resp stats;
	struct raw_attach_reply reply;
	struct gr_api_response resp;
	struct gr_api_event ev;
	struct raw_chan rc;

	// Attached: the socket subscribes no more, the channel does.
	raw_chan_attach(&rc, sock_path);
	raw_subscribe(rc.sock, 10, GR_SHM_EVENT_SUBSCRIBE, GR_SHM_EVENT_TEST, false, WIRE_EBUSY);
	raw_subscribe(rc.sock, 11, WIRE_GR_EVENT_SUBSCRIBE, GR_SHM_EVENT_TEST, false, WIRE_EBUSY);
	uint32_t id = raw_chan_send(&rc, GR_SHM_EVENT_SUBSCRIBE, &req, sizeof(req));
	CHECK(chan_status(&rc, id) == 0, "subscribe over the channel refused");
	event_stats(pub, &stats);
	CHECK(stats.subscribers == 1 && stats.subscriptions == 1,
	      "%u subscribers, %u subscriptions: one expected",
	      stats.subscribers,
	      stats.subscriptions);
	event_publish(pub, "x", 1);
	int n = raw_chan_recv(&rc, buf, sizeof(buf), CHAN_WAIT_MS);
	CHECK(n == (int)(sizeof(resp) + sizeof(ev) + 1), "channel: no event (%d bytes)", n);
	memcpy(&resp, buf, sizeof(resp));
	memcpy(&ev, buf + sizeof(resp), sizeof(ev));
	CHECK(resp.for_id == 0 && ev.ev_type == GR_SHM_EVENT_TEST, "channel: not the event");
	raw_chan_close(&rc);
	CHECK(event_wait_subscriptions(pub, 0, 5000) == 0, "subscriptions left after close");

	// Subscribed on the socket: no channel, until unsubscribed.
	int fd = raw_connect(sock_path);
	raw_hello(fd, 1);
	raw_subscribe(fd, 2, GR_SHM_EVENT_SUBSCRIBE, GR_SHM_EVENT_TEST, false, 0);
	raw_attach(fd, 3, GR_SHM_BACKING_MEMFD, SHMCHAN_LAYOUT_VERSION, &reply);
	CHECK(reply.resp.status == WIRE_EBUSY && reply.n_fds == 0,
	      "attach of a subscribed socket: status %u, %u fds",
	      reply.resp.status,
	      reply.n_fds);
	event_publish(pub, "y", 1);
	CHECK(raw_recv_response(fd, &resp, buf, sizeof(buf)) == 1 && resp.for_id == 0,
	      "the socket's events stopped after the refused attach");
	CHECK(raw_send_request(fd, 4, WIRE_GR_EVENT_UNSUBSCRIBE, 0, NULL, 0) == 0, "unsubscribe");
	raw_expect_status(fd, 4, 0, "unsubscribe");
	raw_attach(fd, 5, GR_SHM_BACKING_MEMFD, SHMCHAN_LAYOUT_VERSION, &reply);
	CHECK(reply.resp.status == 0, "attach after unsubscribe: %u", reply.resp.status);
	raw_close_fds(reply.fds, reply.n_fds);
	close(fd);
	check_serves("one subscriber per connection: EBUSY for a second one");
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
	check_one_subscriber(pub);
	check_oversized_publish();
	gr_api_client_disconnect(pub);
	return 0;
}
