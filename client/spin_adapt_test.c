// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The adaptive spin budget: its estimate converges on the round trips the
// waits report (synthetic timings, so deterministic), shrinks when sleeps
// are long and grows when they are short, always within its bounds; a
// fixed budget never moves. Then on a real channel: a client whose daemon
// answers slowly ends up sleeping at once (its spin shrinks to the floor,
// and every call sleeps), where a fixed budget keeps spinning its whole
// budget first.

#include "fake_daemon.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define NSEC_PER_USEC 1000ull
#define NSEC_PER_MSEC 1000000ull
#define BOUND_NS ((uint64_t)GR_API_CLIENT_SPIN_US_DEFAULT * NSEC_PER_USEC)
// Waits fed to the estimator: far more than it needs to converge (its
// weight is 1/8: within 1 % of a step after 40 samples).
#define CONVERGE_SAMPLES 200
// A round trip well inside the bound, and the budget it gives (4 times).
#define RTT_NS 1000
#define RTT_MULT 4
// The estimate stops within 8 ns above a steady sample (integer steps of
// 1/8 of the difference).
#define RTT_SLACK_NS 8
// Short sleeps double the budget: from the floor to the bound in
// log2(50 µs / 2 µs) < 5 steps. Long sleeps halve it as fast once 4 came in
// a row.
#define STEPS_MAX 6
#define SHRINK_AFTER 4
#define SHRINK_STEPS_MAX (SHRINK_AFTER - 1 + STEPS_MAX)
// A sleep longer than any budget (the daemon sleeps or is slow).
#define LONG_SLEEP_NS (2 * NSEC_PER_MSEC)
// A sleep that a spin within the bound would have covered.
#define SHORT_SLEEP_NS (10 * NSEC_PER_USEC)

// The slow daemon answers each request this long after it read it: far
// past the bound, so that no spin catches an answer.
#define SLOW_ANSWER_US 2000
#define SLOW_CALLS 40
// Calls after which the adaptive budget must have reached the floor
// (SHRINK_STEPS_MAX, and a few calls of slack).
#define SLOW_SETTLE_CALLS (SHRINK_STEPS_MAX + 3)
#define TEST_ALARM_S 30
#define TEST_ECHO GR_MSG_TYPE(0x7e57, 1)

static void estimate_converges(void **state) {
	(void)state;
	struct client_spin s;
	client_spin_init(&s, GR_API_CLIENT_SPIN_ADAPTIVE);
	assert_true(s.adaptive);
	// Until it has seen a round trip, it spins the whole bound.
	assert_int_equal(s.budget_ns, BOUND_NS);
	for (unsigned i = 0; i < CONVERGE_SAMPLES; i++)
		client_spin_caught(&s, RTT_NS);
	assert_in_range(s.rtt_ns, RTT_NS, RTT_NS + RTT_SLACK_NS);
	assert_in_range(s.budget_ns, RTT_MULT * RTT_NS, RTT_MULT * (RTT_NS + RTT_SLACK_NS));
	// Answers found within a few polls (sample 0): down to the floor.
	for (unsigned i = 0; i < CONVERGE_SAMPLES; i++)
		client_spin_caught(&s, 0);
	assert_int_equal(s.budget_ns, CLIENT_SPIN_FLOOR_NS);
	// A round trip above the bound: the bound, never more.
	for (unsigned i = 0; i < CONVERGE_SAMPLES; i++)
		client_spin_caught(&s, 10 * BOUND_NS);
	assert_int_equal(s.budget_ns, BOUND_NS);
	assert_int_equal(s.caught, 3 * CONVERGE_SAMPLES);
	assert_int_equal(s.sleeps, 0);
}

static void long_sleeps_shrink_short_sleeps_grow(void **state) {
	(void)state;
	struct client_spin s;
	client_spin_init(&s, GR_API_CLIENT_SPIN_ADAPTIVE);
	// A busy channel: answers within a few polls, down to the floor.
	for (unsigned i = 0; i < CONVERGE_SAMPLES; i++)
		client_spin_caught(&s, 0);
	assert_int_equal(s.budget_ns, CLIENT_SPIN_FLOOR_NS);
	// Its daemon's hiccups outlast the floor: a short sleep, and the
	// next wait spins twice as long as that one lasted ...
	client_spin_slept(&s, s.budget_ns, SHORT_SLEEP_NS);
	assert_in_range(
		s.budget_ns,
		2 * (CLIENT_SPIN_FLOOR_NS + SHORT_SLEEP_NS),
		2 * (CLIENT_SPIN_FLOOR_NS + SHORT_SLEEP_NS) + RTT_MULT * RTT_SLACK_NS
	);
	// ... and more short sleeps take it up to the bound.
	unsigned steps = 0;
	while (s.budget_ns < BOUND_NS && steps < 2 * STEPS_MAX) {
		client_spin_slept(&s, s.budget_ns, SHORT_SLEEP_NS);
		steps++;
	}
	assert_int_equal(s.budget_ns, BOUND_NS);
	assert_in_range(steps, 1, STEPS_MAX);
	// Fast answers keep what the short sleeps taught: the round trip is
	// short, but the daemon's hiccups are not.
	for (unsigned i = 0; i < CONVERGE_SAMPLES; i++)
		client_spin_caught(&s, 0);
	assert_int_equal(s.budget_ns, BOUND_NS);
	// A few long sleeps now and then, between caught waits: the daemon
	// lost its CPU for a while, and the budget stays.
	for (unsigned i = 0; i < CONVERGE_SAMPLES; i++) {
		for (unsigned j = 0; j < SHRINK_AFTER - 1; j++)
			client_spin_slept(&s, s.budget_ns, LONG_SLEEP_NS);
		client_spin_caught(&s, 0);
	}
	assert_int_equal(s.budget_ns, BOUND_NS);
	// Long sleeps in a row (a sleeping or slow daemon): down to the floor.
	steps = 0;
	while (s.budget_ns > CLIENT_SPIN_FLOOR_NS && steps < 2 * SHRINK_STEPS_MAX) {
		client_spin_slept(&s, s.budget_ns, LONG_SLEEP_NS);
		steps++;
	}
	assert_int_equal(s.budget_ns, CLIENT_SPIN_FLOOR_NS);
	assert_in_range(steps, SHRINK_AFTER, SHRINK_STEPS_MAX);
	// ... and there it stays.
	for (unsigned i = 0; i < CONVERGE_SAMPLES; i++)
		client_spin_slept(&s, s.budget_ns, LONG_SLEEP_NS);
	assert_int_equal(s.budget_ns, CLIENT_SPIN_FLOOR_NS);
}

static void fixed_budget_never_moves(void **state) {
	(void)state;
	const int budgets_us[] = {0, 1, GR_API_CLIENT_SPIN_US_DEFAULT, 5000};
	for (unsigned b = 0; b < sizeof(budgets_us) / sizeof(budgets_us[0]); b++) {
		struct client_spin s;
		uint64_t want = (uint64_t)budgets_us[b] * NSEC_PER_USEC;
		client_spin_init(&s, budgets_us[b]);
		assert_false(s.adaptive);
		for (unsigned i = 0; i < CONVERGE_SAMPLES; i++) {
			client_spin_caught(&s, i % 2 ? 0 : 10 * BOUND_NS);
			client_spin_slept(&s, want, i % 2 ? LONG_SLEEP_NS : SHORT_SLEEP_NS);
			assert_int_equal(s.budget_ns, want);
		}
		assert_int_equal(s.caught, CONVERGE_SAMPLES);
		assert_int_equal(s.sleeps, CONVERGE_SAMPLES);
	}
}

// The slow daemon of fake_daemon.h, answering SLOW_ANSWER_US late; a
// test that hangs fails at TEST_ALARM_S.
static struct fake_slow *slow_daemon_start(int spin_us) {
	struct fake_slow *p = fake_slow_start(spin_us, TEST_ECHO, SLOW_ANSWER_US);
	alarm(TEST_ALARM_S);
	return p;
}

static void slow_daemon_stop(struct fake_slow *p) {
	alarm(0);
	fake_slow_stop(p);
}

// SLOW_CALLS calls; returns how many of those after SLOW_SETTLE_CALLS
// left the budget at floor_ns. A call the client spun through (descheduled
// past the daemon's delay) may leave a longer budget for a few calls: the
// caller asks for most, not all.
static unsigned slow_calls(struct fake_slow *p, uint64_t floor_ns) {
	struct gr_api_client *c = p->d.client;
	unsigned at_floor = 0;
	for (unsigned i = 0; i < SLOW_CALLS; i++) {
		assert_int_equal(gr_api_client_send_recv_len(c, TEST_ECHO, 0, NULL, NULL), 0);
		if (i >= SLOW_SETTLE_CALLS && c->spin.budget_ns == floor_ns)
			at_floor++;
	}
	return at_floor;
}

static void slow_daemon_adaptive_sleeps(void **state) {
	(void)state;
	struct fake_slow *p = slow_daemon_start(GR_API_CLIENT_SPIN_ADAPTIVE);
	struct gr_api_client *c = p->d.client;
	unsigned at_floor = slow_calls(p, CLIENT_SPIN_FLOOR_NS);
	// Most calls slept (each spin timed out long before the answer).
	assert_true(c->spin.sleeps >= SLOW_CALLS / 2);
	// Every other call is a wait that caught its answer, but for one that
	// found it at its first look, which counts as no wait: this thread was
	// descheduled past the daemon's delay between its send and its receive.
	assert_in_range(c->spin.sleeps + c->spin.caught, SLOW_CALLS / 2, SLOW_CALLS);
	// ... and the spin before the sleep shrank to the floor.
	assert_true(at_floor >= (SLOW_CALLS - SLOW_SETTLE_CALLS) / 2);
	slow_daemon_stop(p);
}

static void slow_daemon_fixed_spins(void **state) {
	(void)state;
	struct fake_slow *p = slow_daemon_start(GR_API_CLIENT_SPIN_US_DEFAULT);
	struct gr_api_client *c = p->d.client;
	unsigned at_floor = slow_calls(p, CLIENT_SPIN_FLOOR_NS);
	assert_int_equal(at_floor, 0);
	assert_int_equal(c->spin.budget_ns, BOUND_NS);
	// As above: a call whose answer was there at its first look is no wait.
	assert_in_range(c->spin.sleeps + c->spin.caught, SLOW_CALLS / 2, SLOW_CALLS);
	slow_daemon_stop(p);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(estimate_converges),
		cmocka_unit_test(long_sleeps_shrink_short_sleeps_grow),
		cmocka_unit_test(fixed_budget_never_moves),
		cmocka_unit_test(slow_daemon_adaptive_sleeps),
		cmocka_unit_test(slow_daemon_fixed_spins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
