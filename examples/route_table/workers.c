// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The workers of route_table: what a datapath does with the tables. Each
// looks up bursts of addresses in both fibs, reads the nexthop of every
// route found, and reports a quiescent state on the QSBR variable after
// each burst: a nexthop it read may be freed only once every worker has
// reported one since the nexthop was unpublished (deletes.c).
//
// Workers run on the EAL worker lcores (-- -l 0-2 gives two), or, when EAL
// has only its main lcore, on one thread of the application's, unpinned,
// so that the example runs on a host of one or two CPUs shared with
// others.

#include "route_table.h"

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

// Addresses a worker looks up at once, in each family, between quiescent
// states: a datapath's burst of packets.
#define LOOKUP_BURST 32
// How often a held worker looks whether it is released.
#define HOLD_POLL_US 100
// The stride of the addresses a worker looks up: 2^32 / phi, odd, so that
// 2^32 lookups visit every IPv4 address once, spread over the space.
#define ADDRESS_STRIDE 0x9e3779b9u

struct worker {
	unsigned qsbr_id;
	// Written by the worker alone (atomic stores), read by the stats
	// (relaxed: counts).
	uint64_t lookups;
	uint64_t hits;
	uint64_t mismatches;
	bool held; // the worker holds (release: after its last quiescent state)
} __rte_cache_aligned;

static struct rte_rcu_qsbr *qsbr;
static struct worker *workers;
static unsigned n_workers;
static unsigned pause_us;
static pthread_t thread; // the worker when EAL has no worker lcore
static bool own_thread;
static bool stop, hold;

struct rte_rcu_qsbr *workers_qsbr(void) {
	return qsbr;
}

unsigned workers_count(void) {
	return n_workers;
}

// Read the nexthop of a route found, as a datapath would to send a packet:
// the pointer with acquire (see nexthops[]), then its fields.
static void nexthop_read(struct worker *w, uint64_t nh_id) {
	const struct nexthop *nh;

	// The fib gives back what was stored: bounded all the same.
	if (nh_id == 0 || nh_id > ROUTE_TABLE_NH_MAX)
		return;
	nh = __atomic_load_n(&nexthops[nh_id], __ATOMIC_ACQUIRE);
	if (nh == NULL)
		return; // its route was deleted meanwhile
	__atomic_store_n(&w->hits, w->hits + 1, __ATOMIC_RELAXED);
	if (nh->id != nh_id)
		__atomic_store_n(&w->mismatches, w->mismatches + 1, __ATOMIC_RELAXED);
}

static void lookup_burst(struct worker *w, uint32_t *next) {
	uint8_t ips6[LOOKUP_BURST][RTE_FIB6_IPV6_ADDR_SIZE];
	uint64_t nhs[LOOKUP_BURST];
	uint32_t ips[LOOKUP_BURST];

	for (unsigned i = 0; i < LOOKUP_BURST; i++) {
		ips[i] = *next;
		// 2000::/3 and the address's bits spread over the prefix.
		memset(ips6[i], 0, sizeof(ips6[i]));
		ips6[i][0] = 0x20 | (uint8_t)(*next >> 29);
		memcpy(&ips6[i][1], next, sizeof(*next));
		*next += ADDRESS_STRIDE;
	}
	if (rte_fib_lookup_bulk(tables_fib4(), ips, nhs, LOOKUP_BURST) == 0)
		for (unsigned i = 0; i < LOOKUP_BURST; i++)
			nexthop_read(w, nhs[i]);
	if (rte_fib6_lookup_bulk(tables_fib6(), ips6, nhs, LOOKUP_BURST) == 0)
		for (unsigned i = 0; i < LOOKUP_BURST; i++)
			nexthop_read(w, nhs[i]);
	__atomic_store_n(&w->lookups, w->lookups + 2 * LOOKUP_BURST, __ATOMIC_RELAXED);
}

static int worker_loop(void *arg) {
	struct worker *w = arg;
	uint32_t next = w->qsbr_id * (UINT32_MAX / RTE_MAX_LCORE);

	rte_rcu_qsbr_thread_register(qsbr, w->qsbr_id);
	rte_rcu_qsbr_thread_online(qsbr, w->qsbr_id);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		lookup_burst(w, &next);
		if (__atomic_load_n(&hold, __ATOMIC_ACQUIRE)) {
			// Online and silent: every grace period started from
			// now on waits until the release.
			__atomic_store_n(&w->held, true, __ATOMIC_RELEASE);
			while (__atomic_load_n(&hold, __ATOMIC_ACQUIRE) &&
			       !__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
				usleep(HOLD_POLL_US);
			__atomic_store_n(&w->held, false, __ATOMIC_RELEASE);
		}
		rte_rcu_qsbr_quiescent(qsbr, w->qsbr_id);
		if (pause_us > 0) {
			// Offline while it sleeps: no grace period waits for it.
			rte_rcu_qsbr_thread_offline(qsbr, w->qsbr_id);
			usleep(pause_us);
			rte_rcu_qsbr_thread_online(qsbr, w->qsbr_id);
		}
	}
	rte_rcu_qsbr_thread_offline(qsbr, w->qsbr_id);
	rte_rcu_qsbr_thread_unregister(qsbr, w->qsbr_id);
	return 0;
}

static void *worker_thread(void *arg) {
	worker_loop(arg);
	return NULL;
}

int workers_start(unsigned pause) {
	unsigned lcore, i = 0;
	size_t size;
	int ret;

	pause_us = pause;
	n_workers = rte_lcore_count() > 1 ? rte_lcore_count() - 1 : 1;
	own_thread = rte_lcore_count() == 1;
	size = rte_rcu_qsbr_get_memsize(n_workers);
	qsbr = rte_zmalloc("route_table_qsbr", size, RTE_CACHE_LINE_SIZE);
	workers = rte_zmalloc("route_table_workers", n_workers * sizeof(*workers), 0);
	if (qsbr == NULL || workers == NULL || rte_rcu_qsbr_init(qsbr, n_workers) < 0) {
		RT_LOG(ERR, "cannot allocate the workers' QSBR variable");
		rte_free(qsbr);
		rte_free(workers);
		qsbr = NULL;
		workers = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < n_workers; i++)
		workers[i].qsbr_id = i;
	if (own_thread) {
		ret = pthread_create(&thread, NULL, worker_thread, &workers[0]);
		if (ret != 0) {
			RT_LOG(ERR, "cannot start the worker: %s", strerror(ret));
			return -ret;
		}
	} else {
		i = 0;
		RTE_LCORE_FOREACH_WORKER(lcore) {
			ret = rte_eal_remote_launch(worker_loop, &workers[i++], lcore);
			if (ret < 0) {
				RT_LOG(ERR, "cannot start the worker of lcore %u", lcore);
				workers_stop();
				return ret;
			}
		}
	}
	RT_LOG(INFO,
	       "%u worker%s looking routes up (%s), %s",
	       n_workers,
	       n_workers > 1 ? "s" : "",
	       own_thread ? "a thread of ours" : "EAL worker lcores",
	       pause_us > 0 ? "pausing between bursts" : "spinning");
	return 0;
}

void workers_stop(void) {
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	if (own_thread)
		pthread_join(thread, NULL);
	else
		rte_eal_mp_wait_lcore();
	rte_free(workers);
	rte_free(qsbr);
	workers = NULL;
	qsbr = NULL;
}

void workers_hold_set(bool on) {
	__atomic_store_n(&hold, on, __ATOMIC_RELEASE);
}

bool workers_held(void) {
	for (unsigned i = 0; i < n_workers; i++)
		if (!__atomic_load_n(&workers[i].held, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

void workers_totals(uint64_t *lookups, uint64_t *hits, uint64_t *mismatches) {
	*lookups = 0;
	*hits = 0;
	*mismatches = 0;
	for (unsigned i = 0; i < n_workers; i++) {
		*lookups += __atomic_load_n(&workers[i].lookups, __ATOMIC_RELAXED);
		*hits += __atomic_load_n(&workers[i].hits, __ATOMIC_RELAXED);
		*mismatches += __atomic_load_n(&workers[i].mismatches, __ATOMIC_RELAXED);
	}
}
