// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ROUTE_TABLE_ROUTE_LIST: every route of a family, as a stream produced in
// turns (gr_api_stream_start()). The handler copies the family's routes
// into a snapshot, in the rib's order, and its producer sends from the
// snapshot whenever the client has room, while the server serves other
// clients (and this table's adds and deletes) between two turns. So the
// list is the table as it was when the request was served, whatever is
// added or deleted meanwhile, and no turn reads a rib node a delete may
// have freed since: the rib is read only in the handler, under the
// handler lock, in one walk.

#include "route_table.h"

#include <gr_api_server.h>

#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_rib.h>
#include <rte_rib6.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

// Lists served at once, each with a snapshot of its tables (24 bytes a
// route: 24 MB for a million): past it, a list is refused with EBUSY. A
// bound on what clients that list and never read can make the application
// hold.
#define LIST_SNAPSHOTS_MAX 4

// A list being sent: its routes, and the next one to send.
struct route_list_snap {
	uint32_t n, next;
	struct route_table_route routes[];
};

// Snapshots alive (handler lock).
static unsigned snapshots;

// Copy the IPv4 routes into snap, at most max of them, in the rib's order:
// a walk in post order gives every prefix after those it covers, and the
// default route, which it leaves out, comes last.
static void snap_fill4(struct route_list_snap *snap, uint32_t max) {
	struct rte_rib *rib = rte_fib_get_rib(tables_fib4());
	struct route_table_route r = {.dest.family = ROUTE_TABLE_AF_IP4};
	struct rte_rib_node *node = NULL;
	uint64_t nh;
	uint32_t ip;

	while (snap->n < max &&
	       (node = rte_rib_get_nxt(rib, 0, 0, node, RTE_RIB_GET_NXT_ALL)) != NULL) {
		rte_rib_get_ip(node, &ip);
		rte_rib_get_depth(node, &r.dest.prefixlen);
		rte_rib_get_nh(node, &nh);
		r.dest.ip4 = htonl(ip);
		r.nh_id = (uint32_t)nh;
		snap->routes[snap->n++] = r;
	}
	node = rte_rib_lookup_exact(rib, 0, 0);
	if (node == NULL || snap->n >= max)
		return;
	rte_rib_get_nh(node, &nh);
	snap->routes[snap->n++] = (struct route_table_route){
		.dest.family = ROUTE_TABLE_AF_IP4,
		.nh_id = (uint32_t)nh,
	};
}

// The same for the IPv6 routes.
static void snap_fill6(struct route_list_snap *snap, uint32_t max) {
	static const uint8_t any[RTE_FIB6_IPV6_ADDR_SIZE];
	struct rte_rib6 *rib = rte_fib6_get_rib(tables_fib6());
	struct route_table_route r = {.dest.family = ROUTE_TABLE_AF_IP6};
	struct rte_rib6_node *node = NULL;
	uint64_t nh;

	while (snap->n < max &&
	       (node = rte_rib6_get_nxt(rib, any, 0, node, RTE_RIB6_GET_NXT_ALL)) != NULL) {
		rte_rib6_get_ip(node, r.dest.ip6);
		rte_rib6_get_depth(node, &r.dest.prefixlen);
		rte_rib6_get_nh(node, &nh);
		r.nh_id = (uint32_t)nh;
		snap->routes[snap->n++] = r;
	}
	node = rte_rib6_lookup_exact(rib, any, 0);
	if (node == NULL || snap->n >= max)
		return;
	rte_rib6_get_nh(node, &nh);
	snap->routes[snap->n++] = (struct route_table_route){
		.dest.family = ROUTE_TABLE_AF_IP6,
		.nh_id = (uint32_t)nh,
	};
}

// The producer: the snapshot's routes from where the last turn stopped,
// until the server says the turn is over (-EAGAIN: that route goes first
// next turn).
static int list_produce(struct gr_api_ctx *ctx, void *state) {
	struct route_list_snap *snap = state;
	int ret;

	while (snap->next < snap->n) {
		ret = gr_api_send(ctx, sizeof(snap->routes[0]), &snap->routes[snap->next]);
		if (ret < 0) {
			if (ret != -EAGAIN)
				RT_LOG(NOTICE,
				       "route list stopped after %u of %u routes: %s",
				       snap->next,
				       snap->n,
				       strerror(-ret));
			return ret;
		}
		snap->next++;
	}
	return 0;
}

static void list_release(void *state) {
	free(state);
	snapshots--;
}

static struct gr_api_out route_list(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct route_table_route_list_req *req = request;
	struct route_list_snap *snap;
	uint32_t max = 0;
	int ret;

	if (len != sizeof(*req))
		return gr_api_out(
			rt_refuse(
				EINVAL,
				"route list of %u bytes, expected %zu",
				len,
				sizeof(*req)
			),
			0,
			NULL
		);
	if ((req->reserved[0] | req->reserved[1] | req->reserved[2]) != 0)
		return gr_api_out(
			rt_refuse(EINVAL, "route list: reserved bytes not zero"),
			0,
			NULL
		);
	if (req->family != 0 && req->family != ROUTE_TABLE_AF_IP4 &&
	    req->family != ROUTE_TABLE_AF_IP6)
		return gr_api_out(rt_refuse(EINVAL, "route list: family %u", req->family), 0, NULL);
	if (snapshots >= LIST_SNAPSHOTS_MAX)
		return gr_api_out(
			rt_refuse(EBUSY, "route list: %u lists being sent already", snapshots),
			0,
			NULL
		);
	if (req->family != ROUTE_TABLE_AF_IP6)
		max += tables_routes(ROUTE_TABLE_AF_IP4);
	if (req->family != ROUTE_TABLE_AF_IP4)
		max += tables_routes(ROUTE_TABLE_AF_IP6);
	snap = malloc(sizeof(*snap) + (size_t)max * sizeof(snap->routes[0]));
	if (snap == NULL)
		return gr_api_out(
			rt_refuse(ENOMEM, "route list: no memory for %u routes", max),
			0,
			NULL
		);
	snap->n = 0;
	snap->next = 0;
	if (req->family != ROUTE_TABLE_AF_IP6)
		snap_fill4(snap, max);
	if (req->family != ROUTE_TABLE_AF_IP4)
		snap_fill6(snap, max);
	ret = gr_api_stream_start(ctx, list_produce, list_release, snap);
	if (ret < 0) {
		free(snap);
		return gr_api_out((uint32_t)-ret, 0, NULL);
	}
	snapshots++;
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(ROUTE_TABLE_ROUTE_LIST, route_list);
