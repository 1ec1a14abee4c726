// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What the benchmark tools share outside their measurement loops: failing
// with a reason, the clock, CPU time, option parsing, the forked peer, the
// payload pattern and JSON fields. Compiled into each tool; called from one
// thread per process.

#pragma once

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_SEC 1000000000ull
// Longest -T (and ping2_perf's --idle): an hour, far beyond any benchmark.
#define MAX_SECONDS 3600

// The start of every message fail() prints, the tool's name; a forked
// client may point it elsewhere.
extern const char *log_prefix;

// "LOG_PREFIX: message" on stderr, then exit(EXIT_FAILURE).
void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...);

#define FAIL_IF(cond, ...) ((cond) ? fail(__VA_ARGS__) : (void)0)

// ret, unless it is negative: then fail() with the call's name and errno.
static inline int check(int ret, const char *call) {
	if (ret < 0)
		fail("%s: %s", call, strerror(errno));
	return ret;
}

// CLOCK_MONOTONIC in nanoseconds, through the vDSO. Inline: ref_bench reads
// it inside its timed loops, where a call into another unit would be timed.
static inline uint64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

// Sleep ns nanoseconds, the rest again after a signal.
void sleep_ns(uint64_t ns);

// fork() after fflush(NULL), or fail(). The child gets SIGKILL when the
// parent dies, however it ends, so that no child spins on as an orphan; it
// exits at once if the parent is already gone.
pid_t fork_peer(void);

// waitpid() for pid, again after a signal: its status, or -1 (errno).
int peer_wait(pid_t pid);

// All len bytes to (out) or from fd, again after a signal: false on an
// error (errno) or at end of file.
bool fd_transfer(int fd, void *buf, size_t len, bool out);

// The user plus system CPU time of ru, in nanoseconds.
uint64_t rusage_cpu_ns(const struct rusage *ru);

// The decimal number arg of option opt, from min to max; anything else
// fail()s: "OPT: 'ARG' is not a number from MIN to MAX".
uint64_t parse_number(const char *opt, const char *arg, uint64_t min, uint64_t max);

#define MAX_OPTIONS 32 // ping2_perf has 26

// A tool's options, one table for getopt_long() and the values. Kinds from
// OPT_NUMBER on take an argument.
enum option_kind { OPT_TRUE, OPT_FALSE, OPT_HELP, OPT_NUMBER, OPT_SECONDS, OPT_STRING, OPT_CALL };
struct option_def {
	const char *name; // as messages name it: "-n", "--idle-rounds"
	enum option_kind kind;
	void *field; // a bool, an integer, a double (seconds), a string; OPT_CALL's own
	size_t width; // of an integer field, or of a buffer an OPT_CALL fills
	uint64_t min, max; // OPT_NUMBER's range
	const char *seconds_range; // OPT_SECONDS' message says it: "above 0, at most" if NULL
	void (*parse)(const struct option_def *d, const char *arg); // OPT_CALL
	bool *given; // if set, made true when the option comes
};

// An option's field and its width; a range may follow.
#define FIELD(p) .field = (p), .width = sizeof(*(p))

// Prints a tool's usage and exits: 0, or a failure status if error.
typedef void (*usage_fn)(bool error) __attribute__((noreturn));

// getopt_long() over the n options of defs, --help for -h: each option sets
// its field; a refused one calls usage(true). A bad value fail()s, as
// parse_number() for OPT_NUMBER, or "-T: 'ARG' is not a number of seconds
// above 0, at most 3600" (SECONDS_RANGE) for OPT_SECONDS. Returns optind.
int options_parse(int argc, char **argv, const struct option_def *defs, int n, usage_fn usage);

// Fill len bytes with the payload pattern every tool sends (byte i is
// i * 7 + 1), so that a reference carries the bytes ping2_perf's requests do.
void payload_fill(uint8_t *buf, size_t len);

// For qsort(): ascending.
int compare_u64(const void *a, const void *b);

// ", "KEY": " and the value, or null if not known.
void __attribute__((format(printf, 3, 4)))
json_field(const char *key, bool known, const char *fmt, ...);
