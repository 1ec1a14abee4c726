// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's CPU and system-call accounting of processes: a tracepoint
// counter of a thread's system calls, and the CPU time, time waiting for a
// CPU and voluntary context switches /proc shows (ping2_perf.h).

#include "ping2_perf.h"

#include <dirent.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// Counts the system calls of thread tid (0: this process) with the
// raw_syscalls:sys_enter tracepoint, disabled until PERF_EVENT_IOC_ENABLE.
// Needs tracefs mounted, and for another process's thread the right to
// trace it (root, or perf_event_paranoid allowing it); returns -1 when it
// cannot be had.
int syscall_counter_open(pid_t tid) {
	static const char *const id_paths[] = {
		"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
		"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	unsigned long long id = 0;
	bool found = false;

	for (size_t i = 0; i < sizeof(id_paths) / sizeof(id_paths[0]) && !found; i++) {
		FILE *f = fopen(id_paths[i], "r");
		if (f == NULL)
			continue;
		found = fscanf(f, "%llu", &id) == 1;
		fclose(f);
	}
	if (!found)
		return -1;

	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = id,
		.disabled = 1,
		.inherit = 1,
	};
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

// Time the calling thread spent runnable but waiting for a CPU (the second
// field of /proc/thread-self/schedstat), in ns; -1 if not shown.
int64_t runq_wait_ns(void) {
	unsigned long long run_ns, wait_ns;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int n = 0;

	if (f != NULL) {
		n = fscanf(f, "%llu %llu", &run_ns, &wait_ns);
		fclose(f);
	}
	return n == 2 ? (int64_t)wait_ns : -1;
}

// utime + stime of a process in ns, or -1 if /proc does not show it.
static int64_t process_cpu_ns(pid_t pid) {
	char path[64], buf[1024];
	unsigned long long utime, stime;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	// The command name may hold spaces and parentheses: fields start after
	// the last ')'. utime and stime are fields 14 and 15; 3 is the state.
	char *p = strrchr(buf, ')');
	if (p == NULL ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime
	    ) != 2)
		return -1;
	long hz = sysconf(_SC_CLK_TCK);
	return (int64_t)((utime + stime) * (NSEC_PER_SEC / (unsigned long long)hz));
}

// CPU time, time waiting for a CPU (runnable, not running) and voluntary
// context switches of a process, summed over its threads: the first two from
// /proc/PID/task/TID/schedstat (nanoseconds; /proc/PID/stat
// counts in clock ticks of 10 ms, too coarse for a run of a second), with
// /proc/PID/stat as the fallback. A thread that exits between two samples
// takes its share with it: the daemon's threads live as long as it does.
// Returns false if /proc does not show the process.
bool process_sample(pid_t pid, int64_t *cpu_ns, int64_t *wait_ns, int64_t *vcsw) {
	char path[PATH_MAX], line[256];
	struct dirent *de;
	bool schedstat = true;
	DIR *dir;

	*cpu_ns = 0;
	*wait_ns = 0;
	*vcsw = 0;
	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (dir == NULL)
		return false;
	while ((de = readdir(dir)) != NULL) {
		unsigned long long v, w;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, de->d_name);
		f = fopen(path, "r");
		if (f != NULL && fscanf(f, "%llu %llu", &v, &w) == 2) {
			*cpu_ns += (int64_t)v;
			*wait_ns += (int64_t)w;
		} else {
			schedstat = false;
		}
		if (f != NULL)
			fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, de->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
				*vcsw += (int64_t)v;
		}
		fclose(f);
	}
	closedir(dir);
	if (!schedstat) {
		*cpu_ns = process_cpu_ns(pid);
		*wait_ns = -1;
	}
	return *cpu_ns >= 0;
}
