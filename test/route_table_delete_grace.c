// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// examples/route_table answers a route delete only after an RCU grace
// period of its workers, and frees the nexthop whose last route went only
// then. The workers are held (ROUTE_TABLE_WORKERS_HOLD: online, reporting
// no quiescent state), so no grace period can end: meanwhile the route is
// out of the table, the delete counted as pending, its nexthop not freed,
// no reply has come, and other requests are answered. Released, the reply
// comes, after the nexthop was freed. Ordered by counts, never by time.
//
// Mode "disconnect": the client of a delete leaves while it waits; the
// application completes it all the same (its nexthop freed), counts the
// reply it could not give (-ECONNRESET), and serves on.
//
// usage: route_table_delete_grace SOCK TRANSPORT grace|disconnect
// (under with_daemon.sh)

#include "check.h"
#include "route_table_util.h"
#include "transport_arg.h"

#include <gr_api_client.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Polls of the stats while a completion on the application's loop is
// waited for, and the pause between them: 15 s in all (below the
// watchdog), far above a grace period of a worker that reports every burst.
#define COMPLETION_POLLS 3000
#define COMPLETION_POLL_US 5000

static long send_delete(struct gr_api_client *c, const char *addr, uint8_t len) {
	struct route_table_prefix p = rt_prefix(addr, len);
	long id = gr_api_client_send(c, ROUTE_TABLE_ROUTE_DEL, sizeof(p), &p);

	CHECK(id > 0, "send the delete of %s/%u: %s", addr, len, strerror((int)-id));
	return id;
}

static void recv_delete(struct gr_api_client *c, long id, uint32_t nh, uint32_t freed) {
	struct route_table_route_del_resp resp;
	long n = gr_api_client_recv_into(c, (uint32_t)id, &resp, sizeof(resp));

	CHECK(n == sizeof(resp), "delete reply: %ld (%s)", n, strerror(errno));
	CHECK(resp.nh_id == nh && resp.nexthop_freed == freed,
	      "delete reply via %u freed %u, expected via %u freed %u",
	      resp.nh_id,
	      resp.nexthop_freed,
	      nh,
	      freed);
}

static void expect_no_reply(struct gr_api_client *c, long id) {
	struct route_table_route_del_resp resp;

	CHECK(gr_api_client_try_recv_into(c, (uint32_t)id, &resp, sizeof(resp)) < 0 &&
		      errno == EAGAIN,
	      "a delete answered while the workers hold");
}

static void expect_counts(
	struct gr_api_client *c,
	const struct route_table_stats_resp *before,
	uint64_t pending,
	uint64_t freed,
	uint64_t done
) {
	struct route_table_stats_resp s;

	rt_stats(c, &s);
	CHECK(s.deletes_pending == before->deletes_pending + pending &&
		      s.nexthops_freed == before->nexthops_freed + freed &&
		      s.deletes_done == before->deletes_done + done,
	      "pending %llu, freed %llu, done %llu; expected %llu more pending, %llu freed, %llu "
	      "done",
	      (unsigned long long)s.deletes_pending,
	      (unsigned long long)s.nexthops_freed,
	      (unsigned long long)s.deletes_done,
	      (unsigned long long)pending,
	      (unsigned long long)freed,
	      (unsigned long long)done);
	CHECK(s.nexthop_mismatches == 0, "a worker read a freed nexthop");
}

// Wait until the application's loop has looked at the deletes waiting
// twice more (a look under way when the delete came may have missed it):
// a delete it could complete would be complete by then.
static void wait_grace_checks(struct gr_api_client *c) {
	struct route_table_stats_resp start, s;
	unsigned polls = 0;

	rt_stats(c, &start);
	do {
		CHECK(polls++ < COMPLETION_POLLS, "the loop never looked at the deletes");
		usleep(COMPLETION_POLL_US);
		rt_stats(c, &s);
	} while (s.grace_checks < start.grace_checks + 2);
}

static void grace(struct gr_api_client *c) {
	struct route_table_stats_resp before;
	struct route_table_route r;
	long id, id2, id3;

	CHECK(rt_nh_add(c, 7, 1) == 0 && rt_nh_add(c, 8, 2) == 0, "nexthops");
	CHECK(rt_add(c, "10.7.0.0", 16, 7) == 0, "10.7.0.0/16 via 7");
	CHECK(rt_add(c, "10.8.0.0", 16, 8) == 0 && rt_add(c, "2001:db8:9::", 48, 8) == 0,
	      "routes via 8");
	rt_stats(c, &before);

	CHECK(rt_hold(c, true) == 0, "hold the workers");
	id = send_delete(c, "10.7.0.0", 16);
	// Answered while the delete waits: the route is out of the table,
	// its nexthop still there.
	expect_counts(c, &before, 1, 0, 0);
	wait_grace_checks(c);
	expect_counts(c, &before, 1, 0, 0);
	CHECK(rt_lookup(c, "10.7.1.1", &r) == ENOENT, "the deleted route is out of the table");
	expect_no_reply(c, id);
	CHECK(rt_hold(c, false) == 0, "release the workers");
	recv_delete(c, id, 7, 1);
	// The reply came after the free.
	expect_counts(c, &before, 0, 1, 1);
	CHECK(rt_add(c, "10.7.0.0", 16, 7) == EINVAL, "nexthop 7 is gone");

	// Two in flight: the first leaves nexthop 8 a route, the second
	// takes its last.
	CHECK(rt_hold(c, true) == 0, "hold the workers again");
	id2 = send_delete(c, "10.8.0.0", 16);
	id3 = send_delete(c, "2001:db8:9::", 48);
	expect_counts(c, &before, 2, 1, 1);
	wait_grace_checks(c);
	expect_counts(c, &before, 2, 1, 1);
	expect_no_reply(c, id2);
	expect_no_reply(c, id3);
	CHECK(rt_hold(c, false) == 0, "release the workers again");
	recv_delete(c, id2, 8, 0);
	recv_delete(c, id3, 8, 1);
	expect_counts(c, &before, 0, 2, 3);
}

// Clients the server holds now.
static unsigned clients(struct gr_api_client *c) {
	long id = gr_api_client_send(c, GR_SHM_CLIENT_LIST, 0, NULL);
	unsigned n = 0;
	void *payload;
	size_t len;
	int ret;

	CHECK(id > 0, "client list: %s", strerror((int)-id));
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, &payload, &len)) == 1) {
		free(payload);
		n++;
	}
	CHECK(ret == 0, "client list: %s", strerror(errno));
	return n;
}

static void disconnect(const char *sock, const char *transport, struct gr_api_client *c) {
	struct route_table_stats_resp before, s;
	struct gr_api_client *leaver;
	unsigned polls = 0;

	CHECK(rt_nh_add(c, 20, 1) == 0 && rt_add(c, "10.20.0.0", 16, 20) == 0, "route via 20");
	rt_stats(c, &before);
	CHECK(rt_hold(c, true) == 0, "hold the workers");
	leaver = connect_forced(sock, transport, NULL);
	send_delete(leaver, "10.20.0.0", 16);
	// Served in order: once the stats are answered, the delete waits.
	rt_stats(leaver, &s);
	CHECK(s.deletes_pending == before.deletes_pending + 1, "the delete does not wait");
	gr_api_client_disconnect(leaver);
	// Released once the server has seen it leave: the reply then finds
	// no one.
	while (clients(c) > 1) {
		CHECK(polls++ < COMPLETION_POLLS, "the client never left");
		usleep(COMPLETION_POLL_US);
	}
	polls = 0;
	CHECK(rt_hold(c, false) == 0, "release the workers");
	do {
		CHECK(polls++ < COMPLETION_POLLS, "the delete never completed");
		usleep(COMPLETION_POLL_US);
		rt_stats(c, &s);
	} while (s.deletes_pending != before.deletes_pending);
	CHECK(s.nexthops_freed == before.nexthops_freed + 1, "the nexthop was not freed");
	CHECK(s.deletes_done == before.deletes_done + 1, "the delete was not done");
	CHECK(s.replies_lost == before.replies_lost + 1,
	      "%llu replies lost, expected one more than %llu",
	      (unsigned long long)s.replies_lost,
	      (unsigned long long)before.replies_lost);
	// Served on.
	CHECK(rt_nh_add(c, 21, 1) == 0 && rt_add(c, "10.20.0.0", 16, 21) == 0, "a route again");
}

int main(int argc, char **argv) {
	struct gr_api_client *c;

	CHECK(argc == 4, "usage: route_table_delete_grace SOCK TRANSPORT grace|disconnect");
	watchdog_start(TEST_WATCHDOG_S);
	c = connect_forced(argv[1], argv[2], NULL);
	if (strcmp(argv[3], "grace") == 0)
		grace(c);
	else if (strcmp(argv[3], "disconnect") == 0)
		disconnect(argv[1], argv[2], c);
	else
		CHECK(false, "mode %s", argv[3]);
	gr_api_client_disconnect(c);
	return 0;
}
