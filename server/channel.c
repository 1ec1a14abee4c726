// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Shared-memory channels of the daemon.
//
// Threads: the main thread attaches and detaches channels (it owns the
// registry list and every channel's lifetime); each poller serves the
// channels assigned to it. The registry is an RCU list of every channel, read
// by the handlers that list or count them; each poller has an RCU list of its
// own channels beside it, so that a pass costs its own channels only, however
// many the other pollers serve. Readers walk either list inside
// rcu_read_lock() without any lock, the main thread adds a channel to both
// and removes it from both, and a channel's memory and fds are freed by
// call_rcu() only after a grace period, so no reader ever touches a freed
// channel.
//
// Channel states: UP (served) -> FAULTED (a poller found the client at fault
// and shut the lease socket down; no longer served) -> CLOSED (the main
// thread saw the lease end and removed the channel; freed after the grace
// period). A channel whose lease ends while UP goes straight to CLOSED.
//
// A memzone goes from client to client: the daemon marks a region detached
// (shmchan_server_detach()) as soon as it gives up on it, gives every
// channel a new generation, and keeps a zone it took from a live client out
// of the pool until that process has exited (the memzone pool:
// channel_memzone.c).
//
// This file: attach and detach, and each channel's lifetime. The pollers
// serve the channels in channel_serve.c; their counters and the stats and
// list handlers are in channel_stats.c.

#include "api.h"
#include "channel.h"
#include "channel_priv.h"
#include "deferred.h"
#include "stream.h"
#include "event.h"
#include "fd_budget.h"
#include "poller.h"
#include "config.h"

#include <gr_shm.h>
#include <shmchan.h>
#include <shmchan_probes.h>

#include <rte_cycles.h>
// Inline rcu_dereference() as channel_serve.c does in every poller pass
// (allowed for code under any licence, unlike _LGPL_SOURCE).
#define URCU_INLINE_SMALL_FUNCTIONS
#include <urcu.h>
#include <urcu/rculist.h>

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

CDS_LIST_HEAD(registry);
// The channels of each poller, in the order they attached (main thread
// writes, poller i reads poller_channels[i]).
struct cds_list_head poller_channels[GR_API_SERVER_MAX_POLLERS];
// Bumped by the main thread after each change of poller_channels[i], read by
// poller i: its view (channel_serve.c) is stale once this moved.
_Atomic uint64_t poller_channels_gen[GR_API_SERVER_MAX_POLLERS];
static unsigned n_channels; // main thread
static unsigned next_poller; // main thread: round robin
static unsigned channel_seq; // main thread: unique names
static uint32_t channel_generation; // main thread: the last one given

// After the grace period: nothing can reach the channel any more.
static void channel_free(struct rcu_head *head) {
	struct channel *ch = caa_container_of(head, struct channel, rcu);

	// After the grace period no poller touches the counters any more, nor
	// the client's faults: say what is left of them.
	counters_add_since(&retired, shmchan_server_stats(ch->server), &ch->retired_at);
	api_faults_log(&ch->ctx, true);
	// No poller reads its deferred replies any more, nor runs its stream.
	api_deferred_release(&ch->ctx);
	api_stream_close(&ch->ctx);
	// No poller serves the channel any more: its subscriber can go.
	event_sub_free(ch->ctx.events);
	backlog_free(ch);
	shmchan_server_destroy(ch->server);
	fd_budget_give(channel_fds(ch->mem.backing));
	channel_mem_free(&ch->mem, &ch->holder);
	if (ch->lease_fd >= 0)
		close(ch->lease_fd);
	free(ch);
}

// How a channel ended, besides a fault.
enum channel_end_how {
	END_GIVEN_BACK, // the client asked for it (GR_SHM_DETACH): the lease lives on
	END_PEER_CLOSED, // the client closed its end of the lease
	END_CUT, // the daemon closed the lease with the client's end open
};

// Main thread: stop serving the channel and free it after the grace period.
static void channel_end(struct channel *ch, enum channel_end_how how) {
	uint32_t prev = atomic_exchange(&ch->state, CHANNEL_CLOSED);
	bool given_back = how == END_GIVEN_BACK;

	if (prev == CHANNEL_CLOSED)
		return;
	// Before the zone can go back to the pool: a client still running
	// fails its next ring operation.
	shmchan_server_detach(ch->server);
	// The daemon gave up on a client that did not go: it may still write
	// into its zone.
	if (prev == CHANNEL_FAULTED || how == END_CUT)
		channel_zone_hold(ch);
	// Its subscriptions end with it, at once; the subscriber itself goes
	// after the grace period (channel_free()): the poller may still be in
	// its last pass, and may have just made it (acquire: see
	// subscribe_common() in server/handlers_event.c).
	struct event_sub *events = __atomic_load_n(&ch->ctx.events, __ATOMIC_ACQUIRE);
	if (events != NULL)
		event_unsubscribe_all(events);
	// Its deferred replies are dropped, and the open ones answer
	// -ECONNRESET; the poller's last pass may still send what it took.
	api_deferred_close(&ch->ctx);
	cds_list_del_rcu(&ch->node);
	cds_list_del_rcu(&ch->poller_node);
	// Before call_rcu(): a poller section that still reads the old value
	// began before the grace period (see struct poller_view).
	atomic_fetch_add_explicit(&poller_channels_gen[ch->poller], 1, memory_order_release);
	poller_unwatch(ch->poller, ch->fds[0]);
	n_channels--;

	// The poller may still be in its last pass over the channel: its
	// counters are final only after the grace period. Retire them now, so
	// that the totals never drop, and what a racing pass adds when the
	// channel is freed (channel_free()).
	stats_snapshot(&ch->retired_at, shmchan_server_stats(ch->server));
	counters_add(&retired, &ch->retired_at);
	__atomic_fetch_add(&retired.detaches, 1, __ATOMIC_RELAXED);
	if (prev == CHANNEL_FAULTED) {
		if (ch->fault == FAULT_SLOW)
			__atomic_fetch_add(&retired.detach_slow, 1, __ATOMIC_RELAXED);
		else
			__atomic_fetch_add(&retired.detach_corrupt, 1, __ATOMIC_RELAXED);
	} else if (given_back) {
		__atomic_fetch_add(&retired.detach_request, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_add(&retired.detach_lease, 1, __ATOMIC_RELAXED);
	}
	// Given back: the handler logs it, through its client's faults. The
	// end of its lease, routine, follows its connection's rate limit.
	if (!given_back && (prev == CHANNEL_FAULTED || !ch->ctx.log_quiet))
		LOG(INFO,
		    "channel %s (pid %d) detached: %s",
		    ch->name,
		    (int)ch->ctx.peer_pid,
		    prev == CHANNEL_FAULTED ? ch->fault_reason
		    : how == END_CUT	    ? "lease closed by the server"
					    : "lease closed");
	struct gr_shm_event_channel_detached ev = {
		.pid = ch->ctx.peer_pid,
		.reason = prev != CHANNEL_FAULTED
				  ? (given_back ? GR_SHM_DETACH_REQUEST : GR_SHM_DETACH_LEASE)
			  : ch->fault == FAULT_SLOW ? GR_SHM_DETACH_SLOW
						    : GR_SHM_DETACH_CORRUPT,
	};
	snprintf(ev.name, sizeof(ev.name), "%s", ch->name);
	// The reason as the event has it (GR_SHM_DETACH_*), and the text.
	SHMCHAN_PROBE(
		channel_detach,
		ch->name,
		ch->ctx.peer_pid,
		ev.reason,
		prev == CHANNEL_FAULTED ? ch->fault_reason : ""
	);
	gr_api_event_publish(GR_SHM_EVENT_CHANNEL_DETACHED, &ev, sizeof(ev));
	call_rcu(&ch->rcu, channel_free);
}

// Main thread: the lease (socket) ended, or the daemon stops.
void channel_detach(void *arg, bool peer_closed) {
	channel_end(arg, peer_closed ? END_PEER_CLOSED : END_CUT);
}

static struct channel *
channel_create(const struct gr_api_ctx *sock_ctx, enum shmchan_backing backing, int *err) {
	struct channel *ch = calloc(1, sizeof(*ch));
	int ret;

	if (ch == NULL) {
		*err = ENOMEM;
		return NULL;
	}
	ch->lease_fd = -1;
	ch->holder.pidfd = -1;
	ch->mem.fd = -1;
	ch->mem.backing = backing;
	snprintf(
		ch->name,
		sizeof(ch->name),
		CHANNEL_MEMZONE_PREFIX "%d-%u",
		(int)getpid(),
		channel_seq++
	);
	ret = shmchan_geometry_init(&ch->geometry, SHMCHAN_RING_CELLS);
	// A new generation for every channel (never 0, a wiped region's): a
	// client of a zone's earlier channel then fails its lease check.
	if (++channel_generation == 0)
		channel_generation = 1;
	ch->geometry.generation = channel_generation;
	if (ret == 0)
		ret = channel_mem_alloc(&ch->mem, backing, ch->name, ch->geometry.region_size);
	if (ret == 0) {
		snprintf(ch->name, sizeof(ch->name), "%s", ch->mem.name);
		ret = shmchan_server_create(&ch->mem, &ch->geometry, &ch->server);
	}
	if (ret < 0) {
		LOG(ERR, "channel %s: %s", ch->name, strerror(-ret));
		goto fail;
	}
	ch->lease_fd = fcntl(sock_ctx->sock_fd, F_DUPFD_CLOEXEC, 0);
	if (ch->lease_fd < 0) {
		ret = -errno;
		LOG(ERR, "channel %s: dup lease socket: %s", ch->name, strerror(errno));
		goto fail;
	}
	ch->fds[0] = shmchan_server_req_fd(ch->server);
	ch->fds[1] = shmchan_server_resp_fd(ch->server);
	ch->fds[2] = ch->mem.fd;
	ch->n_fds = backing == SHMCHAN_BACKING_MEMFD ? 3 : 2;
	ch->ctx.transport = &shm_transport;
	ch->ctx.priv = ch;
	ch->ctx.hello_done = true; // said on the socket that holds the lease
	ch->ctx.api_version = sock_ctx->api_version;
	ch->ctx.peer_pid = sock_ctx->peer_pid;
	ch->ctx.peer_uid = sock_ctx->peer_uid;
	ch->ctx.peer_gid = sock_ctx->peer_gid;
	ch->ctx.log_quiet = sock_ctx->log_quiet;
	ch->ctx.sock_fd = -1;
	ch->poller = next_poller++ % poller_count();
	atomic_init(&ch->state, CHANNEL_UP);
	fd_budget_take(channel_fds(backing));
	return ch;
fail:
	if (ch->server != NULL)
		shmchan_server_destroy(ch->server);
	channel_mem_free(&ch->mem, NULL);
	if (ch->lease_fd >= 0)
		close(ch->lease_fd);
	free(ch);
	*err = -ret;
	return NULL;
}

static struct gr_api_out channel_attach(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct gr_shm_attach_req *req = request;
	enum shmchan_backing backing;
	struct gr_shm_attach_resp *resp;
	struct channel *ch;
	struct gr_api_out out;
	uint32_t offered;
	int err;

	(void)len;
	if (ctx->sock_fd < 0)
		return gr_api_out(EINVAL, 0, NULL); // only over the socket: it is the lease
	if (!server_conf.shm_enabled || poller_count() == 0)
		return gr_api_out(ENOTSUP, 0, NULL);
	if (ctx->lease_lost != NULL)
		return gr_api_out(EEXIST, 0, NULL);
	// One event subscriber per connection: once attached, the connection's
	// events go over its channel, and its socket subscribes no more
	// (server/handlers_event.c). A socket that has subscriptions or events
	// to deliver keeps them, and stays on the socket.
	if (ctx->events != NULL && event_sub_busy(ctx->events)) {
		api_fault(ctx, API_FAULT_ATTACH_SUBSCRIBED, NULL, 0, 0);
		return gr_api_out(EBUSY, 0, NULL);
	}
	if (req->layout_version != SHMCHAN_LAYOUT_VERSION) {
		api_fault(
			ctx,
			API_FAULT_ATTACH_LAYOUT,
			NULL,
			req->layout_version,
			SHMCHAN_LAYOUT_VERSION
		);
		return gr_api_out(EPROTO, 0, NULL);
	}
	offered = server_backings_offered();
	// A secondary asks for both and gets the memzone; anyone else gets the
	// memfd. The memzone is never handed out without being asked for.
	if (req->backings & offered & GR_SHM_BACKING_MEMZONE &&
	    memzone_pool_in_use() < memzone_pool_zones()) {
		backing = SHMCHAN_BACKING_MEMZONE;
	} else if (req->backings & GR_SHM_BACKING_MEMFD) {
		backing = SHMCHAN_BACKING_MEMFD;
	} else {
		api_fault(ctx, API_FAULT_ATTACH_BACKINGS, NULL, req->backings, offered);
		return gr_api_out(ENOTSUP, 0, NULL);
	}
	if (!fd_budget_admits(channel_fds(backing), ctx->peer_uid == 0)) {
		api_fault(
			ctx,
			API_FAULT_ATTACH_FDS,
			NULL,
			fd_budget_held(),
			fd_budget_room(ctx->peer_uid == 0)
		);
		return gr_api_out(ENFILE, 0, NULL);
	}
	if (backing == SHMCHAN_BACKING_MEMFD && req->backings & offered & GR_SHM_BACKING_MEMZONE)
		api_fault(ctx, API_FAULT_MEMZONES_IN_USE, NULL, memzone_pool_zones(), 0);
	resp = calloc(1, sizeof(*resp));
	if (resp == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	ch = channel_create(ctx, backing, &err);
	if (ch == NULL) {
		free(resp);
		return gr_api_out(err, 0, NULL);
	}
	err = poller_watch(ch->poller, ch->fds[0]);
	if (err < 0) {
		free(resp);
		channel_free(&ch->rcu);
		return gr_api_out(-err, 0, NULL);
	}
	resp->layout_version = ch->geometry.layout_version;
	resp->backing = backing;
	resp->region_size = ch->geometry.region_size;
	resp->req_ring_off = ch->geometry.req_ring_off;
	resp->resp_ring_off = ch->geometry.resp_ring_off;
	resp->ring_cells = ch->geometry.ring_cells;
	resp->cell_size = ch->geometry.cell_size;
	resp->n_fds = ch->n_fds;
	resp->generation = ch->geometry.generation;
	snprintf(resp->name, sizeof(resp->name), "%s", ch->name);
	snprintf(resp->file_prefix, sizeof(resp->file_prefix), "%s", server_conf.file_prefix);

	ctx->lease_lost = channel_detach;
	ctx->lease_arg = ch;
	// The socket's idle subscriber, if it had one: the channel makes its own.
	event_sub_free(ctx->events);
	ctx->events = NULL;
	cds_list_add_tail_rcu(&ch->node, &registry);
	cds_list_add_tail_rcu(&ch->poller_node, &poller_channels[ch->poller]);
	atomic_fetch_add_explicit(&poller_channels_gen[ch->poller], 1, memory_order_release);
	n_channels++;
	SHMCHAN_PROBE(channel_attach, ch->name, ctx->peer_pid, backing, ch->poller);
	// A client can attach, give back and attach again on one connection:
	// logged outside the handler lock, at a bounded rate, and not at all
	// past its peer's rate limit of connection lines.
	if (!ctx->log_quiet)
		api_fault_text(
			ctx,
			API_FAULT_CHANNEL_ATTACHED,
			"channel %s attached: pid %d uid %u, %s, poller %u",
			ch->name,
			(int)ctx->peer_pid,
			(unsigned)ctx->peer_uid,
			backing == SHMCHAN_BACKING_MEMZONE ? "memzone" : "memfd",
			ch->poller
		);
	struct gr_shm_event_channel ev = {.pid = ctx->peer_pid, .backing = resp->backing};
	snprintf(ev.name, sizeof(ev.name), "%s", ch->name);
	gr_api_event_publish(GR_SHM_EVENT_CHANNEL_ATTACHED, &ev, sizeof(ev));

	out = gr_api_out(0, sizeof(*resp), resp);
	out.fds = ch->fds;
	out.n_fds = ch->n_fds;
	return out;
}

// The client gives its channel back, typically because it could not map or
// validate it: without this the channel would stay polled until the
// connection closes, and a new attach would get EEXIST. Main thread, under
// the handler lock.
static struct gr_api_out
channel_give_back(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct channel *ch = ctx->lease_arg;

	(void)request;
	(void)len;
	if (ctx->sock_fd < 0)
		return gr_api_out(EINVAL, 0, NULL); // only over the socket, as attach
	if (ctx->lease_lost != channel_detach)
		return gr_api_out(ENOENT, 0, NULL);
	// The connection no longer holds the channel: its close must not end
	// it again (it is freed after the grace period).
	ctx->lease_lost = NULL;
	ctx->lease_arg = NULL;
	// A client can attach and give back at will on one connection:
	// logged outside the handler lock, at a bounded rate.
	if (!ctx->log_quiet)
		api_fault_text(
			ctx,
			API_FAULT_CHANNEL_GIVEN_BACK,
			"channel %s (pid %d) detached: given back by the client",
			ch->name,
			(int)ch->ctx.peer_pid
		);
	channel_end(ch, END_GIVEN_BACK);
	return gr_api_out(0, 0, NULL);
}

// Registered by gr_api_server_start() (api.h), with those of channel_stats.c.
static struct gr_api_handler handlers_channel_array[] = {
	GR_API_HANDLER_INIT(GR_SHM_ATTACH, channel_attach),
	GR_API_HANDLER_INIT(GR_SHM_DETACH, channel_give_back),
};
API_HANDLER_TABLE(handlers_channel, handlers_channel_array);

int channel_module_init(struct event_base *base) {
	(void)base;
	rcu_register_thread();
	for (unsigned i = 0; i < GR_API_SERVER_MAX_POLLERS; i++)
		CDS_INIT_LIST_HEAD(&poller_channels[i]);
	slow_limit_cycles = rte_get_tsc_hz() / 1000 * CHANNEL_SLOW_LIMIT_MS;
	if (!server_conf.shm_enabled) {
		LOG(INFO, "shared-memory channels off (%s): socket only", server_names.shm_enabled);
		return 0;
	}
	if (server_conf.memzones)
		memzone_pool_init();
	server_state.memzone_channels = server_conf.memzones ? memzone_pool_zones() : 0;
	return poller_start(server_conf.pollers, server_conf.spin_us);
}

void channel_module_fini(void) {
	struct channel *ch, *tmp;

	// Connections are closed first (each detaching its channel); detach
	// whatever is left, then stop the pollers and wait for the frees.
	cds_list_for_each_entry_safe (ch, tmp, &registry, node)
		channel_end(ch, END_CUT);
	poller_stop();
	channel_views_free();
	rcu_barrier();
	memzone_pool_fini();
	rcu_unregister_thread();
}
