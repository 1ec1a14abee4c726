// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The CPU hints of the control block: each side stores the CPU it runs on
// beside its need-wakeup flag only when it changed, a client rings the
// daemon's doorbell with its CPU told, nothing is stored once the channel
// is detached; the client sees the daemon "on" a CPU only while the
// poller is awake; the daemon tells how busy the host is, which the client
// takes as fresh for a while; a client's need-wakeup flag says whether it sleeps in
// the library's wait or in its caller's loop; and the daemon reads
// whatever a client wrote as a hint
// only: a value that is no CPU number is "not known", and a consumer index
// read for the spin moves none of the daemon's own. The region lives in
// plain process memory: no EAL is needed.

#include "client.h"
#include "server.h"

#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

// A value no side ever stores: a store shows as its disappearance.
#define SENTINEL 0xdeadbeefu
// A response of the tests: a bare 12-byte header.
#define MSG_LEN SHMCHAN_MSG_MIN

struct hint {
	struct shmchan_geometry g;
	struct shmchan_mem mem;
	struct shmchan_server *srv;
	struct shmchan_client *cli;
	struct shmchan_ctrl *ctrl;
	uint8_t buf[SHMCHAN_MSG_MAX];
};

static int hint_setup(void **state) {
	struct hint *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	assert_int_equal(shmchan_geometry_init(&h->g, SHMCHAN_RING_CELLS), 0);
	h->mem = (struct shmchan_mem){
		.backing = SHMCHAN_BACKING_MEMZONE,
		.base = aligned_alloc(SHMCHAN_REGION_ALIGN, h->g.region_size),
		.size = h->g.region_size,
		.fd = -1,
		.name = "cpu_hint_test",
	};
	assert_non_null(h->mem.base);
	assert_int_equal(shmchan_server_create(&h->mem, &h->g, &h->srv), 0);
	assert_int_equal(
		shmchan_client_open(
			&h->g,
			h->mem.base,
			-1,
			dup(shmchan_server_req_fd(h->srv)),
			dup(shmchan_server_resp_fd(h->srv)),
			&h->cli
		),
		0
	);
	h->ctrl = h->mem.base;
	*state = h;
	return 0;
}

static int hint_teardown(void **state) {
	struct hint *h = *state;

	shmchan_client_close(h->cli);
	shmchan_server_destroy(h->srv);
	free(h->mem.base);
	free(h);
	return 0;
}

static struct shmchan_peer peer(struct hint *h) {
	struct shmchan_peer p;

	shmchan_server_peer(h->srv, true, &p);
	return p;
}

static void test_client_cpu_stored_on_change(void **state) {
	struct hint *h = *state;

	assert_int_equal(h->ctrl->client_cpu, SHMCHAN_CPU_UNKNOWN);
	assert_int_equal(peer(h).cpu, -1);
	shmchan_client_cpu_publish(h->cli, 3);
	assert_int_equal(h->ctrl->client_cpu, 4);
	assert_int_equal(peer(h).cpu, 3);
	// The same CPU again: no store (the daemon's line stays as it is).
	h->ctrl->client_cpu = SENTINEL;
	shmchan_client_cpu_publish(h->cli, 3);
	assert_int_equal(h->ctrl->client_cpu, SENTINEL);
	// Another one, then "not known".
	shmchan_client_cpu_publish(h->cli, 0);
	assert_int_equal(h->ctrl->client_cpu, 1);
	assert_int_equal(peer(h).cpu, 0);
	shmchan_client_cpu_publish(h->cli, -1);
	assert_int_equal(h->ctrl->client_cpu, SHMCHAN_CPU_UNKNOWN);
}

static void test_doorbell_ring_tells_cpu(void **state) {
	struct hint *h = *state;
	const uint8_t req[MSG_LEN] = {0};
	cpu_set_t one;
	int cpu = sched_getcpu();

	// On one CPU, so that the CPU the ring tells is known.
	assert_true(cpu >= 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	// A new channel: the daemon's flag is set, so this send rings.
	assert_int_not_equal(h->ctrl->daemon_sleeping, 0);
	assert_int_equal(shmchan_client_send(h->cli, req, MSG_LEN, NULL, 0), 0);
	assert_int_equal(h->ctrl->client_cpu, (uint32_t)cpu + 1);
	assert_int_equal(peer(h).cpu, cpu);
}

static void test_detached_stores_nothing(void **state) {
	struct hint *h = *state;

	shmchan_client_cpu_publish(h->cli, 1);
	shmchan_server_detach(h->srv);
	// The region may be another client's now.
	shmchan_client_cpu_publish(h->cli, 5);
	assert_int_equal(h->ctrl->client_cpu, 2);
}

static void test_daemon_on_cpu_when_awake(void **state) {
	struct hint *h = *state;

	shmchan_server_cpu_publish(h->srv, 2);
	assert_int_equal(h->ctrl->daemon_cpu, 3);
	// Asleep (a new channel's flag is set): on no CPU.
	assert_false(shmchan_client_daemon_on(h->cli, 2));
	shmchan_server_doorbell_disarm(h->srv);
	assert_true(shmchan_client_daemon_on(h->cli, 2));
	assert_false(shmchan_client_daemon_on(h->cli, 1));
	assert_false(shmchan_client_daemon_on(h->cli, -1));
	shmchan_server_doorbell_arm(h->srv);
	assert_false(shmchan_client_daemon_on(h->cli, 2));
	// Stored on change only; "not known" is on no CPU.
	h->ctrl->daemon_cpu = SENTINEL;
	shmchan_server_cpu_publish(h->srv, 2);
	assert_int_equal(h->ctrl->daemon_cpu, SENTINEL);
	shmchan_server_cpu_publish(h->srv, -1);
	assert_int_equal(h->ctrl->daemon_cpu, SHMCHAN_CPU_UNKNOWN);
	shmchan_server_doorbell_disarm(h->srv);
	assert_false(shmchan_client_daemon_on(h->cli, 0));
}

static void test_sleep_says_where(void **state) {
	struct hint *h = *state;

	// Asleep in the library's own wait, or in its caller's event loop:
	// the daemon hears which, and that it sleeps either way.
	shmchan_client_doorbell_arm(h->cli);
	assert_int_equal(h->ctrl->client_sleeping, SHMCHAN_CLIENT_ASLEEP);
	assert_true(peer(h).sleeping);
	assert_false(peer(h).in_loop);
	shmchan_client_doorbell_disarm(h->cli);
	assert_false(peer(h).sleeping);
	shmchan_client_doorbell_arm_in_loop(h->cli);
	assert_int_equal(h->ctrl->client_sleeping, SHMCHAN_CLIENT_ASLEEP_IN_LOOP);
	assert_true(peer(h).sleeping);
	assert_true(peer(h).in_loop);
	shmchan_client_doorbell_disarm(h->cli);
	assert_false(peer(h).in_loop);
}

// The host_load word: the millisecond of the daemon's look and whether it
// found the host busy, read by the client as fresh for max_age_ms only, 0
// as "not told", across the wrap of its 31 bits of milliseconds.
static void test_host_word(void **state) {
	const uint32_t max_age = 2000;
	bool busy;
	(void)state;

	assert_false(shmchan_host_word_read(0, 5000, max_age, &busy));
	for (int b = 0; b < 2; b++) {
		uint32_t w = shmchan_host_word(5000, b);
		busy = !b;
		assert_true(shmchan_host_word_read(w, 5000, max_age, &busy));
		assert_int_equal(busy, b);
		assert_true(shmchan_host_word_read(w, 5000 + max_age - 1, max_age, &busy));
		assert_false(shmchan_host_word_read(w, 5000 + max_age, max_age, &busy));
		// A look "from the future" is an old one.
		assert_false(shmchan_host_word_read(w, 4999, max_age, &busy));
	}
	// A quiet look at a millisecond whose low 31 bits are 0 is not "not
	// told".
	uint64_t wrap = (uint64_t)SHMCHAN_HOST_MS_MASK + 1;
	uint32_t w = shmchan_host_word(wrap, false);
	assert_int_not_equal(w, 0);
	assert_true(shmchan_host_word_read(w, wrap + 1, max_age, &busy));
	assert_false(busy);
	// Across the wrap.
	w = shmchan_host_word(wrap - 1, true);
	assert_true(shmchan_host_word_read(w, wrap + 5, max_age, &busy));
	assert_true(busy);
	assert_false(shmchan_host_word_read(w, wrap + max_age, max_age, &busy));
}

// The daemon tells its look in the control block, storing only a word that
// changed; the client reads it.
static void test_host_told(void **state) {
	struct hint *h = *state;
	bool busy = false;

	assert_int_equal(h->ctrl->host_load, 0);
	assert_false(shmchan_client_host_busy(h->cli, 10000, 2000, &busy));
	uint32_t w = shmchan_host_word(10000, true);
	shmchan_server_host_publish(h->srv, w);
	assert_int_equal(h->ctrl->host_load, w);
	assert_true(shmchan_client_host_busy(h->cli, 10500, 2000, &busy));
	assert_true(busy);
	assert_false(shmchan_client_host_busy(h->cli, 12000, 2000, &busy));
	h->ctrl->host_load = SENTINEL;
	shmchan_server_host_publish(h->srv, w);
	assert_int_equal(h->ctrl->host_load, SENTINEL);
	shmchan_server_host_publish(h->srv, shmchan_host_word(11000, false));
	assert_true(shmchan_client_host_busy(h->cli, 11000, 2000, &busy));
	assert_false(busy);
}

static void test_hostile_hints(void **state) {
	struct hint *h = *state;
	const uint8_t resp[MSG_LEN] = {1};
	static const uint32_t cpus[] = {
		UINT32_MAX,
		SHMCHAN_CPU_HINT_MAX + 1,
		0x80000000u,
	};

	for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
		h->ctrl->client_cpu = cpus[i];
		assert_int_equal(peer(h).cpu, -1);
	}
	h->ctrl->client_cpu = SHMCHAN_CPU_HINT_MAX;
	assert_int_equal(peer(h).cpu, SHMCHAN_CPU_HINT_MAX - 1);
	h->ctrl->client_sleeping = 0x12345678;
	assert_true(peer(h).sleeping);
	// Only the in-loop value says "in its loop"; any other is a sleep.
	assert_false(peer(h).in_loop);

	// The consumer index: what was taken, as it is.
	assert_int_equal(shmchan_server_send(h->srv, resp, MSG_LEN, NULL, 0), 0);
	assert_false(peer(h).all_taken);
	assert_int_equal(shmchan_client_recv(h->cli, h->buf, sizeof(h->buf)), MSG_LEN);
	assert_true(peer(h).all_taken);
	uint32_t taken = peer(h).taken;
	// A client writing any index there: reported, and the daemon's own
	// view of the ring does not move (its next send works as before).
	uint32_t before = h->srv->resp.peer;
	__atomic_store_n(&h->srv->resp.shared->cons.tail, taken + 12345, __ATOMIC_RELAXED);
	struct shmchan_peer p = peer(h);
	assert_int_equal(p.taken, taken + 12345);
	assert_false(p.all_taken);
	assert_int_equal(h->srv->resp.peer, before);
	__atomic_store_n(&h->srv->resp.shared->cons.tail, taken, __ATOMIC_RELAXED);
	assert_int_equal(shmchan_server_send(h->srv, resp, MSG_LEN, NULL, 0), 0);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_client_cpu_stored_on_change,
			hint_setup,
			hint_teardown
		),
		cmocka_unit_test_setup_teardown(
			test_doorbell_ring_tells_cpu,
			hint_setup,
			hint_teardown
		),
		cmocka_unit_test_setup_teardown(
			test_detached_stores_nothing,
			hint_setup,
			hint_teardown
		),
		cmocka_unit_test_setup_teardown(
			test_daemon_on_cpu_when_awake,
			hint_setup,
			hint_teardown
		),
		cmocka_unit_test_setup_teardown(test_sleep_says_where, hint_setup, hint_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_hints, hint_setup, hint_teardown),
		cmocka_unit_test(test_host_word),
		cmocka_unit_test_setup_teardown(test_host_told, hint_setup, hint_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
