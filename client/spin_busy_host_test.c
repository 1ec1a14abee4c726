// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A wait whose requests woke the sleeping daemon sleeps at once, without a
// spin, when every CPU of the host has a task to run: the woken poller
// waits for a CPU, most often the waiter's own, and a spin there delays
// the answer (client_spin_wake_sleep()). The decision with made-up
// signals, then on a real channel with the host's load injected
// (client_cpus_busy): every call that rang a sleeping daemon sleeps at
// once on a busy host and is no sample of the round trip; on a quiet one
// none does; a call that rang nothing never reads the load. And the load
// itself, read from a file the test writes: an answer serves a second; the
// daemon's answer in the control block, while fresh, comes first.

#include "fake_daemon.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define TEST_ECHO GR_MSG_TYPE(0x7e57, 1)
// Calls of the channel tests: each one rings the daemon asleep.
#define CALLS 20
// A hung test fails within this bound instead of hanging the suite.
#define TEST_ALARM_S 30
// The responder's delay: far above the time a client takes from its send
// to its first look at the ring, far below the fixed budget's spin.
#define ANSWER_US 1000
#define MSEC_NS 1000000ull

static void wake_sleep_decision(void **state) {
	int budgets[] = {GR_API_CLIENT_SPIN_ADAPTIVE, GR_API_CLIENT_SPIN_US_DEFAULT};
	(void)state;

	for (size_t b = 0; b < 2; b++) {
		struct client_spin s;
		client_spin_init(&s, budgets[b]);
		// Woke the daemon on a busy host: sleep at once, counted.
		assert_true(client_spin_wake_sleep(&s, true, true));
		assert_int_equal(s.host_busy, 1);
		// Woke nothing, or a CPU is free for the poller: spin as usual.
		assert_false(client_spin_wake_sleep(&s, false, true));
		assert_false(client_spin_wake_sleep(&s, true, false));
		assert_false(client_spin_wake_sleep(&s, false, false));
		assert_int_equal(s.host_busy, 1);
		// The adaptive budget learnt nothing from it.
		struct client_spin fresh;
		client_spin_init(&fresh, budgets[b]);
		assert_int_equal(s.budget_ns, fresh.budget_ns);
		assert_int_equal(s.rtt_ns, fresh.rtt_ns);
	}
	// A budget of 0 sleeps at once anyway: nothing to decide or count.
	struct client_spin s;
	client_spin_init(&s, 0);
	assert_false(client_spin_wake_sleep(&s, true, true));
	assert_int_equal(s.host_busy, 0);
}

// The slow daemon of fake_daemon.h, answering ANSWER_US late; a test
// that hangs fails at TEST_ALARM_S.
static struct fake_slow *responder_start(int spin_us) {
	struct fake_slow *p = fake_slow_start(spin_us, TEST_ECHO, ANSWER_US);
	alarm(TEST_ALARM_S);
	return p;
}

static void responder_stop(struct fake_slow *p) {
	alarm(0);
	fake_slow_stop(p);
}

// The injected host load, and how many waits asked for it: the slow
// daemon answers each request only once its wait asked (its gate), so that
// a client kept from its CPU past the answer's delay still asks.
static bool injected_busy;
static atomic_uint injected_asked;
// client_cpus_busy as shipped: each test's teardown puts it back, failed
// or not.
static bool (*shipped_cpus_busy)(struct gr_api_client *);

static bool injected_cpus_busy(struct gr_api_client *c) {
	(void)c;
	atomic_fetch_add(&injected_asked, 1);
	return injected_busy;
}

static int cpus_busy_restore(void **state) {
	(void)state;
	client_cpus_busy = shipped_cpus_busy;
	return 0;
}

// CALLS calls, each sent once the responder sleeps (so that it rings).
static void calls_to_a_sleeping_daemon(struct fake_slow *p) {
	for (unsigned i = 0; i < CALLS; i++) {
		while (atomic_load(&p->asleep) <= i)
			sched_yield();
		assert_int_equal(
			gr_api_client_send_recv_len(p->d.client, TEST_ECHO, 0, NULL, NULL),
			0
		);
	}
}

static void busy_host_sleeps_at_once(void **state) {
	int budgets[] = {GR_API_CLIENT_SPIN_ADAPTIVE, GR_API_CLIENT_SPIN_US_DEFAULT};
	(void)state;

	client_cpus_busy = injected_cpus_busy;
	for (size_t b = 0; b < 2; b++) {
		struct fake_slow *p = responder_start(budgets[b]);
		struct gr_api_client *c = p->d.client;
		uint64_t budget = c->spin.budget_ns;
		injected_busy = true;
		atomic_store(&injected_asked, 0);
		p->gate = &injected_asked;
		calls_to_a_sleeping_daemon(p);
		// Every wait rang the daemon, asked, and slept at once: no
		// sample of the daemon's wake-up.
		assert_int_equal(atomic_load(&injected_asked), CALLS);
		assert_int_equal(c->spin.host_busy, CALLS);
		assert_int_equal(c->spin.sleeps, CALLS);
		assert_int_equal(c->spin.caught, 0);
		assert_int_equal(c->spin.wake_ns, 0);
		// A fixed budget stays.
		if (!c->spin.adaptive)
			assert_int_equal(c->spin.budget_ns, budget);
		responder_stop(p);
	}
}

static void quiet_host_spins(void **state) {
	(void)state;
	client_cpus_busy = injected_cpus_busy;
	struct fake_slow *p = responder_start(GR_API_CLIENT_SPIN_US_DEFAULT);
	struct gr_api_client *c = p->d.client;
	injected_busy = false;
	atomic_store(&injected_asked, 0);
	p->gate = &injected_asked;
	calls_to_a_sleeping_daemon(p);
	// Asked each time, and spun as before: caught or slept after its
	// budget, never at once for the host's load.
	assert_int_equal(atomic_load(&injected_asked), CALLS);
	assert_int_equal(c->spin.host_busy, 0);
	assert_int_equal(c->spin.caught + c->spin.sleeps, CALLS);
	responder_stop(p);
}

static void no_ring_no_read(void **state) {
	(void)state;
	client_cpus_busy = injected_cpus_busy;
	struct fake_daemon d;
	fake_daemon_init(&d, GR_API_CLIENT_SPIN_US_DEFAULT);
	fake_daemon_attach(&d);
	// The daemon is awake: its doorbell disarmed, as a poller that runs.
	// A first call clears what attaching rang.
	shmchan_server_doorbell_disarm(d.server);
	long id = gr_api_client_send(d.client, TEST_ECHO, 0, NULL);
	assert_true(id > 0);
	uint8_t req[sizeof(struct gr_api_request)];
	assert_int_equal(shmchan_server_recv(d.server, req, sizeof(req)), sizeof(req));
	struct gr_api_response resp = {.for_id = (uint32_t)id};
	assert_int_equal(shmchan_server_enqueue(d.server, &resp, sizeof(resp), NULL, 0), 0);
	assert_int_equal(gr_api_client_recv_len(d.client, (uint32_t)id, NULL), 0);
	fake_daemon_doorbell_rings(&d);
	injected_busy = true;
	atomic_store(&injected_asked, 0);
	// A send rings nothing, and the wait reads no load.
	id = gr_api_client_send(d.client, TEST_ECHO, 0, NULL);
	assert_true(id > 0);
	assert_int_equal(fake_daemon_doorbell_rings(&d), 0);
	assert_int_equal(shmchan_server_recv(d.server, req, sizeof(req)), sizeof(req));
	resp.for_id = (uint32_t)id;
	assert_int_equal(shmchan_server_enqueue(d.server, &resp, sizeof(resp), NULL, 0), 0);
	assert_int_equal(gr_api_client_recv_len(d.client, (uint32_t)id, NULL), 0);
	assert_int_equal(atomic_load(&injected_asked), 0);
	assert_int_equal(d.client->spin.host_busy, 0);
	fake_daemon_fini(&d);
}

// Replace what the handle's /proc/loadavg holds.
static void load_write(int fd, const char *line) {
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, line, strlen(line), 0), (ssize_t)strlen(line));
}

// The library's own reading of the load (client_cpus_busy as shipped), on
// a file of the test's in place of /proc/loadavg, with the time of the last
// read moved back: an answer serves for a second, then the file is read
// again. Read again after a millisecond, as it once was, every call after
// a silence read it, on the very path of the poller it woke.
static void load_answer_serves_a_second(void **state) {
	(void)state;
	struct gr_api_client c;
	memset(&c, 0, sizeof(c));
	c.loadavg_fd = memfd_create("loadavg", MFD_CLOEXEC);
	assert_true(c.loadavg_fd >= 0);
	c.online_cpus = 2;
	// Runnable tasks above the CPUs: busy.
	load_write(c.loadavg_fd, "0.50 0.40 0.30 3/100 12345\n");
	assert_true(client_cpus_busy(&c));
	// The host grew quiet: within the second the answer read stays.
	load_write(c.loadavg_fd, "0.50 0.40 0.30 1/100 12345\n");
	assert_true(client_cpus_busy(&c));
	c.cpus_checked_ns -= 500 * MSEC_NS;
	assert_true(client_cpus_busy(&c));
	// Past the second: read again.
	c.cpus_checked_ns -= 500 * MSEC_NS + 1;
	assert_false(client_cpus_busy(&c));
	close(c.loadavg_fd);
}

// The daemon's word (the host_load of the control block), while fresh,
// answers before /proc/loadavg: the test's file says the opposite and is
// not read. A word older than CLIENT_HOST_HINT_MAX_MS is not taken, and
// the file is read.
static void host_hint_before_loadavg(void **state) {
	(void)state;
	struct fake_daemon d;
	fake_daemon_init(&d, GR_API_CLIENT_SPIN_US_DEFAULT);
	fake_daemon_attach(&d);
	struct gr_api_client *c = d.client;
	// The handle closes it at detach.
	c->loadavg_fd = memfd_create("loadavg", MFD_CLOEXEC);
	assert_true(c->loadavg_fd >= 0);
	c->online_cpus = 2;
	load_write(c->loadavg_fd, "0.50 0.40 0.30 1/100 12345\n");
	uint64_t now_ms = client_clock_ns() / MSEC_NS;
	shmchan_server_host_publish(d.server, shmchan_host_word(now_ms, true));
	assert_true(client_cpus_busy(c));
	assert_int_equal(c->cpus_checked_ns, 0);
	shmchan_server_host_publish(d.server, shmchan_host_word(now_ms, false));
	load_write(c->loadavg_fd, "0.50 0.40 0.30 3/100 12345\n");
	assert_false(client_cpus_busy(c));
	assert_int_equal(c->cpus_checked_ns, 0);
	// Told long ago: the file says busy.
	shmchan_server_host_publish(
		d.server,
		shmchan_host_word(now_ms - CLIENT_HOST_HINT_MAX_MS - 1000, false)
	);
	assert_true(client_cpus_busy(c));
	assert_int_not_equal(c->cpus_checked_ns, 0);
	fake_daemon_fini(&d);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wake_sleep_decision),
		cmocka_unit_test_teardown(busy_host_sleeps_at_once, cpus_busy_restore),
		cmocka_unit_test_teardown(quiet_host_spins, cpus_busy_restore),
		cmocka_unit_test_teardown(no_ring_no_read, cpus_busy_restore),
		cmocka_unit_test(load_answer_serves_a_second),
		cmocka_unit_test(host_hint_before_loadavg),
	};
	shipped_cpus_busy = client_cpus_busy;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
