// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Events from a daemon that speaks Grout's API only: the handle sends it
// Grout's GR_EVENT_SUBSCRIBE, as is, and once that succeeded reads the
// socket in Grout's event framing (a 16-byte header, no response header),
// small events and one larger than the read-ahead buffer alike. A second
// subscribe gets its response although an event comes before it, an
// unsubscribe makes the socket carry responses again, and an event whose
// length is past any message's is refused.

#include "fake_daemon.h"

#include <errno.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define EVENT_A GR_MSG_TYPE(0xacdc, 0x3003)
#define EVENT_B GR_MSG_TYPE(0xacdc, 0x3004)
// Larger than the read-ahead buffer: read behind it.
#define BIG_EVENT_LEN (CLIENT_READAHEAD_LEN + 1000)

static uint8_t
	out[sizeof(struct gr_api_response) + 3 * sizeof(struct gr_api_event) + BIG_EVENT_LEN + 64];
static size_t out_len;

static void put(const void *p, size_t len) {
	assert_true(out_len + len <= sizeof(out));
	memcpy(out + out_len, p, len);
	out_len += len;
}

static void put_response(uint32_t for_id, uint32_t status) {
	struct gr_api_response resp = {.for_id = for_id, .status = status};
	put(&resp, sizeof(resp));
}

// An event in Grout's framing, its payload bytes all fill.
static void put_event(uint32_t ev_type, size_t len, uint8_t fill) {
	struct gr_api_event ev = {.ev_type = ev_type, .payload_len = len};
	put(&ev, sizeof(ev));
	assert_true(out_len + len <= sizeof(out));
	memset(out + out_len, fill, len);
	out_len += len;
}

// What the daemon has to say, in one write.
static void daemon_flush(struct fake_daemon *d) {
	for (size_t sent = 0; sent < out_len;) {
		ssize_t n = write(d->sock, out + sent, out_len - sent);
		assert_true(n > 0);
		sent += (size_t)n;
	}
	out_len = 0;
}

// The client's next request, of type type.
static uint32_t daemon_read(struct fake_daemon *d, uint32_t type) {
	struct gr_api_request hdr;
	uint8_t payload[sizeof(struct gr_event_subscribe_req)];
	fake_daemon_read_all(d->sock, &hdr, sizeof(hdr));
	assert_int_equal(hdr.type, type);
	assert_true(hdr.payload_len <= sizeof(payload));
	fake_daemon_read_all(d->sock, payload, hdr.payload_len);
	return hdr.id;
}

// The client, whose hello a daemon took at api_version, subscribes to
// ev_type, and the daemon reads the request. Returns its id.
static uint32_t subscribe(struct fake_daemon *d, uint32_t api_version, uint32_t ev_type) {
	struct gr_event_subscribe_req sub = {.ev_type = ev_type};
	d->client->api_version = api_version;
	long id = gr_api_client_send(d->client, GR_EVENT_SUBSCRIBE, sizeof(sub), &sub);
	assert_true(id > 0);
	assert_int_equal(
		daemon_read(
			d,
			api_version == GR_API_VERSION ? GR_SHM_EVENT_SUBSCRIBE : GR_EVENT_SUBSCRIBE
		),
		id
	);
	return (uint32_t)id;
}

static void event_expect(struct gr_api_client *c, uint32_t ev_type, size_t len, uint8_t fill) {
	struct gr_api_event *ev;
	assert_int_equal(gr_api_client_event_recv(c, &ev), 0);
	assert_int_equal(ev->ev_type, ev_type);
	assert_int_equal(ev->payload_len, len);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(((const uint8_t *)(ev + 1))[i], fill);
	free(ev);
}

static void grout_framed(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	long id = subscribe(d, GR_API_VERSION_GROUT_MAIN, EVENT_A);

	put_response((uint32_t)id, 0);
	put_event(EVENT_A, 3, 0xa1);
	put_event(EVENT_A, BIG_EVENT_LEN, 0xa2);
	daemon_flush(d);
	assert_int_equal(gr_api_client_recv(c, GR_EVENT_SUBSCRIBE, (uint32_t)id, NULL), 0);
	event_expect(c, EVENT_A, 3, 0xa1);
	event_expect(c, EVENT_A, BIG_EVENT_LEN, 0xa2);

	// An event comes before the second subscribe's response.
	id = subscribe(d, GR_API_VERSION_GROUT_MAIN, EVENT_B);
	put_event(EVENT_A, 0, 0);
	put_response((uint32_t)id, 0);
	put_event(EVENT_B, 8, 0xb1);
	daemon_flush(d);
	assert_int_equal(gr_api_client_recv(c, GR_EVENT_SUBSCRIBE, (uint32_t)id, NULL), 0);
	event_expect(c, EVENT_A, 0, 0);
	event_expect(c, EVENT_B, 8, 0xb1);

	// Responses again after the unsubscribe.
	id = gr_api_client_send(c, GR_EVENT_UNSUBSCRIBE, 0, NULL);
	assert_true(id > 0);
	assert_int_equal(daemon_read(d, GR_EVENT_UNSUBSCRIBE), id);
	put_response((uint32_t)id, 0);
	daemon_flush(d);
	assert_int_equal(gr_api_client_recv(c, GR_EVENT_UNSUBSCRIBE, (uint32_t)id, NULL), 0);
	id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_int_equal(daemon_read(d, GR_PING), id);
	put_response((uint32_t)id, ENOTSUP);
	daemon_flush(d);
	assert_int_equal(gr_api_client_recv(c, GR_PING, (uint32_t)id, NULL), -ENOTSUP);
}

// A failed subscribe leaves the socket to responses.
static void grout_subscribe_refused(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	long id = subscribe(d, GR_API_VERSION_GROUT_0_17, EVENT_A);

	put_response((uint32_t)id, EINVAL);
	daemon_flush(d);
	assert_int_equal(gr_api_client_recv(c, GR_EVENT_SUBSCRIBE, (uint32_t)id, NULL), -EINVAL);
	id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_int_equal(daemon_read(d, GR_PING), id);
	put_response((uint32_t)id, 0);
	daemon_flush(d);
	assert_int_equal(gr_api_client_recv(c, GR_PING, (uint32_t)id, NULL), 0);
}

static void grout_event_too_long(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	struct gr_api_event ev = {.ev_type = EVENT_A, .payload_len = SIZE_MAX / 2};
	struct gr_api_event *got;
	uint32_t id = subscribe(d, GR_API_VERSION_GROUT_MAIN, EVENT_A);

	put_response(id, 0);
	put(&ev, sizeof(ev));
	daemon_flush(d);
	assert_int_equal(gr_api_client_recv(c, GR_EVENT_SUBSCRIBE, id, NULL), 0);
	assert_int_equal(gr_api_client_event_recv(c, &got), -EBADMSG);
	assert_int_equal(gr_api_client_event_recv(c, &got), -ECONNRESET);
}

// shmchand (our version) gets the shm module's subscribe instead.
static void shmchand_tagged(void **state) {
	subscribe(*state, GR_API_VERSION, EVENT_A);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(grout_framed),
		FAKE_DAEMON_TEST(grout_subscribe_refused),
		FAKE_DAEMON_TEST(grout_event_too_long),
		FAKE_DAEMON_TEST(shmchand_tagged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
