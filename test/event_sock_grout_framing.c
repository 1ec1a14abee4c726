// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Events on the socket in Grout's framing, read as a Grout client reads them
// (raw socket, Grout's wire layout): GR_EVENT_SUBSCRIBE's 8 bytes; each event
// a 16-byte header (u32 type, 4 zero bytes, u64 length) and its payload, with
// no response header, for payloads of 0, 100 bytes and 128 KiB; a second
// subscription (GR_EVENT_ALL) does not double an event; the channel
// attached and detached events with their pid, backing, name and reason;
// after GR_EVENT_UNSUBSCRIBE nothing more arrives. GR_EVENT_ALL alone brings
// a client of a Grout API version no event of the shm module (Grout's
// library fails on types it does not know), and a client of shmchan's
// version every event.
//
// usage: event_sock_grout_framing SOCK (under test/with_daemon.sh)

#include "check.h"
#include "event_util.h"
#include "raw_sock.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// How long silence proves no event is coming: the daemon delivers within
// microseconds; this is generous for a loaded machine.
#define SILENCE_MS 300
#define MID_PAYLOAD 100

static uint8_t *rx;

// Publish len bytes from pub (client library) and read them on sub as
// Grout's framing.
static void publish_and_read(struct gr_api_client *pub, int sub, size_t len, uint32_t seq) {
	uint8_t *tx = malloc(len > 0 ? len : 1);
	uint32_t type;
	size_t got;

	CHECK(tx != NULL, "malloc");
	event_fill(tx, len, seq);
	event_publish(pub, tx, len);
	CHECK(raw_recv_grout_event(sub, &type, rx, GR_API_MAX_MSG_LEN, &got) == 1,
	      "no event for a %zu-byte publish",
	      len);
	CHECK(type == GR_SHM_EVENT_TEST, "event type %#x", type);
	CHECK(got == len, "event of %zu bytes, published %zu", got, len);
	CHECK(len == 0 || memcmp(rx, tx, len) == 0, "payload of %zu bytes differs", len);
	free(tx);
	printf("grout framing, %zu-byte event: ok\n", len);
}

static void expect_silence(int sub, const char *what) {
	uint32_t type;
	size_t got;

	raw_set_timeout(sub, SILENCE_MS);
	int ret = raw_recv_grout_event(sub, &type, rx, GR_API_MAX_MSG_LEN, &got);
	CHECK(ret == -EAGAIN, "%s: an event of type %#x arrived", what, type);
	raw_set_timeout(sub, RAW_RECV_TIMEOUT_MS);
}

static void check_channel_events(const char *sock, int sub) {
	struct raw_attach_reply reply;
	struct gr_shm_event_channel_detached det;
	struct gr_shm_event_channel att;
	uint32_t type;
	size_t got;
	int fd = raw_connect(sock);

	raw_hello(fd, 1);
	raw_attach(fd, 2, GR_SHM_BACKING_MEMFD, SHMCHAN_LAYOUT_VERSION, &reply);
	CHECK(reply.resp.status == 0, "attach: status %u", reply.resp.status);
	CHECK(raw_recv_grout_event(sub, &type, rx, GR_API_MAX_MSG_LEN, &got) == 1,
	      "no attach event");
	CHECK(type == GR_SHM_EVENT_CHANNEL_ATTACHED, "event %#x, expected attached", type);
	CHECK(got == sizeof(att), "attached event of %zu bytes", got);
	memcpy(&att, rx, sizeof(att));
	CHECK(att.pid == getpid(), "attached pid %d, ours %d", att.pid, (int)getpid());
	CHECK(att.backing == GR_SHM_BACKING_MEMFD, "attached backing %u", att.backing);
	CHECK(strncmp(att.name, reply.attach.name, sizeof(att.name)) == 0,
	      "attached name %.32s, attach said %.32s",
	      att.name,
	      reply.attach.name);
	raw_close_fds(reply.fds, reply.n_fds);
	close(fd);

	CHECK(raw_recv_grout_event(sub, &type, rx, GR_API_MAX_MSG_LEN, &got) == 1,
	      "no detach event");
	CHECK(type == GR_SHM_EVENT_CHANNEL_DETACHED, "event %#x, expected detached", type);
	CHECK(got == sizeof(det), "detached event of %zu bytes", got);
	memcpy(&det, rx, sizeof(det));
	CHECK(det.pid == getpid(), "detached pid %d", det.pid);
	CHECK(det.reason == GR_SHM_DETACH_LEASE, "detach reason %u", det.reason);
	CHECK(strncmp(det.name, att.name, sizeof(det.name)) == 0, "detached another channel");
	printf("channel attached and detached events: ok\n");
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	rx = malloc(GR_API_MAX_MSG_LEN);
	CHECK(rx != NULL, "malloc");

	struct gr_api_client *pub = event_client(argv[1], GR_API_TRANSPORT_SOCKET);
	int sub = raw_connect(argv[1]);
	CHECK(raw_hello_version(sub, 1, GR_API_VERSION_GROUT_MAIN) == 0, "hello");
	struct gr_api_response resp;
	uint16_t max_ifaces;
	CHECK(raw_recv_response(sub, &resp, &max_ifaces, sizeof(max_ifaces)) == 1, "hello resp");
	CHECK(resp.status == 0, "hello status %u", resp.status);

	raw_subscribe(sub, 2, WIRE_GR_EVENT_SUBSCRIBE, GR_SHM_EVENT_TEST, false, 0);
	publish_and_read(pub, sub, MID_PAYLOAD, 1);
	publish_and_read(pub, sub, 0, 2);
	publish_and_read(pub, sub, GR_API_MAX_MSG_LEN, 3);

	raw_subscribe(sub, 3, WIRE_GR_EVENT_SUBSCRIBE, GR_SHM_EVENT_CHANNEL_ATTACHED, false, 0);
	raw_subscribe(sub, 5, WIRE_GR_EVENT_SUBSCRIBE, GR_SHM_EVENT_CHANNEL_DETACHED, false, 0);
	check_channel_events(argv[1], sub);

	CHECK(raw_send_request(sub, 6, WIRE_GR_EVENT_UNSUBSCRIBE, 0, NULL, 0) == 0, "unsubscribe");
	raw_expect_status(sub, 6, 0, "unsubscribe");
	event_publish(pub, "x", 1);
	expect_silence(sub, "after unsubscribe");
	printf("unsubscribe: ok\n");

	raw_subscribe(sub, 7, WIRE_GR_EVENT_SUBSCRIBE, WIRE_GR_EVENT_ALL, false, 0);
	event_publish(pub, "x", 1);
	expect_silence(sub, "GR_EVENT_ALL of a Grout client");
	printf("GR_EVENT_ALL of a Grout client: no shm module event: ok\n");
	close(sub);

	sub = raw_connect(argv[1]);
	raw_hello(sub, 1);
	raw_subscribe(sub, 2, WIRE_GR_EVENT_SUBSCRIBE, WIRE_GR_EVENT_ALL, false, 0);
	publish_and_read(pub, sub, MID_PAYLOAD, 5);
	printf("GR_EVENT_ALL of a shmchan client: every event: ok\n");
	// Subscribed twice (the type and every type): one copy per event.
	raw_subscribe(sub, 3, WIRE_GR_EVENT_SUBSCRIBE, GR_SHM_EVENT_TEST, false, 0);
	publish_and_read(pub, sub, MID_PAYLOAD, 6);
	expect_silence(sub, "second subscription");
	printf("one copy for two subscriptions: ok\n");
	close(sub);
	gr_api_client_disconnect(pub);
	free(rx);
	return 0;
}
