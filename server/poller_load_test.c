// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// How busy the CPUs are, as a poller reads it (poller_load.c), from a file
// of the test's in place of /proc/loadavg and a made-up clock in
// nanoseconds: runnable tasks at or above the CPUs are busy, below are
// not; an answer serves its period (POLLER_CPUS_CHECK_NS) without a read,
// and the file is read again after it; an unreadable or garbled file is
// taken as busy. And when the poller looks at the host to tell its
// clients (the host hint): while a channel worked in the last
// POLLER_HOST_KEEP_NS, a sleep lasts until the next look, once per
// POLLER_HOST_TELL_NS (an overdue one POLLER_HOST_DEFER_NS after the sleep
// starts); then the poller sleeps until a doorbell rings.

#include "poller_load.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#define T0 1000000000ull

// Replace what the file holds.
static void load_write(int fd, const char *text) {
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, text, strlen(text), 0), (ssize_t)strlen(text));
}

// A file to stand for /proc/loadavg.
static int load_file(void) {
	int fd = memfd_create("loadavg", MFD_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static struct poller_load load_on(int fd) {
	return (struct poller_load){
		.fd = fd,
		.cpus = 2,
		.period = POLLER_CPUS_CHECK_NS,
		.tell_period = POLLER_HOST_TELL_NS,
		.keep = POLLER_HOST_KEEP_NS,
		.defer = POLLER_HOST_DEFER_NS,
		.per_ms = 1000000,
	};
}

#define MS 1000000ull

static void test_host_hint_timer(void **state) {
	struct poller_load l = load_on(-1);
	const int defer_ms = (int)(POLLER_HOST_DEFER_NS / MS);
	const int tell_ms = (int)(POLLER_HOST_TELL_NS / MS);
	(void)state;

	// No channel worked yet: the sleep is the channels' own, and no look.
	assert_int_equal(poller_load_sleep_ms(&l, T0, -1), -1);
	assert_int_equal(poller_load_sleep_ms(&l, T0, 7), 7);
	assert_false(poller_load_tell_due(&l, T0));
	// A channel worked: never told, so the first look comes a deferral
	// into the sleep, and is due then.
	poller_load_worked(&l, T0);
	assert_int_equal(poller_load_sleep_ms(&l, T0, -1), defer_ms);
	assert_int_equal(poller_load_sleep_ms(&l, T0, 1), 1);
	assert_int_equal(poller_load_sleep_ms(&l, T0, tell_ms), defer_ms);
	assert_true(poller_load_tell_due(&l, T0 + POLLER_HOST_DEFER_NS));
	// Told: the next look a period later, the sleep's timeout rounded up
	// to the millisecond.
	uint64_t told = T0 + POLLER_HOST_DEFER_NS;
	l.told = told;
	assert_false(poller_load_tell_due(&l, told));
	assert_int_equal(poller_load_sleep_ms(&l, told, -1), tell_ms);
	assert_int_equal(poller_load_sleep_ms(&l, told + 1, -1), tell_ms);
	assert_int_equal(poller_load_sleep_ms(&l, told + MS + 1, -1), tell_ms - 1);
	assert_false(poller_load_tell_due(&l, told + POLLER_HOST_TELL_NS - 1));
	assert_true(poller_load_tell_due(&l, told + POLLER_HOST_TELL_NS));
	// A sleep starting within the last microsecond: at least a millisecond.
	assert_int_equal(poller_load_sleep_ms(&l, told + POLLER_HOST_TELL_NS - 1, -1), 1);
	// Overdue (the poller worked through it): a deferral into the sleep,
	// never at its start, right after the answer just rung.
	assert_int_equal(poller_load_sleep_ms(&l, told + 2 * POLLER_HOST_TELL_NS, -1), defer_ms);
	// The channels idle for POLLER_HOST_KEEP_NS: no more looks, the poller
	// sleeps until a doorbell rings.
	uint64_t idle = T0 + POLLER_HOST_KEEP_NS;
	assert_true(poller_load_tell_due(&l, idle - 1));
	assert_false(poller_load_tell_due(&l, idle));
	assert_int_equal(poller_load_sleep_ms(&l, idle, -1), -1);
	assert_int_equal(poller_load_sleep_ms(&l, idle, 5), 5);
	// Work again: looks again.
	poller_load_worked(&l, idle);
	assert_true(poller_load_tell_due(&l, idle));
}

static void test_runnable_against_cpus(void **state) {
	int fd = load_file();
	(void)state;

	struct poller_load l = load_on(fd);
	load_write(fd, "0.50 0.40 0.30 2/100 12345\n");
	assert_true(poller_load_busy(&l, T0));
	l = load_on(fd);
	load_write(fd, "0.50 0.40 0.30 1/100 12345\n");
	assert_false(poller_load_busy(&l, T0));
	close(fd);
}

static void test_answer_serves_its_period(void **state) {
	int fd = load_file();
	(void)state;

	struct poller_load l = load_on(fd);
	load_write(fd, "0.50 0.40 0.30 3/100 12345\n");
	assert_true(poller_load_busy(&l, T0));
	// The CPUs free up: the answer read holds for the period, however
	// often the poller asks.
	load_write(fd, "0.50 0.40 0.30 1/100 12345\n");
	for (uint64_t t = T0; t < T0 + POLLER_CPUS_CHECK_NS; t += POLLER_CPUS_CHECK_NS / 50)
		assert_true(poller_load_busy(&l, t));
	assert_true(poller_load_busy(&l, T0 + POLLER_CPUS_CHECK_NS - 1));
	// A period after the read: read again.
	assert_false(poller_load_busy(&l, T0 + POLLER_CPUS_CHECK_NS));
	close(fd);
}

static void test_unreadable_is_busy(void **state) {
	int fd = load_file();
	(void)state;

	struct poller_load l = load_on(-1);
	assert_true(poller_load_busy(&l, T0));
	l = load_on(fd);
	load_write(fd, "garbled\n");
	assert_true(poller_load_busy(&l, T0));
	l = load_on(fd);
	load_write(fd, "");
	assert_true(poller_load_busy(&l, T0));
	close(fd);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runnable_against_cpus),
		cmocka_unit_test(test_answer_serves_its_period),
		cmocka_unit_test(test_unreadable_is_busy),
		cmocka_unit_test(test_host_hint_timer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
