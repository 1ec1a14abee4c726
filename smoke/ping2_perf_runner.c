// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's runner: fork the client processes, start them all at once,
// sample the daemon around their measured phase, and add their results up
// (ping2_perf.h).

#include "ping2_perf.h"

#include "idle_channels.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

// Read len bytes; returns false on a short read (the writer exited).
static bool read_all(int fd, void *buf, size_t len) {
	uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static void stop_clients(const pid_t *pids, unsigned n) {
	for (unsigned i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	for (unsigned i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
}

// Read every client's result and add it to sum. Exits on a client failure.
// With --idle, the others wait until client 0 is done: done_fd (the write
// end of their pipe) is closed once its result is in.
static void collect_results(
	const struct options *o,
	const pid_t *pids,
	const int *result_fds,
	int done_fd,
	struct summary *sum
) {
	static struct client_result res;
	static char reason[REASON_LEN];
	uint64_t first_start = UINT64_MAX, last_end = 0;
	uint32_t backing = 0;

	sum->transport = NULL;
	for (unsigned i = 0; i < o->clients; i++) {
		if (!read_all(result_fds[i], &res, sizeof(res))) {
			stop_clients(pids, o->clients);
			fail("client %u failed during the measured phase", i);
		}
		if (i == 0 && done_fd >= 0)
			close(done_fd);
		// In --idle mode only client 0 calls.
		if (res.calls > 0) {
			if (res.start_ns < first_start)
				first_start = res.start_ns;
			if (res.end_ns > last_end)
				last_end = res.end_ns;
			sum->client_rates[i] = (double)res.calls * NSEC_PER_SEC /
					       (double)(res.end_ns - res.start_ns);
			if (res.cpu_ns > 0)
				sum->client_cpu_rates[i] =
					(double)res.calls * NSEC_PER_SEC / (double)res.cpu_ns;
		}
		if (i == 0) {
			sum->first_ns = res.first_ns;
			sum->client0_vcsw = res.vcsw;
			sum->client0_syscalls = res.syscalls;
		}
		hist_merge(&sum->hist, &res.hist);
		sum->calls += res.calls;
		sum->client_cpu_ns += res.cpu_ns;
		sum->vcsw += res.vcsw;
		if (res.runq_wait_ns < 0 || sum->runq_wait_ns < 0)
			sum->runq_wait_ns = -1;
		else
			sum->runq_wait_ns += res.runq_wait_ns;
		if (res.syscalls < 0 || sum->syscalls < 0)
			sum->syscalls = -1;
		else
			sum->syscalls += res.syscalls;
		const char *name = transport_name((enum gr_api_transport)res.transport);
		if (sum->transport != NULL && strcmp(sum->transport, name) != 0)
			name = "mixed";
		sum->transport = name;
		if (i == 0)
			backing = res.backing;
		else if (res.backing != backing)
			backing = UINT32_MAX;
		if (res.reason[0] != '\0') {
			memcpy(reason, res.reason, sizeof(reason));
			reason[sizeof(reason) - 1] = '\0';
		}
	}
	sum->backing = backing_name(backing);
	sum->reason = reason;
	if (last_end > first_start)
		sum->seconds = (double)(last_end - first_start) / NSEC_PER_SEC;
}

int run_clients(struct options *o, struct summary *sum) {
	pid_t pids[MAX_CLIENTS];
	int result_fds[MAX_CLIENTS];
	int cleanup_fds[MAX_CLIENTS]; // --secondary: write ends, one per client
	int go_pipe[2], done_pipe[2] = {-1, -1};
	struct gr_shm_daemon_info info;
	uint32_t memzones_before = 0;

	bool told = daemon_info(o, &info);
	pid_t dpid = told ? info.pid : -1;
	if (o->secondary) {
		secondary_prepare(o, told ? &info : NULL);
		if (!daemon_stats(o, NULL, &memzones_before))
			fail("--secondary: the daemon does not tell its memzones (GR_SHM_STATS)");
	}

	if (pipe2(go_pipe, O_CLOEXEC) < 0 ||
	    (o->idle_seconds > 0 && pipe2(done_pipe, O_CLOEXEC) < 0))
		fail("pipe: %s", strerror(errno));
	pid_t parent = getpid();
	fflush(NULL);
	for (unsigned i = 0; i < o->clients; i++) {
		int result_pipe[2], cleanup_pipe[2] = {-1, -1};
		// Split the calls evenly; the first clients take the remainder.
		uint64_t calls = o->count / o->clients + (i < o->count % o->clients ? 1 : 0);

		if (pipe2(result_pipe, O_CLOEXEC) < 0 ||
		    (o->secondary && pipe2(cleanup_pipe, O_CLOEXEC) < 0)) {
			stop_clients(pids, i);
			fail("pipe: %s", strerror(errno));
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			stop_clients(pids, i);
			fail("fork: %s", strerror(errno));
		}
		if (pids[i] == 0) {
			// A client spins on, loading the daemon, if nothing stops
			// it: it dies with this process, a SIGKILL included.
			die_with_parent(parent);
			const struct client_pipes pipes = {
				.result = result_pipe[1],
				.go = go_pipe[0],
				.done = done_pipe[0],
				.cleanup = cleanup_pipe[0],
			};
			for (unsigned j = 0; j < i; j++) {
				close(result_fds[j]);
				if (o->secondary)
					close(cleanup_fds[j]);
			}
			close(result_pipe[0]);
			close(go_pipe[1]);
			if (done_pipe[1] >= 0)
				close(done_pipe[1]);
			if (cleanup_pipe[1] >= 0)
				close(cleanup_pipe[1]);
			client_main(o, i, calls, &pipes);
		}
		close(result_pipe[1]);
		result_fds[i] = result_pipe[0];
		if (o->secondary) {
			close(cleanup_pipe[0]);
			cleanup_fds[i] = cleanup_pipe[1];
		}
	}
	close(go_pipe[0]);
	if (done_pipe[0] >= 0)
		close(done_pipe[0]);

	for (unsigned i = 0; i < o->clients; i++) {
		char ready;
		if (!read_all(result_fds[i], &ready, sizeof(ready))) {
			stop_clients(pids, o->clients);
			fail("client %u failed before the measured phase", i);
		}
	}
	struct idle_channels *idle = NULL;
	if (o->idle_channels > 0)
		idle = idle_channels_open(o->sock_path, o->idle_channels);
	daemon_probe_start(o, &sum->daemon, dpid);
	if (o->idle_seconds > 0) {
		// Every client stays attached and idle meanwhile.
		sleep_ns((uint64_t)(o->idle_seconds * NSEC_PER_SEC));
		daemon_probe_stop(o, &sum->daemon);
	}
	// Closing the go pipe starts every client at once.
	close(go_pipe[1]);
	collect_results(o, pids, result_fds, done_pipe[1], sum);
	if (o->idle_seconds == 0)
		daemon_probe_stop(o, &sum->daemon);
	idle_channels_close(idle);
	if (o->secondary)
		wait_memzones_freed(o, memzones_before);

	int rc = EXIT_SUCCESS;
	for (unsigned i = 0; i < o->clients; i++) {
		int status;
		close(result_fds[i]);
		// One secondary at a time cleans up EAL (see client_main).
		if (o->secondary)
			close(cleanup_fds[i]);
		if (waitpid(pids[i], &status, 0) < 0)
			fail("waitpid client %u: %s", i, strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr,
				"%s: client %u exited with status 0x%x\n",
				log_prefix,
				i,
				status);
			rc = EXIT_FAILURE;
		}
	}
	return rc;
}
