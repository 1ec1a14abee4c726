// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// examples/route_table's route list arrives whole and in order on the
// transport asked for: COUNT IPv4 routes and a tenth as many IPv6 ones,
// made as route_inject makes them, come back as one stream, IPv4 first,
// each family in the order route_table_api.h says, exactly
// the routes added, in the rib's order (a prefix after those it covers).
// The server holds one response of it at most, and serves others meanwhile:
// a list is the table at the list's start, whatever another client deletes
// while it is sent.
//
// usage: route_table_list SOCK TRANSPORT COUNT (under with_daemon.sh)

#include "check.h"
#include "route_gen.h"
#include "route_table_util.h"
#include "transport_arg.h"

#include <gr_api_client.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

// Adds in flight while the tables fill.
#define ADD_DEPTH 64
// Bound of the test: a loaded host fills and lists 220 000 routes in a
// fraction of it.
#define LIST_WATCHDOG_S 100

// Add count routes of family, ADD_DEPTH in flight; into routes too.
static void add_routes(
	struct gr_api_client *c,
	uint8_t family,
	uint32_t count,
	struct route_table_route *routes
) {
	uint32_t ids[ADD_DEPTH], sent = 0, done = 0;
	struct route_gen gen;
	long id;
	int ret;

	route_gen_init(&gen, family, 1);
	while (done < count) {
		while (sent < count && sent - done < ADD_DEPTH) {
			route_gen_next(&gen, sent, &routes[sent]);
			id = gr_api_client_send(
				c,
				ROUTE_TABLE_ROUTE_ADD,
				sizeof(routes[0]),
				&routes[sent]
			);
			CHECK(id > 0, "send route %u: %s", sent, strerror((int)-id));
			ids[sent++ % ADD_DEPTH] = (uint32_t)id;
		}
		ret = gr_api_client_recv(c, ROUTE_TABLE_ROUTE_ADD, ids[done % ADD_DEPTH], NULL);
		CHECK(ret == 0, "route %u: %s", done, strerror(-ret));
		done++;
	}
}

// The last address a prefix covers, into last (network order bytes).
static void last_address(const struct route_table_prefix *p, uint8_t last[16]) {
	memcpy(last, p->ip6, 16);
	for (unsigned bit = p->prefixlen; bit < (p->family == ROUTE_TABLE_AF_IP4 ? 32u : 128u);
	     bit++)
		last[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
}

// The list's order: ascending last address, the longer prefix first.
static int route_order(const void *a, const void *b) {
	const struct route_table_route *x = a, *y = b;
	uint8_t last_x[16], last_y[16];
	int d;

	last_address(&x->dest, last_x);
	last_address(&y->dest, last_y);
	d = memcmp(last_x, last_y, sizeof(last_x));
	return d != 0 ? d : (int)y->dest.prefixlen - (int)x->dest.prefixlen;
}

static void expect_same(
	const struct route_table_route *listed,
	const struct route_table_route *want,
	uint32_t n,
	const char *what
) {
	for (uint32_t i = 0; i < n; i++)
		CHECK(rt_prefix_equal(&listed[i].dest, &want[i].dest) &&
			      listed[i].nh_id == want[i].nh_id,
		      "%s route %u of %u: /%u via %u, expected /%u via %u",
		      what,
		      i,
		      n,
		      listed[i].dest.prefixlen,
		      listed[i].nh_id,
		      want[i].dest.prefixlen,
		      want[i].nh_id);
}

// A list is the table as it was when its request was served: another
// client deletes every DELETE_EVERY-th IPv4 route (each answered after its
// grace period) while the list waits for its reader, which then gets every
// route of want (sorted, count of them), deleted ones included; the next
// list has the deletes. Returns the routes left in want, in order.
#define DELETE_EVERY 100
static uint32_t list_point_in_time(
	const char *sock,
	const char *transport,
	struct gr_api_client *c,
	struct route_table_route *want,
	uint32_t count,
	struct route_table_route *listed
) {
	struct route_table_route_list_req req = {.family = ROUTE_TABLE_AF_IP4};
	struct gr_api_client *other = connect_forced(sock, transport, NULL);
	struct route_table_route_del_resp del;
	uint32_t n = 0, kept = 0;
	void *payload;
	size_t len;
	long id, resp_len;
	int ret;

	id = gr_api_client_send(c, ROUTE_TABLE_ROUTE_LIST, sizeof(req), &req);
	CHECK(id > 0, "route list: %s", strerror((int)-id));
	// Its first route: the handler ran, the list is taken.
	ret = gr_api_client_stream_next(c, (uint32_t)id, &payload, &len);
	CHECK(ret == 1 && len == sizeof(*listed), "the list's first route: %d", ret);
	memcpy(&listed[n++], payload, sizeof(*listed));
	free(payload);
	for (uint32_t i = 0; i < count; i += DELETE_EVERY) {
		ret =
			rt_call(other,
				ROUTE_TABLE_ROUTE_DEL,
				&want[i].dest,
				sizeof(want[i].dest),
				&del,
				sizeof(del),
				&resp_len);
		CHECK(ret == 0, "delete of IPv4 route %u while a list is sent: %s", i, strerror(ret)
		);
	}
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, &payload, &len)) == 1) {
		CHECK(len == sizeof(*listed) && n <= count, "route %u of the list", n);
		memcpy(&listed[n++], payload, sizeof(*listed));
		free(payload);
	}
	CHECK(ret == 0, "the list after %u routes: %s", n, strerror(errno));
	CHECK(n == count, "%u routes listed, expected the %u of the list's start", n, count);
	expect_same(listed, want, count, "IPv4 during deletes");
	for (uint32_t i = 0; i < count; i++)
		if (i % DELETE_EVERY != 0)
			want[kept++] = want[i];
	n = (uint32_t)rt_list(other, ROUTE_TABLE_AF_IP4, listed, count + 1);
	CHECK(n == kept, "%u IPv4 routes listed after the deletes, expected %u", n, kept);
	expect_same(listed, want, kept, "IPv4 after the deletes");
	gr_api_client_disconnect(other);
	return kept;
}

int main(int argc, char **argv) {
	struct route_table_route *want4, *want6, *listed;
	struct route_table_stats_resp s;
	struct gr_api_client *c;
	uint32_t count4, count6;
	size_t n;
	char *end;

	CHECK(argc == 4, "usage: route_table_list SOCK TRANSPORT COUNT");
	watchdog_start(LIST_WATCHDOG_S);
	count4 = (uint32_t)strtoul(argv[3], &end, 10);
	CHECK(*end == '\0' && count4 >= 10, "COUNT %s", argv[3]);
	count6 = count4 / 10;
	want4 = calloc(count4, sizeof(*want4));
	want6 = calloc(count6, sizeof(*want6));
	listed = calloc(count4 + count6 + 1, sizeof(*listed));
	CHECK(want4 != NULL && want6 != NULL && listed != NULL, "no memory");
	c = connect_forced(argv[1], argv[2], NULL);

	for (uint32_t id = 1; id <= ROUTE_GEN_NEXTHOPS; id++)
		CHECK(rt_nh_add(c, id, (uint16_t)id) == 0, "nexthop %u", id);
	add_routes(c, ROUTE_TABLE_AF_IP4, count4, want4);
	add_routes(c, ROUTE_TABLE_AF_IP6, count6, want6);
	rt_stats(c, &s);
	CHECK(s.routes4 == count4 && s.routes6 == count6, "%u and %u routes", s.routes4, s.routes6);

	n = rt_list(c, 0, listed, count4 + count6 + 1);
	CHECK(n == count4 + count6, "%zu routes listed, expected %u", n, count4 + count6);
	qsort(want4, count4, sizeof(*want4), route_order);
	qsort(want6, count6, sizeof(*want6), route_order);
	expect_same(listed, want4, count4, "IPv4");
	expect_same(listed + count4, want6, count6, "IPv6");
	// One family alone, after the other's stream: the same.
	n = rt_list(c, ROUTE_TABLE_AF_IP6, listed, count6 + 1);
	CHECK(n == count6, "%zu IPv6 routes listed, expected %u", n, count6);
	expect_same(listed, want6, count6, "IPv6 alone");
	list_point_in_time(argv[1], argv[2], c, want4, count4, listed);

	gr_api_client_disconnect(c);
	free(want4);
	free(want6);
	free(listed);
	return 0;
}
