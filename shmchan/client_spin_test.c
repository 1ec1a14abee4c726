// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchan_client_spin(), the inner spin of a client's wait: on an empty
// response ring it makes every look it was given and finds nothing; with a
// message published (or known and not yet taken) it returns at its first
// look; a message the daemon publishes while it spins ends it early; and it
// takes nothing, so the receive after it gets the message whole. The region
// lives in plain process memory: no EAL is needed.

#include "client.h"
#include "server.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

// A response of the tests: its 12-byte header and some payload.
#define MSG_LEN 40
// Looks of a spin on an empty ring: a few pauses.
#define FEW_POLLS 64
// Looks of a spin that another thread ends: with a pause of 10-140 ns each,
// minutes, past the test's timeout; the publisher ends it within
// milliseconds.
#define MANY_POLLS 4000000000u

struct spin {
	struct shmchan_geometry g;
	struct shmchan_mem mem;
	struct shmchan_server *srv;
	struct shmchan_client *cli;
	atomic_bool spinning; // the spinner is about to spin: publish now
	uint8_t msg[MSG_LEN];
	uint8_t buf[SHMCHAN_MSG_MAX];
};

static int spin_setup(void **state) {
	struct spin *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	assert_int_equal(shmchan_geometry_init(&s->g, SHMCHAN_RING_CELLS), 0);
	s->mem = (struct shmchan_mem){
		.backing = SHMCHAN_BACKING_MEMZONE,
		.base = aligned_alloc(SHMCHAN_REGION_ALIGN, s->g.region_size),
		.size = s->g.region_size,
		.fd = -1,
		.name = "client_spin_test",
	};
	assert_non_null(s->mem.base);
	assert_int_equal(shmchan_server_create(&s->mem, &s->g, &s->srv), 0);
	assert_int_equal(
		shmchan_client_open(
			&s->g,
			s->mem.base,
			-1,
			dup(shmchan_server_req_fd(s->srv)),
			dup(shmchan_server_resp_fd(s->srv)),
			&s->cli
		),
		0
	);
	for (size_t i = 0; i < MSG_LEN; i++)
		s->msg[i] = (uint8_t)(i * 7 + 1);
	*state = s;
	return 0;
}

static int spin_teardown(void **state) {
	struct spin *s = *state;

	shmchan_client_close(s->cli);
	shmchan_server_destroy(s->srv);
	free(s->mem.base);
	free(s);
	return 0;
}

static void publish(struct spin *s) {
	assert_int_equal(
		shmchan_server_send(
			s->srv,
			s->msg,
			SHMCHAN_MSG_MIN,
			s->msg + SHMCHAN_MSG_MIN,
			MSG_LEN - SHMCHAN_MSG_MIN
		),
		0
	);
}

static void take_expect(struct spin *s) {
	assert_int_equal(shmchan_client_recv(s->cli, s->buf, sizeof(s->buf)), MSG_LEN);
	assert_memory_equal(s->buf, s->msg, MSG_LEN);
}

static void test_empty_ring_spins_every_poll(void **state) {
	struct spin *s = *state;

	assert_int_equal(shmchan_client_spin(s->cli, FEW_POLLS), FEW_POLLS);
	assert_int_equal(shmchan_client_spin(s->cli, 1), 1);
	assert_int_equal(shmchan_client_recv(s->cli, s->buf, sizeof(s->buf)), 0);
}

static void test_published_message_ends_at_first_look(void **state) {
	struct spin *s = *state;

	publish(s);
	assert_int_equal(shmchan_client_spin(s->cli, FEW_POLLS), 0);
	// It took nothing: a second spin finds it too, and the receive gets it.
	assert_int_equal(shmchan_client_spin(s->cli, FEW_POLLS), 0);
	take_expect(s);
	assert_int_equal(shmchan_client_spin(s->cli, FEW_POLLS), FEW_POLLS);
}

// Two messages published, the first taken: the second is known from the
// index read then, and the spin does not wait for another publication.
static void test_known_message_ends_at_first_look(void **state) {
	struct spin *s = *state;

	publish(s);
	publish(s);
	take_expect(s);
	assert_int_equal(shmchan_client_spin(s->cli, FEW_POLLS), 0);
	take_expect(s);
	assert_int_equal(shmchan_client_spin(s->cli, FEW_POLLS), FEW_POLLS);
}

static void *publisher(void *arg) {
	struct spin *s = arg;

	while (!atomic_load(&s->spinning))
		;
	usleep(1000);
	publish(s);
	return NULL;
}

static void test_publication_ends_the_spin(void **state) {
	struct spin *s = *state;
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, publisher, s), 0);
	atomic_store(&s->spinning, true);
	unsigned empty = shmchan_client_spin(s->cli, MANY_POLLS);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(empty < MANY_POLLS);
	take_expect(s);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_empty_ring_spins_every_poll,
			spin_setup,
			spin_teardown
		),
		cmocka_unit_test_setup_teardown(
			test_published_message_ends_at_first_look,
			spin_setup,
			spin_teardown
		),
		cmocka_unit_test_setup_teardown(
			test_known_message_ends_at_first_look,
			spin_setup,
			spin_teardown
		),
		cmocka_unit_test_setup_teardown(
			test_publication_ends_the_spin,
			spin_setup,
			spin_teardown
		),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
