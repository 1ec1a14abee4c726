// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A full table of examples/route_table (started with -r 16 -R 16) refuses
// the next route with ENOSPC and stays as it was; a delete makes room
// again. Each family on its own.
//
// usage: route_table_full SOCK TRANSPORT (under with_daemon.sh, the
// application run with -r 16 -R 16)

#include "check.h"
#include "route_table_util.h"
#include "transport_arg.h"

#include <gr_api_client.h>

#include <stdio.h>

// What the test runs the application with (-r, -R).
#define TABLE_ROUTES 16

static void fill(struct gr_api_client *c, const char *fmt, uint8_t len) {
	struct route_table_route listed[TABLE_ROUTES + 1];
	struct route_table_stats_resp before, after;
	char addr[64];
	int status;

	for (unsigned i = 0; i < TABLE_ROUTES; i++) {
		snprintf(addr, sizeof(addr), fmt, i);
		status = rt_add(c, addr, len, 1);
		CHECK(status == 0, "route %s/%u: %s", addr, len, strerror(status));
	}
	rt_stats(c, &before);
	snprintf(addr, sizeof(addr), fmt, TABLE_ROUTES);
	status = rt_add(c, addr, len, 1);
	CHECK(status == ENOSPC, "route past a full table: %s", strerror(status));
	rt_stats(c, &after);
	CHECK(after.routes4 == before.routes4 && after.routes6 == before.routes6,
	      "the table changed");
	CHECK(rt_list(c, rt_prefix(addr, len).family, listed, TABLE_ROUTES + 1) == TABLE_ROUTES,
	      "listed routes");
	snprintf(addr, sizeof(addr), fmt, 0);
	CHECK(rt_del(c, addr, len, NULL) == 0, "delete of %s/%u", addr, len);
	snprintf(addr, sizeof(addr), fmt, TABLE_ROUTES);
	CHECK(rt_add(c, addr, len, 1) == 0, "a route in the room a delete made");
}

int main(int argc, char **argv) {
	struct route_table_stats_resp s;
	struct gr_api_client *c;

	CHECK(argc == 3, "usage: route_table_full SOCK TRANSPORT");
	watchdog_start(TEST_WATCHDOG_S);
	c = connect_forced(argv[1], argv[2], NULL);
	rt_stats(c, &s);
	CHECK(s.max_routes4 == TABLE_ROUTES && s.max_routes6 == TABLE_ROUTES,
	      "tables of %u and %u routes: run the application with -r %d -R %d",
	      s.max_routes4,
	      s.max_routes6,
	      TABLE_ROUTES,
	      TABLE_ROUTES);
	CHECK(rt_nh_add(c, 1, 1) == 0, "nexthop 1");
	fill(c, "10.%u.0.0", 16);
	fill(c, "2001:db8:%x::", 48);
	gr_api_client_disconnect(c);
	return 0;
}
