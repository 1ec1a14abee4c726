// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A poller's nice value follows its work (docs/spin-budgets.md, "The
// pollers' nice value"): pure arithmetic on a clock and on how many clients
// a poller served, so that its unit test (poller_nice_test.c) drives it with
// made-up ones.
//
// A poller works for its clients: the CPU it takes is theirs. The scheduler
// shares a CPU by weight, so a poller serving N clients is given the weight
// of N + 1 tasks of the process's nice value (itself, and one for each
// client it works for): the nice value whose weight is nearest, never below
// the one configured (--poller-nice, the most it may take). One client
// calling back to back puts it 3 below the process's, 16 clients 13 below.
// A fixed nice -20 (the weight of 87 tasks) took all but a sliver of its
// CPU from any task woken there, another server's client or a build; a
// poller at the process's own value shares it with 16 spinning clients as
// their equal, and falls behind all of them.
//
// The count is of the distinct clients that sent work within a period of
// POLLER_NICE_PERIOD_NS; the value is decided at the first work after a
// period ends, so a poller changes it at most once a period (one
// setpriority() call) and keeps it while it has nothing to serve: asleep,
// it takes no CPU at any weight.

#pragma once

#include <stdbool.h>
#include <stdint.h>

// The period over which a poller counts its clients: long enough to see
// every client of a busy poller (a client calling back to back sends
// thousands of requests in it, one calling every 20 ms five), short enough
// that the weight follows clients that come and go within a few of the
// scheduler's periods.
#define POLLER_NICE_PERIOD_NS 100000000ull

// The nice values the kernel knows.
#define POLLER_NICE_MIN (-20)
#define POLLER_NICE_MAX 19

// No change: poller_nice_work() returns it when the value stays.
#define POLLER_NICE_KEEP INT32_MIN

// One poller's state. Poller thread only.
struct poller_nice {
	uint64_t period; // POLLER_NICE_PERIOD_NS in the caller's clock
	uint64_t start; // when the period being counted started
	int32_t base; // the process's nice value: the weight of one task
	int32_t floor; // the most the poller may take (--poller-nice)
	int32_t now; // what it runs at
	bool stuck; // a change failed: it asks for no more
	uint64_t changes; // changes made, for the tests and the debug log
};

// The nice value for a poller serving clients clients: the weight of
// clients + 1 tasks at base, the nearest the kernel's table has, within
// [floor, base]; floor itself when it is above base.
int32_t poller_nice_for(unsigned clients, int32_t base, int32_t floor);

// period in ticks of the caller's clock, now its time. The poller runs at
// the value for one client from the start: the first client of a daemon
// should not wait a period for its weight. Returns that value, for the
// caller to take (or to call poller_nice_failed()).
int32_t
poller_nice_init(struct poller_nice *, uint64_t period, uint64_t now, int32_t base, int32_t floor);

// Has the period being counted ended at now? Then the caller ends its count
// of clients (channel_clients_counted()) and passes it to poller_nice_work().
static inline bool poller_nice_due(const struct poller_nice *n, uint64_t now) {
	return now - n->start >= n->period;
}

// The period that ended had clients distinct clients with work; a new one
// starts at now. Returns the nice value to take, already counted as taken
// (the caller takes it, or calls poller_nice_failed()), or POLLER_NICE_KEEP.
int32_t poller_nice_work(struct poller_nice *, uint64_t now, unsigned clients);

// The change could not be made: the poller keeps was, the value it had,
// and asks for no change again (each would be a system call a period, each
// failing alike).
void poller_nice_failed(struct poller_nice *, int32_t was);
