// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's client processes, forked, started at once, their results added up; the daemon
// sampled around them. --secondary: each a DPDK secondary of the daemon, on a memzone channel.

#include "ping2_perf.h"
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define IDLE_CHANNEL_FDS 6 // its socket, two doorbells, the memfd while attaching, and spare
#define OTHER_FDS 1024 // those the rest of ping2_perf needs
#define MEMZONE_FREE_WAIT_MS 5000 // the daemon frees them after an RCU grace period

struct client_result {
	int32_t transport;
	uint32_t backing;
	char reason[REASON_LEN];
	uint64_t calls, start_ns, end_ns, first_ns; // CLOCK_MONOTONIC, shared by all processes
	uint64_t cpu_ns, vcsw; // of the measured phase
	int64_t runq_wait_ns, syscalls; // -1 if unknown
	struct histogram hist;
};

static pid_t pids[MAX_CLIENTS]; // forked, not waited for yet: stopped if the runner fails
static unsigned n_pids;

static void stop_clients(void) {
	for (unsigned i = 0; i < n_pids; i++)
		kill(pids[i], SIGTERM);
	for (unsigned i = 0; i < n_pids; i++)
		waitpid(pids[i], NULL, 0);
}

static void wait_eof(int fd) {
	char byte;
	fd_transfer(fd, &byte, 1, false);
	close(fd);
}

void secondary_init(const struct options *o, unsigned index) {
	char *own[] = {
		"ping2_perf",
		"--proc-type=secondary",
		"--file-prefix",
		(char *)o->file_prefix,
		"--lcores",
		NULL,
		"--no-pci",
		"--no-telemetry",
		"--log-level=*:warning",
		NULL};
	int argc = (int)(sizeof(own) / sizeof(own[0])) - 1;
	char **argv = own, *lcores = NULL;
	cpu_set_t cpus;
	size_t len;
	if (o->eal_argv != NULL) {
		// rte_eal_init() permutes its argv: give it a copy.
		argv = calloc_or_fail((size_t)o->eal_argc + 2, sizeof(*argv));
		argv[0] = "ping2_perf";
		memcpy(argv + 1, o->eal_argv, (size_t)o->eal_argc * sizeof(*argv));
		argc = o->eal_argc + 1;
	} else {
		// Each secondary needs an lcore id of its own (per-lcore state in shared memory,
		// such as mempool caches), not the daemon's 0: pids differ from client to client.
		unsigned lcore = o->lcore != 0 ? o->lcore - 1 + index : (unsigned)getpid();
		lcore = 1 + lcore % (RTE_MAX_LCORE - 1);
		if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
			fail("sched_getaffinity: %s", strerror(errno));
		FILE *arg = open_memstream(&lcores, &len);
		FAIL_IF(arg == NULL, "%s", strerror(ENOMEM));
		fprintf(arg, "%u@(", lcore); // N@(CPUS), the CPUs we may run on: "0-3,6"
		for (int cpu = 0, first, n = 0; cpu < CPU_SETSIZE; cpu++) {
			if (!CPU_ISSET(cpu, &cpus))
				continue;
			for (first = cpu; cpu + 1 < CPU_SETSIZE && CPU_ISSET(cpu + 1, &cpus);)
				cpu++;
			fprintf(arg, n++ > 0 ? ",%d" : "%d", first);
			if (cpu > first)
				fprintf(arg, "-%d", cpu);
		}
		fprintf(arg, ")");
		FAIL_IF(fclose(arg) != 0, "%s", strerror(ENOMEM));
		own[5] = lcores;
	}
	if (rte_eal_init(argc, argv) < 0)
		fail("EAL init as a DPDK secondary failed: %s. Either the daemon runs without"
		     " hugepages (--hugepages off, --no-huge or --in-memory): then no secondary can"
		     " attach, run without --secondary to get a memfd channel; or file prefix '%s'"
		     " is not the daemon's; or the lcore id is taken (--lcore)",
		     rte_errno != 0 ? rte_strerror(rte_errno) : "see the EAL messages above",
		     o->eal_argv != NULL ? "(given after --)" : o->file_prefix);
	if (rte_eal_process_type() != RTE_PROC_SECONDARY)
		fail("EAL did not start as a secondary (--proc-type=secondary missing after --?)");
	if (argv != own)
		free(argv);
	free(lcores);
}

uint32_t secondary_prepare(struct options *o, const struct gr_shm_daemon_info *info) {
	struct gr_shm_stats_resp stats;
	if (o->eal_argv == NULL && o->file_prefix[0] == '\0' && info == NULL)
		fail("--secondary: the daemon does not tell its file prefix (--file-prefix)");
	if (o->eal_argv == NULL && o->file_prefix[0] == '\0')
		snprintf(o->file_prefix, sizeof(o->file_prefix), "%s", info->file_prefix);
	if (o->eal_argv == NULL && info != NULL && info->backings != 0 &&
	    !(info->backings & GR_SHM_BACKING_MEMZONE))
		fail("--secondary: the daemon runs without hugepages (--hugepages off, --no-huge or"
		     " --in-memory): no DPDK secondary can attach to it; run without --secondary"
		     " to get a memfd channel");
	if (!daemon_stats(o, &stats))
		fail("--secondary: the daemon does not tell its memzones (GR_SHM_STATS)");
	return stats.memzones;
}

void wait_memzones_freed(const struct options *o, uint32_t before) {
	uint64_t deadline = now_ns() + MEMZONE_FREE_WAIT_MS * NSEC_PER_MSEC;
	struct gr_shm_stats_resp now;
	for (; daemon_stats(o, &now) && now.memzones > before; sleep_ns(NSEC_PER_MSEC)) {
		if (now_ns() < deadline)
			continue;
		fprintf(stderr, "%s: the daemon still holds %" PRIu32, log_prefix, now.memzones);
		fprintf(stderr, " channel memzones (%" PRIu32 " before the run)", before);
		fprintf(stderr, " after %d ms; cleaning up EAL anyway\n", MEMZONE_FREE_WAIT_MS);
		return;
	}
}

static struct gr_api_client **idle_channels_open(const char *sock_path, unsigned n) {
	struct gr_api_client_opts opts = {.transport = GR_API_TRANSPORT_SHM, .spin_us = 0};
	struct gr_api_client **clients = calloc(n, sizeof(*clients));
	rlim_t want = (rlim_t)n * IDLE_CHANNEL_FDS + OTHER_FDS;
	struct rlimit lim;
	opts.version = "ping2_perf idle";
	FAIL_IF(clients == NULL, "--idle-channels %u: %s", n, strerror(ENOMEM));
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < want) {
		lim.rlim_cur = lim.rlim_max < want ? lim.rlim_max : want;
		if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
			fail("--idle-channels %u: setrlimit(RLIMIT_NOFILE): %s", n, strerror(errno)
			);
	}
	for (unsigned i = 0; i < n; i++) {
		clients[i] = gr_api_client_connect_opts(sock_path, &opts);
		const char *limit = errno == EMFILE ? " (the daemon's --max-conn-per-pid)" : "";
		if (clients[i] == NULL)
			fail("--idle-channels: connect %u of %u over shm: %s%s",
			     i + 1,
			     n,
			     strerror(errno),
			     limit);
		if (gr_api_client_send_recv_len(clients[i], GR_PING, 0, NULL, NULL) != 0)
			fail("--idle-channels: GR_PING on channel %u: %s", i + 1, strerror(errno));
	}
	return clients;
}

// Says ready on fd once warm, starts when go closes (all at once), then writes its result on fd.
static void __attribute__((noreturn))
client_main(const struct options *o, unsigned index, uint64_t calls, int fd, int go, int done) {
	static char prefix[64];
	struct rusage before, after;
	struct client_state s;
	uint64_t syscalls = 0;
	snprintf(prefix, sizeof(prefix), "ping2_perf: client %u", index);
	log_prefix = prefix;
	struct client_result *res = calloc_or_fail(1, sizeof(*res));
	client_state_init(&s, o, NULL);
	s.progress = index == 0 && !o->quiet;
	tsc_calibrate();
	if (o->secondary)
		secondary_init(o, index);
	s.client = connect_measured(o, o->transport, &res->backing);
	res->transport = (int32_t)gr_api_client_transport(s.client);
	snprintf(res->reason, sizeof(res->reason), "%s", gr_api_client_transport_reason(s.client));
	run_calls(&s, o->warmup, 0, NULL);
	int counter = o->count_syscalls ? syscall_counter_open(0) : -1;
	FAIL_IF(!fd_transfer(fd, &(char){1}, 1, true), "write to parent: %s", strerror(errno));
	wait_eof(go);
	int64_t wait_before = runq_wait_ns();
	getrusage(RUSAGE_SELF, &before);
	if (counter >= 0)
		ioctl(counter, PERF_EVENT_IOC_ENABLE, 0);
	res->start_ns = now_ns();
	if (o->idle_seconds > 0 && index == 0) {
		res->first_ns = call_alone(&s);
		for (unsigned i = 0; i < o->idle_rounds; i++) {
			sleep_ns(IDLE_GAP_MS * NSEC_PER_MSEC);
			hist_add(&res->hist, call_alone(&s));
		}
		res->calls = 1 + o->idle_rounds;
	} else if (o->idle_seconds > 0) {
		wait_eof(done);
	} else {
		uint64_t deadline = res->start_ns + (uint64_t)(o->seconds * NSEC_PER_SEC);
		res->calls = run_calls(&s, calls, o->seconds > 0 ? deadline : 0, &res->hist);
	}
	res->end_ns = now_ns();
	if (counter >= 0)
		ioctl(counter, PERF_EVENT_IOC_DISABLE, 0);
	getrusage(RUSAGE_SELF, &after);
	int64_t wait_after = runq_wait_ns();
	res->runq_wait_ns = wait_before >= 0 && wait_after >= 0 ? wait_after - wait_before : -1;
	res->cpu_ns = rusage_cpu_ns(&after) - rusage_cpu_ns(&before);
	res->vcsw = (uint64_t)(after.ru_nvcsw - before.ru_nvcsw);
	res->syscalls = -1;
	if (counter >= 0 && read(counter, &syscalls, sizeof(syscalls)) == sizeof(syscalls))
		res->syscalls = (int64_t)syscalls;
	FAIL_IF(gr_api_client_disconnect(s.client) < 0, "disconnect: %s", strerror(errno));
	FAIL_IF(!fd_transfer(fd, res, sizeof(*res), true), "write to parent: %s", strerror(errno));
	// rte_eal_cleanup() can deadlock DPDK 22.11 while another process frees hugepage memory
	// (docs/benchmark-method.md): the parent lets us clean up in turn, the memzones freed.
	if (o->secondary) {
		wait_eof(fd);
		FAIL_IF(rte_eal_cleanup() < 0, "EAL cleanup: %s", rte_strerror(rte_errno));
	}
	exit(EXIT_SUCCESS);
}

static int64_t add_known(int64_t sum, int64_t value) {
	return sum < 0 || value < 0 ? -1 : sum + value;
}

static void
collect_results(const struct options *o, const int *fds, int done_fd, struct summary *sum) {
	static struct client_result res;
	static char reason[REASON_LEN];
	uint64_t first_start = UINT64_MAX, last_end = 0;
	uint32_t backing = 0;
	for (unsigned i = 0; i < o->clients; i++) {
		if (!fd_transfer(fds[i], &res, sizeof(res), false))
			fail("client %u failed during the measured phase", i);
		if (i == 0 && done_fd >= 0)
			close(done_fd); // --idle: tells the others that client 0 is done
		if (res.calls > 0) { // --idle: client 0 alone
			first_start = res.start_ns < first_start ? res.start_ns : first_start;
			last_end = res.end_ns > last_end ? res.end_ns : last_end;
			double calls = (double)res.calls * NSEC_PER_SEC;
			sum->client_rates[i] = calls / (double)(res.end_ns - res.start_ns);
			sum->client_cpu_rates[i] = res.cpu_ns > 0 ? calls / (double)res.cpu_ns : 0;
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
		sum->runq_wait_ns = add_known(sum->runq_wait_ns, res.runq_wait_ns);
		sum->syscalls = add_known(sum->syscalls, res.syscalls);
		const char *name = transport_name((enum gr_api_transport)res.transport);
		sum->transport = sum->transport && strcmp(sum->transport, name) ? "mixed" : name;
		backing = i == 0 || res.backing == backing ? res.backing : UINT32_MAX;
		if (res.reason[0] != '\0')
			snprintf(reason, sizeof(reason), "%s", res.reason);
	}
	sum->backing = backing_name(backing);
	sum->reason = reason;
	if (last_end > first_start)
		sum->seconds = (double)(last_end - first_start) / NSEC_PER_SEC;
}

int run_clients(struct options *o, struct summary *sum) {
	int fds[MAX_CLIENTS], go[2], done[2] = {-1, -1}, rc = EXIT_SUCCESS, status;
	struct gr_api_client **idle = NULL;
	struct gr_shm_daemon_info info;
	char ready;
	bool told = daemon_info(o, &info);
	uint32_t memzones_before = o->secondary ? secondary_prepare(o, told ? &info : NULL) : 0;
	if (pipe2(go, O_CLOEXEC) < 0 || (o->idle_seconds > 0 && pipe2(done, O_CLOEXEC) < 0))
		fail("pipe: %s", strerror(errno));
	atexit(stop_clients);
	for (unsigned i = 0; i < o->clients; i++, n_pids++) {
		int pair[2];
		uint64_t calls = o->count / o->clients + (i < o->count % o->clients ? 1 : 0);
		check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), "socketpair");
		if ((pids[i] = fork_peer()) == 0) {
			n_pids = 0;
			for (unsigned j = 0; j < i; j++) // another's EOF must not wait for this one
				close(fds[j]);
			close(pair[0]);
			close(go[1]);
			if (done[1] >= 0)
				close(done[1]);
			client_main(o, i, calls, pair[1], go[0], done[0]);
		}
		close(pair[1]);
		fds[i] = pair[0];
	}
	close(go[0]);
	if (done[0] >= 0)
		close(done[0]);
	for (unsigned i = 0; i < o->clients; i++)
		if (!fd_transfer(fds[i], &ready, 1, false))
			fail("client %u failed before the measured phase", i);
	if (o->idle_channels > 0)
		idle = idle_channels_open(o->sock_path, o->idle_channels);
	daemon_probe_start(o, &sum->daemon, told ? info.pid : -1);
	if (o->idle_seconds > 0) {
		sleep_ns((uint64_t)(o->idle_seconds * NSEC_PER_SEC));
		daemon_probe_stop(o, &sum->daemon);
	}
	close(go[1]); // starts every client at once
	collect_results(o, fds, done[1], sum);
	if (o->idle_seconds == 0)
		daemon_probe_stop(o, &sum->daemon);
	for (unsigned i = 0; i < o->idle_channels; i++)
		gr_api_client_disconnect(idle[i]);
	free(idle);
	if (o->secondary)
		wait_memzones_freed(o, memzones_before);
	n_pids = 0; // waited for one at a time: a secondary cleans up EAL once its end closes
	for (unsigned i = 0; i < o->clients; i++) {
		close(fds[i]);
		status = peer_wait(pids[i]);
		FAIL_IF(status < 0, "waitpid client %u: %s", i, strerror(errno));
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			continue;
		fprintf(stderr, "%s: client %u exited with status 0x%x\n", log_prefix, i, status);
		rc = EXIT_FAILURE;
	}
	return rc;
}
