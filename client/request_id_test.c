// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Request ids: per client, from 1, never 0 (0 would read as an event when
// the response comes back), wrapping from UINT32_MAX to 1.

#include "client_priv.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

struct pair {
	struct gr_api_client *client;
	int daemon;
};

static int setup(void **state) {
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	struct pair *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->client = client_new(sv[0], 0);
	assert_non_null(p->client);
	p->daemon = sv[1];
	*state = p;
	return 0;
}

static int teardown(void **state) {
	struct pair *p = *state;
	assert_int_equal(gr_api_client_disconnect(p->client), 0);
	close(p->daemon);
	free(p);
	return 0;
}

// Send a ping and check the id it returned is the one on the wire.
static long ping(struct pair *p) {
	long id = gr_api_client_send(p->client, GR_PING, 0, NULL);
	struct gr_api_request hdr;
	assert_int_equal(read(p->daemon, &hdr, sizeof(hdr)), sizeof(hdr));
	assert_int_equal(hdr.id, id);
	assert_int_equal(hdr.type, GR_PING);
	assert_int_equal(hdr.payload_len, 0);
	return id;
}

static void ids_start_at_one(void **state) {
	struct pair *p = *state;
	assert_int_equal(ping(p), 1);
	assert_int_equal(ping(p), 2);
	assert_int_equal(ping(p), 3);
}

static void ids_are_per_client(void **state) {
	struct pair *p = *state;
	assert_int_equal(ping(p), 1);
	struct pair *other;
	setup((void **)&other);
	assert_int_equal(ping(other), 1);
	assert_int_equal(ping(p), 2);
	teardown((void **)&other);
}

static void wrap_skips_zero(void **state) {
	struct pair *p = *state;
	p->client->next_id = UINT32_MAX;
	assert_int_equal(ping(p), UINT32_MAX);
	assert_int_equal(ping(p), 1);
	assert_int_equal(ping(p), 2);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ids_start_at_one, setup, teardown),
		cmocka_unit_test_setup_teardown(ids_are_per_client, setup, teardown),
		cmocka_unit_test_setup_teardown(wrap_skips_zero, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
