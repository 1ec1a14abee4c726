// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What the benchmark tools share outside their measurement loops: failing
// with a reason, the clock, CPU time, option parsing and the payload
// pattern. Compiled into each tool; called from one thread per process.

#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ull
// Longest -T (and ping2_perf's --idle): an hour, far beyond any benchmark.
#define MAX_SECONDS 3600

// The start of every message fail() prints, the tool's name; a forked
// client may point it elsewhere.
extern const char *log_prefix;

// "LOG_PREFIX: message" on stderr, then exit(EXIT_FAILURE).
void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...);

// CLOCK_MONOTONIC in nanoseconds, through the vDSO. Inline: ref_bench reads
// it inside its timed loops, where a call into another unit would be timed.
static inline uint64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

// Sleep ns nanoseconds, the rest again after a signal.
void sleep_ns(uint64_t ns);

// In a child right after fork(): SIGKILL when the parent dies, however it
// ends, so that no child spins on as an orphan; exits at once if the parent
// (its getpid() before the fork) is already gone.
void die_with_parent(pid_t parent);

// The user plus system CPU time of ru, in nanoseconds.
uint64_t rusage_cpu_ns(const struct rusage *ru);

// The decimal number arg of option opt, from min to max; anything else
// fail()s: "OPT: 'ARG' is not a number from MIN to MAX".
uint64_t parse_number(const char *opt, const char *arg, uint64_t min, uint64_t max);

// Seconds in arg, a fraction allowed, above 0 and at most max: 0 and
// *seconds set, or -EINVAL; the caller words the message.
int seconds_from_string(const char *arg, double max, double *seconds);

// Fill len bytes with the payload pattern every tool sends (byte i is
// i * 7 + 1), so that a reference carries the bytes ping2_perf's requests do.
void payload_fill(uint8_t *buf, size_t len);
