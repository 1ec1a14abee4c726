// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What the benchmark tools (ping2_perf, ref_bench) share outside their
// measurement loops: failing with a reason, the clock, CPU time, option
// parsing and the payload pattern. Compiled into each tool, not a library.
// Nothing here is thread-safe beyond what libc gives: the tools call it from
// one thread per process.

#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ull
// Longest -T (and ping2_perf's --idle): an hour, far beyond any benchmark.
#define MAX_SECONDS 3600

// What every message fail() prints starts with, followed by ": ". Each tool
// defines it, set to its name; it may point it elsewhere later (ping2_perf's
// client processes name themselves).
extern const char *log_prefix;

// Print "LOG_PREFIX: " and the formatted message on stderr, and exit with
// EXIT_FAILURE. Never returns.
void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...);

// CLOCK_MONOTONIC in nanoseconds. Inline: ref_bench reads it inside its
// timed loops, where a call into another unit would add to what is timed.
// No error: CLOCK_MONOTONIC always exists. A vDSO read, no system call.
static inline uint64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

// Sleep ns nanoseconds (CLOCK_MONOTONIC), the rest again after a signal.
// No error.
void sleep_ns(uint64_t ns);

// In a child, right after fork(): the kernel sends it SIGKILL when its parent
// dies, however the parent ends (a SIGKILL, a timeout), so that no child
// spins on as an orphan. The parent may have died before the prctl: then the
// child has another parent already, and exits here (EXIT_FAILURE). parent is
// the parent's getpid(), taken before the fork. fail()s if prctl fails.
void die_with_parent(pid_t parent);

// The user plus system CPU time that ru accounts, in nanoseconds. Subtract
// two of them for the CPU time between two getrusage() calls. No error.
uint64_t rusage_cpu_ns(const struct rusage *ru);

// The decimal number arg of option opt (named in the message), which must be
// from min to max. Returns it; on anything else (sign, trailing text,
// overflow, out of range) fail()s: "OPT: 'ARG' is not a number from MIN to
// MAX".
uint64_t parse_number(const char *opt, const char *arg, uint64_t min, uint64_t max);

// A number of seconds in arg, a fraction allowed, above 0 and at most max.
// Returns 0 and sets *seconds, or -EINVAL (*seconds untouched) when arg is
// not such a number; the caller words the message, as its option's help does.
int seconds_from_string(const char *arg, double max, double *seconds);

// Fill len bytes at buf with the payload pattern both tools send (byte i is
// i * 7 + 1), so that a reference run carries the bytes ping2_perf's requests
// do. No error.
void payload_fill(uint8_t *buf, size_t len);
