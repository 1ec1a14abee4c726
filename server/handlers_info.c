// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// GR_SHM_DAEMON_INFO: which program serves (its name, pid, version and
// start) and what the server library runs with. Served by the library
// itself, so that shmchanctl info works against any application that
// embeds it.

// program_invocation_short_name.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "api.h"
#include "config.h"
#include "handlers_info.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void server_daemon_info(const struct gr_api_server_info *server, struct gr_shm_daemon_info *info) {
	const struct gr_api_server_conf *conf = &server->conf;

	memset(info, 0, sizeof(*info));
	info->pid = getpid();
	info->pollers = conf->pollers;
	info->poller_spin_us = conf->spin_us;
	info->backings = server->backings;
	snprintf(info->file_prefix, sizeof(info->file_prefix), "%s", conf->file_prefix);
	// The application's version (shmchand's is the project's).
	snprintf(
		info->version,
		sizeof(info->version),
		"%s",
		conf->app_version != NULL ? conf->app_version : ""
	);
	info->uptime_ms = server->uptime_ms;
	info->start_time = server->start_time;
	// Memzones are offered exactly when the daemon has hugepages.
	if (conf->memzones)
		info->flags |= GR_SHM_INFO_HUGEPAGES;
	if (conf->telemetry)
		info->flags |= GR_SHM_INFO_TELEMETRY;
	info->max_clients = server->max_clients;
	info->memzone_channels = server->memzone_channels;
	info->max_msg_len = server->max_msg_len;
	info->channel_batch = server->channel_batch;
	info->channel_backlog_bytes = server->channel_backlog_bytes;
	info->channel_slow_ms = server->channel_slow_ms;
	info->sock_output_high = server->sock_output_high;
	info->sock_output_stall_s = server->sock_output_stall_s;
	info->max_conn_per_pid = conf->max_conn_per_pid;
	info->max_conn_per_uid = conf->max_conn_per_uid;
	info->event_backlog = conf->event_backlog_msgs;
	// At most GR_API_SERVER_EVENT_BACKLOG_BYTES_MAX (1 GiB).
	info->event_backlog_bytes = (uint32_t)conf->event_backlog_bytes;
	info->flags |= GR_SHM_INFO_POLLER_NICE;
	info->poller_nice_wanted = conf->poller_nice;
	info->poller_nice = server->poller_nice;
	if (atomic_load_explicit(&server_state.poller_nice_denied, memory_order_relaxed))
		info->flags |= GR_SHM_INFO_POLLER_NICE_DENIED;
	info->flags |= GR_SHM_INFO_EVENT_BOUNDS;
	info->event_subs_max = conf->event_subs_max;
	info->event_memory_bytes = conf->event_memory_bytes;
	info->flags |= GR_SHM_INFO_PROGRAM;
	snprintf(info->program, sizeof(info->program), "%s", program_invocation_short_name);
	snprintf(info->server_version, sizeof(info->server_version), "%s", SHMCHAN_VERSION);
}

// Main thread or poller, under the handler lock.
static struct gr_api_out daemon_info(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_api_server_info server;
	struct gr_shm_daemon_info *info;
	int ret;

	(void)request;
	(void)len;
	(void)ctx;
	ret = gr_api_server_info_get(&server);
	if (ret < 0)
		return gr_api_out((uint32_t)-ret, 0, NULL);
	info = malloc(sizeof(*info));
	if (info == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	server_daemon_info(&server, info);
	return gr_api_out(0, sizeof(*info), info);
}

static struct gr_api_handler handlers_info_array[] = {
	GR_API_HANDLER_INIT(GR_SHM_DAEMON_INFO, daemon_info),
};
API_HANDLER_TABLE(handlers_info, handlers_info_array);
