// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// gr_api_client_recv_into() on the shared-memory transport copies the
// payload of the response it waits for straight from the ring's cells into
// the caller's buffer: the handle's staging buffer (msg_buf) is not written.
// Responses to other ids still go through it to the stash, and come back in
// order; a payload larger than the buffer fails EMSGSIZE and is dropped; a
// payload split by the end of the cell array arrives whole. The test plays
// the daemon on its own thread, with shmchan's server functions.

#include "fake_daemon.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// Poison of the staging buffer: a byte no payload of this test holds there.
#define POISON 0xa5
#define PAYLOAD_LEN 4096
// Rounds of PAYLOAD_LEN responses: more bytes than a ring of 16384 cells of
// 16 bytes (256 KiB) holds, so that the indices wrap around the cell array.
#define WRAP_ROUNDS 200

static void fill(uint8_t *buf, size_t len, uint32_t salt) {
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 31 + salt); // never POISON for all i
}

static void respond(struct fake_daemon *d, uint32_t id, uint32_t status, size_t len) {
	static uint8_t payload[GR_API_MAX_MSG_LEN];
	struct gr_api_response hdr = {.for_id = id, .status = status, .payload_len = (uint32_t)len};
	fill(payload, len, id);
	assert_int_equal(shmchan_server_send(d->server, &hdr, sizeof(hdr), payload, len), 0);
}

static bool staging_untouched(const struct gr_api_client *c) {
	for (size_t i = 0; i < sizeof(struct gr_api_response) + PAYLOAD_LEN; i++)
		if (c->msg_buf[i] != POISON)
			return false;
	return true;
}

static void check_payload(const uint8_t *buf, size_t len, uint32_t id) {
	uint8_t want[PAYLOAD_LEN];
	fill(want, len, id);
	assert_memory_equal(buf, want, len);
}

static void straight_into_buffer(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	static uint8_t buf[PAYLOAD_LEN];
	fake_daemon_attach(d);

	respond(d, 7, 0, PAYLOAD_LEN);
	memset(c->msg_buf, POISON, CLIENT_MSG_MAX);
	assert_int_equal(gr_api_client_recv_into(c, 7, buf, sizeof(buf)), PAYLOAD_LEN);
	check_payload(buf, PAYLOAD_LEN, 7);
	assert_true(staging_untouched(c));
}

static void others_through_the_stash(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	static uint8_t buf[PAYLOAD_LEN];
	fake_daemon_attach(d);
	fake_daemon_any_id(d); // answers to requests it does not send

	respond(d, 3, 0, PAYLOAD_LEN);
	respond(d, 3, 0, PAYLOAD_LEN / 2);
	respond(d, 5, 0, PAYLOAD_LEN);
	assert_int_equal(gr_api_client_recv_into(c, 5, buf, sizeof(buf)), PAYLOAD_LEN);
	check_payload(buf, PAYLOAD_LEN, 5);
	assert_int_equal(client_stash_count(c), 2);
	assert_int_equal(gr_api_client_recv_into(c, 3, buf, sizeof(buf)), PAYLOAD_LEN);
	check_payload(buf, PAYLOAD_LEN, 3);
	assert_int_equal(gr_api_client_recv_into(c, 3, buf, sizeof(buf)), PAYLOAD_LEN / 2);
	check_payload(buf, PAYLOAD_LEN / 2, 3);
	assert_int_equal(client_stash_count(c), 0);
}

static void too_big_or_failed(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	static uint8_t buf[PAYLOAD_LEN];
	fake_daemon_attach(d);

	respond(d, 9, 0, PAYLOAD_LEN);
	errno = 0;
	assert_int_equal(gr_api_client_recv_into(c, 9, buf, PAYLOAD_LEN - 1), -1);
	assert_int_equal(errno, EMSGSIZE);
	respond(d, 10, ENOENT, 0);
	errno = 0;
	assert_int_equal(gr_api_client_recv_into(c, 10, buf, sizeof(buf)), -1);
	assert_int_equal(errno, ENOENT);
	// The handle goes on, straight again.
	respond(d, 11, 0, 16);
	memset(c->msg_buf, POISON, CLIENT_MSG_MAX);
	assert_int_equal(gr_api_client_recv_into(c, 11, buf, sizeof(buf)), 16);
	check_payload(buf, 16, 11);
	assert_true(staging_untouched(c));
}

static void across_the_wrap(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client *c = d->client;
	static uint8_t buf[PAYLOAD_LEN];
	fake_daemon_attach(d);

	memset(c->msg_buf, POISON, CLIENT_MSG_MAX);
	// Odd lengths, so that frames end anywhere in a cell and one of them
	// straddles the end of the cell array.
	for (uint32_t id = 1; id <= WRAP_ROUNDS; id++) {
		size_t len = PAYLOAD_LEN - id;
		respond(d, id, 0, len);
		assert_int_equal(gr_api_client_recv_into(c, id, buf, sizeof(buf)), (long)len);
		check_payload(buf, len, id);
	}
	assert_true(staging_untouched(c));
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(straight_into_buffer),
		FAKE_DAEMON_TEST(others_through_the_stash),
		FAKE_DAEMON_TEST(too_big_or_failed),
		FAKE_DAEMON_TEST(across_the_wrap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
