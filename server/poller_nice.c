// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A poller's nice value follows its work (poller_nice.h).

#include "poller_nice.h"

// The weight the kernel's scheduler gives each nice value, -20 first
// (sched_prio_to_weight in kernel/sched/core.c): each step is about 1.25
// times the next, and nice 0 weighs 1024.
// clang-format off
static const uint32_t nice_weight[POLLER_NICE_MAX - POLLER_NICE_MIN + 1] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, // -20..-11
	9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277, // -10..-1
	1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, // 0..9
	110, 87, 70, 56, 45, 36, 29, 23, 18, 15, // 10..19
};
// clang-format on

// Past this many clients every base reaches -20: the count is clamped to it,
// which keeps the products below within 64 bits.
#define CLIENTS_MAX 10000u

static int32_t clamp_nice(int32_t nice) {
	if (nice < POLLER_NICE_MIN)
		return POLLER_NICE_MIN;
	if (nice > POLLER_NICE_MAX)
		return POLLER_NICE_MAX;
	return nice;
}

static uint64_t weight(int32_t nice) {
	return nice_weight[nice - POLLER_NICE_MIN];
}

int32_t poller_nice_for(unsigned clients, int32_t base, int32_t floor) {
	base = clamp_nice(base);
	floor = clamp_nice(floor);
	// A bound above the process's value: the poller runs there, lower
	// than the process, whatever its clients.
	if (floor >= base)
		return floor;
	if (clients > CLIENTS_MAX)
		clients = CLIENTS_MAX;
	uint64_t want = (uint64_t)(clients + 1) * weight(base);
	int32_t nice = base;
	// Down from base while the next value is nearer want, as a ratio: the
	// weights are geometric, so nearness is by ratio, not difference
	// (w_next / want < want / w, that is w_next * w < want^2, when
	// w_next > want).
	while (nice > floor) {
		uint64_t w = weight(nice), next = weight(nice - 1);

		if (next <= want || next * w < want * want)
			nice--;
		else
			break;
	}
	return nice;
}

int32_t poller_nice_init(
	struct poller_nice *n,
	uint64_t period,
	uint64_t now,
	int32_t base,
	int32_t floor
) {
	*n = (struct poller_nice){
		.period = period,
		.start = now,
		.base = clamp_nice(base),
		.floor = clamp_nice(floor),
	};
	n->now = poller_nice_for(1, n->base, n->floor);
	return n->now;
}

int32_t poller_nice_work(struct poller_nice *n, uint64_t now, unsigned clients) {
	n->start = now;
	if (n->stuck)
		return POLLER_NICE_KEEP;
	int32_t want = poller_nice_for(clients, n->base, n->floor);
	if (want == n->now)
		return POLLER_NICE_KEEP;
	n->now = want;
	n->changes++;
	return want;
}

void poller_nice_failed(struct poller_nice *n, int32_t was) {
	if (n->now != was && n->changes > 0)
		n->changes--;
	n->now = was;
	n->stuck = true;
}
