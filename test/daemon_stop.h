// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Stop and continue the test's daemon (SIGSTOP, SIGCONT), for the tests of
// what a client sees from a daemon that does not answer. kill() returns
// before the signal took effect on every thread: daemon_stop() waits until
// each thread of the daemon is stopped, so that no poller still answers.
// A daemon left stopped would never end on with_daemon.sh's SIGTERM:
// daemon_stop() also arranges for it to be continued when the test exits.

#pragma once

#include "check.h"

#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// A stop takes effect within a scheduling delay; far more on no machine.
#define DAEMON_STOP_WAIT_NS (5 * 1000000000ull)
#define DAEMON_STOP_POLL_US 1000

static pid_t daemon_stop_pid;

static inline void daemon_cont_at_exit(void) {
	if (daemon_stop_pid > 0)
		kill(daemon_stop_pid, SIGCONT);
}

// True when every thread of pid is stopped ('T' or 't' in its stat).
static inline bool daemon_threads_stopped(pid_t pid) {
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	CHECK(d != NULL, "%s: %s", path, strerror(errno));
	bool all = true;
	struct dirent *e;
	while (all && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char stat_path[sizeof(path) + sizeof(e->d_name) + 8], buf[512];
		snprintf(stat_path, sizeof(stat_path), "%s/%s/stat", path, e->d_name);
		FILE *f = fopen(stat_path, "r");
		if (f == NULL)
			continue; // the thread ended
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		const char *state = strrchr(buf, ')');
		all = state != NULL && state[1] == ' ' && (state[2] == 'T' || state[2] == 't');
	}
	closedir(d);
	return all;
}

static inline void daemon_stop(pid_t pid) {
	if (daemon_stop_pid == 0) {
		daemon_stop_pid = pid;
		CHECK(atexit(daemon_cont_at_exit) == 0, "atexit");
	}
	CHECK(kill(pid, SIGSTOP) == 0, "SIGSTOP %d: %s", (int)pid, strerror(errno));
	uint64_t deadline = monotonic_ns() + DAEMON_STOP_WAIT_NS;
	while (!daemon_threads_stopped(pid)) {
		CHECK(monotonic_ns() < deadline, "daemon %d not stopped after SIGSTOP", (int)pid);
		usleep(DAEMON_STOP_POLL_US);
	}
}

static inline void daemon_cont(pid_t pid) {
	CHECK(kill(pid, SIGCONT) == 0, "SIGCONT %d: %s", (int)pid, strerror(errno));
}
