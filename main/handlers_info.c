// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Requests of our module that need no channel state: daemon info and echo.

#include "api.h"
#include "channel.h"
#include "shmchand.h"
#include "sock.h"

#include <gr_shm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000ull
#define NS_PER_MS 1000000ull

uint32_t shmchand_backings_offered(void) {
	uint32_t backings = GR_SHM_BACKING_MEMFD;

	if (!shmchand_config.shm_enabled)
		return 0;
	// A primary without hugepage files accepts no secondary.
	if (shmchand_config.have_hugepages)
		backings |= GR_SHM_BACKING_MEMZONE;
	return backings;
}

uint64_t shmchand_monotonic_ns(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

void shmchand_daemon_info(struct gr_shm_daemon_info *info) {
	const struct shmchand_config *cfg = &shmchand_config;

	memset(info, 0, sizeof(*info));
	info->pid = getpid();
	info->pollers = cfg->pollers;
	info->poller_spin_us = cfg->spin_us;
	info->backings = shmchand_backings_offered();
	_Static_assert(sizeof(info->file_prefix) == sizeof(cfg->file_prefix), "same bound");
	memcpy(info->file_prefix, cfg->file_prefix, sizeof(info->file_prefix));
	info->file_prefix[sizeof(info->file_prefix) - 1] = '\0';
	snprintf(info->version, sizeof(info->version), "%s", SHMCHAN_VERSION);
	if (cfg->start_ns != 0)
		info->uptime_ms = (shmchand_monotonic_ns() - cfg->start_ns) / NS_PER_MS;
	info->start_time = (uint64_t)cfg->start_time;
	if (cfg->have_hugepages)
		info->flags |= GR_SHM_INFO_HUGEPAGES;
	if (cfg->telemetry)
		info->flags |= GR_SHM_INFO_TELEMETRY;
	info->max_clients = SOCK_MAX_CLIENTS;
	info->memzone_channels = cfg->memzone_channels;
	info->max_msg_len = GR_API_MAX_MSG_LEN;
	info->channel_batch = CHANNEL_BATCH;
	info->channel_backlog_bytes = CHANNEL_BACKLOG_MAX_BYTES;
	info->channel_slow_ms = CHANNEL_SLOW_LIMIT_MS;
	info->sock_output_high = SOCK_OUTPUT_HIGH;
	info->sock_output_stall_s = SOCK_OUTPUT_STALL_SEC;
	info->max_conn_per_pid = cfg->max_conn_per_pid;
	info->max_conn_per_uid = cfg->max_conn_per_uid;
	info->event_backlog = cfg->event_backlog_msgs;
	// At most EVENT_BACKLOG_BYTES_MAX (1 GiB), which the option checks.
	info->event_backlog_bytes = (uint32_t)cfg->event_backlog_bytes;
	info->flags |= GR_SHM_INFO_POLLER_NICE;
	info->poller_nice_wanted = cfg->poller_nice;
	// As getpriority() reads it now: --poller-nice if the poller could
	// take it, or whatever renice set since. Before the pollers run: the
	// daemon's own. On Linux the nice value is each thread's.
	int tid = atomic_load_explicit(&cfg->poller0_tid, memory_order_acquire);
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, (id_t)(tid != 0 ? tid : getpid()));
	info->poller_nice = nice == -1 && errno != 0 ? 0 : nice;
}

// Main thread or poller, under the handler lock.
static struct api_out daemon_info(const void *request, uint32_t len, struct api_ctx *ctx) {
	struct gr_shm_daemon_info *info = malloc(sizeof(*info));

	(void)request;
	(void)len;
	(void)ctx;
	if (info == NULL)
		return api_out(ENOMEM, 0, NULL);
	shmchand_daemon_info(info);
	return api_out(0, sizeof(*info), info);
}

// The response is the request's payload itself (copied out by the
// transport before the dispatch returns): no allocation, whatever the size.
static struct api_out echo(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)ctx;
	return api_out_borrowed(0, len, request);
}

API_HANDLER(GR_SHM_DAEMON_INFO, daemon_info);
API_HANDLER(GR_SHM_ECHO, echo);
