// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The route tables of route_table: an rte_fib (DIR24_8) for IPv4 and an
// rte_fib6 (TRIE) for IPv6, whose next hops are nexthop ids, the nexthops
// themselves, and the handlers that add and look up routes, add
// nexthops and count. The handlers run one at a time under the server's
// handler lock, so the tables have one writer at a time; the workers
// (workers.c) look routes up meanwhile.

#include "fib_conf.h"
#include "route_table.h"

#include <gr_api_server.h>

#include <rte_errno.h>
#include <rte_memory.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_rib.h>
#include <rte_rib6.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

RTE_LOG_REGISTER_DEFAULT(route_table_logtype, INFO);

// Lines rt_refuse() writes a second at most.
#define REFUSED_LINES_PER_S 10
// What a freed nexthop's id becomes: a worker that read it would count a
// mismatch.
#define NEXTHOP_POISON 0xdeadbeef

struct nexthop *nexthops[ROUTE_TABLE_NH_MAX + 1];

static struct rte_fib *fib4;
static struct rte_fib6 *fib6;
static uint32_t max_routes4, max_routes6, routes4, routes6, nexthops_live;

uint32_t rt_refuse(uint32_t status, const char *fmt, ...) {
	static time_t second;
	static unsigned lines, left_out;
	time_t now = time(NULL);
	char line[256];
	va_list ap;

	if (now != second) {
		if (left_out > 0)
			RT_LOG(WARNING, "%u more requests refused in the last second", left_out);
		second = now;
		lines = 0;
		left_out = 0;
	}
	if (lines >= REFUSED_LINES_PER_S) {
		left_out++;
		return status;
	}
	lines++;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	RT_LOG(WARNING, "refused (%s): %s", strerror((int)status), line);
	return status;
}

int tables_init(uint32_t max4, uint32_t max6) {
	struct rte_fib_conf conf4;
	struct rte_fib6_conf conf6;

	fib_conf_fill(max4, max6, &conf4, &conf6);
	max_routes4 = max4;
	max_routes6 = max6;
	fib4 = rte_fib_create("route_table4", SOCKET_ID_ANY, &conf4);
	if (fib4 == NULL) {
		RT_LOG(ERR, "cannot create the IPv4 table: %s", rte_strerror(rte_errno));
		return -rte_errno;
	}
	fib6 = rte_fib6_create("route_table6", SOCKET_ID_ANY, &conf6);
	if (fib6 == NULL) {
		RT_LOG(ERR, "cannot create the IPv6 table: %s", rte_strerror(rte_errno));
		rte_fib_free(fib4);
		fib4 = NULL;
		return -rte_errno;
	}
	RT_LOG(INFO,
	       "tables of %u IPv4 routes (%u tbl8 groups) and %u IPv6 routes (%u tbl8 groups)",
	       max4,
	       conf4.dir24_8.num_tbl8,
	       max6,
	       conf6.trie.num_tbl8);
	return 0;
}

void tables_fini(void) {
	rte_fib_free(fib4);
	rte_fib6_free(fib6);
	fib4 = NULL;
	fib6 = NULL;
	for (unsigned i = 0; i <= ROUTE_TABLE_NH_MAX; i++) {
		free(nexthops[i]);
		nexthops[i] = NULL;
	}
}

struct rte_fib *tables_fib4(void) {
	return fib4;
}

struct rte_fib6 *tables_fib6(void) {
	return fib6;
}

// A request of exactly its struct: longer ones are refused, so that a
// client that sends a struct of another version learns it.
static uint32_t length_refused(uint32_t len, uint32_t expected, const char *what) {
	if (len == expected)
		return 0;
	return rt_refuse(EINVAL, "%s of %u bytes, expected %u", what, len, expected);
}

uint32_t prefix_refused(const struct route_table_prefix *p, const char *what) {
	if (p->reserved[0] != 0 || p->reserved[1] != 0)
		return rt_refuse(EINVAL, "%s: reserved bytes not zero", what);
	if (p->family == ROUTE_TABLE_AF_IP4) {
		uint32_t ip = ntohl(p->ip4);

		if (p->prefixlen > RTE_FIB_MAXDEPTH)
			return rt_refuse(EINVAL, "%s: IPv4 prefix length %u", what, p->prefixlen);
		for (unsigned i = sizeof(p->ip4); i < sizeof(p->ip6); i++)
			if (p->ip6[i] != 0)
				return rt_refuse(EINVAL, "%s: bytes after an IPv4 address", what);
		if ((ip & ~rte_rib_depth_to_mask(p->prefixlen)) != 0)
			return rt_refuse(EINVAL, "%s: bits set past /%u", what, p->prefixlen);
		return 0;
	}
	if (p->family == ROUTE_TABLE_AF_IP6) {
		if (p->prefixlen > RTE_FIB6_MAXDEPTH)
			return rt_refuse(EINVAL, "%s: IPv6 prefix length %u", what, p->prefixlen);
		for (unsigned bit = p->prefixlen; bit < RTE_FIB6_MAXDEPTH; bit++)
			if (p->ip6[bit / 8] & (0x80 >> (bit % 8)))
				return rt_refuse(
					EINVAL,
					"%s: bits set past /%u",
					what,
					p->prefixlen
				);
		return 0;
	}
	return rt_refuse(EINVAL, "%s: family %u", what, p->family);
}

int64_t route_find(const struct route_table_prefix *p) {
	uint64_t nh;

	if (p->family == ROUTE_TABLE_AF_IP4) {
		struct rte_rib_node *node;

		node = rte_rib_lookup_exact(rte_fib_get_rib(fib4), ntohl(p->ip4), p->prefixlen);
		if (node == NULL || rte_rib_get_nh(node, &nh) < 0)
			return -ENOENT;
	} else {
		struct rte_rib6_node *node;

		node = rte_rib6_lookup_exact(rte_fib6_get_rib(fib6), p->ip6, p->prefixlen);
		if (node == NULL || rte_rib6_get_nh(node, &nh) < 0)
			return -ENOENT;
	}
	return (int64_t)nh;
}

int route_remove(const struct route_table_prefix *p) {
	int ret;

	if (p->family == ROUTE_TABLE_AF_IP4)
		ret = rte_fib_delete(fib4, ntohl(p->ip4), p->prefixlen);
	else
		ret = rte_fib6_delete(fib6, p->ip6, p->prefixlen);
	if (ret < 0) {
		RT_LOG(ERR, "the table refused a delete: %s", strerror(-ret));
		return ret;
	}
	if (p->family == ROUTE_TABLE_AF_IP4)
		routes4--;
	else
		routes6--;
	return 0;
}

struct nexthop *nexthop_release(uint32_t nh_id) {
	struct nexthop *nh = nexthops[nh_id];

	if (--nh->routes > 0)
		return NULL;
	// Unpublished: no worker finds it from now on; those that found it
	// before may read it until the grace period that starts after this.
	__atomic_store_n(&nexthops[nh_id], NULL, __ATOMIC_RELEASE);
	nexthops_live--;
	return nh;
}

void nexthop_free(struct nexthop *nh) {
	// Atomic: a plain store before free() is one the compiler may drop.
	__atomic_store_n(&nh->id, NEXTHOP_POISON, __ATOMIC_RELAXED);
	free(nh);
}

void route_event(uint32_t op, const struct route_table_prefix *p, uint32_t nh_id) {
	struct route_table_event_route ev = {.op = op, .route = {.dest = *p, .nh_id = nh_id}};

	// No subscriber, or one that reads too slowly, costs nothing here.
	if (gr_api_event_publish(ROUTE_TABLE_EVENT_ROUTE, &ev, sizeof(ev)) < 0)
		RT_LOG(WARNING, "cannot publish a route's change");
}

static struct gr_api_out nh_add(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct route_table_nh_add_req *req = request;
	struct nexthop *nh;
	uint32_t refused;

	(void)ctx;
	refused = length_refused(len, sizeof(*req), "nexthop add");
	if (refused == 0 && (req->nh_id == 0 || req->nh_id > ROUTE_TABLE_NH_MAX))
		refused = rt_refuse(EINVAL, "nexthop id %u", req->nh_id);
	if (refused == 0 && req->reserved != 0)
		refused = rt_refuse(EINVAL, "nexthop add: reserved bytes not zero");
	if (refused != 0)
		return gr_api_out(refused, 0, NULL);
	if (nexthops[req->nh_id] != NULL)
		return gr_api_out(EEXIST, 0, NULL);
	nh = calloc(1, sizeof(*nh));
	if (nh == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	nh->id = req->nh_id;
	nh->port = req->port;
	// Its fields before its pointer: see nexthops[].
	__atomic_store_n(&nexthops[req->nh_id], nh, __ATOMIC_RELEASE);
	nexthops_live++;
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(ROUTE_TABLE_NH_ADD, nh_add);

static struct gr_api_out route_add(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct route_table_route *req = request;
	const struct route_table_prefix *p = &req->dest;
	uint32_t *count, refused;
	int ret;

	(void)ctx;
	refused = length_refused(len, sizeof(*req), "route add");
	if (refused == 0)
		refused = prefix_refused(p, "route add");
	if (refused == 0 &&
	    (req->nh_id == 0 || req->nh_id > ROUTE_TABLE_NH_MAX || nexthops[req->nh_id] == NULL))
		refused = rt_refuse(EINVAL, "route add: unknown nexthop %u", req->nh_id);
	if (refused != 0)
		return gr_api_out(refused, 0, NULL);
	if (route_find(p) >= 0)
		return gr_api_out(EEXIST, 0, NULL);
	count = p->family == ROUTE_TABLE_AF_IP4 ? &routes4 : &routes6;
	if (*count >= (p->family == ROUTE_TABLE_AF_IP4 ? max_routes4 : max_routes6))
		return gr_api_out(rt_refuse(ENOSPC, "route add: %u routes", *count), 0, NULL);
	if (p->family == ROUTE_TABLE_AF_IP4)
		ret = rte_fib_add(fib4, ntohl(p->ip4), p->prefixlen, req->nh_id);
	else
		ret = rte_fib6_add(fib6, p->ip6, p->prefixlen, req->nh_id);
	// The rib's node pool (ENOMEM) or the tbl8 groups (ENOSPC) ran out:
	// the table is full for this prefix, and the fib undid its insert.
	if (ret == -ENOMEM || ret == -ENOSPC)
		return gr_api_out(rt_refuse(ENOSPC, "route add: table full"), 0, NULL);
	if (ret < 0) {
		RT_LOG(ERR, "the table refused a route: %s", strerror(-ret));
		return gr_api_out((uint32_t)-ret, 0, NULL);
	}
	(*count)++;
	nexthops[req->nh_id]->routes++;
	route_event(ROUTE_TABLE_ROUTE_ADDED, p, req->nh_id);
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(ROUTE_TABLE_ROUTE_ADD, route_add);

// The route of the longest prefix covering p's address: the nexthop as the
// datapath's table gives it, the prefix from the rib beside it.
static struct gr_api_out route_lookup(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct route_table_prefix addr = *(const struct route_table_prefix *)request;
	struct route_table_route *resp;
	uint64_t nh = 0;
	uint32_t refused;
	int ret = -ENOENT;

	(void)ctx;
	refused = length_refused(len, sizeof(addr), "route lookup");
	addr.prefixlen = addr.family == ROUTE_TABLE_AF_IP4 ? RTE_FIB_MAXDEPTH : RTE_FIB6_MAXDEPTH;
	if (refused == 0)
		refused = prefix_refused(&addr, "route lookup");
	if (refused != 0)
		return gr_api_out(refused, 0, NULL);
	resp = calloc(1, sizeof(*resp));
	if (resp == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	resp->dest.family = addr.family;
	if (addr.family == ROUTE_TABLE_AF_IP4) {
		uint32_t ip = ntohl(addr.ip4);
		struct rte_rib_node *node = rte_rib_lookup(rte_fib_get_rib(fib4), ip);

		if (rte_fib_lookup_bulk(fib4, &ip, &nh, 1) == 0 && nh != 0 && node != NULL) {
			rte_rib_get_ip(node, &ip);
			rte_rib_get_depth(node, &resp->dest.prefixlen);
			resp->dest.ip4 = htonl(ip);
			ret = 0;
		}
	} else {
		uint8_t ips[1][RTE_FIB6_IPV6_ADDR_SIZE];
		struct rte_rib6_node *node = rte_rib6_lookup(rte_fib6_get_rib(fib6), addr.ip6);

		memcpy(ips[0], addr.ip6, sizeof(ips[0]));
		if (rte_fib6_lookup_bulk(fib6, ips, &nh, 1) == 0 && nh != 0 && node != NULL) {
			rte_rib6_get_ip(node, resp->dest.ip6);
			rte_rib6_get_depth(node, &resp->dest.prefixlen);
			ret = 0;
		}
	}
	if (ret < 0) {
		free(resp);
		return gr_api_out(ENOENT, 0, NULL);
	}
	resp->nh_id = (uint32_t)nh;
	return gr_api_out(0, sizeof(*resp), resp);
}
GR_API_HANDLER(ROUTE_TABLE_ROUTE_LOOKUP, route_lookup);

uint32_t tables_routes(uint8_t family) {
	return family == ROUTE_TABLE_AF_IP4 ? routes4 : routes6;
}

static struct gr_api_out stats(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct route_table_stats_resp *resp = calloc(1, sizeof(*resp));

	(void)request;
	(void)len;
	(void)ctx;
	if (resp == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	resp->routes4 = routes4;
	resp->routes6 = routes6;
	resp->max_routes4 = max_routes4;
	resp->max_routes6 = max_routes6;
	resp->nexthops = nexthops_live;
	resp->workers = workers_count();
	resp->deletes_pending = deletes_pending();
	resp->deletes_done = deletes_done();
	resp->nexthops_freed = nexthops_freed();
	resp->grace_checks = grace_checks();
	resp->replies_lost = replies_lost();
	workers_totals(&resp->lookups, &resp->lookup_hits, &resp->nexthop_mismatches);
	return gr_api_out(0, sizeof(*resp), resp);
}
GR_API_HANDLER(ROUTE_TABLE_STATS, stats);
