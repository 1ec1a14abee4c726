// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// examples/route_table's requests on the transport asked for: nexthops and
// routes of both families added, looked up by address (the longest prefix
// wins), listed and deleted, each change published as an event; and every
// bad input answered EINVAL (EMSGSIZE for a payload shorter than its
// struct, the server's rule) with the tables left as they were.
//
// usage: route_table_requests SOCK TRANSPORT (under with_daemon.sh)

#include "check.h"
#include "event_util.h"
#include "route_table_util.h"
#include "transport_arg.h"

#include <gr_api_client.h>

#include <errno.h>
#include <string.h>

// Routes the test lists at most.
#define LIST_MAX 16

static void expect_lookup(
	struct gr_api_client *c,
	const char *addr,
	const char *prefix,
	uint8_t len,
	uint32_t nh
) {
	struct route_table_prefix want = rt_prefix(prefix, len);
	struct route_table_route r;
	int status = rt_lookup(c, addr, &r);

	CHECK(status == 0, "lookup %s: %s", addr, strerror(status));
	CHECK(rt_prefix_equal(&r.dest, &want) && r.nh_id == nh,
	      "lookup %s: /%u via %u, expected %s/%u via %u",
	      addr,
	      r.dest.prefixlen,
	      r.nh_id,
	      prefix,
	      len,
	      nh);
}

static void
expect_event(struct gr_api_client *c, uint32_t op, const char *prefix, uint8_t len, uint32_t nh) {
	struct route_table_prefix want = rt_prefix(prefix, len);
	struct route_table_event_route ev;
	size_t n = event_expect(c, ROUTE_TABLE_EVENT_ROUTE, &ev, sizeof(ev));

	CHECK(n == sizeof(ev), "route event of %zu bytes", n);
	CHECK(ev.op == op && rt_prefix_equal(&ev.route.dest, &want) && ev.route.nh_id == nh,
	      "event op %u /%u via %u, expected op %u %s/%u via %u",
	      ev.op,
	      ev.route.dest.prefixlen,
	      ev.route.nh_id,
	      op,
	      prefix,
	      len,
	      nh);
}

// A route add of len bytes; its status.
static int add_raw(struct gr_api_client *c, const struct route_table_route *r, size_t len) {
	struct {
		struct route_table_route r;
		uint8_t more[8];
	} req = {.r = *r};
	return rt_call(c, ROUTE_TABLE_ROUTE_ADD, &req, len, NULL, 0, NULL);
}

// Each bad route add gets EINVAL (or EMSGSIZE) and changes nothing.
static void bad_adds(struct gr_api_client *c) {
	struct route_table_route good = {.dest = rt_prefix("192.0.2.0", 24), .nh_id = 1}, r;

	r = good;
	r.dest.prefixlen = 33;
	CHECK(add_raw(c, &r, sizeof(r)) == EINVAL, "IPv4 prefix length 33");
	r = (struct route_table_route){.dest = rt_prefix("2001:db8:1::", 48), .nh_id = 1};
	r.dest.prefixlen = 129;
	CHECK(add_raw(c, &r, sizeof(r)) == EINVAL, "IPv6 prefix length 129");
	r = good;
	r.dest.family = 5;
	CHECK(add_raw(c, &r, sizeof(r)) == EINVAL, "family 5");
	r = good;
	r.dest = rt_prefix("192.0.2.1", 24);
	CHECK(add_raw(c, &r, sizeof(r)) == EINVAL, "bits set past the length");
	r = good;
	r.dest.reserved[1] = 1;
	CHECK(add_raw(c, &r, sizeof(r)) == EINVAL, "reserved bytes");
	r = good;
	r.dest.ip6[7] = 1;
	CHECK(add_raw(c, &r, sizeof(r)) == EINVAL, "bytes after an IPv4 address");
	r = good;
	r.nh_id = 0;
	CHECK(add_raw(c, &r, sizeof(r)) == EINVAL, "nexthop 0");
	r.nh_id = ROUTE_TABLE_NH_MAX + 1;
	CHECK(add_raw(c, &r, sizeof(r)) == EINVAL, "nexthop past the most");
	r.nh_id = 99;
	CHECK(add_raw(c, &r, sizeof(r)) == EINVAL, "unknown nexthop");
	CHECK(add_raw(c, &good, sizeof(good) + 4) == EINVAL, "a payload longer than its struct");
	CHECK(add_raw(c, &good, sizeof(good) - 1) == EMSGSIZE, "a payload shorter than its struct");
}

static void bad_others(struct gr_api_client *c) {
	struct route_table_nh_add_req nh = {.nh_id = 5, .reserved = 1};
	struct route_table_prefix p = rt_prefix("10.0.0.0", 8);
	struct route_table_route_list_req list = {.family = 9};
	struct route_table_route r;

	CHECK(rt_nh_add(c, 0, 1) == EINVAL, "nexthop id 0");
	CHECK(rt_nh_add(c, ROUTE_TABLE_NH_MAX + 1, 1) == EINVAL, "nexthop id past the most");
	CHECK(rt_call(c, ROUTE_TABLE_NH_ADD, &nh, sizeof(nh), NULL, 0, NULL) == EINVAL,
	      "nexthop reserved bytes");
	p.prefixlen = 33;
	CHECK(rt_call(c, ROUTE_TABLE_ROUTE_DEL, &p, sizeof(p), NULL, 0, NULL) == EINVAL,
	      "delete of a /33");
	p.prefixlen = 8;
	CHECK(rt_call(c, ROUTE_TABLE_ROUTE_DEL, &p, sizeof(p) - 1, NULL, 0, NULL) == EMSGSIZE,
	      "short delete");
	p.family = 9;
	CHECK(rt_call(c, ROUTE_TABLE_ROUTE_LOOKUP, &p, sizeof(p), &r, sizeof(r), NULL) == EINVAL,
	      "lookup of family 9");
	CHECK(rt_call(c, ROUTE_TABLE_ROUTE_LIST, &list, sizeof(list), NULL, 0, NULL) == EINVAL,
	      "list of family 9");
	CHECK(rt_del(c, "172.16.0.0", 12, NULL) == ENOENT, "delete of no route");
}

// The tables hold exactly the routes of the test so far.
static void expect_tables(struct gr_api_client *c, uint32_t routes4, uint32_t routes6) {
	struct route_table_route listed[LIST_MAX];
	struct route_table_stats_resp s;
	size_t n;

	rt_stats(c, &s);
	CHECK(s.routes4 == routes4 && s.routes6 == routes6,
	      "%u IPv4 and %u IPv6 routes, expected %u and %u",
	      s.routes4,
	      s.routes6,
	      routes4,
	      routes6);
	n = rt_list(c, 0, listed, LIST_MAX);
	CHECK(n == routes4 + routes6, "%zu routes listed, expected %u", n, routes4 + routes6);
	for (size_t i = 0; i < n; i++)
		CHECK(listed[i].dest.family ==
			      (i < routes4 ? ROUTE_TABLE_AF_IP4 : ROUTE_TABLE_AF_IP6),
		      "route %zu of family %u",
		      i,
		      listed[i].dest.family);
}

int main(int argc, char **argv) {
	struct route_table_route_del_resp del;
	struct route_table_route r;
	struct route_table_stats_resp s;
	struct gr_api_client *c, *watcher;

	CHECK(argc == 3, "usage: route_table_requests SOCK TRANSPORT");
	watchdog_start(TEST_WATCHDOG_S);
	c = connect_forced(argv[1], argv[2], NULL);
	watcher = connect_forced(argv[1], argv[2], NULL);
	event_subscribe(watcher, ROUTE_TABLE_EVENT_ROUTE, false);

	CHECK(rt_nh_add(c, 1, 3) == 0, "nexthop 1");
	CHECK(rt_nh_add(c, 1, 3) == EEXIST, "nexthop 1 again");
	CHECK(rt_add(c, "10.0.0.0", 8, 1) == 0, "10.0.0.0/8");
	expect_event(watcher, ROUTE_TABLE_ROUTE_ADDED, "10.0.0.0", 8, 1);
	CHECK(rt_add(c, "10.1.0.0", 16, 2) == EINVAL, "a route via a nexthop not added");
	CHECK(rt_nh_add(c, 2, 4) == 0, "nexthop 2");
	CHECK(rt_add(c, "10.1.0.0", 16, 2) == 0, "10.1.0.0/16");
	expect_event(watcher, ROUTE_TABLE_ROUTE_ADDED, "10.1.0.0", 16, 2);
	CHECK(rt_add(c, "10.1.0.0", 16, 1) == EEXIST, "10.1.0.0/16 again");
	CHECK(rt_add(c, "2001:db8::", 32, 1) == 0, "2001:db8::/32");
	expect_event(watcher, ROUTE_TABLE_ROUTE_ADDED, "2001:db8::", 32, 1);
	CHECK(rt_add(c, "0.0.0.0", 0, 2) == 0, "a default route");
	expect_event(watcher, ROUTE_TABLE_ROUTE_ADDED, "0.0.0.0", 0, 2);
	CHECK(rt_add(c, "::", 0, 1) == 0, "an IPv6 default route");
	expect_event(watcher, ROUTE_TABLE_ROUTE_ADDED, "::", 0, 1);

	expect_lookup(c, "10.1.2.3", "10.1.0.0", 16, 2);
	expect_lookup(c, "10.2.0.1", "10.0.0.0", 8, 1);
	expect_lookup(c, "192.0.2.1", "0.0.0.0", 0, 2);
	expect_lookup(c, "2001:db8:5::1", "2001:db8::", 32, 1);
	expect_lookup(c, "2001:db9::1", "::", 0, 1);
	CHECK(rt_del(c, "::", 0, NULL) == 0, "delete of the IPv6 default route");
	expect_event(watcher, ROUTE_TABLE_ROUTE_DELETED, "::", 0, 1);
	CHECK(rt_lookup(c, "2001:db9::1", &r) == ENOENT, "an IPv6 address no route covers");
	expect_tables(c, 3, 1);

	bad_adds(c);
	bad_others(c);
	expect_tables(c, 3, 1);
	expect_lookup(c, "192.0.2.1", "0.0.0.0", 0, 2);

	// Its last route gone, nexthop 2 lives on for the default route.
	CHECK(rt_del(c, "10.1.0.0", 16, &del) == 0, "delete of 10.1.0.0/16");
	CHECK(del.nh_id == 2 && del.nexthop_freed == 0,
	      "via %u, freed %u",
	      del.nh_id,
	      del.nexthop_freed);
	expect_event(watcher, ROUTE_TABLE_ROUTE_DELETED, "10.1.0.0", 16, 2);
	expect_lookup(c, "10.1.2.3", "10.0.0.0", 8, 1);
	CHECK(rt_del(c, "0.0.0.0", 0, &del) == 0, "delete of the default route");
	CHECK(del.nh_id == 2 && del.nexthop_freed == 1,
	      "via %u, freed %u",
	      del.nh_id,
	      del.nexthop_freed);
	CHECK(rt_add(c, "10.3.0.0", 16, 2) == EINVAL, "a route via a freed nexthop");
	CHECK(rt_lookup(c, "192.0.2.1", &r) == ENOENT, "no default route any more");
	expect_tables(c, 1, 1);

	rt_stats(c, &s);
	CHECK(s.nexthops == 1 && s.nexthops_freed == 1 && s.deletes_done == 3 &&
		      s.deletes_pending == 0,
	      "nexthops %u, freed %llu, deletes done %llu, pending %llu",
	      s.nexthops,
	      (unsigned long long)s.nexthops_freed,
	      (unsigned long long)s.deletes_done,
	      (unsigned long long)s.deletes_pending);
	CHECK(s.workers >= 1 && s.nexthop_mismatches == 0,
	      "%u workers, %llu mismatches",
	      s.workers,
	      (unsigned long long)s.nexthop_mismatches);
	gr_api_client_disconnect(watcher);
	gr_api_client_disconnect(c);
	return 0;
}
