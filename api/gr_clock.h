// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Grout's clock helpers, with Grout's names: a nanosecond clock shared by
// every process of the machine (CLOCK_MONOTONIC_RAW, which NTP does not
// slew), for timing calls as Grout's tools do. Needs POSIX's clock_gettime():
// compile as gnu11 (gcc's default) or with _POSIX_C_SOURCE >= 199309L.

#pragma once

#include <stdint.h>
#include <time.h>

// Nanoseconds. Signed, so that the difference of two readings taken in
// either order is meaningful; 63 bits of nanoseconds last 292 years.
typedef int64_t gr_clock_ns_t;

#define GR_NS_PER_S ((gr_clock_ns_t)1000000000)
#define GR_NS_PER_MS ((gr_clock_ns_t)1000000)
#define GR_NS_PER_US ((gr_clock_ns_t)1000)

// The time since boot (not counting suspend), as clock_gettime() gives
// it. Served by the vDSO: no system call.
static inline struct timespec gr_clock_raw(void) {
	struct timespec now = {0, 0};
	clock_gettime(CLOCK_MONOTONIC_RAW, &now);
	return now;
}

// The same in nanoseconds; never negative.
static inline gr_clock_ns_t gr_clock_ns(void) {
	struct timespec now = gr_clock_raw();
	return (gr_clock_ns_t)now.tv_sec * GR_NS_PER_S + (gr_clock_ns_t)now.tv_nsec;
}
