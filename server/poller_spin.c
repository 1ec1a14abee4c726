// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// When a poller spins and when it sleeps: see poller_spin.h. No clock read,
// no system call, no shared memory here: the poller (poller.c) reads those
// and passes them in.

#include "poller_spin.h"

#include <stddef.h>

// The weighted means move by 1/2^SPIN_EWMA_SHIFT of each sample's
// difference: a one-off sample is forgotten within a few dozen.
#define SPIN_EWMA_SHIFT 3
// A running client takes an answer within a round trip of its publication
// (it spins on the index): one that took nothing for this many round trips
// has lost its CPU, and one that took its answer and sent nothing for as
// long is thinking, not calling back to back.
#define QUIET_RTTS 8
// ... and never less than this many turns of the poller's loop (a client
// whose round trip is a few turns is still given a few dozen looks).
#define QUIET_TURNS 16
// The owner's client is read this many times per quiet time: a stop comes
// at most a quarter of a quiet time late, and a spin that pays reads the
// client's index line that seldom.
#define LOOKS_PER_QUIET 4
// A turn this many times the mean means the poller did not run for most of
// it: a turn is a few passes over memory in the cache, and an interrupt
// of the usual few microseconds stays below it on the hosts measured.
#define DESCHED_TURNS 64

// The poller moves to another CPU at most once per this many times the
// cost of its last move: a hundredth of its time at most, whatever a
// client says about where it runs.
#define MOVE_COST_RATIO 100
// Slow wake-ups in a row (poller_spin_judge()) of a client asleep in its
// event loop or after an occasional call on another CPU, every CPU busy,
// before the poller joins it there: one is a hiccup, a few in a row are a
// client that sleeps for every answer and waits for its CPU each time.
#define JOIN_RUNG 4
// A wake-up is slow when the gap from the ring to the client's next
// request exceeds this share of the spin budget: a quarter of the default
// budget is several times the round trip of a client and a poller that
// share a CPU (a ring, a switch each way: about 10 us measured on 2-vCPU
// guests), which is what a join gives it.
#define SLOW_WAKE_BUDGET_SHARE 4
// Each join doubles the wait before the next move off a client's CPU, up
// to 2^JOIN_BACKOFF_MAX times the move's: a client that sleeps for its
// answers costs a move off it and back (a few slow answers) at most once
// per that long, about a second with the moves measured.
#define JOIN_BACKOFF_MAX 12
// The answers after a move off a client's CPU that judge it: a client that
// spins for its answers is awake for each, one that sleeps for them (an
// event-loop client) is asleep for most.
#define MOVE_JUDGED 4

static uint64_t ewma(uint64_t mean, uint64_t sample) {
	if (mean == 0)
		return sample;
	// Signed: the sample may be below the mean.
	int64_t diff = (int64_t)sample - (int64_t)mean;
	return (uint64_t)((int64_t)mean + diff / (1 << SPIN_EWMA_SHIFT));
}

void poller_spin_init(struct poller_spin *s, uint64_t budget, uint64_t burst) {
	*s = (struct poller_spin){
		.budget = budget,
		.burst = burst < budget ? burst : budget,
	};
}

uint64_t poller_spin_quiet(const struct poller_spin *s) {
	uint64_t quiet = QUIET_RTTS * s->rtt;

	if (QUIET_TURNS * s->turn > quiet)
		quiet = QUIET_TURNS * s->turn;
	if (quiet == 0)
		quiet = s->burst;
	return quiet < s->budget ? quiet : s->budget;
}

static bool poller_spin_stop(struct poller_spin *s, uint64_t now, enum poller_spin_stop why) {
	s->stops[why]++;
	s->until = now;
	s->kind = POLLER_WINDOW_NONE;
	return false;
}

// How long the poller stays on a client's CPU after a move off it did not
// pay, or after it joined it.
static uint64_t join_backoff(const struct poller_spin *s) {
	return (uint64_t)MOVE_COST_RATIO * s->move_cost << s->join_streak;
}

bool poller_spin_asks_cpus(
	const struct poller_spin *s,
	uint64_t now,
	const struct poller_spin_peer *peer
) {
	// Only where the answer changes what the work does: for a client
	// asleep on another CPU (a join, a wake window), and for one calling
	// back to back on our CPU while a join's back-off holds us there (a
	// move off). A client asleep on our CPU after an occasional call
	// needs neither, and would wait behind the read: it waits for our CPU.
	if (peer->here)
		return s->last_work != 0 && now - s->last_work <= s->budget && now < s->stay_until;
	return peer->sleeping;
}

// What the work at now says about the ring before it. When that ring woke
// a client asleep on another CPU of a busy host (rung_at), the gap to this
// work is its wake-up plus its answer plus its next request: more than a
// quarter of a spin budget means its wake-up waited for a CPU or crossed to
// another one, and cost more than a round trip on one CPU would (or it
// thinks between calls, and the join costs it nothing). JOIN_RUNG such
// wake-ups in a row ask for a join; one found awake for its answer on
// another CPU breaks the row. After a move off a client's CPU, the next
// MOVE_JUDGED answers judge the move: one slow wake-up and the next move
// off waits twice as long; all prompt, and the back-off starts over.
static void poller_spin_judge(
	struct poller_spin *s,
	uint64_t now,
	const struct poller_spin_peer *peer,
	bool rings_busy
) {
	if (s->rung_at != 0) {
		bool slow = now - s->rung_at > s->budget / SLOW_WAKE_BUDGET_SHARE;

		s->slow_wakes = slow ? s->slow_wakes + 1 : 0;
		if (s->judged > 0 && slow) {
			if (s->join_streak < JOIN_BACKOFF_MAX)
				s->join_streak++;
			s->stay_until = now + join_backoff(s);
			s->judged = 0;
		} else if (s->judged > 0 && --s->judged == 0) {
			s->join_streak = 0;
		}
	} else if (!peer->here && !peer->sleeping) {
		// Awake on another CPU when its answer came: no wake-up to
		// save.
		s->slow_wakes = 0;
		if (s->judged > 0 && --s->judged == 0)
			s->join_streak = 0;
	}
	s->rung_at = rings_busy ? now : 0;
}

enum poller_spin_work
poller_spin_work(struct poller_spin *s, uint64_t now, const struct poller_spin_peer *peer) {
	bool follows = s->last_work != 0 && now - s->last_work <= s->budget;
	// This work rings a client asleep on another CPU, with every CPU
	// busy: its wake-up may wait for a CPU. Asleep in its event loop, or
	// in the library's own wait after an occasional call (work after
	// silence): such a client rings the poller and sleeps at once on a
	// busy host. (One calling back to back in the library's wait spins
	// for its answers while it has its CPU, and sleeps only when it lost
	// it: a poller on another CPU pays.)
	bool rings_busy =
		!peer->here && peer->sleeping && peer->cpus_busy && (peer->in_loop || !follows);
	enum poller_window kind;
	uint64_t window;

	if (s->budget != 0)
		poller_spin_judge(s, now, peer, rings_busy);
	if (rings_busy && peer->cpu_known && s->slow_wakes >= JOIN_RUNG && now >= s->next_move) {
		// Each of its answers wakes it, and each wake-up took longer
		// than a round trip on its CPU would: it waited behind whatever
		// runs there. On its CPU, its next ring wakes us there, and we
		// answer before it sleeps. Asked again with the CPU we moved to.
		return POLLER_WORK_JOIN;
	}
	// Back on a client's CPU after a join, the poller stays there for
	// the back-off, unless a CPU is free: then a move off pays at once.
	if (peer->here && follows && now >= s->until && now >= s->next_move &&
	    (now >= s->stay_until || !peer->cpus_busy)) {
		// A client calling back to back, which cannot send its next
		// request before we leave the CPU, and nothing else keeps us
		// spinning: leave the CPU, for another one. Asked again with
		// the CPU we moved to. (An occasional call's client gains
		// nothing from it: we sleep and leave it the CPU at once.)
		return POLLER_WORK_MOVE;
	}
	if (follows)
		s->rtt = ewma(s->rtt, now - s->last_work);
	s->last_work = now;
	// The time since the last clock read was spent working: no turn.
	s->last_read = 0;
	if (peer->here) {
		// Its client cannot send its next request before we leave the
		// CPU: this work opens nothing (a window another channel's
		// work opened stays open).
		return POLLER_WORK_NONE;
	}
	if (follows) {
		kind = POLLER_WINDOW_FOLLOW;
		window = s->budget;
	} else if (peer->sleeping && !peer->cpus_busy) {
		// We rang it: a client calling back to back sends its next
		// request once it is awake and has its answer. Without this the
		// two sides wake each other for every call after a hiccup,
		// whenever the two wake-ups take longer than a budget. Not when
		// every CPU is taken: the scheduler may then queue the client
		// on our CPU, and our spin would keep it from running.
		kind = POLLER_WINDOW_WAKE;
		window = s->budget;
	} else {
		kind = POLLER_WINDOW_BURST;
		window = s->burst;
	}
	if (window == 0 || now + window <= s->until)
		return POLLER_WORK_NONE;
	s->until = now + window;
	s->kind = kind;
	s->progress = now;
	s->taken_seen = false;
	s->next_look = now + poller_spin_quiet(s) / LOOKS_PER_QUIET;
	return POLLER_WORK_OWNS;
}

void poller_spin_moved(struct poller_spin *s, uint64_t now, uint64_t cost, bool moved) {
	if (moved) {
		s->moves++;
		// Plus the work that asked for the move, asked again now.
		s->judged = MOVE_JUDGED + 1;
	}
	// The cheapest move seen is what a move costs: a dearer one had the
	// poller descheduled in the middle. A move that failed cost as much to
	// find out: the same wait.
	if (cost == 0)
		cost = 1;
	if (s->move_cost == 0 || cost < s->move_cost)
		s->move_cost = cost;
	s->next_move = now + MOVE_COST_RATIO * s->move_cost;
}

void poller_spin_joined(struct poller_spin *s, uint64_t now, uint64_t cost, bool joined) {
	poller_spin_moved(s, now, cost, false);
	s->slow_wakes = 0;
	s->rung_at = 0;
	if (!joined)
		return;
	s->joins++;
	s->stay_until = now + join_backoff(s);
	// A window its work opened from afar would have us spin on its CPU,
	// before it: it ends here.
	s->until = now;
	s->kind = POLLER_WINDOW_NONE;
}

enum poller_spin_next poller_spin_idle(struct poller_spin *s, uint64_t now) {
	if (now >= s->until)
		return POLLER_SPIN_SLEEP;
	if (s->last_read != 0) {
		uint64_t turn = now - s->last_read;
		if (s->turn != 0 && turn > DESCHED_TURNS * s->turn) {
			// Someone else had our CPU for most of that turn: our
			// spin took it from them, and will again.
			poller_spin_stop(s, now, POLLER_STOP_DESCHEDULED);
			return POLLER_SPIN_SLEEP;
		}
		s->turn = ewma(s->turn, turn);
	}
	s->last_read = now;
	if (s->kind == POLLER_WINDOW_BURST || now < s->next_look)
		return POLLER_SPIN_ON;
	return POLLER_SPIN_LOOK;
}

bool poller_spin_look(struct poller_spin *s, uint64_t now, const struct poller_spin_peer *peer) {
	uint64_t quiet = poller_spin_quiet(s);

	if (peer == NULL)
		return poller_spin_stop(s, now, POLLER_STOP_GONE);
	if (peer->here)
		return poller_spin_stop(s, now, POLLER_STOP_HERE);
	s->next_look = now + quiet / LOOKS_PER_QUIET;
	if (!s->taken_seen || peer->taken != s->taken) {
		s->taken = peer->taken;
		s->taken_seen = true;
		s->progress = now;
		return true;
	}
	if (now - s->progress < quiet)
		return true;
	if (s->kind == POLLER_WINDOW_FOLLOW && !peer->all_taken && !peer->sleeping) {
		// It spins for its answers (it is not asleep) and took none for
		// a quiet time: it is not running. Its next request cannot come
		// before it runs again and takes them.
		return poller_spin_stop(s, now, POLLER_STOP_STALLED);
	}
	if (s->kind == POLLER_WINDOW_WAKE && peer->all_taken) {
		// Woken, it took its answer and sent nothing for a quiet time:
		// no back-to-back caller. Its next call rings.
		return poller_spin_stop(s, now, POLLER_STOP_THINKING);
	}
	return true;
}
