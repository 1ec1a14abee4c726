// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Every call that waits honours its timeout whatever a hostile daemon sends
// meanwhile (fake_daemon.c's floods), on the socket and on a channel, and a
// call that never waits stops too:
// - a ring (or socket) that never goes empty, of late answers the client
//   drops: before, a waiting call read its deadline only after 32 empty
//   polls of the ring, so it never timed out while they kept coming, and
//   its deadline started only once they stopped;
// - events past the handle's bound, dropped and counted;
// - a send waiting for room in a full request ring while the responses it
//   drains never end: before, its drain of the response ring ran until the
//   ring was empty;
// - a response doorbell rung without end (a descriptor of the daemon's
//   choosing): before, its drain read until the socket was empty;
// - a try call amid such a flood returns -EAGAIN.
// The calls wait CALL_TIMEOUT_MS; each must return well within
// RETURN_BOUND_MS on a busy host (the goal is the timeout plus 50 ms; the
// figure of each run is printed). The floods last FAKE_FLOOD_MAX_S unless
// stopped, so a client that overstays fails.
//
// Whether a flood outruns the client is up to the scheduler (one flood
// thread rarely does: the client drops a late answer faster than the flood
// makes it). So the way the calls read their deadline amid messages is also
// checked by count, with no flood: a ring full of late answers and a call
// whose deadline has passed takes CLIENT_ROUTE_CLOCK_EVERY of them at most
// before it fails. Before, it read its deadline only once the ring was
// empty (after 32 empty polls), and took them all.

#include "fake_daemon.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define CALL_TIMEOUT_MS 200
// A call that returns later than this did not honour its timeout: far
// above the timeout for a busy host, far below the flood's length.
#define RETURN_BOUND_MS 3000
// A receive that gives up at once, so that its id is abandoned.
#define ABANDON_TIMEOUT_MS 1
// Payload of the flooded responses and events.
#define FLOOD_PAYLOAD 64
// Requests of this size fill the request ring in a few sends.
#define FILL_REQ_LEN (32 * 1024)
// Sends that fill any request ring many times over.
#define FILL_SENDS_MAX 1000
// Messages a flood has sent before the call starts: it is under way.
#define FLOOD_WARMUP 1000

// Send a request and abandon it: its receive times out, so that its late
// answers are dropped as they come. Returns its id.
static uint32_t abandoned_id(struct gr_api_client *c) {
	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_true(id > 0);
	c->timeout_ms = ABANDON_TIMEOUT_MS;
	assert_int_equal(gr_api_client_recv_len(c, (uint32_t)id, NULL), -1);
	assert_int_equal(errno, ETIMEDOUT);
	c->timeout_ms = CALL_TIMEOUT_MS;
	return (uint32_t)id;
}

// What a flood test runs amid the flood: a call, its result.
enum call {
	CALL_RECV,
	CALL_EVENT_RECV,
	CALL_TRY_RECV,
	CALL_SEND,
};

static const char *const call_names[] = {
	[CALL_RECV] = "recv",
	[CALL_EVENT_RECV] = "event_recv",
	[CALL_TRY_RECV] = "try_recv",
	[CALL_SEND] = "send",
};

// Run call on c, timed; returns what it returned, with errno in *err.
static long run_call(struct gr_api_client *c, enum call call, uint32_t id, int *err, uint64_t *ms) {
	static uint8_t req[FILL_REQ_LEN];
	struct gr_api_event *ev = NULL;
	uint64_t start = fake_daemon_now_ms();
	long ret;

	errno = 0;
	switch (call) {
	case CALL_RECV:
		ret = gr_api_client_recv_len(c, id, NULL);
		break;
	case CALL_EVENT_RECV:
		ret = gr_api_client_event_recv(c, &ev);
		free(ev);
		break;
	case CALL_TRY_RECV:
		ret = gr_api_client_try_recv(c, id, NULL);
		break;
	case CALL_SEND:
		ret = gr_api_client_send(c, GR_PING, sizeof(req), req);
		break;
	}
	*err = errno;
	*ms = fake_daemon_now_ms() - start;
	return ret;
}

// Flood the client with msg while call runs, for id; check that it returns
// err within RETURN_BOUND_MS and keeps no response.
static void call_amid_flood(
	struct fake_daemon *d,
	const char *what,
	const void *msg,
	size_t len,
	enum call call,
	uint32_t id,
	int err
) {
	struct gr_api_client *c = d->client;
	struct fake_flood flood;
	uint64_t took;
	int got;

	c->timeout_ms = CALL_TIMEOUT_MS;
	fake_flood_start(&flood, d, msg, len, 0);
	fake_flood_wait(&flood, FLOOD_WARMUP);
	long ret = run_call(c, call, id, &got, &took);
	uint64_t sent = fake_flood_stop(&flood);
	printf("%s, %s on %s: returned after %llu ms (timeout %d ms), %llu messages sent\n",
	       what,
	       call_names[call],
	       gr_api_client_transport(c) == GR_API_TRANSPORT_SHM ? "shm" : "socket",
	       (unsigned long long)took,
	       CALL_TIMEOUT_MS,
	       (unsigned long long)sent);
	assert_true(ret < 0);
	assert_int_equal(got, err);
	assert_true(took < RETURN_BOUND_MS);
	assert_int_equal(c->stash_n, 0);
	assert_false(c->dead);
}

// Late answers to an abandoned id, without end.
static void late_answers(struct fake_daemon *d, enum call call, int err) {
	static uint8_t msg[FAKE_FLOOD_MSG_MAX];
	uint32_t late = abandoned_id(d->client);
	long id = gr_api_client_send(d->client, GR_PING, 0, NULL);
	assert_true(id > 0);
	size_t len = fake_flood_msg(msg, late, FLOOD_PAYLOAD, 0x11);
	call_amid_flood(d, "late answers", msg, len, call, (uint32_t)id, err);
}

static void recv_late_answers_socket(void **state) {
	late_answers(*state, CALL_RECV, ETIMEDOUT);
}

static void recv_late_answers_shm(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_attach(d);
	late_answers(d, CALL_RECV, ETIMEDOUT);
}

static void event_recv_late_answers_socket(void **state) {
	late_answers(*state, CALL_EVENT_RECV, ETIMEDOUT);
}

static void event_recv_late_answers_shm(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_attach(d);
	late_answers(d, CALL_EVENT_RECV, ETIMEDOUT);
}

static void try_recv_late_answers_socket(void **state) {
	late_answers(*state, CALL_TRY_RECV, EAGAIN);
}

static void try_recv_late_answers_shm(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_attach(d);
	late_answers(d, CALL_TRY_RECV, EAGAIN);
}

// Events without end: the handle keeps its bound of them, counts the rest
// lost, and its receive of a response still times out.
static void events(struct fake_daemon *d) {
	static uint8_t msg[FAKE_FLOOD_MSG_MAX];
	long id = gr_api_client_send(d->client, GR_PING, 0, NULL);
	assert_true(id > 0);
	size_t len = fake_flood_event(msg, GR_SHM_EVENT_TEST, FLOOD_PAYLOAD, 0x22);
	call_amid_flood(d, "events", msg, len, CALL_RECV, (uint32_t)id, ETIMEDOUT);
	assert_int_equal(d->client->n_events, CLIENT_EVENTS_MAX);
	assert_true(d->client->events_lost > 0);
}

static void recv_events_socket(void **state) {
	events(*state);
}

static void recv_events_shm(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_attach(d);
	events(d);
}

// A send that waits for room in the request ring, which the daemon never
// reads, while late answers keep the response ring full.
static void send_late_answers_shm(void **state) {
	static uint8_t msg[FAKE_FLOOD_MSG_MAX];
	static uint8_t req[FILL_REQ_LEN];
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	unsigned sends = 0;

	fake_daemon_attach(d);
	uint32_t late = abandoned_id(c);
	// Fill the request ring: the last send times out.
	while (gr_api_client_send(c, GR_PING, sizeof(req), req) > 0)
		assert_true(++sends < FILL_SENDS_MAX);
	assert_int_equal(errno, ETIMEDOUT);
	size_t len = fake_flood_msg(msg, late, FLOOD_PAYLOAD, 0x33);
	call_amid_flood(d, "late answers, request ring full", msg, len, CALL_SEND, 0, ETIMEDOUT);
}

// Late answers to id, as many as the response ring holds: one cell each
// (a header alone), the ring full but for one. Returns how many.
static unsigned ring_fill_late_answers(struct fake_daemon *d, uint32_t id) {
	struct gr_api_response hdr = {.for_id = id};
	unsigned n = 0;
	while (shmchan_server_enqueue(d->server, &hdr, sizeof(hdr), NULL, 0) == 0)
		n++;
	shmchan_server_flush(d->server);
	assert_true(n > 2 * CLIENT_ROUTE_CLOCK_EVERY);
	return n;
}

// Messages left in the client's response ring (taken and dropped).
static unsigned ring_left(struct gr_api_client *c) {
	unsigned n = 0;
	while (shmchan_client_recv(c->chan, c->msg_buf, CLIENT_MSG_MAX) > 0)
		n++;
	return n;
}

// A receive whose deadline passed, in front of a ring full of late
// answers: it fails after CLIENT_ROUTE_CLOCK_EVERY of them at most.
static void recv_deadline_amid_messages_shm(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	struct client_stash_entry *entry;
	struct client_msg msg;

	fake_daemon_attach(d);
	uint32_t late = abandoned_id(c);
	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_true(id > 0);
	unsigned queued = ring_fill_late_answers(d, late);
	// A call in progress (client_take() starts no deadline) whose
	// deadline passed already.
	c->deadline_ns = 1;
	assert_int_equal(client_take(c, (uint32_t)id, true, NULL, &msg, &entry), -ETIMEDOUT);
	unsigned left = ring_left(c);
	printf("recv past its deadline took %u of %u late answers\n", queued - left, queued);
	assert_true(left >= queued - CLIENT_ROUTE_CLOCK_EVERY);
}

// The same for a send that waits for room in the request ring: it drains
// the response ring by CLIENT_ROUTE_CLOCK_EVERY and reads its deadline in
// between.
static void send_deadline_amid_messages_shm(void **state) {
	static uint8_t req[FILL_REQ_LEN];
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	unsigned sends = 0;

	fake_daemon_attach(d);
	uint32_t late = abandoned_id(c);
	while (gr_api_client_send(c, GR_PING, sizeof(req), req) > 0)
		assert_true(++sends < FILL_SENDS_MAX);
	assert_int_equal(errno, ETIMEDOUT);
	unsigned queued = ring_fill_late_answers(d, late);
	c->deadline_ns = 1;
	assert_int_equal(client_send(c, GR_PING, sizeof(req), req), -ETIMEDOUT);
	unsigned left = ring_left(c);
	printf("send past its deadline took %u of %u late answers\n", queued - left, queued);
	assert_true(left >= queued - CLIENT_ROUTE_CLOCK_EVERY);
}

// The daemon passes a socketpair of its own as the response doorbell and
// writes its end without end.
static void recv_doorbell_flood_shm(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	struct gr_shm_attach_resp resp;
	struct fake_flood flood;
	int fds[3], bell[2];
	uint64_t took;
	int err;

	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, bell), 0);
	fds[1] = bell[1];
	fake_daemon_write(d, 1, 0, &resp, sizeof(resp), fds, 3);
	assert_int_equal(client_shm_attach(c), 0);
	fake_daemon_read_attach(d);
	close(bell[1]);
	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_true(id > 0);

	c->timeout_ms = CALL_TIMEOUT_MS;
	fake_flood_doorbell_start(&flood, bell[0]);
	fake_flood_wait(&flood, FLOOD_WARMUP);
	long ret = run_call(c, CALL_RECV, (uint32_t)id, &err, &took);
	uint64_t rung = fake_flood_stop(&flood);
	printf("doorbell rung without end, recv on shm: returned after %llu ms (timeout %d ms), "
	       "%llu rings sent\n",
	       (unsigned long long)took,
	       CALL_TIMEOUT_MS,
	       (unsigned long long)rung);
	assert_int_equal(ret, -1);
	assert_int_equal(err, ETIMEDOUT);
	assert_true(took < RETURN_BOUND_MS);
	close(bell[0]);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(recv_late_answers_socket),
		FAKE_DAEMON_TEST(recv_late_answers_shm),
		FAKE_DAEMON_TEST(event_recv_late_answers_socket),
		FAKE_DAEMON_TEST(event_recv_late_answers_shm),
		FAKE_DAEMON_TEST(try_recv_late_answers_socket),
		FAKE_DAEMON_TEST(try_recv_late_answers_shm),
		FAKE_DAEMON_TEST(recv_events_socket),
		FAKE_DAEMON_TEST(recv_events_shm),
		FAKE_DAEMON_TEST(send_late_answers_shm),
		FAKE_DAEMON_TEST(recv_deadline_amid_messages_shm),
		FAKE_DAEMON_TEST(send_deadline_amid_messages_shm),
		FAKE_DAEMON_TEST(recv_doorbell_flood_shm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
