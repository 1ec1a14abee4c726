// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// When a poller spins and when it sleeps (docs/spin-budgets.md): pure
// arithmetic on a clock and on signals its caller reads and passes in, so
// that its unit test (poller_spin_test.c) drives it with made-up ones. The
// clock is in ticks (the poller's TSC); every threshold is either a
// configured one (the spin budget, the burst window) or a multiple of what
// the poller measured on this host (its round trip, its loop's turn).
//
// A poller that finds a client calling back to back on its own CPU, with
// no window open, moves to another CPU it may run on (at most a hundredth of its time goes to
// that), and spins there for it: when every CPU has other work, the
// scheduler wakes a sleeping poller on its waker's CPU, and the two would
// otherwise share one CPU, waking each other for every call.
//
// A spin window follows work. Within it the poller looks, now and then, at
// what the client of the window's owner (the channel whose work opened or
// last extended the window) says about itself, and stops spinning as soon
// as spinning cannot pay: the client runs on the poller's own CPU (it
// cannot send before the poller leaves that CPU), it stopped taking its
// answers (it lost its CPU), or it took the answer that woke it and sent
// nothing after it (an occasional caller). It also stops when it notices
// it was itself descheduled: someone else wanted its CPU. A client's hints
// decide only about a window its own work opened.
//
// A client that sleeps for its answers (an event-loop client, asleep in
// epoll_wait() on gr_api_client_fd(), or an occasional caller, which on a
// busy host rings the sleeping poller and sleeps at once) gains nothing
// from a poller on another CPU when every CPU is busy: each answer must
// wake it, and the woken client waits behind the task running on its CPU;
// the poller, woken there in turn by the client's ring, waits behind the
// task running on its own. A poller whose
// answers to such a client, asleep on another CPU, were followed by its
// next request only more than a quarter of a spin budget later, a few
// times in a row, joins it on its CPU instead (a move, rate-limited as the
// other): there the client's next ring has the poller answer before the
// client sleeps. The
// poller leaves that CPU as soon as a CPU is free; while none is, it tries
// a move off only after a back-off, which doubles each time a slow wake-up
// follows such a move.

#pragma once

#include <stdbool.h>
#include <stdint.h>

// Why the poller stopped spinning before its window's end: counters, for
// the tests and the poller's debug log.
enum poller_spin_stop {
	POLLER_STOP_HERE, // the owner's client runs on the poller's CPU
	POLLER_STOP_STALLED, // it stopped taking its answers
	POLLER_STOP_THINKING, // woken, it took its answer and sent nothing
	POLLER_STOP_DESCHEDULED, // the poller lost its CPU while spinning
	POLLER_STOP_GONE, // the owner's channel went away
	POLLER_STOP_N,
};

// What a client says about itself (shmchan_server_peer(), compared with the
// poller's CPU by the caller). Hints: any value only changes how long the
// poller spins for that client's own work.
struct poller_spin_peer {
	bool here; // it last ran on the poller's CPU
	bool cpu_known; // it said where it runs (a CPU the poller may join)
	bool sleeping; // its need-wakeup flag is set: it waits asleep
	bool in_loop; // ... in its caller's event loop: it never spins
	// For poller_spin_work() with sleeping or here only: every CPU had a
	// task to run when last looked (the poller's caller reads it only then). The
	// client we just rang may then be woken on the poller's own CPU, behind
	// it.
	bool cpus_busy;
	// For poller_spin_look() only: its consumer index of the response
	// ring, and whether it took every response published.
	uint32_t taken;
	bool all_taken;
};

// The kind of window open.
enum poller_window {
	POLLER_WINDOW_NONE,
	// Work that followed work within a budget: spin the budget.
	POLLER_WINDOW_FOLLOW,
	// Work after a silence: spin the burst window.
	POLLER_WINDOW_BURST,
	// Work that rang a sleeping client, with a CPU free for it to wake
	// on: spin while it wakes, up to the budget, for the request it sends
	// once it has its answer.
	POLLER_WINDOW_WAKE,
};

// One poller's spin state. Poller thread only.
struct poller_spin {
	uint64_t budget; // the spin budget (-S), in ticks; 0: never spin
	uint64_t burst; // the burst window, in ticks, at most the budget
	uint64_t last_work; // when a pass last moved a message (0: never)
	uint64_t until; // the end of the window open
	enum poller_window kind;
	// Weighted mean of the gaps between work that followed work: the
	// round trip of a busy client as the poller sees it. 0 until measured.
	uint64_t rtt;
	// Weighted mean of the ticks between two clock reads of an empty
	// spin, undisturbed: the turn of the poller's loop. 0 until measured.
	uint64_t turn;
	uint64_t last_read; // the previous clock read of this spin (0: none)
	uint64_t next_look; // when to look at the owner's client next
	// The owner's client was last seen to take answers (its consumer
	// index moved) at progress, and its index was then taken.
	uint64_t progress;
	uint32_t taken;
	bool taken_seen; // taken is of the owner's client
	uint64_t stops[POLLER_STOP_N];
	// The earliest time of the next move to another CPU (0: any time),
	// and the least a move cost so far (0: none made).
	uint64_t next_move;
	uint64_t move_cost;
	uint64_t moves; // moves made
	// When the last work rang a client asleep in its event loop on
	// another CPU while every CPU was busy (0: it did not), and how many
	// such rings in a row were answered by the next work more than a
	// quarter of a budget later: slow wake-ups.
	uint64_t rung_at;
	unsigned slow_wakes;
	// Moves off a client's CPU in a row that did not pay (a slow wake-up
	// of its client followed), the answers still to
	// judge the last move by (0: none), and the earliest time of the next
	// move off a client's CPU: a back-off doubling with each such move.
	unsigned join_streak;
	unsigned judged;
	uint64_t stay_until;
	uint64_t joins; // joins made
};

// What the poller does after an empty pass's clock read.
enum poller_spin_next {
	POLLER_SPIN_ON, // spin on
	POLLER_SPIN_LOOK, // read the owner's client (with its index): poller_spin_look()
	POLLER_SPIN_SLEEP, // the window is over: arm the doorbells and sleep
};

// budget and burst in ticks.
void poller_spin_init(struct poller_spin *, uint64_t budget, uint64_t burst);

// What a pass that moved messages means to the window.
enum poller_spin_work {
	POLLER_WORK_NONE, // the window is as it was
	POLLER_WORK_OWNS, // opened or extended the window: its channel owns it
	// Its client runs on our CPU, this work followed work, and no window
	// is open: move to another CPU (then poller_spin_moved()), and call
	// poller_spin_work() again.
	POLLER_WORK_MOVE,
	// Its client sleeps for its answers on another CPU and every CPU is
	// busy: move to the client's CPU (then poller_spin_joined()), and call
	// poller_spin_work() again.
	POLLER_WORK_JOIN,
};

// Whether poller_spin_work() at now wants peer's cpus_busy (a read of the
// kernel's count of runnable tasks): for a client asleep on another CPU,
// or one calling back to back on the poller's CPU while the back-off after
// a join holds the poller there.
bool poller_spin_asks_cpus(
	const struct poller_spin *,
	uint64_t now,
	const struct poller_spin_peer *peer
);

// A pass moved messages at now, the last of them for a channel whose client
// says peer (taken and all_taken unused).
enum poller_spin_work
poller_spin_work(struct poller_spin *, uint64_t now, const struct poller_spin_peer *peer);

// The poller moved (as POLLER_WORK_MOVE asked) at now, which took cost
// ticks; moved false: it may run on no other CPU. The next move waits for
// a hundred times the cost of this one.
void poller_spin_moved(struct poller_spin *, uint64_t now, uint64_t cost, bool moved);

// The poller moved to its client's CPU (as POLLER_WORK_JOIN asked) at now,
// which took cost ticks; joined false: it may not run there. The next move
// of either kind waits as after poller_spin_moved(); a move off the
// client's CPU waits twice as long as after the join before.
void poller_spin_joined(struct poller_spin *, uint64_t now, uint64_t cost, bool joined);

// An empty pass read the clock: now.
enum poller_spin_next poller_spin_idle(struct poller_spin *, uint64_t now);

// The owner's client, read at now after POLLER_SPIN_LOOK (peer NULL: the
// owner's channel is gone). Returns true to spin on, false to sleep.
bool poller_spin_look(struct poller_spin *, uint64_t now, const struct poller_spin_peer *peer);

// The quiet time that tells a client that stopped (it took nothing, or
// sent nothing) from a running one: a multiple of the measured round trip
// and of the loop's turn, the burst window while neither is measured, at
// most the budget.
uint64_t poller_spin_quiet(const struct poller_spin *);
