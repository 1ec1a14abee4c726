// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench cacheline: one cache line bounced between the two processes,
// the hardware's round-trip limit (ref_bench.h).

#include "ref_bench.h"

// cacheline: the value the leader stores to stop the follower. The round
// trips store 1, 2, 3, ... and never reach it.
#define LINE_STOP UINT64_MAX

void cacheline_leader_op(struct ctx *c) {
	uint64_t v = __atomic_load_n(&c->sh->line, __ATOMIC_RELAXED) + 1;

	// Release/acquire is all a ping-pong needs; no pause: this is the
	// hardware limit, not a polite spin.
	__atomic_store_n(&c->sh->line, v, __ATOMIC_RELEASE);
	while (__atomic_load_n(&c->sh->line, __ATOMIC_ACQUIRE) == v)
		;
}

void cacheline_leader_stop(struct ctx *c) {
	__atomic_store_n(&c->sh->line, LINE_STOP, __ATOMIC_RELEASE);
}

void cacheline_follower(struct ctx *c) {
	uint64_t seen = 0, v, n = 0;

	for (;;) {
		while ((v = __atomic_load_n(&c->sh->line, __ATOMIC_ACQUIRE)) == seen)
			;
		if (v == LINE_STOP)
			break;
		seen = v + 1;
		__atomic_store_n(&c->sh->line, seen, __ATOMIC_RELEASE);
		n++;
	}
	c->sh->follower_ops = n;
}
