// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A poller's nice value by its work (poller_nice.c), with a made-up clock in
// nanoseconds and made-up counts of clients: the weight of N + 1 tasks, the
// nearest nice value, never below the floor nor above the process's own;
// a change only at the first work after a period, none while nothing comes;
// a failed change is never asked again.

#include "poller_nice.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define T0 1000000000ull
#define PERIOD POLLER_NICE_PERIOD_NS

// The kernel's weights (kernel/sched/core.c) give these, from nice 0: the
// weight nearest (N + 1) * 1024 as a ratio.
static void nice_by_clients(void **state) {
	(void)state;
	assert_int_equal(poller_nice_for(0, 0, -20), 0);
	assert_int_equal(poller_nice_for(1, 0, -20), -3); // 1991 for 2048
	assert_int_equal(poller_nice_for(2, 0, -20), -5); // 3121 for 3072
	assert_int_equal(poller_nice_for(4, 0, -20), -7); // 4904 for 5120
	assert_int_equal(poller_nice_for(16, 0, -20), -13); // 18705 for 17408
	assert_int_equal(poller_nice_for(86, 0, -20), -20); // 88761 for 89088
	assert_int_equal(poller_nice_for(60, 0, -20), -18); // 56483 for 62464
	assert_int_equal(poller_nice_for(4000000000u, 0, -20), -20);
}

// Relative to the process's own value, and within the floor.
static void nice_from_base_within_floor(void **state) {
	(void)state;
	assert_int_equal(poller_nice_for(1, 5, -20), 2);
	assert_int_equal(poller_nice_for(16, 5, -20), -8); // 6100 for 17 * 335
	assert_int_equal(poller_nice_for(16, 0, -5), -5);
	assert_int_equal(poller_nice_for(1, -18, -20), -20);
	// A floor at or above the process's value: the floor, whatever the
	// clients.
	assert_int_equal(poller_nice_for(16, 0, 0), 0);
	assert_int_equal(poller_nice_for(16, -4, 3), 3);
	assert_int_equal(poller_nice_for(0, -4, 3), 3);
	// Out of range in: clamped to the kernel's.
	assert_int_equal(poller_nice_for(1, 40, -20), 16);
	assert_int_equal(poller_nice_for(1, 0, -99), -3);
}

// From the start, the value for one client; then the count of each period,
// taken at the first work after it ended; nothing in between.
static void changes_once_a_period(void **state) {
	struct poller_nice n;

	(void)state;
	assert_int_equal(poller_nice_init(&n, PERIOD, T0, 0, -20), -3);
	assert_false(poller_nice_due(&n, T0 + PERIOD - 1));
	assert_true(poller_nice_due(&n, T0 + PERIOD));
	assert_int_equal(poller_nice_work(&n, T0 + PERIOD, 16), -13);
	assert_false(poller_nice_due(&n, T0 + 2 * PERIOD - 1));
	// The same count: no change, no system call.
	assert_int_equal(poller_nice_work(&n, T0 + 2 * PERIOD, 16), POLLER_NICE_KEEP);
	assert_int_equal(poller_nice_work(&n, T0 + 3 * PERIOD, 1), -3);
	assert_int_equal(n.changes, 2);
	assert_int_equal(n.now, -3);
}

// A silence of many periods ends with the first work after it: the count is
// of the clients since the period began, and the value stays until then.
static void kept_through_silence(void **state) {
	struct poller_nice n;

	(void)state;
	poller_nice_init(&n, PERIOD, T0, 0, -20);
	assert_int_equal(poller_nice_work(&n, T0 + PERIOD, 4), -7);
	// An occasional caller, 50 periods later: one client.
	assert_true(poller_nice_due(&n, T0 + 51 * PERIOD));
	assert_int_equal(poller_nice_work(&n, T0 + 51 * PERIOD, 1), -3);
	assert_false(poller_nice_due(&n, T0 + 51 * PERIOD + 1));
	// A period with no client at all (only events, say): the process's.
	assert_int_equal(poller_nice_work(&n, T0 + 52 * PERIOD, 0), 0);
}

// A change the process may not make: the value stays what it was, and no
// change is asked again, whatever the counts.
static void failed_change_not_asked_again(void **state) {
	struct poller_nice n;

	(void)state;
	poller_nice_init(&n, PERIOD, T0, 0, -20);
	assert_int_equal(poller_nice_work(&n, T0 + PERIOD, 16), -13);
	poller_nice_failed(&n, -3);
	assert_int_equal(n.now, -3);
	assert_int_equal(n.changes, 0);
	assert_true(n.stuck);
	assert_int_equal(poller_nice_work(&n, T0 + 2 * PERIOD, 1), POLLER_NICE_KEEP);
	assert_int_equal(poller_nice_work(&n, T0 + 3 * PERIOD, 0), POLLER_NICE_KEEP);
	assert_int_equal(poller_nice_work(&n, T0 + 4 * PERIOD, 100), POLLER_NICE_KEEP);

	// Refused from the start: the process's value, for good.
	poller_nice_init(&n, PERIOD, T0, 0, -20);
	poller_nice_failed(&n, 0);
	assert_int_equal(n.now, 0);
	assert_int_equal(poller_nice_work(&n, T0 + PERIOD, 16), POLLER_NICE_KEEP);
}

// The clock may wrap (a TSC read as unsigned): a period is a difference.
static void period_across_wrap(void **state) {
	struct poller_nice n;
	uint64_t t = UINT64_MAX - PERIOD / 2;

	(void)state;
	poller_nice_init(&n, PERIOD, t, 0, -20);
	assert_false(poller_nice_due(&n, t + PERIOD / 2));
	assert_true(poller_nice_due(&n, t + PERIOD));
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nice_by_clients),
		cmocka_unit_test(nice_from_base_within_floor),
		cmocka_unit_test(changes_once_a_period),
		cmocka_unit_test(kept_through_silence),
		cmocka_unit_test(failed_change_not_asked_again),
		cmocka_unit_test(period_across_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
