// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The control API of route_table, a DPDK application that keeps IPv4 and
// IPv6 routes in rte_fib and rte_fib6 and serves them with libgr_api_server
// (docs/route-table.md): what its clients include. A module of its own:
// type values (ROUTE_TABLE_MODULE << 16) | id.
//
// Every request is a fixed struct: a payload shorter than it is answered
// EMSGSIZE by the server before the handler runs, one longer EINVAL. A
// request refused changes nothing. Addresses are in network byte order.

#pragma once

#include <gr_api.h>

#include <stdint.h>

#define ROUTE_TABLE_MODULE 0x5254 // "RT"

// struct route_table_prefix.family
#define ROUTE_TABLE_AF_IP4 4
#define ROUTE_TABLE_AF_IP6 6

// Nexthop ids are 1..ROUTE_TABLE_NH_MAX; 0 is the tables' "no route".
#define ROUTE_TABLE_NH_MAX 65535

// A prefix (or, for a lookup, an address): its family, its length (0..32
// for IPv4, 0..128 for IPv6) and its address, with no bit set past the
// length. An IPv4 address is in ip4, and the 12 bytes after it are zero.
struct route_table_prefix {
	uint8_t family;
	uint8_t prefixlen;
	uint8_t reserved[2]; // zero
	union {
		uint32_t ip4;
		uint8_t ip6[16];
	};
};

// A route: a prefix and the nexthop it goes to.
struct route_table_route {
	struct route_table_prefix dest;
	uint32_t nh_id;
};

// Add nexthop nh_id, the port it sends to. EINVAL: an id out of
// 1..ROUTE_TABLE_NH_MAX, reserved bytes not zero; EEXIST: the id is taken.
// A nexthop lives until the last route that uses it is deleted (one that no
// route has used yet stays).
#define ROUTE_TABLE_NH_ADD GR_MSG_TYPE(ROUTE_TABLE_MODULE, 0x0001)
struct route_table_nh_add_req {
	uint32_t nh_id;
	uint16_t port;
	uint16_t reserved; // zero
};
GR_REQ(ROUTE_TABLE_NH_ADD, struct route_table_nh_add_req, struct gr_empty);

// Add a route. EINVAL: a family other than ROUTE_TABLE_AF_IP4/_IP6, a
// prefix length past 32 (128), bits set past it, reserved bytes not zero,
// an unknown nexthop; EEXIST: the prefix has a route (delete it first);
// ENOSPC: the family's table is full. Publishes ROUTE_TABLE_EVENT_ROUTE.
#define ROUTE_TABLE_ROUTE_ADD GR_MSG_TYPE(ROUTE_TABLE_MODULE, 0x0002)
GR_REQ(ROUTE_TABLE_ROUTE_ADD, struct route_table_route, struct gr_empty);

// Delete the route of a prefix. The route leaves the tables at once (a
// lookup no longer finds it), and the answer comes after an RCU grace
// period: once it arrives, no worker uses the route any more, and a
// nexthop whose last route it was is freed. EINVAL: as for an add; ENOENT:
// no route for the prefix; EBUSY: too many deletes wait for their grace
// period (nothing deleted). Publishes ROUTE_TABLE_EVENT_ROUTE.
#define ROUTE_TABLE_ROUTE_DEL GR_MSG_TYPE(ROUTE_TABLE_MODULE, 0x0003)
struct route_table_route_del_resp {
	uint32_t nh_id; // the route's nexthop
	uint32_t nexthop_freed; // 1: its last route went, and it was freed
};
GR_REQ(ROUTE_TABLE_ROUTE_DEL, struct route_table_prefix, struct route_table_route_del_resp);

// The route that the datapath's table gives an address: the longest prefix
// that covers dest's address (dest.prefixlen is ignored, and may be
// anything). ENOENT: none covers it; EINVAL: as for an add.
#define ROUTE_TABLE_ROUTE_LOOKUP GR_MSG_TYPE(ROUTE_TABLE_MODULE, 0x0004)
GR_REQ(ROUTE_TABLE_ROUTE_LOOKUP, struct route_table_prefix, struct route_table_route);

// Every route of a family (or of both, family 0: IPv4 first) as a stream,
// one struct route_table_route a response, ended by an empty response. In
// each family, the rib's order: a prefix comes after every prefix it
// covers, and before those whose addresses are all higher (ascending order
// of the last address a prefix covers, the longer prefix first); the
// default route last.
#define ROUTE_TABLE_ROUTE_LIST GR_MSG_TYPE(ROUTE_TABLE_MODULE, 0x0005)
struct route_table_route_list_req {
	uint8_t family; // 0, ROUTE_TABLE_AF_IP4 or ROUTE_TABLE_AF_IP6
	uint8_t reserved[3]; // zero
};
GR_REQ_STREAM(ROUTE_TABLE_ROUTE_LIST, struct route_table_route_list_req, struct route_table_route);

// The tables' counts.
#define ROUTE_TABLE_STATS GR_MSG_TYPE(ROUTE_TABLE_MODULE, 0x0006)
struct route_table_stats_resp {
	uint32_t routes4, routes6; // in the tables
	uint32_t max_routes4, max_routes6; // what each holds at most
	uint32_t nexthops; // live, that a route may use
	uint32_t workers; // threads looking routes up
	uint64_t deletes_pending; // out of the tables, waiting for their grace period
	uint64_t deletes_done; // answered after their grace period
	uint64_t nexthops_freed; // after the grace period of their last route's delete
	uint64_t grace_checks; // looks of the application's loop at the deletes waiting
	uint64_t replies_lost; // deferred answers (deletes, holds) whose client had left
	uint64_t lookups; // by the workers, all together
	uint64_t lookup_hits; // those that found a route and read its nexthop
	uint64_t nexthop_mismatches; // a nexthop read that was not the route's: never
};
GR_REQ(ROUTE_TABLE_STATS, struct gr_empty, struct route_table_stats_resp);

// Hold the workers (hold 1): they keep looking routes up but report no
// quiescent state, as a datapath stuck in a long burst would, so that no
// grace period ends and every delete waits; answered once every worker
// holds. Release them (hold 0): answered at once, and the deletes waiting
// complete. EBUSY: a hold is being answered already.
#define ROUTE_TABLE_WORKERS_HOLD GR_MSG_TYPE(ROUTE_TABLE_MODULE, 0x0007)
struct route_table_workers_hold_req {
	uint32_t hold; // 1 or 0
};
GR_REQ(ROUTE_TABLE_WORKERS_HOLD, struct route_table_workers_hold_req, struct gr_empty);

// A route was added or deleted (by the request of any client).
#define ROUTE_TABLE_EVENT_ROUTE GR_MSG_TYPE(ROUTE_TABLE_MODULE, 0x1001)
#define ROUTE_TABLE_ROUTE_ADDED 1
#define ROUTE_TABLE_ROUTE_DELETED 2
struct route_table_event_route {
	uint32_t op; // ROUTE_TABLE_ROUTE_ADDED or ROUTE_TABLE_ROUTE_DELETED
	struct route_table_route route;
};
GR_EVENT(ROUTE_TABLE_EVENT_ROUTE, struct route_table_event_route);
