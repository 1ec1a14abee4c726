// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// When a client's wait stops spinning before its budget
// (client_spin_turn()), fed made-up turns and signals: at once when the
// daemon's poller is awake on the client's own CPU, when a turn shows the
// thread was descheduled (far longer than the mean of the turns before),
// never for a turn only somewhat long; at the budget otherwise. A wait
// that stopped for those reasons teaches the adaptive budget nothing, with
// a fixed budget as with the adaptive one. A wait whose requests woke the
// daemon spins through its wake-up as learnt, within a bound, unless the
// daemon last ran on the waiter's own CPU.

#include "client_priv.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

// A turn of a wait's loop (32 looks at the ring), in ns.
#define TURN_NS 1000
// Turns that set the mean.
#define TURNS 50
// A turn this many times the mean is a descheduling (client/spin.c).
#define DESCHED_TURNS 64

static void steady_turns(struct client_spin *s) {
	bool disturbed = false;

	for (unsigned i = 0; i < TURNS; i++)
		assert_int_equal(
			client_spin_turn(
				s,
				s->budget_ns,
				i == 0 ? 0 : TURN_NS,
				0,
				false,
				&disturbed
			),
			CLIENT_SPIN_ON
		);
	assert_false(disturbed);
	// The mean near the steady turn (it moves by an eighth of each
	// difference).
	assert_true(s->turn_ns >= TURN_NS && s->turn_ns < TURN_NS + TURN_NS / 8);
}

static void test_poller_on_our_cpu(void **state) {
	int budgets[] = {GR_API_CLIENT_SPIN_ADAPTIVE, GR_API_CLIENT_SPIN_US_DEFAULT};
	(void)state;

	for (size_t b = 0; b < 2; b++) {
		struct client_spin s;
		bool disturbed = false;

		client_spin_init(&s, budgets[b]);
		// At the first clock read already: the poller waits for this CPU.
		assert_int_equal(
			client_spin_turn(&s, s.budget_ns, 0, 0, true, &disturbed),
			CLIENT_SPIN_SLEEP
		);
		assert_true(disturbed);
		assert_int_equal(s.left_cpu, 1);
		assert_int_equal(s.descheduled, 0);
	}
}

static void test_descheduled(void **state) {
	struct client_spin s;
	bool disturbed = false;
	(void)state;

	client_spin_init(&s, GR_API_CLIENT_SPIN_ADAPTIVE);
	steady_turns(&s);
	// Somewhat long (an interrupt): spin on, the mean follows a little.
	assert_int_equal(
		client_spin_turn(
			&s,
			s.budget_ns,
			(DESCHED_TURNS - 1) * TURN_NS,
			0,
			false,
			&disturbed
		),
		CLIENT_SPIN_ON
	);
	assert_false(disturbed);
	assert_true(s.turn_ns > TURN_NS);
	steady_turns(&s);
	uint64_t mean = s.turn_ns;
	// Descheduled: sleep, and the mean does not take it.
	assert_int_equal(
		client_spin_turn(&s, s.budget_ns, DESCHED_TURNS * mean + 1, 0, false, &disturbed),
		CLIENT_SPIN_SLEEP
	);
	assert_true(disturbed);
	assert_int_equal(s.descheduled, 1);
	assert_int_equal(s.turn_ns, mean);
}

static void test_budget_ends_spin(void **state) {
	struct client_spin s;
	bool disturbed = false;
	(void)state;

	client_spin_init(&s, 10);
	assert_int_equal(
		client_spin_turn(&s, s.budget_ns, 0, 0, false, &disturbed),
		CLIENT_SPIN_ON
	);
	assert_int_equal(
		client_spin_turn(&s, s.budget_ns, TURN_NS, 10000 - 1, false, &disturbed),
		CLIENT_SPIN_ON
	);
	assert_int_equal(
		client_spin_turn(&s, s.budget_ns, TURN_NS, 10000, false, &disturbed),
		CLIENT_SPIN_SLEEP
	);
	assert_false(disturbed);
	assert_int_equal(s.left_cpu + s.descheduled, 0);
}

static void test_disturbed_waits_teach_nothing(void **state) {
	struct client_spin s;
	(void)state;

	client_spin_init(&s, GR_API_CLIENT_SPIN_ADAPTIVE);
	for (unsigned i = 0; i < 200; i++)
		client_spin_caught(&s, 500);
	struct client_spin before = s;
	// Caught after a descheduling, slept after leaving the CPU: counted,
	// and the estimate, the slack and the budget stay.
	client_spin_disturbed(&s, false);
	client_spin_disturbed(&s, true);
	assert_int_equal(s.caught, before.caught + 1);
	assert_int_equal(s.sleeps, before.sleeps + 1);
	assert_int_equal(s.rtt_ns, before.rtt_ns);
	assert_int_equal(s.slack_ns, before.slack_ns);
	assert_int_equal(s.budget_ns, before.budget_ns);
	assert_int_equal(s.long_sleeps, before.long_sleeps);
}

static void test_spin_through_a_wake_up(void **state) {
	const uint64_t bound = (uint64_t)GR_API_CLIENT_SPIN_US_DEFAULT * 1000;
	struct client_spin s;
	(void)state;

	client_spin_init(&s, GR_API_CLIENT_SPIN_ADAPTIVE);
	for (unsigned i = 0; i < 200; i++)
		client_spin_caught(&s, 0);
	uint64_t busy = s.budget_ns;
	// Nothing learnt of the daemon's wake-up yet: the usual budget.
	assert_int_equal(client_spin_budget(&s, true, false), busy);
	// Woken daemons answered after 100 us: twice that, past the bound.
	for (unsigned i = 0; i < 200; i++)
		client_spin_woke(&s, 2 * bound);
	assert_int_equal(s.wake_ns, 2 * bound);
	assert_int_equal(client_spin_budget(&s, true, false), 4 * bound);
	// Not for a wait whose requests woke nothing, nor when the daemon last
	// ran on this CPU (woken there, it may wait behind the spin).
	assert_int_equal(client_spin_budget(&s, false, false), busy);
	assert_int_equal(client_spin_budget(&s, true, true), busy);
	// A daemon that takes more than 5 bounds to wake: slept on.
	for (unsigned i = 0; i < 200; i++)
		client_spin_woke(&s, 6 * bound);
	assert_int_equal(client_spin_budget(&s, true, false), busy);
	// A fixed budget stays fixed.
	client_spin_init(&s, 10);
	client_spin_woke(&s, 2 * bound);
	assert_int_equal(client_spin_budget(&s, true, false), 10000);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poller_on_our_cpu),
		cmocka_unit_test(test_descheduled),
		cmocka_unit_test(test_budget_ends_spin),
		cmocka_unit_test(test_disturbed_waits_teach_nothing),
		cmocka_unit_test(test_spin_through_a_wake_up),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
