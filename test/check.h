// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Checks shared by the end-to-end tests: a failed check prints where and why
// and exits 1; a watchdog ends a test that hangs before meson's timeout does,
// so the log says which step hung.

#pragma once

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

// Exit status meson reads as a skipped test.
#define TEST_SKIP 77

// Below the meson timeout of the end-to-end tests (test/meson.build).
#define TEST_WATCHDOG_S 20

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			exit(EXIT_FAILURE);                                                        \
		}                                                                                  \
	} while (0)

static inline void watchdog_fired(int sig) {
	static const char msg[] = "test hung: watchdog fired\n";
	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(EXIT_FAILURE);
}

static inline void watchdog_start(unsigned seconds) {
	signal(SIGALRM, watchdog_fired);
	alarm(seconds);
}

static inline uint64_t monotonic_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// The daemon's pid, passed by test/with_daemon.sh.
static inline pid_t daemon_pid_from_env(void) {
	const char *s = getenv("SHMT_DAEMON_PID");
	char *end;
	long pid;

	CHECK(s != NULL, "SHMT_DAEMON_PID is not set (run under test/with_daemon.sh)");
	pid = strtol(s, &end, 10);
	CHECK(*end == '\0' && pid > 0, "SHMT_DAEMON_PID '%s' is not a pid", s);
	return (pid_t)pid;
}
