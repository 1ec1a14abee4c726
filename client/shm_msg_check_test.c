// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A response on the channel whose header's payload length is not its
// frame's (longer, shorter, or beyond any payload the library accepts)
// fails the receive with EBADMSG and drops the handle: every later call
// fails ECONNRESET. Checked on each of the receive's paths: the first look
// of a receive into the caller's buffer, of one that allocates (Grout's),
// of one that never waits, and the look after a wait.

#include "fake_daemon.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// The payload the daemon puts in the frame.
#define FRAME_PAYLOAD 16

// How a test receives: into its buffer, allocated, without waiting.
enum recv_kind { RECV_INTO, RECV_ALLOC, RECV_TRY };

// Answer id with a frame of FRAME_PAYLOAD bytes of payload whose header
// says claimed bytes.
static void respond_claiming(struct fake_daemon *d, uint32_t id, uint32_t claimed) {
	uint8_t payload[FRAME_PAYLOAD] = {0};
	struct gr_api_response hdr = {.for_id = id, .payload_len = claimed};
	assert_int_equal(
		shmchan_server_send(d->server, &hdr, sizeof(hdr), payload, sizeof(payload)),
		0
	);
}

static long receive(struct gr_api_client *c, uint32_t id, enum recv_kind kind) {
	uint8_t buf[GR_PING2_LEN];
	void *rx = NULL;
	long ret;

	switch (kind) {
	case RECV_INTO:
		return gr_api_client_recv_into(c, id, buf, sizeof(buf));
	case RECV_ALLOC:
		ret = gr_api_client_recv_len(c, id, &rx);
		free(rx);
		return ret;
	case RECV_TRY:
		ret = gr_api_client_try_recv(c, id, &rx);
		free(rx);
		return ret;
	}
	return -1;
}

// One bad response answered before the receive looks, then the handle is
// dead.
static void bad_length(struct fake_daemon *d, uint32_t claimed, enum recv_kind kind) {
	struct gr_api_client *c = d->client;
	fake_daemon_attach(d);
	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_true(id > 0);
	respond_claiming(d, (uint32_t)id, claimed);

	errno = 0;
	assert_int_equal(receive(c, (uint32_t)id, kind), -1);
	assert_int_equal(errno, EBADMSG);
	assert_true(c->dead);
	errno = 0;
	assert_int_equal(receive(c, (uint32_t)id, kind), -1);
	assert_int_equal(errno, ECONNRESET);
	assert_int_equal(gr_api_client_send(c, GR_PING, 0, NULL), -ECONNRESET);
}

static void longer_into(void **state) {
	bad_length(*state, FRAME_PAYLOAD + 1, RECV_INTO);
}

static void shorter_into(void **state) {
	bad_length(*state, FRAME_PAYLOAD - 1, RECV_INTO);
}

static void beyond_any_into(void **state) {
	bad_length(*state, UINT32_MAX - 4, RECV_INTO);
}

static void longer_alloc(void **state) {
	bad_length(*state, FRAME_PAYLOAD + 1, RECV_ALLOC);
}

static void shorter_alloc(void **state) {
	bad_length(*state, 0, RECV_ALLOC);
}

static void beyond_any_alloc(void **state) {
	bad_length(*state, (uint32_t)CLIENT_MAX_PAYLOAD + 1, RECV_ALLOC);
}

static void longer_try(void **state) {
	bad_length(*state, FRAME_PAYLOAD + 1, RECV_TRY);
}

// The good length passes on the same paths: the checks above fail for the
// length, not for the rest of the test.
static void frame_length_passes(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	fake_daemon_attach(d);
	for (enum recv_kind kind = RECV_INTO; kind <= RECV_TRY; kind++) {
		long id = gr_api_client_send(c, GR_PING, 0, NULL);
		assert_true(id > 0);
		respond_claiming(d, (uint32_t)id, FRAME_PAYLOAD);
		assert_int_equal(receive(c, (uint32_t)id, kind), FRAME_PAYLOAD);
	}
	assert_false(c->dead);
}

struct waiter {
	struct fake_daemon *d;
	uint8_t *req;
	atomic_bool stop;
	int stop_fd;
};

// The daemon's thread: answers each request it reads, a while later (so
// that the receive finds the ring empty and waits), with a payload length
// one more than its frame's.
#define WAITER_DELAY_US 2000
static void waiter_answer(void *arg, int len) {
	struct waiter *w = arg;
	struct gr_api_request req;
	FAKE_DAEMON_CHECK(len >= (int)sizeof(req));
	memcpy(&req, w->req, sizeof(req));
	usleep(WAITER_DELAY_US);
	uint8_t payload[FRAME_PAYLOAD] = {0};
	struct gr_api_response hdr = {.for_id = req.id, .payload_len = FRAME_PAYLOAD + 1};
	FAKE_DAEMON_CHECK(
		shmchan_server_enqueue(w->d->server, &hdr, sizeof(hdr), payload, sizeof(payload)) ==
		0
	);
}

static void *waiter_run(void *arg) {
	struct waiter *w = arg;
	fake_daemon_serve(w->d, w->req, &w->stop, w->stop_fd, NULL, waiter_answer, w);
	return NULL;
}

// The bad response comes while the receive waits (spins or sleeps): the
// look after the wait checks it as the first look does.
static void while_waiting(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	struct waiter w = {
		.d = d,
		.req = malloc(SHMCHAN_MSG_MAX),
		.stop_fd = eventfd(0, EFD_CLOEXEC)};
	pthread_t thread;
	uint64_t one = 1;
	uint8_t buf[GR_PING2_LEN];

	assert_non_null(w.req);
	assert_true(w.stop_fd >= 0);
	fake_daemon_attach(d);
	assert_int_equal(pthread_create(&thread, NULL, waiter_run, &w), 0);
	errno = 0;
	assert_int_equal(gr_api_client_send_recv_into(c, GR_PING, 0, NULL, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EBADMSG);
	assert_true(c->dead);
	atomic_store(&w.stop, true);
	assert_int_equal(write(w.stop_fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(pthread_join(thread, NULL), 0);
	close(w.stop_fd);
	free(w.req);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(longer_into),
		FAKE_DAEMON_TEST(shorter_into),
		FAKE_DAEMON_TEST(beyond_any_into),
		FAKE_DAEMON_TEST(longer_alloc),
		FAKE_DAEMON_TEST(shorter_alloc),
		FAKE_DAEMON_TEST(beyond_any_alloc),
		FAKE_DAEMON_TEST(longer_try),
		FAKE_DAEMON_TEST(frame_length_passes),
		FAKE_DAEMON_TEST(while_waiting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
