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

// The host hint each channel's control block carries for its client (its
// host_load word): told about once per POLLER_HOST_TELL_NS while a channel
// of the poller moved messages in the last POLLER_HOST_KEEP_NS, at a
// moment the poller has nothing else to do, the timeout of one of its
// sleeps. A client then learns whether a CPU is free for the poller it
// wakes without reading /proc/loadavg itself on its way to sleep, where
// the poller, queued on the client's CPU, would wait for that read.
#define POLLER_HOST_TELL_NS 1000000000ull
#define POLLER_HOST_KEEP_NS (10 * POLLER_HOST_TELL_NS)
// A first look, or one that came due while the poller worked, waits this
// long into its next sleep: not between a client and the answer just rung
// (which the client, woken on the poller's CPU, would wait for), and short
// enough to come between the calls of a client calling every few
// milliseconds, which would otherwise put it off for ever.
#define POLLER_HOST_DEFER_NS 2000000ull

struct poller_load {
	int fd; // /proc/loadavg, or a file of the same form; -1: none
	long cpus; // the online CPUs
	uint64_t period; // POLLER_CPUS_CHECK_NS in the caller's clock
	uint64_t checked; // when it was last read (0: never)
	bool busy; // the answer then
	// The host hint, in the caller's clock: POLLER_HOST_TELL_NS,
	// POLLER_HOST_KEEP_NS, POLLER_HOST_DEFER_NS, and one millisecond.
	uint64_t tell_period, keep, defer, per_ms;
	uint64_t told; // when the hint was last told (0: never)
	uint64_t worked; // when a channel last moved messages (0: never)
};

// Does every CPU have a task to run (the caller's included)? The answer of
// the last read while it is younger than the period, else a new read at
// now. True when the file cannot be read or parsed (the conservative
// answer: no spin for a client the poller woke).
bool poller_load_busy(struct poller_load *, uint64_t now);

// A channel of the poller moved messages at now: the hint is kept for
// POLLER_HOST_KEEP_NS from here.
static inline void poller_load_worked(struct poller_load *l, uint64_t now) {
	l->worked = now;
}

// The timeout of a sleep starting at now, from the one the channels ask
// (-1: none): no longer than the next look at the host while the hint is
// kept (at least a millisecond, and POLLER_HOST_DEFER_NS for an overdue
// one); unchanged otherwise, so that a poller whose channels are idle
// sleeps until a doorbell rings.
int poller_load_sleep_ms(const struct poller_load *, uint64_t now, int timeout_ms);

// After a sleep that ended by its timeout, at now: is the hint due to be
// told (kept, and a period since it was last told)?
bool poller_load_tell_due(const struct poller_load *, uint64_t now);
