// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Request ids: per client, from 1, never 0 (0 would read as an event when
// the response comes back), wrapping from UINT32_MAX to 1.

#include "fake_daemon.h"

#include <stdint.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// Send a ping and check the id it returned is the one on the wire.
static long ping(struct fake_daemon *d) {
	long id = gr_api_client_send(d->client, GR_PING, 0, NULL);
	struct gr_api_request hdr;
	assert_int_equal(read(d->sock, &hdr, sizeof(hdr)), sizeof(hdr));
	assert_int_equal(hdr.id, id);
	assert_int_equal(hdr.type, GR_PING);
	assert_int_equal(hdr.payload_len, 0);
	return id;
}

static void ids_start_at_one(void **state) {
	struct fake_daemon *d = *state;
	assert_int_equal(ping(d), 1);
	assert_int_equal(ping(d), 2);
	assert_int_equal(ping(d), 3);
}

static void ids_are_per_client(void **state) {
	struct fake_daemon *d = *state;
	assert_int_equal(ping(d), 1);
	struct fake_daemon *other;
	fake_daemon_setup((void **)&other);
	assert_int_equal(ping(other), 1);
	assert_int_equal(ping(d), 2);
	fake_daemon_teardown((void **)&other);
}

static void wrap_skips_zero(void **state) {
	struct fake_daemon *d = *state;
	d->client->next_id = UINT32_MAX;
	assert_int_equal(ping(d), UINT32_MAX);
	assert_int_equal(ping(d), 1);
	assert_int_equal(ping(d), 2);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(ids_start_at_one),
		FAKE_DAEMON_TEST(ids_are_per_client),
		FAKE_DAEMON_TEST(wrap_skips_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
