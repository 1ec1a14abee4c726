// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's accounting: the system calls of a thread (a tracepoint
// counter), the CPU time, time waiting for a CPU and sleeps of a process
// (/proc), and the daemon around a measured phase: those and its channel
// counters (ping2_perf.h).

#include "ping2_perf.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// Read a small text file (/proc, tracefs) into buf; false if it cannot be opened.
static bool read_text(const char *path, char *buf, size_t size) {
	FILE *f = fopen(path, "r");
	size_t n = f != NULL ? fread(buf, 1, size - 1, f) : 0;
	buf[n] = '\0';
	if (f != NULL)
		fclose(f);
	return f != NULL;
}

// Counts with the raw_syscalls:sys_enter tracepoint: needs tracefs, and for
// another process's thread the right to trace it (root, or
// perf_event_paranoid allowing it).
int syscall_counter_open(pid_t tid) {
	static const char *const tracefs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	struct perf_event_attr attr = {.type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr)};
	unsigned long long id;
	char path[128], text[32];
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/raw_syscalls/sys_enter/id", tracefs[i]);
		if (!read_text(path, text, sizeof(text)) || sscanf(text, "%llu", &id) != 1)
			continue;
		attr.config = id;
		attr.disabled = 1;
		attr.inherit = 1;
		return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return -1;
}

// The first two fields of a schedstat file: ns on a CPU, ns waiting for one.
static bool read_schedstat(const char *path, unsigned long long *run, unsigned long long *wait) {
	char text[128];
	return read_text(path, text, sizeof(text)) && sscanf(text, "%llu %llu", run, wait) == 2;
}

int64_t runq_wait_ns(void) {
	unsigned long long run, wait;
	return read_schedstat("/proc/thread-self/schedstat", &run, &wait) ? (int64_t)wait : -1;
}

// CPU time, time waiting for a CPU and voluntary context switches of a
// process, summed over its threads: from each thread's schedstat (ns;
// /proc/PID/stat counts ticks of 10 ms, too coarse for a run of a second),
// else the CPU time from /proc/PID/stat and no wait. A thread that exits
// between two samples takes its share with it: the daemon's threads live as
// long as it does. false if /proc does not show the process.
static bool process_sample(pid_t pid, int64_t *cpu_ns, int64_t *wait_ns, int64_t *vcsw) {
	static const char vcsw_label[] = "\nvoluntary_ctxt_switches:";
	char path[512], text[8192], *p;
	unsigned long long utime, stime;
	bool schedstat = true;
	struct dirent *de;
	DIR *dir;

	*cpu_ns = *wait_ns = *vcsw = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (pid <= 0 || (dir = opendir(path)) == NULL)
		return false;
	while ((de = readdir(dir)) != NULL) {
		unsigned long long run = 0, wait = 0;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, de->d_name);
		schedstat &= read_schedstat(path, &run, &wait);
		*cpu_ns += (int64_t)run;
		*wait_ns += (int64_t)wait;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, de->d_name);
		if (read_text(path, text, sizeof(text)) && (p = strstr(text, vcsw_label)) != NULL)
			*vcsw += strtoll(p + sizeof(vcsw_label) - 1, NULL, 10);
	}
	closedir(dir);
	if (schedstat)
		return true;
	// The command name may hold spaces and parentheses: fields start after
	// the last ')'. utime and stime are fields 14 and 15; 3 is the state.
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	*wait_ns = *cpu_ns = -1;
	if (!read_text(path, text, 1024) || (p = strrchr(text, ')')) == NULL ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime
	    ) != 2)
		return false;
	*cpu_ns = (int64_t
	)((utime + stime) * (NSEC_PER_SEC / (unsigned long long)sysconf(_SC_CLK_TCK)));
	return true;
}

bool daemon_info(const struct options *o, struct gr_shm_daemon_info *info) {
	struct gr_api_client *c = connect_client(o, GR_API_TRANSPORT_SOCKET);
	long id, len;
	FAIL_IF(c == NULL, "connect %s: %s", o->sock_path, strerror(errno));
	if ((id = gr_api_client_send(c, GR_SHM_DAEMON_INFO, 0, NULL)) <= 0)
		fail("send GR_SHM_DAEMON_INFO: %s", strerror(errno));
	len = gr_api_client_recv_into(c, (uint32_t)id, info, sizeof(*info));
	if (len >= 0 && len != (long)sizeof(*info))
		fail("GR_SHM_DAEMON_INFO: response of %ld bytes, expected %zu", len, sizeof(*info));
	FAIL_IF(len < 0 && errno != ENOTSUP, "GR_SHM_DAEMON_INFO: %s", strerror(errno));
	if (len < 0)
		fprintf(stderr, "%s: daemon does not serve GR_SHM_DAEMON_INFO\n", log_prefix);
	gr_api_client_disconnect(c);
	info->file_prefix[sizeof(info->file_prefix) - 1] = '\0';
	return len >= 0;
}

bool daemon_stats(const struct options *o, struct gr_shm_counters *total, uint32_t *memzones) {
	struct gr_api_client *c = connect_client(o, GR_API_TRANSPORT_SOCKET);
	struct gr_shm_stats_resp resp;
	long id, len = -1;
	if (c == NULL)
		return false;
	if ((id = gr_api_client_send(c, GR_SHM_STATS, 0, NULL)) > 0)
		len = gr_api_client_recv_into(c, (uint32_t)id, &resp, sizeof(resp));
	gr_api_client_disconnect(c);
	if (len != (long)sizeof(resp))
		return false;
	if (total != NULL)
		*total = resp.total;
	if (memzones != NULL)
		*memzones = resp.memzones;
	return true;
}

static void close_syscall_fds(struct daemon_probe *p) {
	for (int i = 0; i < p->n_syscall_fds; i++)
		close(p->syscall_fds[i]);
}

void daemon_probe_start(const struct options *o, struct daemon_probe *p, pid_t pid) {
	char path[64];
	struct dirent *de;
	DIR *dir;
	int fd;

	*p = (struct daemon_probe){.pid = pid, .cpu_ns = -1, .runq_wait_ns = -1, .vcsw = -1};
	p->syscalls = -1;
	// Asked first: serving GR_SHM_STATS is not part of the phase.
	p->have_chan = daemon_stats(o, &p->chan, NULL);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (pid <= 0 || (dir = opendir(path)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		fd = -1;
		if (p->n_syscall_fds < (int)(sizeof(p->syscall_fds) / sizeof(int)) &&
		    o->count_syscalls)
			fd = syscall_counter_open((pid_t)atoi(de->d_name));
		if (fd < 0) {
			close_syscall_fds(p);
			p->n_syscall_fds = -1;
			break;
		}
		p->syscall_fds[p->n_syscall_fds++] = fd;
	}
	closedir(dir);
	for (int i = 0; i < p->n_syscall_fds; i++)
		ioctl(p->syscall_fds[i], PERF_EVENT_IOC_ENABLE, 0);
	p->sampled = process_sample(pid, &p->cpu_ns, &p->runq_wait_ns, &p->vcsw);
}

void daemon_probe_stop(const struct options *o, struct daemon_probe *p) {
	struct gr_shm_counters after;
	int64_t cpu_ns, wait_ns, vcsw;
	uint64_t total = 0, count;
	bool all_read = p->n_syscall_fds > 0;

	for (int i = 0; i < p->n_syscall_fds; i++)
		ioctl(p->syscall_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (p->sampled && process_sample(p->pid, &cpu_ns, &wait_ns, &vcsw)) {
		p->cpu_ns = cpu_ns - p->cpu_ns;
		p->runq_wait_ns =
			wait_ns >= 0 && p->runq_wait_ns >= 0 ? wait_ns - p->runq_wait_ns : -1;
		p->vcsw = vcsw - p->vcsw;
	} else {
		p->cpu_ns = p->runq_wait_ns = p->vcsw = -1;
	}
	// Asked last: serving GR_SHM_STATS is not part of the phase.
	if ((p->have_chan = p->have_chan && daemon_stats(o, &after, NULL))) {
		p->chan.doorbells_rung = after.doorbells_rung - p->chan.doorbells_rung;
		p->chan.sleeps = after.sleeps - p->chan.sleeps;
		p->chan.overflows = after.overflows - p->chan.overflows;
	}
	for (int i = 0; i < p->n_syscall_fds; i++) {
		all_read =
			all_read && read(p->syscall_fds[i], &count, sizeof(count)) == sizeof(count);
		total += all_read ? count : 0;
	}
	close_syscall_fds(p);
	if (all_read)
		p->syscalls = (int64_t)total;
}
