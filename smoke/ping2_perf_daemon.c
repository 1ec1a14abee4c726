// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The daemon as ping2_perf sees it: who it is (GR_SHM_DAEMON_INFO), its
// channel counters (GR_SHM_STATS), and its CPU time, sleeps and system
// calls around a measured phase (ping2_perf.h).

#include "ping2_perf.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

bool daemon_info(const struct options *o, struct gr_shm_daemon_info *info) {
	struct gr_api_client *c = connect_client(o, GR_API_TRANSPORT_SOCKET);
	bool told = false;

	if (c == NULL)
		fail("connect %s: %s", o->sock_path, strerror(errno));
	long id = gr_api_client_send(c, GR_SHM_DAEMON_INFO, 0, NULL);
	if (id <= 0)
		fail("send GR_SHM_DAEMON_INFO: %s", strerror(errno));
	long len = gr_api_client_recv_into(c, (uint32_t)id, info, sizeof(*info));
	if (len == (long)sizeof(*info))
		told = true;
	else if (len >= 0)
		fail("GR_SHM_DAEMON_INFO: response of %ld bytes, expected %zu", len, sizeof(*info));
	else if (errno == ENOTSUP)
		fprintf(stderr, "%s: daemon does not serve GR_SHM_DAEMON_INFO\n", log_prefix);
	else
		fail("GR_SHM_DAEMON_INFO: %s", strerror(errno));
	gr_api_client_disconnect(c);
	if (told)
		info->file_prefix[sizeof(info->file_prefix) - 1] = '\0';
	return told;
}

bool daemon_stats(const struct options *o, struct gr_shm_counters *total, uint32_t *memzones) {
	struct gr_api_client *c = connect_client(o, GR_API_TRANSPORT_SOCKET);
	struct gr_shm_stats_resp resp;
	long len = -1;

	if (c == NULL)
		return false;
	long id = gr_api_client_send(c, GR_SHM_STATS, 0, NULL);
	if (id > 0)
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

void daemon_probe_start(const struct options *o, struct daemon_probe *p, pid_t pid) {
	char path[64];
	struct dirent *de;
	DIR *dir;

	*p = (struct daemon_probe){
		.pid = pid,
		.cpu_ns = -1,
		.runq_wait_ns = -1,
		.vcsw = -1,
		.syscalls = -1,
	};
	// Asked first: serving GR_SHM_STATS is not part of the phase.
	p->have_chan = daemon_stats(o, &p->chan, NULL);
	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	while (dir != NULL && (de = readdir(dir)) != NULL && p->n_syscall_fds >= 0) {
		if (de->d_name[0] == '.')
			continue;
		int fd = -1;
		if (p->n_syscall_fds < MAX_DAEMON_TASKS && o->count_syscalls)
			fd = syscall_counter_open((pid_t)atoi(de->d_name));
		if (fd < 0) {
			for (int i = 0; i < p->n_syscall_fds; i++)
				close(p->syscall_fds[i]);
			p->n_syscall_fds = -1;
			break;
		}
		p->syscall_fds[p->n_syscall_fds++] = fd;
	}
	if (dir != NULL)
		closedir(dir);
	for (int i = 0; i < p->n_syscall_fds; i++)
		ioctl(p->syscall_fds[i], PERF_EVENT_IOC_ENABLE, 0);
	p->sampled = process_sample(pid, &p->cpu_ns, &p->runq_wait_ns, &p->vcsw);
}

void daemon_probe_stop(const struct options *o, struct daemon_probe *p) {
	struct gr_shm_counters after;
	int64_t cpu_ns, wait_ns, vcsw;
	uint64_t total = 0;

	for (int i = 0; i < p->n_syscall_fds; i++)
		ioctl(p->syscall_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (p->sampled && process_sample(p->pid, &cpu_ns, &wait_ns, &vcsw)) {
		p->cpu_ns = cpu_ns - p->cpu_ns;
		p->runq_wait_ns =
			wait_ns >= 0 && p->runq_wait_ns >= 0 ? wait_ns - p->runq_wait_ns : -1;
		p->vcsw = vcsw - p->vcsw;
	} else {
		p->cpu_ns = -1;
		p->runq_wait_ns = -1;
		p->vcsw = -1;
	}
	// Asked last: serving GR_SHM_STATS is not part of the phase.
	if (p->have_chan && daemon_stats(o, &after, NULL)) {
		p->chan.doorbells_rung = after.doorbells_rung - p->chan.doorbells_rung;
		p->chan.sleeps = after.sleeps - p->chan.sleeps;
		p->chan.overflows = after.overflows - p->chan.overflows;
	} else {
		p->have_chan = false;
	}
	if (p->n_syscall_fds <= 0)
		return;
	for (int i = 0; i < p->n_syscall_fds; i++) {
		uint64_t count;
		if (read(p->syscall_fds[i], &count, sizeof(count)) != sizeof(count))
			p->n_syscall_fds = -1;
		else
			total += count;
		close(p->syscall_fds[i]);
	}
	if (p->n_syscall_fds > 0)
		p->syscalls = (int64_t)total;
}
