// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// DPDK telemetry endpoints of the server (conf.telemetry): /shmchan/info,
// /shmchan/clients and /shmchan/stats, read with dpdk-telemetry.py on the
// EAL runtime directory's dpdk_telemetry.v2 socket (docs/telemetry.md).
//
// Threads: DPDK runs each callback on a telemetry thread of its own (one per
// connected telemetry client), beside the main thread and the pollers. A
// callback reads the daemon's state as a handler does: under the handler
// lock (which orders it with attach), inside the connection table's lock
// for the clients, and as a registered RCU reader for the channel registry.

#include "channel.h"
#include "clients.h"
#include "config.h"
#include "telemetry.h"

#include "api.h"
#include "type_stats.h"

#include <gr_shm.h>

#include <rte_telemetry.h>
#include <urcu.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Clients /shmchan/clients lists: each column is an array, and DPDK's
// telemetry answer is at most 16 KiB; shmchanctl clients lists them all.
#define TELEMETRY_CLIENTS_MAX 64

static const char *backing_name(uint32_t backing) {
	switch (backing) {
	case GR_SHM_BACKING_MEMFD:
		return "memfd";
	case GR_SHM_BACKING_MEMZONE:
		return "memzone";
	}
	return "";
}

static int tel_info(const char *cmd, const char *params, struct rte_tel_data *d) {
	struct gr_api_server_info info;
	const struct gr_api_server_conf *conf = &info.conf;
	int ret;

	(void)cmd;
	(void)params;
	ret = gr_api_server_info_get(&info);
	if (ret < 0)
		return ret;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(
		d,
		"version",
		conf->app_version != NULL ? conf->app_version : SHMCHAN_VERSION
	);
	rte_tel_data_add_dict_string(d, "library_version", SHMCHAN_VERSION);
	rte_tel_data_add_dict_int(d, "pid", getpid());
	rte_tel_data_add_dict_u64(d, "uptime_ms", info.uptime_ms);
	rte_tel_data_add_dict_u64(d, "start_time", info.start_time);
	rte_tel_data_add_dict_string(d, "file_prefix", conf->file_prefix);
	rte_tel_data_add_dict_int(d, "hugepages", conf->memzones);
	rte_tel_data_add_dict_u64(d, "backings", info.backings);
	rte_tel_data_add_dict_u64(d, "pollers", conf->pollers);
	rte_tel_data_add_dict_u64(d, "poller_spin_us", conf->spin_us);
	rte_tel_data_add_dict_u64(d, "max_clients", info.max_clients);
	rte_tel_data_add_dict_u64(d, "memzone_channels", info.memzone_channels);
	rte_tel_data_add_dict_u64(d, "max_msg_len", info.max_msg_len);
	rte_tel_data_add_dict_u64(d, "channel_batch", info.channel_batch);
	rte_tel_data_add_dict_u64(d, "channel_backlog_bytes", info.channel_backlog_bytes);
	rte_tel_data_add_dict_u64(d, "channel_slow_ms", info.channel_slow_ms);
	rte_tel_data_add_dict_u64(d, "sock_output_high", info.sock_output_high);
	rte_tel_data_add_dict_u64(d, "sock_output_stall_s", info.sock_output_stall_s);
	rte_tel_data_add_dict_u64(d, "max_conn_per_pid", conf->max_conn_per_pid);
	rte_tel_data_add_dict_u64(d, "max_conn_per_uid", conf->max_conn_per_uid);
	rte_tel_data_add_dict_u64(d, "event_backlog", conf->event_backlog_msgs);
	rte_tel_data_add_dict_u64(d, "event_backlog_bytes", conf->event_backlog_bytes);
	rte_tel_data_add_dict_u64(d, "event_subscriptions", conf->event_subs_max);
	rte_tel_data_add_dict_u64(d, "event_memory", conf->event_memory_bytes);
	rte_tel_data_add_dict_int(d, "poller_nice", info.poller_nice);
	if (conf->poller_nice != GR_API_SERVER_NICE_OFF)
		rte_tel_data_add_dict_int(d, "poller_nice_wanted", conf->poller_nice);
	rte_tel_data_add_dict_int(
		d,
		"poller_nice_denied",
		atomic_load_explicit(&server_state.poller_nice_denied, memory_order_relaxed)
	);
	return 0;
}

static int tel_stats(const char *cmd, const char *params, struct rte_tel_data *d) {
	struct gr_shm_stats_resp stats;

	(void)cmd;
	(void)params;
	// The registry is walked inside an RCU read-side critical section,
	// which a thread unknown to liburcu cannot enter: the grace periods
	// would not wait for it. Each telemetry client has a thread of its
	// own, so register for the call only.
	rcu_register_thread();
	channel_stats_fill(&stats);
	rcu_unregister_thread();
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "channels", stats.channels);
	rte_tel_data_add_dict_u64(d, "memzones", stats.memzones);
	rte_tel_data_add_dict_u64(d, "requests", stats.total.requests);
	rte_tel_data_add_dict_u64(d, "req_bytes", stats.total.req_bytes);
	rte_tel_data_add_dict_u64(d, "responses", stats.total.responses);
	rte_tel_data_add_dict_u64(d, "resp_bytes", stats.total.resp_bytes);
	rte_tel_data_add_dict_u64(d, "doorbells_rung", stats.total.doorbells_rung);
	rte_tel_data_add_dict_u64(d, "sleeps", stats.total.sleeps);
	rte_tel_data_add_dict_u64(d, "overflows", stats.total.overflows);
	rte_tel_data_add_dict_u64(d, "detaches", stats.total.detaches);
	rte_tel_data_add_dict_u64(d, "detach_corrupt", stats.total.detach_corrupt);
	rte_tel_data_add_dict_u64(d, "detach_slow", stats.total.detach_slow);
	rte_tel_data_add_dict_u64(d, "detach_lease", stats.total.detach_lease);
	return 0;
}

// One column of /shmchan/clients; the dictionary keeps it once added.
static struct rte_tel_data *tel_column(enum rte_tel_value_type type) {
	struct rte_tel_data *col = rte_tel_data_alloc();

	if (col != NULL)
		rte_tel_data_start_array(col, type);
	return col;
}

// Columns: the telemetry library of DPDK 22.11 nests only arrays of numbers
// or strings in a dictionary, so each field is an array, one entry per
// client, in accept order.
static int tel_clients(const char *cmd, const char *params, struct rte_tel_data *d) {
	struct rte_tel_data *pid, *uid, *transport, *channel, *requests, *responses;
	struct gr_shm_client_info *infos;
	unsigned n, shown;
	int ret;

	(void)cmd;
	(void)params;
	api_lock();
	ret = clients_collect(&infos, &n);
	api_unlock();
	if (ret < 0)
		return ret;
	pid = tel_column(RTE_TEL_INT_VAL);
	uid = tel_column(RTE_TEL_U64_VAL);
	transport = tel_column(RTE_TEL_STRING_VAL);
	channel = tel_column(RTE_TEL_STRING_VAL);
	requests = tel_column(RTE_TEL_U64_VAL);
	responses = tel_column(RTE_TEL_U64_VAL);
	if (pid == NULL || uid == NULL || transport == NULL || channel == NULL ||
	    requests == NULL || responses == NULL) {
		rte_tel_data_free(pid);
		rte_tel_data_free(uid);
		rte_tel_data_free(transport);
		rte_tel_data_free(channel);
		rte_tel_data_free(requests);
		rte_tel_data_free(responses);
		free(infos);
		return -ENOMEM;
	}
	shown = n < TELEMETRY_CLIENTS_MAX ? n : TELEMETRY_CLIENTS_MAX;
	for (unsigned i = 0; i < shown; i++) {
		const struct gr_shm_client_info *c = &infos[i];
		bool shm = c->transport == GR_SHM_TRANSPORT_SHM;

		rte_tel_data_add_array_int(pid, c->pid);
		rte_tel_data_add_array_u64(uid, c->uid);
		rte_tel_data_add_array_string(transport, shm ? backing_name(c->backing) : "socket");
		rte_tel_data_add_array_string(channel, c->channel);
		rte_tel_data_add_array_u64(
			requests,
			c->sock_requests + c->channel_counters.requests
		);
		rte_tel_data_add_array_u64(
			responses,
			c->sock_responses + c->channel_counters.responses
		);
	}
	free(infos);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "clients", n);
	rte_tel_data_add_dict_u64(d, "shown", shown);
	rte_tel_data_add_dict_container(d, "pid", pid, 0);
	rte_tel_data_add_dict_container(d, "uid", uid, 0);
	rte_tel_data_add_dict_container(d, "transport", transport, 0);
	rte_tel_data_add_dict_container(d, "channel", channel, 0);
	rte_tel_data_add_dict_container(d, "requests", requests, 0);
	rte_tel_data_add_dict_container(d, "responses", responses, 0);
	return 0;
}

// Types /shmchan/types lists, for the same 16 KiB (shmchanctl stats
// --types lists them all).
#define TELEMETRY_TYPES_MAX 64

// Every registered type's figures, in a malloc'ed array of *n. Returns 0 or
// -ENOMEM.
static int types_collect(struct gr_shm_type_stats **out, unsigned *n) {
	const struct gr_api_handler *handler;
	const struct type_stats *s;
	unsigned i;

	api_lock();
	*out = calloc(api_handler_count() + 1, sizeof(**out));
	for (i = 0; *out != NULL && (handler = api_handler_at(i, &s)) != NULL; i++)
		type_stats_fill(&(*out)[i], s, handler->request_type, handler->name);
	api_unlock();
	*n = i;
	return *out != NULL ? 0 : -ENOMEM;
}

// One type's figures, with its histograms (params: its name, or its
// number, 0x5348... or decimal).
static int tel_type_one(
	const struct gr_shm_type_stats *t,
	unsigned n,
	const char *params,
	struct rte_tel_data *d
) {
	struct rte_tel_data *handle, *queue;
	unsigned long type;
	char *end;
	unsigned i;

	type = strtoul(params, &end, 0);
	for (i = 0; i < n; i++)
		if (strcmp(t[i].name, params) == 0 || (*end == '\0' && t[i].type == type))
			break;
	if (i == n)
		return -EINVAL;
	t = &t[i];
	handle = tel_column(RTE_TEL_U64_VAL);
	queue = tel_column(RTE_TEL_U64_VAL);
	if (handle == NULL || queue == NULL) {
		rte_tel_data_free(handle);
		rte_tel_data_free(queue);
		return -ENOMEM;
	}
	for (unsigned b = 0; b < GR_SHM_HIST_BUCKETS; b++) {
		rte_tel_data_add_array_u64(handle, t->handle_hist[b]);
		rte_tel_data_add_array_u64(queue, t->queue_hist[b]);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", t->name);
	rte_tel_data_add_dict_u64(d, "type", t->type);
	rte_tel_data_add_dict_u64(d, "count", t->count);
	rte_tel_data_add_dict_u64(d, "errors", t->errors);
	rte_tel_data_add_dict_u64(d, "rejected", t->rejected);
	rte_tel_data_add_dict_u64(d, "deferred", t->deferred);
	rte_tel_data_add_dict_u64(d, "handle_ns_sum", t->handle_ns_sum);
	rte_tel_data_add_dict_u64(d, "queue_ns_sum", t->queue_ns_sum);
	rte_tel_data_add_dict_container(d, "handle_hist_log2_ns", handle, 0);
	rte_tel_data_add_dict_container(d, "queue_hist_log2_ns", queue, 0);
	return 0;
}

// Without params: a column per figure, an entry per type in registration
// order (no histograms: /shmchan/types,NAME gives a type's).
static int tel_types(const char *cmd, const char *params, struct rte_tel_data *d) {
	struct rte_tel_data *cols[7];
	struct gr_shm_type_stats *t;
	unsigned n, shown, c;
	int ret;

	(void)cmd;
	ret = types_collect(&t, &n);
	if (ret < 0)
		return ret;
	if (params != NULL && params[0] != '\0') {
		ret = tel_type_one(t, n, params, d);
		free(t);
		return ret;
	}
	cols[0] = tel_column(RTE_TEL_STRING_VAL);
	for (c = 1; c < 7; c++)
		cols[c] = tel_column(RTE_TEL_U64_VAL);
	for (c = 0; c < 7; c++)
		if (cols[c] == NULL)
			break;
	if (c < 7) {
		for (c = 0; c < 7; c++)
			rte_tel_data_free(cols[c]);
		free(t);
		return -ENOMEM;
	}
	shown = n < TELEMETRY_TYPES_MAX ? n : TELEMETRY_TYPES_MAX;
	for (unsigned i = 0; i < shown; i++) {
		rte_tel_data_add_array_string(cols[0], t[i].name);
		rte_tel_data_add_array_u64(cols[1], t[i].type);
		rte_tel_data_add_array_u64(cols[2], t[i].count);
		rte_tel_data_add_array_u64(cols[3], t[i].errors);
		rte_tel_data_add_array_u64(cols[4], t[i].rejected);
		rte_tel_data_add_array_u64(cols[5], t[i].handle_ns_sum);
		rte_tel_data_add_array_u64(cols[6], t[i].queue_ns_sum);
	}
	free(t);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "types", n);
	rte_tel_data_add_dict_u64(d, "shown", shown);
	rte_tel_data_add_dict_container(d, "name", cols[0], 0);
	rte_tel_data_add_dict_container(d, "type", cols[1], 0);
	rte_tel_data_add_dict_container(d, "count", cols[2], 0);
	rte_tel_data_add_dict_container(d, "errors", cols[3], 0);
	rte_tel_data_add_dict_container(d, "rejected", cols[4], 0);
	rte_tel_data_add_dict_container(d, "handle_ns_sum", cols[5], 0);
	rte_tel_data_add_dict_container(d, "queue_ns_sum", cols[6], 0);
	return 0;
}

int telemetry_init(void) {
	// DPDK telemetry has no unregister: the endpoints stay from the first
	// start on, and answer with what is there (no server: /shmchan/info
	// fails, the rest count nothing).
	static bool registered;
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} endpoints[] = {
		{"/shmchan/info",
		 tel_info,
		 "the server's version, pid, uptime, configuration, limits"},
		{"/shmchan/clients",
		 tel_clients,
		 "clients of the server: pid, uid, transport, counts"},
		{"/shmchan/stats", tel_stats, "the server's channel counters since start"},
		{"/shmchan/types",
		 tel_types,
		 "per request type: count, errors, handling and queueing time; ,NAME: its "
		 "log2 histograms"},
	};
	int ret;

	if (registered)
		return 0;
	for (unsigned i = 0; i < sizeof(endpoints) / sizeof(endpoints[0]); i++) {
		ret = rte_telemetry_register_cmd(
			endpoints[i].cmd,
			endpoints[i].fn,
			endpoints[i].help
		);
		if (ret < 0) {
			LOG(ERR, "telemetry endpoint %s: %s", endpoints[i].cmd, strerror(-ret));
			return ret;
		}
	}
	registered = true;
	LOG(INFO,
	    "telemetry endpoints /shmchan/info, /shmchan/clients, /shmchan/stats, "
	    "/shmchan/types");
	return 0;
}
