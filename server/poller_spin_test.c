// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// When a poller spins and when it sleeps (poller_spin.c), driven with a
// made-up clock and made-up clients, so that every decision is checked
// exactly: work after silence opens the burst window, work that follows
// work the whole budget, work that rang a sleeping client a window for its
// wake-up (not when every CPU is taken); no window for a client on the
// poller's own CPU but a move to another CPU (at most a hundredth of the
// time), and that client's hints cannot end a window another channel's
// work opened; the window ends early for a client that stopped
// taking its answers, for one woken that took its answer and sent nothing,
// and when the poller notices it was descheduled; the quiet time follows
// what was measured, within the budget; a client that sleeps for its
// answers on another CPU while every CPU is busy (in its event loop, or in
// the library's wait after an occasional call), and whose wake-ups take
// longer than a budget, is joined on its CPU; the poller leaves it when a
// CPU is free, and a move off it that was followed by a slow wake-up
// doubles the wait before the next move off one.

#include "poller_spin.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

// Ticks of the made-up clock: a budget of 100000 ticks (100 us at 1 GHz)
// and a burst window of 2000.
#define BUDGET 100000
#define BURST 2000
// A loop turn of the made-up poller, and a round trip of a busy client.
#define TURN 40
#define RTT 300
// The gap from a ring to the woken client's next request when its wake-up
// waited for a CPU (more than a quarter of a budget), and when it did not.
#define SLOW_WAKE (BUDGET / 4 + RTT)
#define PROMPT_WAKE RTT
// The silence before an occasional call: many budgets.
#define OCCASIONAL_GAP (20 * BUDGET)
// Where the clock starts: any time, not 0 (0 means "never").
#define T0 1000000

static const struct poller_spin_peer elsewhere = {0};
static const struct poller_spin_peer here = {.here = true};
static const struct poller_spin_peer asleep = {.sleeping = true};
static const struct poller_spin_peer asleep_busy = {.sleeping = true, .cpus_busy = true};
// An event-loop client on another CPU of a busy host, asleep in its loop
// for each answer, and the same client once the poller shares its CPU.
static const struct poller_spin_peer loop_elsewhere = {
	.cpu_known = true,
	.sleeping = true,
	.in_loop = true,
	.cpus_busy = true,
};
static const struct poller_spin_peer loop_cpu_free = {
	.cpu_known = true,
	.sleeping = true,
	.in_loop = true,
};
// A client asleep in the library's own wait (it spins while it has its
// CPU) on another CPU of a busy host.
static const struct poller_spin_peer blocking_asleep_busy = {
	.cpu_known = true,
	.sleeping = true,
	.cpus_busy = true,
};
// The same client with a CPU free.
static const struct poller_spin_peer blocking_asleep_free = {
	.cpu_known = true,
	.sleeping = true,
};
// A client asleep on the poller's CPU (joined), every CPU busy.
static const struct poller_spin_peer asleep_here_busy = {
	.here = true,
	.cpu_known = true,
	.sleeping = true,
	.cpus_busy = true,
};
// On the poller's CPU (joined), every CPU busy or one free.
static const struct poller_spin_peer loop_here_busy = {
	.here = true,
	.cpu_known = true,
	.cpus_busy = true,
};
static const struct poller_spin_peer loop_here = {.here = true, .cpu_known = true};
// A client spinning for its answers on another CPU of a busy host.
static const struct poller_spin_peer spinning_busy = {.cpu_known = true, .cpus_busy = true};

// Empty passes from now to until, a clock read every TURN ticks, the
// owner's client answering looks with peer (whose index moves by
// taken_step at each look). Returns when the poller would sleep, or until.
static uint64_t spin_idle(
	struct poller_spin *s,
	uint64_t now,
	uint64_t until,
	struct poller_spin_peer *peer,
	uint32_t taken_step
) {
	for (; now < until; now += TURN) {
		enum poller_spin_next next = poller_spin_idle(s, now);

		if (next == POLLER_SPIN_SLEEP)
			return now;
		if (next == POLLER_SPIN_LOOK) {
			peer->taken += taken_step;
			if (!poller_spin_look(s, now, peer))
				return now;
		}
	}
	return until;
}

// A busy client: work every RTT ticks, n times, from now, an empty pass
// between two. Returns the time of the last work.
static uint64_t busy_calls(struct poller_spin *s, uint64_t now, unsigned n) {
	for (unsigned i = 0; i < n; i++, now += RTT) {
		poller_spin_work(s, now, &elsewhere);
		if (i + 1 < n)
			assert_int_equal(poller_spin_idle(s, now + TURN), POLLER_SPIN_ON);
	}
	return now - RTT;
}

static void test_burst_then_follow(void **state) {
	struct poller_spin s;
	(void)state;

	poller_spin_init(&s, BUDGET, BURST);
	// After silence: the burst window only.
	assert_int_equal(poller_spin_work(&s, T0, &elsewhere), POLLER_WORK_OWNS);
	assert_int_equal(s.kind, POLLER_WINDOW_BURST);
	assert_int_equal(poller_spin_idle(&s, T0 + BURST - 1), POLLER_SPIN_ON);
	assert_int_equal(poller_spin_idle(&s, T0 + BURST), POLLER_SPIN_SLEEP);
	// Work within a budget of the last: the whole budget, counted from it.
	assert_int_equal(poller_spin_work(&s, T0 + RTT, &elsewhere), POLLER_WORK_OWNS);
	assert_int_equal(s.kind, POLLER_WINDOW_FOLLOW);
	assert_int_equal(s.until, T0 + RTT + BUDGET);
	// Past a budget of silence, a burst window again.
	assert_int_equal(poller_spin_work(&s, T0 + RTT + BUDGET + 1, &elsewhere), POLLER_WORK_OWNS);
	assert_int_equal(s.kind, POLLER_WINDOW_BURST);
}

static void test_no_spin_budget(void **state) {
	struct poller_spin s;
	(void)state;

	poller_spin_init(&s, 0, BURST);
	assert_int_equal(s.burst, 0);
	assert_int_equal(poller_spin_work(&s, T0, &elsewhere), POLLER_WORK_NONE);
	assert_int_equal(poller_spin_work(&s, T0 + 1, &elsewhere), POLLER_WORK_NONE);
	assert_int_equal(poller_spin_idle(&s, T0 + 2), POLLER_SPIN_SLEEP);
}

static void test_client_on_our_cpu(void **state) {
	struct poller_spin s;
	struct poller_spin_peer peer = elsewhere;
	(void)state;

	poller_spin_init(&s, BUDGET, BURST);
	// After silence (an occasional call): no window, no move; we sleep
	// and leave the client its CPU at once.
	assert_int_equal(poller_spin_work(&s, T0 - 2 * RTT, &here), POLLER_WORK_NONE);
	assert_int_equal(poller_spin_idle(&s, T0 - RTT), POLLER_SPIN_SLEEP);
	// Work that follows work: its client cannot send before we leave, and
	// no window is open: move to another CPU.
	assert_int_equal(poller_spin_work(&s, T0, &here), POLLER_WORK_MOVE);
	// There is none: no window, not even a burst; and no move for a
	// hundred times what finding that out cost.
	poller_spin_moved(&s, T0 + 10, 10, false);
	assert_int_equal(s.moves, 0);
	assert_int_equal(poller_spin_work(&s, T0 + 10, &here), POLLER_WORK_NONE);
	assert_int_equal(poller_spin_idle(&s, T0 + 10 + TURN), POLLER_SPIN_SLEEP);
	// Even work that follows work.
	assert_int_equal(poller_spin_work(&s, T0 + RTT, &here), POLLER_WORK_NONE);
	assert_int_equal(poller_spin_idle(&s, T0 + RTT + TURN), POLLER_SPIN_SLEEP);
	assert_int_equal(poller_spin_work(&s, T0 + 10 + 1000 - 1, &here), POLLER_WORK_NONE);
	// Then a move that works: the window opens for it on the new CPU.
	assert_int_equal(poller_spin_work(&s, T0 + 10 + 1000, &here), POLLER_WORK_MOVE);
	poller_spin_moved(&s, T0 + 1100, 90, true);
	assert_int_equal(s.moves, 1);
	assert_int_equal(poller_spin_work(&s, T0 + 1100, &elsewhere), POLLER_WORK_OWNS);
	assert_int_equal(s.kind, POLLER_WINDOW_FOLLOW);
	assert_int_equal(poller_spin_work(&s, T0 + 1200, &here), POLLER_WORK_NONE);

	// Another channel's work opens a window; work of the one whose client
	// is on our CPU leaves it as it was, owner included.
	uint64_t last = busy_calls(&s, T0 + 2 * BUDGET, 10);
	uint64_t until = s.until;
	assert_int_equal(poller_spin_work(&s, last + 10, &here), POLLER_WORK_NONE);
	assert_int_equal(s.until, until);
	// The owner's client moving onto our CPU ends the window at a look.
	peer.here = true;
	uint64_t slept = spin_idle(&s, last + 10, until, &peer, 1);
	assert_true(slept < last + 10 + poller_spin_quiet(&s));
	assert_int_equal(s.stops[POLLER_STOP_HERE], 1);
}

// n works, each gap ticks after the one before (the first gap after t),
// none asking for a join; the time of the last.
static uint64_t
no_join(struct poller_spin *s,
	uint64_t t,
	uint64_t gap,
	unsigned n,
	const struct poller_spin_peer *peer) {
	for (unsigned i = 0; i < n; i++) {
		t += gap;
		assert_int_not_equal(poller_spin_work(s, t, peer), POLLER_WORK_JOIN);
	}
	return t;
}

// A fresh poller rings a client asleep in its loop on a busy host until
// it asks to join it; the time it asks.
static uint64_t join_asked(struct poller_spin *s) {
	poller_spin_init(s, BUDGET, BURST);
	uint64_t t = no_join(s, T0, SLOW_WAKE, 4, &loop_elsewhere) + SLOW_WAKE;
	assert_int_equal(poller_spin_work(s, t, &loop_elsewhere), POLLER_WORK_JOIN);
	return t;
}

static void test_join_sleeping_client(void **state) {
	struct poller_spin s;
	(void)state;

	// Rings of a client asleep in its loop on a busy host, each answered
	// more than a quarter of a budget later (its wake-up waited for its
	// CPU): the first sets the row going, four slow wake-ups after it ask
	// for a join.
	uint64_t t = join_asked(&s);
	assert_int_equal(s.slow_wakes, 4);
	poller_spin_joined(&s, t + 10, 10, true);
	assert_int_equal(s.joins, 1);
	// Asked again from its CPU: no window, we sleep and it goes on.
	assert_int_equal(poller_spin_work(&s, t + 10, &loop_here_busy), POLLER_WORK_NONE);
	assert_int_equal(poller_spin_idle(&s, t + 10 + TURN), POLLER_SPIN_SLEEP);

	// Woken promptly (its next request within a budget of the ring),
	// however often it sleeps: no join. A spin budget covers its wake-up.
	poller_spin_init(&s, BUDGET, BURST);
	no_join(&s, T0, PROMPT_WAKE, 50, &loop_elsewhere);
	assert_int_equal(s.slow_wakes, 0);

	// One prompt wake-up breaks the row, and so does an answer that
	// found it awake on another CPU.
	poller_spin_init(&s, BUDGET, BURST);
	t = no_join(&s, T0, SLOW_WAKE, 4, &loop_elsewhere);
	t = no_join(&s, t, PROMPT_WAKE, 1, &loop_elsewhere);
	t = no_join(&s, t, SLOW_WAKE, 3, &loop_elsewhere);
	t = no_join(&s, t, PROMPT_WAKE, 1, &spinning_busy);
	assert_int_equal(s.slow_wakes, 0);
	no_join(&s, t, SLOW_WAKE, 4, &loop_elsewhere);

	// Not when a CPU is free (it wakes there at once), nor when it did
	// not say where it runs, nor for a client asleep in the library's
	// own wait that calls back to back (it spins while it has its CPU).
	const struct poller_spin_peer *never[] = {
		&loop_cpu_free,
		&blocking_asleep_busy,
		&asleep_busy};
	for (unsigned i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		poller_spin_init(&s, BUDGET, BURST);
		no_join(&s, T0, SLOW_WAKE, 10, never[i]);
	}
	// Nor with no spin budget (-S 0: every call wakes the poller).
	poller_spin_init(&s, 0, BURST);
	no_join(&s, T0, SLOW_WAKE, 10, &loop_elsewhere);
}

static void test_join_occasional_caller(void **state) {
	struct poller_spin s;
	(void)state;

	// A client asleep in the library's own wait on another CPU of a busy
	// host, each of its calls after silence: it rang the sleeping poller
	// and slept at once, and each answer waited for its CPU. Joined as
	// the event-loop client is, after the same row of slow wake-ups.
	poller_spin_init(&s, BUDGET, BURST);
	uint64_t t = no_join(&s, T0, OCCASIONAL_GAP, 4, &blocking_asleep_busy) + OCCASIONAL_GAP;
	assert_int_equal(poller_spin_work(&s, t, &blocking_asleep_busy), POLLER_WORK_JOIN);
	// A join as dear as a budget: its back-off outlasts the next call.
	poller_spin_joined(&s, t + 10, BUDGET, true);
	assert_int_equal(s.joins, 1);
	// From its CPU, asleep, its next occasional call: nothing more to do,
	// and no read of the CPUs (the client waits for our CPU meanwhile).
	t += OCCASIONAL_GAP;
	assert_true(t < s.stay_until);
	assert_false(poller_spin_asks_cpus(&s, t, &asleep_here_busy));
	assert_int_equal(poller_spin_work(&s, t, &asleep_here_busy), POLLER_WORK_NONE);

	// Not with a CPU free, nor when it did not say where it runs.
	poller_spin_init(&s, BUDGET, BURST);
	no_join(&s, T0, OCCASIONAL_GAP, 10, &blocking_asleep_free);
	poller_spin_init(&s, BUDGET, BURST);
	no_join(&s, T0, OCCASIONAL_GAP, 10, &asleep_busy);
	// Nor for its calls that follow each other, however slow: they
	// add nothing to the row.
	poller_spin_init(&s, BUDGET, BURST);
	t = no_join(&s, T0, OCCASIONAL_GAP, 3, &blocking_asleep_busy);
	t = no_join(&s, t, SLOW_WAKE, 10, &blocking_asleep_busy);
	assert_true(s.slow_wakes < 4);
}

static void test_join_rate_and_back_off(void **state) {
	// A move that cost MOVE ticks: the next waits a hundred times as long.
	const uint64_t move = 10000, backoff0 = 100 * move;
	struct poller_spin s;
	(void)state;

	uint64_t t = join_asked(&s);
	// A join that cannot be made (not in our affinity) costs a hundred
	// times as long before the next try, however slow the wake-ups.
	poller_spin_joined(&s, t, move, false);
	assert_int_equal(s.joins, 0);
	t = no_join(&s, t, SLOW_WAKE, (unsigned)(backoff0 / SLOW_WAKE) - 1, &loop_elsewhere);
	assert_true(t < s.next_move);
	t = s.next_move;
	assert_int_equal(poller_spin_work(&s, t, &loop_elsewhere), POLLER_WORK_JOIN);
	poller_spin_joined(&s, t, move, true);
	assert_int_equal(s.stay_until, t + backoff0);

	// On its CPU, calls back to back, every CPU busy: no move off it
	// before the back-off after the join ends.
	uint64_t stay = s.stay_until;
	for (t += RTT; t < stay; t += RTT)
		assert_int_equal(poller_spin_work(&s, t, &loop_here_busy), POLLER_WORK_NONE);
	// Then a move off it, to try: it still sleeps for its answers, which
	// now wake it slowly behind its busy CPU. The next move off waits
	// twice as long, each time it fails.
	uint64_t backoff = backoff0;
	for (unsigned round = 1; round <= 3; round++) {
		assert_int_equal(poller_spin_work(&s, t, &loop_here_busy), POLLER_WORK_MOVE);
		poller_spin_moved(&s, t, move, true);
		poller_spin_work(&s, t, &loop_elsewhere);
		t += SLOW_WAKE;
		poller_spin_work(&s, t, &loop_elsewhere);
		backoff *= 2;
		assert_int_equal(s.join_streak, round);
		assert_int_equal(s.stay_until, t + backoff);
		// Joined again, it stays for the longer back-off.
		t = no_join(&s, t, SLOW_WAKE, 3, &loop_elsewhere);
		if (t < s.next_move)
			t = s.next_move;
		assert_int_equal(poller_spin_work(&s, t, &loop_elsewhere), POLLER_WORK_JOIN);
		poller_spin_joined(&s, t, move, true);
		uint64_t until = s.stay_until;
		assert_int_equal(until, t + backoff);
		uint64_t u;
		for (u = t + RTT; u < until; u += RTT)
			assert_int_equal(
				poller_spin_work(&s, u, &loop_here_busy),
				POLLER_WORK_NONE
			);
		t = u;
	}
	// A client awake for its answers once the poller moved off: the move
	// paid, and the back-off starts over.
	assert_int_equal(poller_spin_work(&s, t, &loop_here_busy), POLLER_WORK_MOVE);
	poller_spin_moved(&s, t, move, true);
	for (unsigned i = 0; i < 6; i++)
		poller_spin_work(&s, t + i * RTT, &spinning_busy);
	assert_int_equal(s.join_streak, 0);
}

static void test_join_left_when_cpu_free(void **state) {
	const uint64_t move = 10000;
	struct poller_spin s;
	(void)state;

	// Joined, moved off, a slow wake-up, joined again: the back-off now
	// outlasts the rate limit of moves.
	uint64_t t = join_asked(&s);
	poller_spin_joined(&s, t, move, true);
	t = s.next_move;
	poller_spin_work(&s, t - RTT, &loop_here_busy);
	assert_int_equal(poller_spin_work(&s, t, &loop_here_busy), POLLER_WORK_MOVE);
	poller_spin_moved(&s, t, move, true);
	t = no_join(&s, t, SLOW_WAKE, 4, &loop_elsewhere);
	assert_int_equal(s.join_streak, 1);
	t = s.next_move;
	assert_int_equal(poller_spin_work(&s, t, &loop_elsewhere), POLLER_WORK_JOIN);
	poller_spin_joined(&s, t, move, true);
	// Asked again from the client's CPU, as the poller does after a move.
	assert_int_equal(poller_spin_work(&s, t, &loop_here_busy), POLLER_WORK_NONE);
	uint64_t next = s.next_move;
	assert_true(next < s.stay_until);
	// While every CPU is busy, the back-off holds the poller there (and
	// wants the CPUs read); once one is free, the next back-to-back call
	// after the rate limit moves it off, before the back-off ends.
	for (t += RTT; t < next + 10 * RTT; t += RTT) {
		assert_true(poller_spin_asks_cpus(&s, t, &loop_here_busy));
		assert_int_equal(poller_spin_work(&s, t, &loop_here_busy), POLLER_WORK_NONE);
	}
	assert_true(t < s.stay_until);
	assert_int_equal(poller_spin_work(&s, t, &loop_here), POLLER_WORK_MOVE);
	// With no back-off holding it, a client on our CPU does not make the
	// poller read the CPUs (a system call) at all; one asleep does.
	poller_spin_init(&s, BUDGET, BURST);
	assert_false(poller_spin_asks_cpus(&s, T0, &loop_here));
	assert_false(poller_spin_asks_cpus(&s, T0, &elsewhere));
	assert_true(poller_spin_asks_cpus(&s, T0, &asleep));
}

static void test_stalled_client(void **state) {
	struct poller_spin s;
	struct poller_spin_peer peer = {.all_taken = false};
	(void)state;

	poller_spin_init(&s, BUDGET, BURST);
	uint64_t last = busy_calls(&s, T0, 100);
	uint64_t quiet = poller_spin_quiet(&s);
	// A round trip measured: the quiet time is a multiple of it (and of
	// the turn), far below the budget.
	assert_true(quiet >= 8 * RTT - 8 && quiet < BUDGET / 4);
	// The client keeps taking its answers (its index moves at each look):
	// the whole budget.
	assert_int_equal(spin_idle(&s, last, last + BUDGET, &peer, 1), last + BUDGET);
	assert_int_equal(s.stops[POLLER_STOP_STALLED], 0);

	// It took nothing since the last work: a quiet time later, we sleep.
	last = busy_calls(&s, last + BUDGET + 1, 100);
	uint64_t slept = spin_idle(&s, last, last + BUDGET, &peer, 0);
	assert_true(slept >= last + quiet && slept <= last + quiet + quiet / 2 + TURN);
	assert_int_equal(s.stops[POLLER_STOP_STALLED], 1);
	assert_int_equal(poller_spin_idle(&s, slept + TURN), POLLER_SPIN_SLEEP);

	// A client that took everything and thinks before its next call: the
	// whole budget, as a client calling within it expects.
	peer.all_taken = true;
	last = busy_calls(&s, slept + BUDGET + 1, 100);
	assert_int_equal(spin_idle(&s, last, last + BUDGET, &peer, 0), last + BUDGET);
	// Nor when it sleeps on its doorbell for the answers we gave it: rung,
	// it comes back.
	peer.all_taken = false;
	peer.sleeping = true;
	last = busy_calls(&s, last + 2 * BUDGET, 100);
	assert_int_equal(spin_idle(&s, last, last + BUDGET, &peer, 0), last + BUDGET);
	assert_int_equal(s.stops[POLLER_STOP_STALLED], 1);
}

static void test_woken_client(void **state) {
	struct poller_spin s;
	struct poller_spin_peer peer = {.all_taken = false};
	(void)state;

	poller_spin_init(&s, BUDGET, BURST);
	busy_calls(&s, T0, 100);
	uint64_t quiet = poller_spin_quiet(&s);
	uint64_t t = T0 + 10 * BUDGET;

	// Work after silence that rang a sleeping client, a CPU free: a window
	// for its wake-up, up to the budget.
	assert_int_equal(poller_spin_work(&s, t, &asleep), POLLER_WORK_OWNS);
	assert_int_equal(s.kind, POLLER_WINDOW_WAKE);
	assert_int_equal(s.until, t + BUDGET);
	// Still waking (it took nothing): the whole window.
	assert_int_equal(spin_idle(&s, t, t + BUDGET, &peer, 0), t + BUDGET);

	// It wakes and calls again at once: that work follows ours.
	t += 2 * BUDGET;
	assert_int_equal(poller_spin_work(&s, t, &asleep), POLLER_WORK_OWNS);
	assert_int_equal(poller_spin_work(&s, t + 20 * RTT, &elsewhere), POLLER_WORK_OWNS);
	assert_int_equal(s.kind, POLLER_WINDOW_FOLLOW);

	// It wakes, takes its answer, and sends nothing: we sleep a quiet time
	// after it took it.
	quiet = poller_spin_quiet(&s);
	t += 2 * BUDGET;
	assert_int_equal(poller_spin_work(&s, t, &asleep), POLLER_WORK_OWNS);
	uint64_t woke = spin_idle(&s, t, t + 20 * RTT, &peer, 0);
	assert_int_equal(woke, t + 20 * RTT);
	peer.taken++;
	peer.all_taken = true;
	uint64_t slept = spin_idle(&s, woke, t + BUDGET, &peer, 0);
	assert_true(slept >= woke + quiet && slept <= woke + quiet + quiet / 2 + TURN);
	assert_int_equal(s.stops[POLLER_STOP_THINKING], 1);

	// Every CPU taken: the client may wake behind us, on our CPU. The
	// burst window only.
	t += 2 * BUDGET;
	assert_int_equal(poller_spin_work(&s, t, &asleep_busy), POLLER_WORK_OWNS);
	assert_int_equal(s.kind, POLLER_WINDOW_BURST);
	assert_int_equal(s.until, t + BURST);
}

static void test_descheduled(void **state) {
	struct poller_spin s;
	struct poller_spin_peer peer = {.all_taken = true};
	(void)state;

	poller_spin_init(&s, BUDGET, BURST);
	uint64_t last = busy_calls(&s, T0, 10);
	uint64_t now = spin_idle(&s, last, last + 50 * TURN, &peer, 0);
	assert_int_equal(s.turn, TURN);
	// A turn 64 times as long: someone else had our CPU. We leave it.
	now += 64 * TURN + 1;
	assert_int_equal(poller_spin_idle(&s, now), POLLER_SPIN_SLEEP);
	assert_int_equal(s.stops[POLLER_STOP_DESCHEDULED], 1);
	// A turn a little longer than the others (an interrupt) is none.
	last = busy_calls(&s, now + 1, 10);
	now = spin_idle(&s, last, last + 50 * TURN, &peer, 0);
	assert_int_not_equal(poller_spin_idle(&s, now + 20 * TURN), POLLER_SPIN_SLEEP);
	assert_int_equal(s.stops[POLLER_STOP_DESCHEDULED], 1);
}

static void test_owner_gone(void **state) {
	struct poller_spin s;
	(void)state;

	poller_spin_init(&s, BUDGET, BURST);
	uint64_t last = busy_calls(&s, T0, 10);
	uint64_t now = last;
	while (poller_spin_idle(&s, now) != POLLER_SPIN_LOOK)
		now += TURN;
	assert_false(poller_spin_look(&s, now, NULL));
	assert_int_equal(s.stops[POLLER_STOP_GONE], 1);
	assert_int_equal(poller_spin_idle(&s, now + TURN), POLLER_SPIN_SLEEP);
}

static void test_quiet_bounds(void **state) {
	struct poller_spin s;
	(void)state;

	// Nothing measured: the burst window.
	poller_spin_init(&s, BUDGET, BURST);
	assert_int_equal(poller_spin_quiet(&s), BURST);
	// A long turn (a pass over many channels) sets it.
	s.turn = 1000;
	assert_int_equal(poller_spin_quiet(&s), 16 * 1000);
	// A long round trip (a client that thinks between calls): within the
	// budget.
	s.rtt = BUDGET / 2;
	assert_int_equal(poller_spin_quiet(&s), BUDGET);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_follow),
		cmocka_unit_test(test_no_spin_budget),
		cmocka_unit_test(test_client_on_our_cpu),
		cmocka_unit_test(test_join_sleeping_client),
		cmocka_unit_test(test_join_occasional_caller),
		cmocka_unit_test(test_join_rate_and_back_off),
		cmocka_unit_test(test_join_left_when_cpu_free),
		cmocka_unit_test(test_stalled_client),
		cmocka_unit_test(test_woken_client),
		cmocka_unit_test(test_descheduled),
		cmocka_unit_test(test_owner_gone),
		cmocka_unit_test(test_quiet_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
