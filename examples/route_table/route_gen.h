// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The routes route_inject installs: prefix lengths drawn from a real BGP
// table's distribution and nexthops spread round-robin, as Grout's route
// injector (smoke/fib_inject.c) makes them, so that the figures compare.
// Deterministic: the same family, seed and index give the same route.

#pragma once

#include "route_table_api.h"

#include <stdint.h>

// Nexthops the routes are spread over, round-robin: a BGP table has about
// one distinct nexthop per ten prefixes, and this many keeps the fib from
// merging groups of one nexthop (as Grout's injector).
#define ROUTE_GEN_NEXTHOPS 2048
// The distribution's resolution: weights in parts per thousand.
#define ROUTE_GEN_SLOTS 1000
#define ROUTE_GEN_BUCKETS_MAX 10

struct route_gen {
	uint8_t family;
	unsigned n_buckets;
	uint8_t prefixlen[ROUTE_GEN_BUCKETS_MAX];
	uint16_t weight[ROUTE_GEN_BUCKETS_MAX]; // parts per thousand
	uint32_t seq[ROUTE_GEN_BUCKETS_MAX]; // routes made of each bucket
	// The bucket of each slot of index % ROUTE_GEN_SLOTS: in order of
	// the table with seed 0 (Grout's), shuffled by the seed otherwise.
	uint8_t slot_bucket[ROUTE_GEN_SLOTS];
};

// Start a generator of family's routes (ROUTE_TABLE_AF_IP4 or _IP6).
void route_gen_init(struct route_gen *g, uint8_t family, uint64_t seed);

// The route of index (called with 0, 1, 2, ... in turn): a prefix unique
// among those this generator made, and nexthop index % NEXTHOPS + 1.
void route_gen_next(struct route_gen *g, uint32_t index, struct route_table_route *r);
