// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What the files of route_table share: the tables and their nexthops
// (tables.c; list.c lists them), the workers that look routes up
// (workers.c), the deletes that wait for a grace period (deletes.c), and
// the log.
//
// Who touches what: the tables, the nexthops' counts and the pending
// deletes belong to the handlers, which run one at a time under the
// server's handler lock; the application's loop takes that lock too
// (gr_api_server_lock()) when it completes deletes. The workers only read:
// the fibs (rte_fib is made for a writer beside lookups) and the nexthops
// published in nexthops[], which are freed only after an RCU grace period
// of the workers' QSBR variable.

#pragma once

#include "route_table_api.h"

#include <rte_log.h>

#include <event2/event.h>

#include <stdbool.h>
#include <stdint.h>

extern int route_table_logtype;
#define RT_LOG(level, fmt, ...)                                                                    \
	rte_log(RTE_LOG_##level, route_table_logtype, "route_table: " fmt "\n", ##__VA_ARGS__)

// A request refused for its content: a line naming why, at most a few a
// second (a client that floats bad requests cannot flood the log), with
// the count of those left out. Returns status, for the handler to answer.
uint32_t rt_refuse(uint32_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// A nexthop: what a route leads to. Written by the handlers; read by the
// workers through nexthops[] until a grace period after it leaves it.
struct nexthop {
	uint32_t id; // its index in nexthops[]; a poison value once freed
	uint16_t port;
	uint32_t routes; // that use it (handlers only)
};

// Published nexthops by id (NULL: none). Stored with release by the
// handlers, loaded with acquire by the workers: a worker that sees the
// pointer sees the nexthop's fields written before it was published.
extern struct nexthop *nexthops[ROUTE_TABLE_NH_MAX + 1];

// ---- tables.c ----

// Create the fibs for max4 IPv4 and max6 IPv6 routes. EAL is up. 0 or
// -errno.
int tables_init(uint32_t max4, uint32_t max6);
void tables_fini(void);

// Check a prefix of a request: family, length, bits past it, reserved
// bytes. Returns 0, or EINVAL (logged, naming what) for the handler to
// answer. what: the request, for the log.
uint32_t prefix_refused(const struct route_table_prefix *p, const char *what);

// The nexthop of the route of exactly p, or -ENOENT. Handlers only.
int64_t route_find(const struct route_table_prefix *p);

// Remove the route of exactly p (checked by prefix_refused(), found by
// route_find()) from its table. Returns 0 or -errno. Handlers only.
int route_remove(const struct route_table_prefix *p);

// Take a route from a nexthop: returns the nexthop, unpublished, if that
// was its last route (the caller frees it with nexthop_free() after a grace
// period), else NULL. Handlers only.
struct nexthop *nexthop_release(uint32_t nh_id);

// Free an unpublished nexthop, after a grace period: under the handler
// lock.
void nexthop_free(struct nexthop *nh);

// Publish a change of a route to the subscribers.
void route_event(uint32_t op, const struct route_table_prefix *p, uint32_t nh_id);

// The workers' lookups, for the stats: the fibs, read-only.
struct rte_fib *tables_fib4(void);
struct rte_fib6 *tables_fib6(void);

// Routes in the table of family (ROUTE_TABLE_AF_IP4 or _IP6). Handlers
// only.
uint32_t tables_routes(uint8_t family);

// ---- workers.c ----

// The QSBR variable of the workers, and their count.
struct rte_rcu_qsbr *workers_qsbr(void);
unsigned workers_count(void);

// Start the workers: on every EAL worker lcore, or, with none, one thread
// of the application's. pause_us: after each burst of lookups a worker
// goes offline and sleeps that long (0: it spins, as a datapath does).
// 0 or -errno.
int workers_start(unsigned pause_us);
void workers_stop(void);

// Hold or release the workers (ROUTE_TABLE_WORKERS_HOLD). Any thread.
void workers_hold_set(bool hold);
// True once every worker holds.
bool workers_held(void);

// Totals of the workers' counters.
void workers_totals(uint64_t *lookups, uint64_t *hits, uint64_t *mismatches);

// ---- deletes.c ----

// Watch the deletes waiting for their grace period from base's loop. 0 or
// -errno.
int deletes_init(struct event_base *base);
// Answer the deletes left (the server stopped: their clients are gone).
void deletes_fini(void);

// Counts, for the stats (handler lock held).
uint64_t deletes_pending(void);
uint64_t deletes_done(void);
uint64_t nexthops_freed(void);
uint64_t grace_checks(void);
uint64_t replies_lost(void); // the client gone (any thread)
