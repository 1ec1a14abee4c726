// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The requests of examples/route_table (route_table_api.h) as its tests
// make them: each returns the response's status (0 or an errno value), so
// that a test compares it with what it expects.

#pragma once

#include "check.h"
#include "route_table_api.h"

#include <gr_api_client.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

// Send type with len bytes of payload; copy up to cap bytes of the
// response to resp. Returns the status; *resp_len the payload's length.
static inline int
rt_call(struct gr_api_client *c,
	uint32_t type,
	const void *req,
	size_t len,
	void *resp,
	size_t cap,
	long *resp_len) {
	long n = gr_api_client_send_recv_into(c, type, len, req, resp, cap);

	if (resp_len != NULL)
		*resp_len = n;
	return n < 0 ? errno : 0;
}

// A prefix from its text ("10.0.0.0", "2001:db8::") and length.
static inline struct route_table_prefix rt_prefix(const char *addr, uint8_t len) {
	struct route_table_prefix p = {.prefixlen = len};

	if (strchr(addr, ':') != NULL) {
		p.family = ROUTE_TABLE_AF_IP6;
		CHECK(inet_pton(AF_INET6, addr, p.ip6) == 1, "address %s", addr);
	} else {
		p.family = ROUTE_TABLE_AF_IP4;
		CHECK(inet_pton(AF_INET, addr, &p.ip4) == 1, "address %s", addr);
	}
	return p;
}

static inline bool
rt_prefix_equal(const struct route_table_prefix *a, const struct route_table_prefix *b) {
	return a->family == b->family && a->prefixlen == b->prefixlen &&
	       memcmp(a->ip6, b->ip6, sizeof(a->ip6)) == 0;
}

static inline int rt_nh_add(struct gr_api_client *c, uint32_t id, uint16_t port) {
	struct route_table_nh_add_req req = {.nh_id = id, .port = port};
	return rt_call(c, ROUTE_TABLE_NH_ADD, &req, sizeof(req), NULL, 0, NULL);
}

static inline int rt_add(struct gr_api_client *c, const char *addr, uint8_t len, uint32_t nh) {
	struct route_table_route r = {.dest = rt_prefix(addr, len), .nh_id = nh};
	return rt_call(c, ROUTE_TABLE_ROUTE_ADD, &r, sizeof(r), NULL, 0, NULL);
}

static inline int
rt_del(struct gr_api_client *c,
       const char *addr,
       uint8_t len,
       struct route_table_route_del_resp *resp) {
	struct route_table_prefix p = rt_prefix(addr, len);
	struct route_table_route_del_resp ignored;
	long n;
	int status;

	status =
		rt_call(c,
			ROUTE_TABLE_ROUTE_DEL,
			&p,
			sizeof(p),
			resp ? resp : &ignored,
			sizeof(ignored),
			&n);
	CHECK(status != 0 || n == sizeof(ignored), "delete answered %ld bytes", n);
	return status;
}

// The route the table gives addr: status, and *r.
static inline int
rt_lookup(struct gr_api_client *c, const char *addr, struct route_table_route *r) {
	struct route_table_prefix p = rt_prefix(addr, 0);
	long n;
	int status = rt_call(c, ROUTE_TABLE_ROUTE_LOOKUP, &p, sizeof(p), r, sizeof(*r), &n);

	CHECK(status != 0 || n == sizeof(*r), "lookup answered %ld bytes", n);
	return status;
}

static inline void rt_stats(struct gr_api_client *c, struct route_table_stats_resp *s) {
	long n;
	int status = rt_call(c, ROUTE_TABLE_STATS, NULL, 0, s, sizeof(*s), &n);

	CHECK(status == 0 && n == sizeof(*s), "stats: status %d, %ld bytes", status, n);
}

static inline int rt_hold(struct gr_api_client *c, bool hold) {
	struct route_table_workers_hold_req req = {.hold = hold};
	return rt_call(c, ROUTE_TABLE_WORKERS_HOLD, &req, sizeof(req), NULL, 0, NULL);
}

// Every route of family (0: both), in the order they arrive, into routes
// (cap of them); returns how many came. Fails the test on any error, a
// response of another size, or more than cap.
static inline size_t
rt_list(struct gr_api_client *c, uint8_t family, struct route_table_route *routes, size_t cap) {
	struct route_table_route_list_req req = {.family = family};
	size_t n = 0, len;
	void *payload;
	long id;
	int ret;

	id = gr_api_client_send(c, ROUTE_TABLE_ROUTE_LIST, sizeof(req), &req);
	CHECK(id > 0, "route list: %s", strerror((int)-id));
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, &payload, &len)) == 1) {
		CHECK(len == sizeof(*routes), "a listed route of %zu bytes", len);
		CHECK(n < cap, "more than %zu routes listed", cap);
		memcpy(&routes[n++], payload, sizeof(*routes));
		free(payload);
	}
	CHECK(ret == 0, "route list after %zu routes: %s", n, strerror(errno));
	return n;
}
