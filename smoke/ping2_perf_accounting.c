// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's accounting: system calls (a tracepoint), CPU, waits, sleeps (/proc), the daemon's.

#include "ping2_perf.h"
#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

static bool read_text(const char *path, char *buf, size_t size) {
	FILE *f = fopen(path, "r");
	size_t n = f != NULL ? fread(buf, 1, size - 1, f) : 0;
	buf[n] = '\0';
	if (f != NULL)
		fclose(f);
	return f != NULL;
}

// raw_syscalls:sys_enter: needs tracefs, and for another process root or perf_event_paranoid.
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
		attr.disabled = attr.inherit = 1;
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

// Over pid's threads, from schedstat (ns; stat counts 10 ms ticks), else stat's CPU time and no
// wait. A thread that exits takes its share with it: the daemon's live as long as it does.
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
	// After the last ')' (the name may hold one): the state (3), ..., utime and stime (14, 15).
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

bool daemon_stats(const struct options *o, struct gr_shm_stats_resp *resp) {
	struct gr_api_client *c = connect_client(o, GR_API_TRANSPORT_SOCKET);
	long id, len = -1;
	if (c == NULL)
		return false;
	if ((id = gr_api_client_send(c, GR_SHM_STATS, 0, NULL)) > 0)
		len = gr_api_client_recv_into(c, (uint32_t)id, resp, sizeof(*resp));
	gr_api_client_disconnect(c);
	return len == (long)sizeof(*resp);
}

void daemon_probe_start(const struct options *o, struct daemon_probe *p, pid_t pid) {
	char path[64];
	struct dirent *de;
	DIR *dir;
	*p = (struct daemon_probe){.pid = pid, .syscalls = -1}; // stop sets the others
	p->have_chan = daemon_stats(o, &p->chan); // first: leaves GR_SHM_STATS out of the phase
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (pid <= 0 || (dir = opendir(path)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		bool room = o->count_syscalls && p->n_syscall_fds < DAEMON_THREADS_MAX;
		int fd = room ? syscall_counter_open((pid_t)atoi(de->d_name)) : -1;
		if (fd < 0) {
			for (int i = 0; i < p->n_syscall_fds; i++)
				close(p->syscall_fds[i]);
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
	struct gr_shm_stats_resp after;
	struct gr_shm_counters *k = &p->chan.total;
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
	if ((p->have_chan = p->have_chan && daemon_stats(o, &after))) { // asked last: the same
		k->doorbells_rung = after.total.doorbells_rung - k->doorbells_rung;
		k->sleeps = after.total.sleeps - k->sleeps;
		k->overflows = after.total.overflows - k->overflows;
	}
	for (int i = 0; i < p->n_syscall_fds; i++) {
		all_read =
			all_read && read(p->syscall_fds[i], &count, sizeof(count)) == sizeof(count);
		total += all_read ? count : 0;
		close(p->syscall_fds[i]);
	}
	if (all_read)
		p->syscalls = (int64_t)total;
}
