// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Poller threads: each serves the channels assigned to it, spinning while
// there is work and sleeping in epoll_wait on their request doorbells when
// idle for longer than the spin budget.

#pragma once

#include <stdint.h>

// Start n pollers that spin spin_us microseconds before sleeping. Main
// thread. Returns 0 or -errno.
int poller_start(unsigned n, unsigned spin_us);

// Stop and join every poller. Main thread.
void poller_stop(void);

// Number of running pollers.
unsigned poller_count(void);

// Add (remove) a channel's request doorbell to (from) poller id's epoll
// set, edge-triggered: every doorbell write wakes the poller once and the
// eventfd never needs to be read. Main thread. Return 0 or -errno.
int poller_watch(unsigned id, int fd);
void poller_unwatch(unsigned id, int fd);

// Wake poller id if it sleeps (or is about to), for work it cannot see on
// its doorbells: events queued for one of its channels. Any thread; call it
// after the work is published. Makes a system call only when the poller
// sleeps, and at most one per sleep.
void poller_wake(unsigned id);
