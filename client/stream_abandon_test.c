// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Leaving gr_api_client_stream_foreach() with break: the rest of the stream
// is read and dropped within one timeout for all of it
// (__gr_api_client_stream_drain()), then abandoned. Against a daemon that
// streams without end (fake_daemon.c's flood), the loop ends with
// -ETIMEDOUT after about the handle's timeout, and the stream's later
// responses are dropped as they come, never kept; before, each response
// was a receive of its own with a timeout of its own, and the loop never
// ended. Against a daemon that ends its stream, the break still drains it
// all and ret is 0, as in Grout. On the socket and on a channel.

#include "fake_daemon.h"

#include <errno.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define CALL_TIMEOUT_MS 200
// A loop that ends later than this did not honour the timeout: far above it
// for a busy host, far below the flood's length.
#define RETURN_BOUND_MS 3000
// Responses the body takes before it breaks.
#define TAKEN 3
// Responses of the stream that ends.
#define FINITE_LEN 10

static unsigned break_after_taken(struct gr_api_client *c, int *ret) {
	const struct gr_log_entry *e;
	struct gr_log_level_list_req req = {.show_all = true};
	unsigned taken = 0;

	gr_api_client_stream_foreach (e, *ret, c, GR_LOG_LEVEL_LIST, sizeof(req), &req) {
		assert_non_null(e);
		if (++taken == TAKEN)
			break;
	}
	return taken;
}

static void stream_endless(struct fake_daemon *d) {
	static uint8_t msg[FAKE_FLOOD_MSG_MAX];
	struct gr_api_client *c = d->client;
	struct fake_flood flood;
	int ret = 0;

	c->timeout_ms = CALL_TIMEOUT_MS;
	// The stream request will be the next id.
	size_t len = fake_flood_msg(msg, c->next_id, sizeof(struct gr_log_entry), 'a');
	fake_flood_start(&flood, d, msg, len, 0);
	uint64_t start = fake_daemon_now_ms();
	unsigned taken = break_after_taken(c, &ret);
	uint64_t took = fake_daemon_now_ms() - start;
	uint64_t sent = fake_flood_stop(&flood);
	printf("break out of an endless stream on %s: the loop ended after %llu ms (timeout %d "
	       "ms), %llu responses sent\n",
	       gr_api_client_transport(c) == GR_API_TRANSPORT_SHM ? "shm" : "socket",
	       (unsigned long long)took,
	       CALL_TIMEOUT_MS,
	       (unsigned long long)sent);
	assert_int_equal(taken, TAKEN);
	assert_int_equal(ret, -ETIMEDOUT);
	assert_true(took < RETURN_BOUND_MS);
	// Abandoned: what still comes is dropped, and its receive is refused.
	assert_int_equal(c->stash_n, 0);
	assert_int_equal(gr_api_client_try_recv(c, c->next_id - 1, NULL), -1);
	assert_int_equal(errno, ECANCELED);
	assert_false(c->dead);
}

static void stream_endless_socket(void **state) {
	stream_endless(*state);
}

static void stream_endless_shm(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_attach(d);
	stream_endless(d);
}

// Send a response on the channel, or on the socket without one.
static void respond(struct fake_daemon *d, uint32_t for_id, const void *payload, size_t len) {
	struct gr_api_response hdr = {.for_id = for_id, .payload_len = (uint32_t)len};
	if (d->server == NULL) {
		fake_daemon_write(d, for_id, 0, payload, len, NULL, 0);
		return;
	}
	assert_int_equal(shmchan_server_send(d->server, &hdr, sizeof(hdr), payload, len), 0);
}

static void stream_ends(struct fake_daemon *d) {
	struct gr_api_client *c = d->client;
	struct gr_log_entry e = {.name = "t", .level = GR_LOG_LEVEL_MIN};
	uint32_t id = c->next_id;
	int ret = -1;

	c->timeout_ms = CALL_TIMEOUT_MS;
	for (unsigned i = 0; i < FINITE_LEN; i++)
		respond(d, id, &e, sizeof(e));
	respond(d, id, NULL, 0);
	respond(d, id + 1, NULL, 0); // the ping's
	assert_int_equal(break_after_taken(c, &ret), TAKEN);
	assert_int_equal(ret, 0);
	assert_int_equal(c->stash_n, 0);
	// The handle goes on: the next answer is the next request's.
	assert_int_equal(gr_api_client_send_recv(c, GR_PING, 0, NULL, NULL), 0);
}

static void stream_ends_socket(void **state) {
	stream_ends(*state);
}

static void stream_ends_shm(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_attach(d);
	stream_ends(d);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(stream_endless_socket),
		FAKE_DAEMON_TEST(stream_endless_shm),
		FAKE_DAEMON_TEST(stream_ends_socket),
		FAKE_DAEMON_TEST(stream_ends_shm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
