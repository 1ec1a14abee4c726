// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Shared-memory channels of the daemon: attach over the socket, the RCU
// registry read by the pollers, detach on lease loss or client fault.

#pragma once

#include <event2/event.h>

#include <stdbool.h>

// A channel's turn (the requests a poller serves from it in a row, under one
// hold of the handler lock) ends once they produced this many responses,
// each request counting for one at least, or CHANNEL_TURN_BYTES bytes of
// them: a turn is bounded by the work it causes, not by the requests it
// takes. The poller then gives every other channel with work a turn before
// this one's next. 32 responses: a client pipelining GR_PING2 is served 32
// of them per turn, as it was when a turn took 32 requests, while one
// whose every request streams 200 responses (GR_LOG_LEVEL_LIST) is served
// one request per turn. The request that reaches the bound is served whole:
// a handler runs to its end once it has begun.
#define CHANNEL_TURN_RESPONSES 32
// 64 KiB: a turn of large responses (one of 128 KiB ends it alone) takes
// about as long as one of CHANNEL_TURN_RESPONSES small ones and their
// handlers.
#define CHANNEL_TURN_BYTES (64u << 10)
// Events moved from a subscriber's backlog into its ring per turn, on top of
// the responses: a stream of events cannot starve the channel's requests.
#define CHANNEL_TURN_EVENTS 32
// Responses kept while the client's response ring is full, above which the
// poller reads no more of that channel's requests, as the socket stops
// reading a connection whose output passed its limit. A request's stream is
// kept whole however long (a route table's list), so the backlog passes
// this by the answers of one request at most; a client that takes nothing
// for CHANNEL_SLOW_LIMIT_MS is detached.
#define CHANNEL_BACKLOG_MAX_BYTES (4u << 20)
// A client whose response ring stays full this long has stopped reading: it
// is detached.
#define CHANNEL_SLOW_LIMIT_MS 2000
// Memzone channels come from a pool reserved at startup and never freed (16
// MB of the daemon's -m 128). Reserving or freeing a memzone takes EAL's
// memzone lock, shared with every secondary: a secondary killed while it
// holds that lock (in rte_memzone_lookup, say) would freeze the daemon in its
// next rte_memzone_reserve or rte_memzone_free. With the pool, attach and
// detach never take it. When the pool is empty, secondaries get memfd.
#define CHANNEL_MEMZONE_POOL 32
// Descriptors a channel makes the daemon hold: the dup of its lease socket,
// the three of its shmchan server (the request eventfd, and both ends of the
// response doorbell's socket pair: the client's end is kept to pass again),
// and its memfd if it has one. test/sock_fd_budget.sh counts them.
#define CHANNEL_FDS_MEMZONE 4
#define CHANNEL_FDS_MAX 5

// Start the pollers. After EAL init, before the socket accepts clients.
// Returns 0 or -errno. Main thread.
int channel_module_init(struct event_base *base);

// Stop the pollers and free every channel. Main thread, at shutdown.
void channel_module_fini(void);

struct gr_api_ctx;
struct gr_shm_client_info;
struct gr_shm_stats_resp;

// What GR_SHM_STATS answers: the channels and memzones in use now, and the
// counters of every channel since the start. Any thread, outside any RCU
// read-side critical section of its own or inside one.
void channel_stats_fill(struct gr_shm_stats_resp *resp);

// If sock_ctx, a socket client's, holds the lease of a channel, fill the
// channel fields of info (name, backing, poller, state, counters) and return
// true. Any thread, under the handler lock (which orders it with attach) and
// inside sock_clients_walk() (which keeps the lease, and so the channel,
// from ending meanwhile).
bool channel_of_client(const struct gr_api_ctx *sock_ctx, struct gr_shm_client_info *info);
