// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Deletes that answer after a grace period. The handler takes the route
// out of its table at once, starts a grace period on the workers' QSBR
// variable, keeps the request open (gr_api_defer()) and returns: the
// server serves this client and the others meanwhile. The application's
// loop checks the grace periods; once one has ended, no worker can hold
// what the delete took away, so it frees the nexthop whose last route it
// was and answers (gr_api_deferred_reply()).
//
// The handler runs on a poller or on the loop's thread; it wakes the loop
// with an eventfd when the first delete starts to wait, and the loop
// checks again on a short timer while any waits. The same goes for a
// hold of the workers, answered once they all hold.

#include "route_table.h"

#include <gr_api_server.h>

#include <rte_rcu_qsbr.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <unistd.h>

// How often the loop looks at the grace periods while a delete waits: a
// worker that spins reports a quiescent state every few microseconds, one
// that pauses is offline while it sleeps.
#define CHECK_PERIOD_US 200

struct pending_delete {
	TAILQ_ENTRY(pending_delete) next;
	uint64_t token; // of the grace period it waits for
	struct gr_api_deferred *reply;
	struct nexthop *dying; // unpublished, freed after the grace period
	struct route_table_route_del_resp resp;
	struct route_table_prefix dest; // for the log
};

// Under the handler lock: the deletes waiting, oldest (smallest token)
// first, the hold waiting for its answer, and the counts.
static TAILQ_HEAD(, pending_delete) pending = TAILQ_HEAD_INITIALIZER(pending);
static struct gr_api_deferred *hold_reply;
static uint64_t n_pending, n_done, n_freed, n_checks;
// Written by the loop outside the lock: atomic.
static uint64_t n_lost;

static int wake_fd = -1;
static struct event *wake_event, *check_timer;

uint64_t deletes_pending(void) {
	return n_pending;
}

uint64_t deletes_done(void) {
	return n_done;
}

uint64_t nexthops_freed(void) {
	return n_freed;
}

uint64_t grace_checks(void) {
	return n_checks;
}

uint64_t replies_lost(void) {
	return __atomic_load_n(&n_lost, __ATOMIC_RELAXED);
}

// Wake the loop (any thread): a counter add, never blocking.
static void loop_wake(void) {
	uint64_t one = 1;

	if (write(wake_fd, &one, sizeof(one)) < 0)
		RT_LOG(ERR, "cannot wake the loop: %s", strerror(errno));
}

static struct gr_api_out route_del(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct route_table_prefix *p = request;
	struct pending_delete *del;
	uint32_t refused = 0;
	int64_t nh_id;
	int ret;

	if (len != sizeof(*p))
		refused = rt_refuse(
			EINVAL,
			"route delete of %u bytes, expected %zu",
			len,
			sizeof(*p)
		);
	if (refused == 0)
		refused = prefix_refused(p, "route delete");
	if (refused != 0)
		return gr_api_out(refused, 0, NULL);
	nh_id = route_find(p);
	if (nh_id < 0)
		return gr_api_out(ENOENT, 0, NULL);
	del = calloc(1, sizeof(*del));
	if (del == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	// Kept open before anything changes: refused, nothing is deleted.
	del->reply = gr_api_defer(ctx);
	if (del->reply == NULL) {
		ret = errno;
		free(del);
		if (ret == ENOSPC)
			return gr_api_out(rt_refuse(EBUSY, "route delete: too many open"), 0, NULL);
		return gr_api_out((uint32_t)ret, 0, NULL);
	}
	ret = route_remove(p);
	if (ret < 0) {
		gr_api_deferred_reply(del->reply, (uint32_t)-ret, 0, NULL);
		free(del);
		return gr_api_out(0, 0, NULL);
	}
	del->dest = *p;
	del->resp.nh_id = (uint32_t)nh_id;
	del->dying = nexthop_release((uint32_t)nh_id);
	del->resp.nexthop_freed = del->dying != NULL;
	route_event(ROUTE_TABLE_ROUTE_DELETED, p, (uint32_t)nh_id);
	// After the route left the table and its nexthop nexthops[] (both
	// with release): a worker that reports a quiescent state after this
	// token can no longer reach them.
	del->token = rte_rcu_qsbr_start(workers_qsbr());
	if (TAILQ_EMPTY(&pending))
		loop_wake();
	TAILQ_INSERT_TAIL(&pending, del, next);
	n_pending++;
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(ROUTE_TABLE_ROUTE_DEL, route_del);

static struct gr_api_out workers_hold(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct route_table_workers_hold_req *req = request;
	struct gr_api_deferred *d;

	if (len != sizeof(*req) || req->hold > 1)
		return gr_api_out(rt_refuse(EINVAL, "workers hold: bad request"), 0, NULL);
	if (req->hold == 0) {
		workers_hold_set(false);
		// A hold not answered yet is over before it began.
		if (hold_reply != NULL)
			gr_api_deferred_reply(hold_reply, ECANCELED, 0, NULL);
		hold_reply = NULL;
		loop_wake();
		return gr_api_out(0, 0, NULL);
	}
	if (hold_reply != NULL)
		return gr_api_out(EBUSY, 0, NULL);
	d = gr_api_defer(ctx);
	if (d == NULL)
		return gr_api_out(errno == ENOSPC ? EBUSY : (uint32_t)errno, 0, NULL);
	hold_reply = d;
	workers_hold_set(true);
	loop_wake();
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(ROUTE_TABLE_WORKERS_HOLD, workers_hold);

static void
reply(struct gr_api_deferred *d,
      uint32_t status,
      uint32_t len,
      const void *payload,
      const char *what) {
	int ret = gr_api_deferred_reply(d, status, len, payload);

	if (ret == -ECONNRESET)
		__atomic_fetch_add(&n_lost, 1, __ATOMIC_RELAXED);
	if (ret < 0)
		RT_LOG(NOTICE, "%s answered to no one: %s", what, strerror(-ret));
}

// On the loop: complete the deletes whose grace period ended, and the
// hold once every worker holds; look again soon while any waits.
static void deletes_check(evutil_socket_t fd, short what, void *arg) {
	TAILQ_HEAD(, pending_delete) done = TAILQ_HEAD_INITIALIZER(done);
	struct timeval period = {.tv_usec = CHECK_PERIOD_US};
	struct gr_api_deferred *held = NULL;
	struct pending_delete *del;
	char addr[INET6_ADDRSTRLEN], line[96];
	uint64_t count;
	bool again;

	(void)what;
	(void)arg;
	if (fd >= 0 && read(fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		RT_LOG(ERR, "cannot read the loop's wake-up: %s", strerror(errno));
	gr_api_server_lock();
	if (!TAILQ_EMPTY(&pending))
		n_checks++;
	// Oldest first: tokens grow, so the first that has not ended stops
	// the walk.
	while ((del = TAILQ_FIRST(&pending)) != NULL &&
	       rte_rcu_qsbr_check(workers_qsbr(), del->token, false) == 1) {
		TAILQ_REMOVE(&pending, del, next);
		if (del->dying != NULL) {
			nexthop_free(del->dying);
			n_freed++;
		}
		n_pending--;
		n_done++;
		TAILQ_INSERT_TAIL(&done, del, next);
	}
	if (hold_reply != NULL && workers_held()) {
		held = hold_reply;
		hold_reply = NULL;
	}
	again = !TAILQ_EMPTY(&pending) || hold_reply != NULL;
	gr_api_server_unlock();

	// Answered outside the lock: the counts above are what the client
	// sees next.
	if (held != NULL)
		reply(held, 0, 0, NULL, "a hold of the workers");
	while ((del = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, del, next);
		inet_ntop(
			del->dest.family == ROUTE_TABLE_AF_IP4 ? AF_INET : AF_INET6,
			&del->dest.ip6,
			addr,
			sizeof(addr)
		);
		snprintf(line, sizeof(line), "the delete of %s/%u", addr, del->dest.prefixlen);
		reply(del->reply, 0, sizeof(del->resp), &del->resp, line);
		free(del);
	}
	if (again)
		evtimer_add(check_timer, &period);
}

int deletes_init(struct event_base *base) {
	wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (wake_fd < 0) {
		RT_LOG(ERR, "eventfd: %s", strerror(errno));
		return -errno;
	}
	wake_event = event_new(base, wake_fd, EV_READ | EV_PERSIST, deletes_check, NULL);
	check_timer = evtimer_new(base, deletes_check, NULL);
	if (wake_event == NULL || check_timer == NULL || event_add(wake_event, NULL) < 0) {
		RT_LOG(ERR, "cannot watch the deletes from the loop");
		deletes_fini();
		return -ENOMEM;
	}
	return 0;
}

void deletes_fini(void) {
	struct pending_delete *del;

	// The server stopped: each reply finds its client gone.
	while ((del = TAILQ_FIRST(&pending)) != NULL) {
		TAILQ_REMOVE(&pending, del, next);
		gr_api_deferred_reply(del->reply, ECANCELED, 0, NULL);
		free(del->dying);
		free(del);
	}
	if (hold_reply != NULL)
		gr_api_deferred_reply(hold_reply, ECANCELED, 0, NULL);
	hold_reply = NULL;
	n_pending = 0;
	if (wake_event != NULL)
		event_free(wake_event);
	if (check_timer != NULL)
		event_free(check_timer);
	if (wake_fd >= 0)
		close(wake_fd);
	wake_event = NULL;
	check_timer = NULL;
	wake_fd = -1;
}
