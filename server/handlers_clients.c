// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// GR_SHM_CLIENT_LIST: every connection of the socket server, with its
// credentials, its socket counters and, when it attached one, its channel.

#include "clients.h"
#include "api.h"
#include "channel.h"
#include "config.h"
#include "sock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_MS 1000000ull

struct clients_walk {
	struct gr_shm_client_info *infos;
	unsigned n, cap;
};

// Inside sock_clients_walk(), with the table's lock held: fill one entry,
// the channel's fields too while its lease holds it alive.
static void client_add(
	const struct gr_api_ctx *ctx,
	bool lease_held,
	const struct sock_conn_counters *counters,
	uint64_t age_ns,
	void *arg
) {
	struct clients_walk *walk = arg;
	struct gr_shm_client_info *info;

	if (walk->n >= walk->cap)
		return;
	info = &walk->infos[walk->n++];
	memset(info, 0, sizeof(*info));
	info->pid = ctx->peer_pid;
	info->uid = ctx->peer_uid;
	info->gid = ctx->peer_gid;
	info->connected_ms = age_ns / NS_PER_MS;
	info->sock_requests = counters->requests;
	info->sock_req_bytes = counters->req_bytes;
	info->sock_responses = counters->responses;
	info->sock_resp_bytes = counters->resp_bytes;
	info->transport = GR_SHM_TRANSPORT_SOCKET;
	info->channel_state = GR_SHM_CHANNEL_NONE;
	if (lease_held && channel_of_client(ctx, info))
		info->transport = GR_SHM_TRANSPORT_SHM;
}

// Counts the connections, so that the walk that fills needs no allocation.
static void client_count(
	const struct gr_api_ctx *ctx,
	bool lease_held,
	const struct sock_conn_counters *counters,
	uint64_t age_ns,
	void *arg
) {
	(void)ctx;
	(void)lease_held;
	(void)counters;
	(void)age_ns;
	(*(unsigned *)arg)++;
}

int clients_collect(struct gr_shm_client_info **infos, unsigned *n) {
	struct clients_walk walk = {0};

	// Count, then fill: the main thread accepts and frees connections
	// without the handler lock, so the table may change between the two
	// walks. The fill stops at the count: a connection accepted in between
	// is left out of this answer.
	sock_clients_walk(client_count, &walk.cap);
	walk.infos = calloc(walk.cap > 0 ? walk.cap : 1, sizeof(*walk.infos));
	if (walk.infos == NULL) {
		LOG(ERR, "no memory to list %u clients", walk.cap);
		return -ENOMEM;
	}
	sock_clients_walk(client_add, &walk);
	*infos = walk.infos;
	*n = walk.n;
	return 0;
}

// Main thread or poller, under the handler lock.
static struct gr_api_out client_list(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_shm_client_info *infos;
	unsigned n;
	int ret;

	(void)request;
	(void)len;
	ret = clients_collect(&infos, &n);
	if (ret < 0)
		return gr_api_out(-ret, 0, NULL);
	// Sent after the walk: a send may close the asking connection, which
	// takes the table's lock.
	for (unsigned i = 0; i < n && ret == 0; i++)
		ret = gr_api_send(ctx, sizeof(infos[i]), &infos[i]);
	free(infos);
	if (ret < 0)
		return gr_api_out(-ret, 0, NULL);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler handlers_clients_array[] = {
	GR_API_HANDLER_INIT(GR_SHM_CLIENT_LIST, client_list),
};
API_HANDLER_TABLE(handlers_clients, handlers_clients_array);
