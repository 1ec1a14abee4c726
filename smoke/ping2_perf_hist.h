// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's latency histogram, log-linear: values below HIST_SUB_BUCKETS
// ns are exact; above, each power of two is cut into HIST_SUB_BUCKETS
// buckets (6% wide). The last power of two starts at 2^HIST_MAX_POW2 ns (137
// s); longer round trips land in the last bucket and still count in max.
// One histogram belongs to one process (a client, or the parent merging the
// clients' copies): no locking.

#pragma once

#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 4
#define HIST_SUB_BUCKETS (1u << HIST_SUB_BITS)
#define HIST_MAX_POW2 37
#define HIST_GROUPS (HIST_MAX_POW2 - HIST_SUB_BITS + 2)
#define HIST_BUCKETS (HIST_GROUPS * HIST_SUB_BUCKETS)

struct histogram {
	uint64_t count;
	uint64_t max_ns;
	uint64_t buckets[HIST_BUCKETS];
};

// The bucket of a round trip of ns nanoseconds. Inline with hist_add(): both
// run once per measured call.
static inline unsigned hist_index(uint64_t ns) {
	if (ns < HIST_SUB_BUCKETS)
		return (unsigned)ns;
	unsigned pow2 = 63 - (unsigned)__builtin_clzll(ns);
	if (pow2 > HIST_MAX_POW2)
		return HIST_BUCKETS - 1;
	unsigned group = pow2 - HIST_SUB_BITS + 1;
	unsigned sub = (unsigned)(ns >> (pow2 - HIST_SUB_BITS)) & (HIST_SUB_BUCKETS - 1);
	return group * HIST_SUB_BUCKETS + sub;
}

// Count one round trip of ns nanoseconds.
static inline void hist_add(struct histogram *h, uint64_t ns) {
	h->buckets[hist_index(ns)]++;
	h->count++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

// The value a bucket stands for: its exact value or its midpoint.
uint64_t hist_value(unsigned index);

// Add the counts of from to into.
void hist_merge(struct histogram *into, const struct histogram *from);

// The value at rank ceil(fraction * count) of the samples, never above max.
uint64_t hist_percentile(const struct histogram *h, double fraction);

// The same percentile of n exact samples sorted in ascending order (n > 0):
// the sample at rank ceil(fraction * n).
uint64_t samples_percentile(const uint64_t *sorted, size_t n, double fraction);
