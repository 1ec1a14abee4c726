// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What the server runs with (gr_api_server_info_get()).

#include "channel.h"
#include "config.h"
#include "sock.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define NS_PER_MS 1000000ull

void server_info_fill(struct gr_api_server_info *info) {
	int tid, nice;

	memset(info, 0, sizeof(*info));
	info->conf = server_conf;
	info->backings = server_backings_offered();
	info->memzone_channels = server_state.memzone_channels;
	// As getpriority() reads it now: what the poller could take, or
	// whatever renice set since. Before the pollers run: the process's.
	// On Linux the nice value is each thread's.
	tid = atomic_load_explicit(&server_state.poller0_tid, memory_order_acquire);
	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)(tid != 0 ? tid : getpid()));
	info->poller_nice = nice == -1 && errno != 0 ? 0 : nice;
	info->uptime_ms = (server_monotonic_ns() - server_state.start_ns) / NS_PER_MS;
	info->start_time = (uint64_t)server_state.start_time;
	info->max_clients = GR_API_SERVER_MAX_CLIENTS;
	info->max_msg_len = GR_API_MAX_MSG_LEN;
	info->channel_batch = CHANNEL_TURN_RESPONSES;
	info->channel_backlog_bytes = CHANNEL_BACKLOG_MAX_BYTES;
	info->channel_slow_ms = CHANNEL_SLOW_LIMIT_MS;
	info->sock_output_high = SOCK_OUTPUT_HIGH;
	info->sock_output_stall_s = SOCK_OUTPUT_STALL_SEC;
}
