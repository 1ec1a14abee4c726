// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The histogram of ping2_perf_hist.h, documented there.

#include "ping2_perf_hist.h"

uint64_t hist_value(unsigned index) {
	unsigned group = index / HIST_SUB_BUCKETS;
	uint64_t sub = index % HIST_SUB_BUCKETS;
	if (group == 0)
		return sub;
	uint64_t low = (HIST_SUB_BUCKETS + sub) << (group - 1);
	uint64_t width = 1ull << (group - 1);
	return low + width / 2;
}

void hist_merge(struct histogram *into, const struct histogram *from) {
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		into->buckets[i] += from->buckets[i];
	into->count += from->count;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

// The rank, from 1, of a percentile among count samples: ceil(fraction *
// count), at least 1.
static uint64_t percentile_rank(uint64_t count, double fraction) {
	double exact_rank = fraction * (double)count;
	uint64_t rank = (uint64_t)exact_rank;
	if ((double)rank < exact_rank || rank == 0)
		rank++;
	return rank;
}

uint64_t hist_percentile(const struct histogram *h, double fraction) {
	uint64_t rank = percentile_rank(h->count, fraction);
	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			uint64_t v = hist_value(i);
			return v < h->max_ns ? v : h->max_ns;
		}
	}
	return h->max_ns;
}

uint64_t samples_percentile(const uint64_t *sorted, size_t n, double fraction) {
	uint64_t rank = percentile_rank(n, fraction);
	return sorted[rank <= n ? rank - 1 : n - 1];
}
