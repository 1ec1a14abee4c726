// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The spin budget of a handle's waits: fixed, or learnt from the round trips
// the handle sees, and when a wait stops spinning before its budget
// (docs/spin-budgets.md). Pure arithmetic on the timings and signals the
// waits report (shm.c), so that its unit tests feed it synthetic ones.

#include "client_priv.h"

#define NSEC_PER_USEC 1000ull

// The adaptive budget is the estimated round trip times this: room for the
// spread of round trips around their mean, so that a wait of a busy channel
// sleeps only when its answer is late by several round trips.
#define SPIN_RTT_MULT 4
// The estimate moves by 1/2^SPIN_EWMA_SHIFT of each sample's difference: it
// forgets a one-off sample within a few dozen waits.
#define SPIN_EWMA_SHIFT 3
// Long sleeps in a row before the budget shrinks: a busy daemon that lost
// its CPU for a while (a long sleep now and then, between thousands of
// caught waits) keeps its clients spinning; a slow one (every wait a long
// sleep) has them sleep at once within a few calls.
#define SPIN_SHRINK_AFTER 4
// A sleep is long when the whole wait lasted this many times the bound.
// Between the bound and that, the sleep says nothing: on a loaded machine a
// woken client waits tens of µs for a CPU, so a wait that slept lasts
// longer than one that spun, and counting it as long would have a busy
// client sleep more and more. A slow handler's client waits far longer.
#define SPIN_LONG_FACTOR 10

// A turn of a wait's loop (SHM_CLOCK_EVERY looks at the ring, in the cache)
// this many times its mean means the thread did not run for most of it:
// the scheduler gave its CPU to another thread. An interrupt of the usual
// few microseconds stays below it on the hosts measured.
#define SPIN_DESCHED_TURNS 64

// A wait for a woken daemon spins up to this many times the mean of such
// waits: room for their spread around it.
#define SPIN_WAKE_MULT 2
// ... when that is at most this many times the bound: a daemon whose
// wake-up takes longer (it waits for a CPU) is slept on, as any late answer.
#define SPIN_WAKE_BOUND_FACTOR 10

static uint64_t spin_clamp(uint64_t v, uint64_t lo, uint64_t hi) {
	return v < lo ? lo : v > hi ? hi : v;
}

static void spin_budget_update(struct client_spin *s) {
	uint64_t lo = s->max_ns < CLIENT_SPIN_FLOOR_NS ? s->max_ns : CLIENT_SPIN_FLOOR_NS;
	s->budget_ns = spin_clamp(SPIN_RTT_MULT * s->rtt_ns + s->slack_ns, lo, s->max_ns);
}

void client_spin_init(struct client_spin *s, int spin_us) {
	*s = (struct client_spin){0};
	if (spin_us >= 0) {
		s->max_ns = (uint64_t)spin_us * NSEC_PER_USEC;
		s->budget_ns = s->max_ns;
		return;
	}
	s->adaptive = true;
	s->max_ns = (uint64_t)GR_API_CLIENT_SPIN_US_DEFAULT * NSEC_PER_USEC;
	// Start from the whole bound, the fixed default's behaviour, until
	// the first round trips say better.
	s->rtt_ns = s->max_ns / SPIN_RTT_MULT;
	spin_budget_update(s);
}

void client_spin_caught(struct client_spin *s, uint64_t wait_ns) {
	s->caught++;
	if (!s->adaptive)
		return;
	s->long_sleeps = 0;
	// Signed: the sample may be below the estimate. A division rounds
	// towards zero, so the estimate settles within 2^SPIN_EWMA_SHIFT - 1 ns
	// of a steady sample, on the side it came from.
	int64_t diff = (int64_t)wait_ns - (int64_t)s->rtt_ns;
	s->rtt_ns = (uint64_t)((int64_t)s->rtt_ns + diff / (1 << SPIN_EWMA_SHIFT));
	spin_budget_update(s);
}

void client_spin_slept(struct client_spin *s, uint64_t spun_ns, uint64_t slept_ns) {
	s->sleeps++;
	if (!s->adaptive)
		return;
	uint64_t wait_ns = spun_ns + slept_ns;
	if (wait_ns < s->max_ns) {
		// Short: a spin within the bound would have caught the answer,
		// for less than the sleep and the daemon's doorbell cost. Spin
		// longer: at once twice as long as this wait lasted (the next
		// hiccup of the daemon is likely as long), and twice as long
		// again for each short sleep that still comes.
		uint64_t grown = 2 * s->slack_ns + CLIENT_SPIN_FLOOR_NS;
		if (grown < 2 * wait_ns)
			grown = 2 * wait_ns;
		s->slack_ns = spin_clamp(grown, 0, s->max_ns);
		s->long_sleeps = 0;
	} else if (wait_ns >= SPIN_LONG_FACTOR * s->max_ns && ++s->long_sleeps >= SPIN_SHRINK_AFTER) {
		// Long, and again: no spin within the bound would have caught
		// it: the daemon is slow, or had no CPU for that long. Spin
		// less: the round trips the spin caught are not this one's.
		s->rtt_ns /= 2;
		s->slack_ns /= 2;
		if (s->slack_ns < CLIENT_SPIN_FLOOR_NS)
			s->slack_ns = 0;
	}
	spin_budget_update(s);
}

uint64_t client_spin_budget(const struct client_spin *s, bool woke, bool daemon_here) {
	if (!s->adaptive || !woke || daemon_here || s->wake_ns == 0)
		return s->budget_ns;
	// Spinning through the wake-up saves the daemon's doorbell and this
	// thread's own wake-up, which on a busy host each cost a wake-up of
	// another CPU, and a wait for a CPU.
	uint64_t wake = SPIN_WAKE_MULT * s->wake_ns;
	if (wake > SPIN_WAKE_BOUND_FACTOR * s->max_ns)
		return s->budget_ns;
	return wake > s->budget_ns ? wake : s->budget_ns;
}

void client_spin_woke(struct client_spin *s, uint64_t wait_ns) {
	if (!s->adaptive)
		return;
	int64_t diff = (int64_t)wait_ns - (int64_t)s->wake_ns;
	s->wake_ns = s->wake_ns == 0
			     ? wait_ns
			     : (uint64_t)((int64_t)s->wake_ns + diff / (1 << SPIN_EWMA_SHIFT));
}

enum client_spin_next client_spin_turn(
	struct client_spin *s,
	uint64_t budget_ns,
	uint64_t turn_ns,
	uint64_t spun_ns,
	bool daemon_here,
	bool *disturbed
) {
	if (daemon_here) {
		// The poller is awake and waits for this very CPU: every turn
		// spun here delays the answer. Sleep, and let the daemon ring.
		s->left_cpu++;
		*disturbed = true;
		return CLIENT_SPIN_SLEEP;
	}
	if (turn_ns != 0) {
		if (s->turn_ns != 0 && turn_ns > SPIN_DESCHED_TURNS * s->turn_ns) {
			// Someone else had this CPU: spinning on takes it from
			// them again, and the wait is no sample of the round trip.
			s->descheduled++;
			*disturbed = true;
			return CLIENT_SPIN_SLEEP;
		}
		int64_t diff = (int64_t)turn_ns - (int64_t)s->turn_ns;
		s->turn_ns =
			s->turn_ns == 0
				? turn_ns
				: (uint64_t)((int64_t)s->turn_ns + diff / (1 << SPIN_EWMA_SHIFT));
	}
	return spun_ns >= budget_ns ? CLIENT_SPIN_SLEEP : CLIENT_SPIN_ON;
}

bool client_spin_wake_sleep(struct client_spin *s, bool woke, bool cpus_busy) {
	if (!woke || !cpus_busy || s->budget_ns == 0)
		return false;
	// The woken poller waits for a CPU: when none is idle the kernel
	// queues it on its waker's (this thread's) CPU or behind another
	// task, and the CPU's current task keeps running until its slice is
	// used. A spin here keeps the poller off this CPU until the spin ends;
	// a sleep gives the CPU up at once, as a socket client does in its
	// read.
	s->host_busy++;
	return true;
}

void client_spin_disturbed(struct client_spin *s, bool slept) {
	if (slept)
		s->sleeps++;
	else
		s->caught++;
}
