// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The channels' counters: those of the channels already freed, the totals
// of GR_SHM_STATS, and the lists of GR_SHM_CHANNEL_LIST and of the clients
// (channel_of_client()).

#include "channel_priv.h"
#include "api.h"
#include "channel.h"

#include <gr_shm.h>
#include <shmchan.h>

// Inline rcu_dereference() as channel_serve.c does in every poller pass
// (allowed for code under any licence, unlike _LGPL_SOURCE).
#define URCU_INLINE_SMALL_FUNCTIONS
#include <urcu.h>
#include <urcu/rculist.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The per-channel counters (struct shmchan_server_stats) that the totals of
// GR_SHM_STATS (struct gr_shm_counters) add up.
#define CHANNEL_COUNTERS(X)                                                                        \
	X(requests) X(req_bytes) X(responses) X(resp_bytes) X(doorbells_rung) X(sleeps) X(overflows)

// Counters of channels already freed (added at detach by the main thread,
// read by the stats handlers on any thread).
struct gr_shm_counters retired;

// Add a channel's counters (written by its poller) into to. Any thread: the
// loads are atomic, and so are the adds, since the retired totals are read
// by the stats handlers on other threads.
// With since not NULL, add only what s counted after the snapshot since.
void counters_add_since(
	struct gr_shm_counters *to,
	const struct shmchan_server_stats *s,
	const struct shmchan_server_stats *since
) {
#define COUNTER_ADD(field)                                                                         \
	__atomic_fetch_add(                                                                        \
		&to->field,                                                                        \
		__atomic_load_n(&s->field, __ATOMIC_RELAXED) - (since != NULL ? since->field : 0), \
		__ATOMIC_RELAXED                                                                   \
	);
	CHANNEL_COUNTERS(COUNTER_ADD)
#undef COUNTER_ADD
}

void counters_add(struct gr_shm_counters *to, const struct shmchan_server_stats *s) {
	counters_add_since(to, s, NULL);
}

// A copy of a channel's counters while its poller may still write them.
void stats_snapshot(struct shmchan_server_stats *to, const struct shmchan_server_stats *s) {
#define STAT_LOAD(field) to->field = __atomic_load_n(&s->field, __ATOMIC_RELAXED);
	CHANNEL_COUNTERS(STAT_LOAD)
#undef STAT_LOAD
}

static void channel_counters(const struct channel *ch, struct gr_shm_counters *c) {
	memset(c, 0, sizeof(*c));
	counters_add(c, shmchan_server_stats(ch->server));
}

void channel_stats_fill(struct gr_shm_stats_resp *resp) {
	struct channel *ch;

	memset(resp, 0, sizeof(*resp));
	resp->total.detaches = __atomic_load_n(&retired.detaches, __ATOMIC_RELAXED);
	resp->total.detach_corrupt = __atomic_load_n(&retired.detach_corrupt, __ATOMIC_RELAXED);
	resp->total.detach_slow = __atomic_load_n(&retired.detach_slow, __ATOMIC_RELAXED);
	resp->total.detach_lease = __atomic_load_n(&retired.detach_lease, __ATOMIC_RELAXED);
	resp->total.detach_request = __atomic_load_n(&retired.detach_request, __ATOMIC_RELAXED);
#define RETIRED_LOAD(field) resp->total.field = __atomic_load_n(&retired.field, __ATOMIC_RELAXED);
	CHANNEL_COUNTERS(RETIRED_LOAD)
#undef RETIRED_LOAD
	rcu_read_lock();
	cds_list_for_each_entry_rcu (ch, &registry, node) {
		if (atomic_load_explicit(&ch->state, memory_order_relaxed) == CHANNEL_CLOSED)
			continue;
		counters_add(&resp->total, shmchan_server_stats(ch->server));
		resp->channels++;
	}
	rcu_read_unlock();
	resp->memzones = memzone_pool_in_use();
}

static struct gr_api_out channel_stats(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_shm_stats_resp *resp = malloc(sizeof(*resp));

	(void)request;
	(void)len;
	(void)ctx;
	if (resp == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	channel_stats_fill(resp);
	return gr_api_out(0, sizeof(*resp), resp);
}

static struct gr_api_out channel_list(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_shm_channel_info info;
	struct channel *ch;
	int ret = 0;

	(void)request;
	(void)len;
	rcu_read_lock();
	cds_list_for_each_entry_rcu (ch, &registry, node) {
		memset(&info, 0, sizeof(info));
		snprintf(info.name, sizeof(info.name), "%s", ch->name);
		info.backing = ch->mem.backing;
		info.poller = ch->poller;
		info.client_pid = ch->ctx.peer_pid;
		info.state = atomic_load_explicit(&ch->state, memory_order_relaxed);
		channel_counters(ch, &info.counters);
		ret = gr_api_send(ctx, sizeof(info), &info);
		if (ret < 0)
			break;
	}
	rcu_read_unlock();
	if (ret < 0)
		return gr_api_out(-ret, 0, NULL);
	return gr_api_out(0, 0, NULL);
}

bool channel_of_client(const struct gr_api_ctx *sock_ctx, struct gr_shm_client_info *info) {
	const struct channel *ch = sock_ctx->lease_arg;

	if (sock_ctx->lease_lost != channel_detach)
		return false;
	snprintf(info->channel, sizeof(info->channel), "%s", ch->name);
	info->backing = ch->mem.backing;
	info->poller = ch->poller;
	info->channel_state = atomic_load_explicit(&ch->state, memory_order_relaxed);
	channel_counters(ch, &info->channel_counters);
	return true;
}

// Registered by gr_api_server_start() (api.h).
static struct gr_api_handler handlers_channel_stats_array[] = {
	GR_API_HANDLER_INIT(GR_SHM_STATS, channel_stats),
	GR_API_HANDLER_INIT(GR_SHM_CHANNEL_LIST, channel_list),
};
API_HANDLER_TABLE(handlers_channel_stats, handlers_channel_stats_array);
