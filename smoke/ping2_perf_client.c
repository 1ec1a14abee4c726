// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A ping2_perf client process: it connects, warms up, says it is ready,
// waits for the start, makes its calls (or, with --idle, times the first
// request after the idle period), accounts its CPU time, sleeps and system
// calls, and writes its result to the parent (ping2_perf.h).

#include "ping2_perf.h"

#include <rte_eal.h>
#include <rte_errno.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

static void write_all(int fd, const void *buf, size_t len) {
	const uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("write to parent: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
}

void wait_eof(int fd) {
	char byte;
	while (read(fd, &byte, sizeof(byte)) < 0 && errno == EINTR)
		;
	close(fd);
}

// --idle, client 0: time the first request after the idle period, then
// idle_rounds more, each after IDLE_GAP_MS of silence.
static void idle_requests(struct client_state *s, struct client_result *res) {
	res->start_ns = now_ns();
	res->first_ns = call_alone(s);
	for (unsigned i = 0; i < s->opts->idle_rounds; i++) {
		sleep_ns(IDLE_GAP_MS * NSEC_PER_MSEC);
		hist_add(&res->hist, call_alone(s));
	}
	res->end_ns = now_ns();
	res->calls = 1 + s->opts->idle_rounds;
}

void client_main(
	const struct options *o,
	unsigned index,
	uint64_t calls,
	const struct client_pipes *pipes
) {
	static char prefix[64];
	struct client_result *res = calloc(1, sizeof(*res));
	struct client_state s;
	struct rusage ru_before, ru_after;
	uint64_t syscalls = 0;
	char ready = 1;

	snprintf(prefix, sizeof(prefix), "ping2_perf: client %u", index);
	log_prefix = prefix;

	if (res == NULL)
		fail("%s", strerror(ENOMEM));
	client_state_init(&s, o, NULL);
	tsc_calibrate();

	if (o->secondary)
		secondary_init(o, index);
	s.client = connect_measured(o, o->transport, &res->backing);
	res->transport = (int32_t)gr_api_client_transport(s.client);
	snprintf(res->reason, sizeof(res->reason), "%s", gr_api_client_transport_reason(s.client));

	run_calls(&s, o->warmup, 0, NULL, false);

	int counter = s.opts->count_syscalls ? syscall_counter_open(0) : -1;
	write_all(pipes->result, &ready, sizeof(ready));
	// The parent closes the go pipe once every client is ready: EOF is the start.
	wait_eof(pipes->go);

	int64_t wait_before = runq_wait_ns();
	getrusage(RUSAGE_SELF, &ru_before);
	if (counter >= 0)
		ioctl(counter, PERF_EVENT_IOC_ENABLE, 0);
	if (o->idle_seconds > 0) {
		// The others stay attached, idle, until client 0 is done.
		if (index == 0)
			idle_requests(&s, res);
		else
			wait_eof(pipes->done);
	} else {
		res->start_ns = now_ns();
		uint64_t deadline = 0;
		if (o->seconds > 0)
			deadline = res->start_ns + (uint64_t)(o->seconds * NSEC_PER_SEC);
		res->calls = run_calls(&s, calls, deadline, &res->hist, index == 0 && !o->quiet);
		res->end_ns = now_ns();
	}
	if (counter >= 0)
		ioctl(counter, PERF_EVENT_IOC_DISABLE, 0);
	getrusage(RUSAGE_SELF, &ru_after);
	int64_t wait_after = runq_wait_ns();
	res->runq_wait_ns = wait_before >= 0 && wait_after >= 0 ? wait_after - wait_before : -1;

	res->cpu_ns = rusage_cpu_ns(&ru_after) - rusage_cpu_ns(&ru_before);
	res->vcsw = (uint64_t)(ru_after.ru_nvcsw - ru_before.ru_nvcsw);
	res->syscalls = -1;
	if (counter >= 0 && read(counter, &syscalls, sizeof(syscalls)) == sizeof(syscalls))
		res->syscalls = (int64_t)syscalls;

	if (gr_api_client_disconnect(s.client) < 0)
		fail("disconnect: %s", strerror(errno));
	write_all(pipes->result, res, sizeof(*res));
	// DPDK 22.11 deadlocks when a secondary runs rte_eal_cleanup() while
	// the primary frees hugepage memory (here: the memzones of the other
	// clients' channels, freed as they detach; or memory another
	// secondary's cleanup gives back): the primary holds the memory
	// hotplug lock and waits for the hugepage directory's flock, which the
	// secondary holds (its IPC thread, cancelled by the cleanup in the
	// middle of a memory sync) while it spins on the hotplug lock. So the
	// parent lets the secondaries clean up one at a time, and only once
	// the daemon has freed the run's memzones.
	if (o->secondary) {
		wait_eof(pipes->cleanup);
		if (rte_eal_cleanup() < 0)
			fail("EAL cleanup: %s", rte_strerror(rte_errno));
	}
	exit(EXIT_SUCCESS);
}
