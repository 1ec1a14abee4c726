// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Rate limit of a log line that a client can cause at will (a bad request,
// a refused connection): the first occurrence is logged at once, the next
// ones are only counted, and one line per LOG_LIMIT_INTERVAL_MS at most
// sums them up. The caller logs; this only counts and says when. Not
// thread-safe: each limit belongs to one thread (or is used under a lock).

#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

// One line per second per limit: a flood of a million bad requests costs a
// line a second, and an operator still sees within a second that it goes on.
#define LOG_LIMIT_INTERVAL_MS 1000
#define LOG_LIMIT_NS_PER_MS 1000000ull

struct log_limit {
	uint64_t pending; // occurrences not logged yet
	uint64_t next_ns; // CLOCK_MONOTONIC time before which no line comes; 0: none yet
};

// CLOCK_MONOTONIC_COARSE: served by the vDSO, no system call, a few
// milliseconds of resolution, plenty for a one-second interval.
static inline uint64_t log_limit_now_ns(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// Count one occurrence.
static inline void log_limit_count(struct log_limit *l) {
	l->pending++;
}

// Whether a line is due now for the occurrences pending: one is, and the
// last line came at least an interval ago (or never), or final (the client
// is gone: say what is left). If so, returns the number of occurrences the
// line must speak for (at least 1) and starts a new interval; else 0.
static inline uint64_t log_limit_due(struct log_limit *l, uint64_t now_ns, bool final) {
	uint64_t n = l->pending;

	if (n == 0 || (!final && now_ns < l->next_ns))
		return 0;
	l->pending = 0;
	l->next_ns = now_ns + LOG_LIMIT_INTERVAL_MS * LOG_LIMIT_NS_PER_MS;
	return n;
}

// Milliseconds until a line may come, 0 if one may come now.
static inline unsigned log_limit_wait_ms(const struct log_limit *l, uint64_t now_ns) {
	if (now_ns >= l->next_ns)
		return 0;
	return (unsigned)((l->next_ns - now_ns + LOG_LIMIT_NS_PER_MS - 1) / LOG_LIMIT_NS_PER_MS);
}
