// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The configuration of route_table's fibs, shared with route_inject's
// --reference, which makes the same insertions into tables of its own.

#pragma once

#include <rte_fib.h>
#include <rte_fib6.h>

#include <stdint.h>

// Routes each family holds at most by default: a full IPv4 BGP table is
// about a million prefixes, an IPv6 one about 230 000 (2026), with room to
// grow.
#define FIB4_DEFAULT_MAX_ROUTES ((1u << 20) + (1u << 19))
#define FIB6_DEFAULT_MAX_ROUTES (1u << 18)

// tbl8 groups of the IPv4 table (DIR24_8): one for each /24 that holds
// longer prefixes. A BGP table has few (under 1 % of its routes are longer
// than /24); one per 64 routes is ample.
#define FIB4_ROUTES_PER_TBL8 64
// tbl8 groups of the IPv6 table (TRIE): DPDK 22.11 reserves, for each
// prefix past /24 with no covering route, one group for each 8-bit level
// below /24 that it reaches (three for a /48), whether it shares them or
// not. Three per route holds a BGP table (route_inject's reserves 2.7 per
// route); a table of longer prefixes is full sooner (ENOSPC).
#define FIB6_TBL8_PER_ROUTE 3
#define FIB_TBL8_MIN 256

// Both tables' configurations; next hops are 4-byte nexthop ids, 0 for
// "no route".
static inline void fib_conf_fill(
	uint32_t max_routes4,
	uint32_t max_routes6,
	struct rte_fib_conf *conf4,
	struct rte_fib6_conf *conf6
) {
	uint32_t tbl8_4 = max_routes4 / FIB4_ROUTES_PER_TBL8;
	uint32_t tbl8_6 = max_routes6 * FIB6_TBL8_PER_ROUTE;

	*conf4 = (struct rte_fib_conf){
		.type = RTE_FIB_DIR24_8,
		.default_nh = 0,
		.max_routes = (int)max_routes4,
		.dir24_8 =
			{
				.nh_sz = RTE_FIB_DIR24_8_4B,
				.num_tbl8 = tbl8_4 > FIB_TBL8_MIN ? tbl8_4 : FIB_TBL8_MIN,
			},
	};
	*conf6 = (struct rte_fib6_conf){
		.type = RTE_FIB6_TRIE,
		.default_nh = 0,
		.max_routes = (int)max_routes6,
		.trie =
			{
				.nh_sz = RTE_FIB6_TRIE_4B,
				.num_tbl8 = tbl8_6 > FIB_TBL8_MIN ? tbl8_6 : FIB_TBL8_MIN,
			},
	};
}

// EAL memory (MB) both tables take, with room for the rest: the two tbl24
// (64 MB each); per route, its rib nodes (two at most, 128 bytes each with
// the mempool's header) and its share of tbl8 groups (1 KB each); a
// quarter more for what the allocator loses.
#define FIB_EAL_MEM_BASE_MB 256
#define FIB_RIB_NODE_BYTES 128
#define FIB_TBL8_BYTES 1024
static inline unsigned long fib_eal_mem_mb(uint32_t max_routes4, uint32_t max_routes6) {
	uint64_t bytes4 = 2 * FIB_RIB_NODE_BYTES + FIB_TBL8_BYTES / FIB4_ROUTES_PER_TBL8;
	uint64_t bytes6 = 2 * FIB_RIB_NODE_BYTES + FIB_TBL8_BYTES * FIB6_TBL8_PER_ROUTE;
	uint64_t bytes = (uint64_t)max_routes4 * bytes4 + (uint64_t)max_routes6 * bytes6;

	return FIB_EAL_MEM_BASE_MB + (unsigned long)(bytes * 5 / 4 >> 20);
}
