// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The loss count of a handle whose event queue is full: a GR_SHM_EVENT_LOST
// of the daemon that arrives then is dropped like any event, but counts the
// events it stood for, so that the events taken and the counts of the
// GR_SHM_EVENT_LOST taken add up to every event the daemon had for the
// subscriber. On the socket and on a channel: the fake daemon sends
// CLIENT_EVENTS_MAX events, then more, then its own GR_SHM_EVENT_LOST, then
// the response the client waits for.

#include "fake_daemon.h"

#include <errno.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// Events past the queue's bound before the daemon's own loss.
#define OVERFLOW_EVENTS 5
// Events the daemon says it dropped itself.
#define DAEMON_LOST 1908

// Room for a tagged event of this test: a response with for_id 0 whose
// payload is the event header and the event payload.
#define TAGGED_EVENT_MAX                                                                           \
	(sizeof(struct gr_api_response) + sizeof(struct gr_api_event) +                            \
	 sizeof(struct gr_shm_event_lost))

// Write a tagged event into t; returns its length.
static size_t tagged_event(uint8_t *t, uint32_t ev_type, const void *p, size_t len) {
	struct gr_api_response resp = {
		.payload_len = (uint32_t)(sizeof(struct gr_api_event) + len)};
	struct gr_api_event ev = {.ev_type = ev_type, .payload_len = len};
	memcpy(t, &resp, sizeof(resp));
	memcpy(t + sizeof(resp), &ev, sizeof(ev));
	memcpy(t + sizeof(resp) + sizeof(ev), p, len);
	return sizeof(resp) + sizeof(ev) + len;
}

// What the fake daemon sends on the socket, written at once by
// daemon_flush(): one write, which the socket buffer takes whole, where a
// write per message would fill it with their overhead.
static uint8_t sock_out[(CLIENT_EVENTS_MAX + OVERFLOW_EVENTS + 2) * TAGGED_EVENT_MAX];
static size_t sock_out_len;

// Send one message to the client, on the channel when there is one.
static void daemon_send(struct fake_daemon *d, const void *msg, size_t len) {
	const uint8_t *hdr = msg;
	if (d->server == NULL) {
		assert_true(sock_out_len + len <= sizeof(sock_out));
		memcpy(sock_out + sock_out_len, msg, len);
		sock_out_len += len;
		return;
	}
	assert_int_equal(
		shmchan_server_enqueue(
			d->server,
			hdr,
			sizeof(struct gr_api_response),
			hdr + sizeof(struct gr_api_response),
			len - sizeof(struct gr_api_response)
		),
		0
	);
}

static void daemon_flush(struct fake_daemon *d) {
	if (d->server != NULL) {
		shmchan_server_flush(d->server);
		return;
	}
	for (size_t sent = 0; sent < sock_out_len;) {
		ssize_t n = write(d->sock, sock_out + sent, sock_out_len - sent);
		assert_true(n > 0);
		sent += (size_t)n;
	}
	sock_out_len = 0;
}

static void lost_counted(struct fake_daemon *d) {
	struct gr_api_client *c = d->client;
	struct gr_shm_event_lost lost = {.count = DAEMON_LOST};
	uint8_t t[TAGGED_EVENT_MAX];
	uint32_t seq;

	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_true(id > 0);
	for (seq = 0; seq < CLIENT_EVENTS_MAX + OVERFLOW_EVENTS; seq++)
		daemon_send(d, t, tagged_event(t, GR_SHM_EVENT_TEST, &seq, sizeof(seq)));
	daemon_send(d, t, tagged_event(t, GR_SHM_EVENT_LOST, &lost, sizeof(lost)));
	struct gr_api_response resp = {.for_id = (uint32_t)id};
	daemon_send(d, &resp, sizeof(resp));
	daemon_flush(d);
	// The response, behind every event: they are all queued or counted.
	long ret = gr_api_client_recv_len(c, (uint32_t)id, NULL);
	if (ret < 0)
		fail_msg("recv: %s", strerror(errno));

	uint64_t kept = 0, counted = 0;
	while (kept + counted < seq + DAEMON_LOST) {
		struct gr_api_event *ev;
		assert_int_equal(gr_api_client_event_try_recv(c, &ev), 0);
		if (ev->ev_type == GR_SHM_EVENT_LOST) {
			memcpy(&lost, ev + 1, sizeof(lost));
			counted += lost.count;
		} else {
			uint32_t got;
			assert_int_equal(ev->ev_type, GR_SHM_EVENT_TEST);
			memcpy(&got, ev + 1, sizeof(got));
			assert_int_equal(got, kept); // the oldest are kept, in order
			kept++;
		}
		free(ev);
	}
	assert_int_equal(kept, CLIENT_EVENTS_MAX);
	assert_int_equal(counted, OVERFLOW_EVENTS + DAEMON_LOST);
	struct gr_api_event *ev;
	assert_int_equal(gr_api_client_event_try_recv(c, &ev), -EAGAIN);
}

static void lost_counted_socket(void **state) {
	lost_counted(*state);
}

static void lost_counted_shm(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_attach(d);
	lost_counted(d);
}

// A daemon's GR_SHM_EVENT_LOST with a count near UINT64_MAX, to a full
// queue, then more events: the count saturates at UINT64_MAX. Before, it
// wrapped and told of fewer events lost than there were.
static void lost_count_saturates(struct fake_daemon *d) {
	struct gr_api_client *c = d->client;
	struct gr_shm_event_lost lost = {.count = UINT64_MAX - 1};
	uint8_t t[TAGGED_EVENT_MAX];
	struct gr_api_event *ev;
	uint32_t seq;

	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_true(id > 0);
	for (seq = 0; seq < CLIENT_EVENTS_MAX; seq++)
		daemon_send(d, t, tagged_event(t, GR_SHM_EVENT_TEST, &seq, sizeof(seq)));
	daemon_send(d, t, tagged_event(t, GR_SHM_EVENT_LOST, &lost, sizeof(lost)));
	for (unsigned i = 0; i < OVERFLOW_EVENTS; i++)
		daemon_send(d, t, tagged_event(t, GR_SHM_EVENT_TEST, &seq, sizeof(seq)));
	struct gr_api_response resp = {.for_id = (uint32_t)id};
	daemon_send(d, &resp, sizeof(resp));
	daemon_flush(d);
	assert_int_equal(gr_api_client_recv_len(c, (uint32_t)id, NULL), 0);

	for (seq = 0; seq < CLIENT_EVENTS_MAX; seq++) {
		assert_int_equal(gr_api_client_event_try_recv(c, &ev), 0);
		assert_int_equal(ev->ev_type, GR_SHM_EVENT_TEST);
		free(ev);
	}
	assert_int_equal(gr_api_client_event_try_recv(c, &ev), 0);
	assert_int_equal(ev->ev_type, GR_SHM_EVENT_LOST);
	memcpy(&lost, ev + 1, sizeof(lost));
	free(ev);
	assert_true(lost.count == UINT64_MAX);
	assert_int_equal(gr_api_client_event_try_recv(c, &ev), -EAGAIN);
}

static void lost_count_saturates_socket(void **state) {
	lost_count_saturates(*state);
}

static void lost_count_saturates_shm(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_attach(d);
	lost_count_saturates(d);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(lost_counted_socket),
		FAKE_DAEMON_TEST(lost_counted_shm),
		FAKE_DAEMON_TEST(lost_count_saturates_socket),
		FAKE_DAEMON_TEST(lost_count_saturates_shm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
