// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf --secondary: a client process that initialises EAL as a DPDK
// secondary of the daemon, so that the client library gives it a memzone
// channel; what it needs before (the daemon's file prefix) and after (the
// daemon's memzones freed before EAL cleans up) (ping2_perf.h).

#include "ping2_perf.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// EAL arguments ping2_perf builds for a secondary, program name included.
#define EAL_OWN_ARGS 9
// Room for the --lcores value: "N@(" + a CPU list + ")".
#define LCORES_ARG_LEN 512
// How long the parent waits for the daemon to free the run's channel
// memzones (it does so after an RCU grace period), and how often it asks.
#define MEMZONE_FREE_WAIT_MS 5000
#define MEMZONE_POLL_NS (NSEC_PER_MSEC)

// The CPUs this process may run on, as an EAL CPU set: "(0-3,6)".
static void cpu_set_arg(char *buf, size_t len) {
	cpu_set_t cpus;
	size_t used = 1;

	if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
		fail("sched_getaffinity: %s", strerror(errno));
	buf[0] = '(';
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &cpus))
			continue;
		int last = cpu;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &cpus))
			last++;
		char range[32];
		if (last > cpu)
			snprintf(range, sizeof(range), "%d-%d", cpu, last);
		else
			snprintf(range, sizeof(range), "%d", cpu);
		int n = snprintf(buf + used, len - used, "%s%s", used > 1 ? "," : "", range);
		if (n < 0 || (size_t)n >= len - used)
			fail("the CPU list of this process does not fit %zu bytes", len);
		used += (size_t)n;
		cpu = last;
	}
	if (used + 2 > len)
		fail("the CPU list of this process does not fit %zu bytes", len);
	buf[used++] = ')';
	buf[used] = '\0';
}

// The lcore id of client index. Each secondary needs an lcore id of its own
// (lcore ids index per-lcore state in the shared memory, such as mempool
// caches), and the daemon's main lcore is 0. By default 1 + pid %
// (RTE_MAX_LCORE - 1): never 0, and different for the clients, which are
// forked one after the other. With --lcore N client i takes N + i, wrapping
// from RTE_MAX_LCORE - 1 back to 1.
static unsigned client_lcore(const struct options *o, unsigned index) {
	if (o->lcore == 0)
		return 1 + (unsigned)getpid() % (RTE_MAX_LCORE - 1);
	return 1 + (o->lcore - 1 + index) % (RTE_MAX_LCORE - 1);
}

void secondary_init(const struct options *o, unsigned index) {
	char lcores[LCORES_ARG_LEN], cpus[LCORES_ARG_LEN - 16];
	char *own[EAL_OWN_ARGS + 1];
	char **argv = own;
	int argc = 0;

	if (o->eal_argv != NULL) {
		// rte_eal_init() permutes its argv: give it a copy.
		argv = calloc((size_t)o->eal_argc + 2, sizeof(*argv));
		if (argv == NULL)
			fail("%s", strerror(ENOMEM));
		argv[argc++] = "ping2_perf";
		for (int i = 0; i < o->eal_argc; i++)
			argv[argc++] = o->eal_argv[i];
	} else {
		cpu_set_arg(cpus, sizeof(cpus));
		snprintf(lcores, sizeof(lcores), "%u@%s", client_lcore(o, index), cpus);
		argv[argc++] = "ping2_perf";
		argv[argc++] = "--proc-type=secondary";
		argv[argc++] = "--file-prefix";
		argv[argc++] = (char *)o->file_prefix;
		argv[argc++] = "--lcores";
		argv[argc++] = lcores;
		argv[argc++] = "--no-pci";
		argv[argc++] = "--no-telemetry";
		argv[argc++] = "--log-level=*:warning";
	}
	argv[argc] = NULL;
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
}

void wait_memzones_freed(const struct options *o, uint32_t before) {
	const struct timespec poll = {.tv_nsec = (long)MEMZONE_POLL_NS};
	uint64_t deadline = now_ns() + MEMZONE_FREE_WAIT_MS * NSEC_PER_MSEC;
	uint32_t now = 0;

	while (daemon_stats(o, NULL, &now) && now > before) {
		if (now_ns() >= deadline) {
			fprintf(stderr,
				"%s: the daemon still holds %" PRIu32 " channel memzones (%" PRIu32
				" before the run) after %d ms; cleaning up EAL anyway\n",
				log_prefix,
				now,
				before,
				MEMZONE_FREE_WAIT_MS);
			return;
		}
		nanosleep(&poll, NULL);
	}
}

void secondary_prepare(struct options *o, const struct gr_shm_daemon_info *info) {
	if (o->eal_argv != NULL)
		return; // the user's EAL arguments, verbatim
	if (o->file_prefix[0] == '\0') {
		if (info == NULL)
			fail("--secondary: the daemon does not tell its file prefix (--file-prefix)"
			);
		// Bounded by the field: more of the response follows it.
		snprintf(
			o->file_prefix,
			sizeof(o->file_prefix),
			"%.*s",
			(int)sizeof(info->file_prefix) - 1,
			info->file_prefix
		);
	}
	if (info != NULL && info->backings != 0 && !(info->backings & GR_SHM_BACKING_MEMZONE))
		fail("--secondary: the daemon runs without hugepages (--hugepages off, --no-huge or"
		     " --in-memory): no DPDK secondary can attach to it; run without --secondary"
		     " to get a memfd channel");
}
