// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Checks shared by the end-to-end tests: a failed check prints where and why
// and exits 1; a watchdog ends a test that hangs before meson's timeout does,
// so the log says which step hung.

#pragma once

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// Exit status meson reads as a skipped test. Print the reason first, on a
// line that holds "SKIP: why": make test's summary shows the last one
// (scripts/test_summary.py).
#define TEST_SKIP 77

// Below the meson timeout of the end-to-end tests (test/meson.build).
#define TEST_WATCHDOG_S 20

// Children children_guard() tracks at once.
#define CHILDREN_MAX 16

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

// In a child, right after fork(): the kernel sends it SIGKILL when its parent
// dies, however the parent ends: a failed check, SIGKILL, or an _exit() that
// runs no atexit handler (the watchdog's). The parent may have died before
// the prctl: then this process has another parent already, and ends here.
// parent is the parent's getpid(), taken before the fork.
static inline void child_die_with_parent(pid_t parent) {
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(EXIT_FAILURE);
}

// Run fn(arg) in a child that dies with this process, and return the child's
// wait status: for a test that expects fn to abort, or to exit in some way.
// The child exits 0 if fn returns. -1 if fork or waitpid failed.
static inline int child_status_of(void (*fn)(void *), void *arg) {
	pid_t parent = getpid();
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		child_die_with_parent(parent);
		fn(arg);
		_exit(EXIT_SUCCESS);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

// The children of children_add() not reaped yet: 0 is a free entry. Written
// by the guarding process outside its signal handlers, one sig_atomic_t store
// at a time: children_kill() sees each entry either empty or a whole pid.
static volatile sig_atomic_t children_pids[CHILDREN_MAX];
// The process of children_guard(); set before any handler can read it.
static pid_t children_owner;

// Kill and reap every child recorded. Async-signal-safe. A child inherits the
// atexit handler and the signal handlers: the getpid() test keeps it from
// killing its siblings.
static inline void children_kill(void) {
	if (getpid() != children_owner)
		return;
	for (unsigned i = 0; i < CHILDREN_MAX; i++) {
		pid_t pid = children_pids[i];
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			children_pids[i] = 0;
		}
	}
}

// SA_RESETHAND: the signal raised again ends the process as it would have.
static inline void children_on_signal(int sig) {
	children_kill();
	raise(sig);
}

// No child of children_add() outlives this process, however it ends: a failed
// check (exit()) and SIGTERM, SIGINT or SIGHUP (meson's or timeout's) kill
// them by pid here. SIGKILL, an _exit(), and the window between fork() and
// children_add() are covered by each child's child_die_with_parent().
static inline void children_guard(void) {
	struct sigaction sa = {.sa_handler = children_on_signal, .sa_flags = SA_RESETHAND};
	const int sigs[] = {SIGTERM, SIGINT, SIGHUP};

	children_owner = getpid();
	CHECK(atexit(children_kill) == 0, "atexit failed");
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		CHECK(sigaction(sigs[i], &sa, NULL) == 0, "sigaction: %s", strerror(errno));
}

// Record a child of this process for children_guard(), right after fork().
static inline void children_add(pid_t pid) {
	unsigned i = 0;

	CHECK(getpid() == children_owner, "children_add() without children_guard()");
	while (i < CHILDREN_MAX && children_pids[i] != 0)
		i++;
	CHECK(i < CHILDREN_MAX, "more than %d children at once", CHILDREN_MAX);
	children_pids[i] = pid;
}

// Drop a child the caller reaped itself: its pid may be reused by then, and
// must not be killed at exit.
static inline void children_forget(pid_t pid) {
	for (unsigned i = 0; i < CHILDREN_MAX; i++)
		if (children_pids[i] == pid)
			children_pids[i] = 0;
}

// fork() a child of children_guard(): in the child (returns 0) it dies with
// this process (child_die_with_parent()); in the parent (returns its pid) it
// is recorded with children_add(). stdout is flushed first, so the child does
// not print again what the parent had buffered.
static inline pid_t child_fork(void) {
	pid_t parent = getpid();
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		child_die_with_parent(parent);
	else
		children_add(pid);
	return pid;
}

// Wait for a child of child_fork() to end, and drop it from the children
// killed at exit (children_forget()). Returns its wait status.
static inline int child_reap(pid_t pid) {
	int status;

	CHECK(waitpid(pid, &status, 0) == pid, "waitpid %d: %s", (int)pid, strerror(errno));
	children_forget(pid);
	return status;
}

// SIGKILL a child of child_fork() and reap it (child_reap()). Returns its wait
// status: the caller checks that it died of the kill, not of an error of its
// own before.
static inline int child_kill(pid_t pid) {
	CHECK(kill(pid, SIGKILL) == 0, "kill -9 %d: %s", (int)pid, strerror(errno));
	return child_reap(pid);
}

// The entries of the directory /proc/PID/NAME: with "fd" the open
// descriptors of pid, with "task" its threads.
static inline unsigned proc_count_entries(pid_t pid, const char *name) {
	char path[64];
	struct dirent *e;
	unsigned n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	d = opendir(path);
	CHECK(d != NULL, "%s: %s", path, strerror(errno));
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

// proc_count_entries() once it stopped changing: the same count twice,
// interval_us apart (a daemon closes what a client left a little later).
static inline unsigned proc_count_settled(pid_t pid, const char *name, unsigned interval_us) {
	unsigned n = proc_count_entries(pid, name), last;

	do {
		last = n;
		usleep(interval_us);
		n = proc_count_entries(pid, name);
	} while (n != last);
	return n;
}
