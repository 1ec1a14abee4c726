// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// How busy the host's CPUs are, as a poller asks it (docs/spin-budgets.md):
// the kernel's runnable tasks (the fourth field of /proc/loadavg, "R/T")
// against the online CPUs, read at most once per period. Its unit test
// (poller_load_test.c) gives it a file of its own and a made-up clock.

#pragma once

#include <stdbool.h>
#include <stdint.h>

// How often a poller reads the runnable tasks, at most: right after it rang
// a client asleep on another CPU, or served one calling back to back on its
// own (poller_spin_asks_cpus()), never for each call of such a client. The
// count is of one instant: an answer kept much longer would let one busy
// or idle instant decide for as long.
#define POLLER_CPUS_CHECK_NS 1000000ull

struct poller_load {
	int fd; // /proc/loadavg, or a file of the same form; -1: none
	long cpus; // the online CPUs
	uint64_t period; // POLLER_CPUS_CHECK_NS in the caller's clock
	uint64_t checked; // when it was last read (0: never)
	bool busy; // the answer then
};

// Does every CPU have a task to run (the caller's included)? The answer of
// the last read while it is younger than the period, else a new read at
// now. True when the file cannot be read or parsed (the conservative
// answer: no spin for a client the poller woke).
bool poller_load_busy(struct poller_load *, uint64_t now);
