// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench's run: the follower process, pinned, and the leader's timed
// loop (by count, by time, or one operation after each --gap-us), stopped
// at once if the follower ends before it is told to (ref_bench.h).

#include "ref_bench.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void pin(int cpu) {
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		fail("sched_setaffinity to CPU %d: %s", cpu, strerror(errno));
}

static void __attribute__((noreturn)) follower_main(struct ctx *c) {
	struct rusage ru;

	if (c->o->pin)
		pin(c->o->cpus[1]);
	close(c->sock[0]);
	c->o->bench->follower(c);
	getrusage(RUSAGE_SELF, &ru);
	c->sh->follower_cpu_ns = rusage_cpu_ns(&ru);
	c->sh->follower_vcsw = (uint64_t)ru.ru_nvcsw;
	exit(EXIT_SUCCESS);
}

// --gap-us: sleep, then time one operation, until count operations or
// seconds of wall time (sleeps included).
static void gap_run(struct ctx *c, struct result *r, uint64_t start) {
	const struct options *o = c->o;
	uint64_t deadline = start + (uint64_t)(o->seconds * NSEC_PER_SEC);

	for (;;) {
		sleep_ns(o->gap_us * NSEC_PER_USEC);
		uint64_t t0 = now_ns();
		o->bench->leader_op(c);
		uint64_t t1 = now_ns();
		r->ops++;
		r->gap_op_ns += t1 - t0;
		if (t1 - t0 > r->gap_max_ns)
			r->gap_max_ns = t1 - t0;
		if (o->count > 0 ? r->ops >= o->count : t1 >= deadline)
			break;
	}
}

// Set once the leader has told the follower to stop: its exit is expected.
static volatile sig_atomic_t follower_stopping;

// The follower ended before the leader told it to stop (killed, or failed
// and said why): the leader would wait for its answer for ever, spinning or
// blocked. Async-signal-safe.
static void follower_died(int sig) {
	static const char msg[] = "ref_bench: the follower ended during the run\n";

	(void)sig;
	if (follower_stopping)
		return;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		// Nothing more to do: the exit status says it failed.
	}
	_exit(EXIT_FAILURE);
}

void run(struct ctx *c, struct result *r) {
	const struct options *o = c->o;
	const struct bench *b = o->bench;
	struct rusage before, after;
	pid_t pid = -1;
	int status;

	*r = (struct result){0};
	if (b->two_processes) {
		struct sigaction sa = {.sa_handler = follower_died};
		pid_t leader = getpid();

		// Before the fork: a follower that dies at once is caught too.
		follower_stopping = 0;
		if (sigaction(SIGCHLD, &sa, NULL) < 0)
			fail("sigaction: %s", strerror(errno));
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			fail("fork: %s", strerror(errno));
		if (pid == 0) {
			// No follower spins on a pinned CPU as an orphan.
			die_with_parent(leader);
			follower_main(c);
		}
		close(c->sock[1]);
		if (o->pin)
			pin(o->cpus[0]);
	}

	for (uint64_t i = 0; i < o->warmup; i++)
		b->leader_op(c);
	getrusage(RUSAGE_SELF, &before);
	uint64_t start = now_ns(), end, n = 0;
	if (o->gap_us > 0) {
		gap_run(c, r, start);
		n = r->ops;
		end = start + r->elapsed_ns;
	} else if (o->count > 0) {
		for (; n < o->count; n++)
			b->leader_op(c);
		end = now_ns();
	} else {
		uint64_t deadline = start + (uint64_t)(o->seconds * NSEC_PER_SEC);
		for (;;) {
			b->leader_op(c);
			n++;
			if ((n & CLOCK_CHECK_MASK) == 0 && (end = now_ns()) >= deadline)
				break;
		}
	}
	getrusage(RUSAGE_SELF, &after);
	r->ops = n;
	r->elapsed_ns = end - start;
	if (o->gap_us > 0)
		r->elapsed_ns = r->gap_op_ns;
	r->leader_cpu_ns = rusage_cpu_ns(&after) - rusage_cpu_ns(&before);
	r->leader_vcsw = (uint64_t)(after.ru_nvcsw - before.ru_nvcsw);

	if (!b->two_processes)
		return;
	follower_stopping = 1;
	b->leader_stop(c);
	if (waitpid(pid, &status, 0) < 0)
		fail("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail("the follower exited with status 0x%x", status);
	if (b->leader_result != NULL)
		b->leader_result(c, &r->ops, &r->elapsed_ns);
}
