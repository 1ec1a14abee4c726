// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The rate limit of the connection lines, per peer uid, as the kernel's
// printk rate limit: the first SOCK_LOG_BURST connections of a uid in a
// SOCK_LOG_INTERVAL_MS interval have their lines logged (connected, hello,
// closed, and their channel's attach and detach); the next ones are
// counted, and one line sums them up once the interval is over (at the
// uid's next connection, or on a timer if none comes). A quiet connection
// that the daemon closes for a fault of its client (an oversized request,
// an output it does not read) has that line logged all the same within a
// second budget of the same size. A uid is what a peer cannot multiply at
// will (a process can fork, and pids come and go), and the limit of one uid
// leaves every other's lines alone. Main thread only.

#include "sock_priv.h"
#include "config.h"
#include "log_limit.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

// As the kernel's DEFAULT_RATELIMIT_BURST and DEFAULT_RATELIMIT_INTERVAL:
// a client that connects once a second, as a monitoring script does, has
// every connection logged; a storm of thousands costs 10 connections'
// lines and a summary every 5 s.
#define SOCK_LOG_BURST 10
#define SOCK_LOG_INTERVAL_MS 5000
// Uids whose counts are kept apart. More uids connecting within one
// interval share one more entry (the summary then says "other uids").
#define SOCK_LOG_PEERS 64

struct peer_log {
	uid_t uid;
	bool used;
	uint64_t begin_ns; // of its interval; 0: none open
	unsigned logged; // connections logged in the interval
	uint64_t suppressed; // connections not logged in it
	unsigned faults_logged; // fault lines of quiet connections logged in it
	uint64_t faults_suppressed; // and not logged
	pid_t last_pid; // of the last connection not logged
};

static struct {
	struct peer_log peers[SOCK_LOG_PEERS];
	struct peer_log others; // uids past SOCK_LOG_PEERS
	struct event *timer; // the next summary due
	uint64_t timer_ns; // when it is due, while it is pending
} peer_logs;

static uint64_t interval_ns(void) {
	return (uint64_t)SOCK_LOG_INTERVAL_MS * LOG_LIMIT_NS_PER_MS;
}

// The interval of p is over: say what it did not log, and close it.
static void peer_log_summary(struct peer_log *p) {
	char who[32], faults[64] = "";

	if (p == &peer_logs.others)
		snprintf(who, sizeof(who), "clients of other uids");
	else
		snprintf(who, sizeof(who), "clients of uid %u", (unsigned)p->uid);
	if (p->faults_suppressed > 0)
		snprintf(
			faults,
			sizeof(faults),
			"; %" PRIu64 " lines about their faults suppressed too",
			p->faults_suppressed
		);
	if (p->suppressed > 0 || p->faults_suppressed > 0)
		LOG(NOTICE,
		    "%s: %" PRIu64 " more connections suppressed in %u s (at most %u logged per"
		    " uid), the last of pid %d%s",
		    who,
		    p->suppressed,
		    SOCK_LOG_INTERVAL_MS / 1000,
		    SOCK_LOG_BURST,
		    (int)p->last_pid,
		    faults);
	p->begin_ns = 0;
	p->logged = 0;
	p->suppressed = 0;
	p->faults_logged = 0;
	p->faults_suppressed = 0;
}

static bool peer_log_over(const struct peer_log *p, uint64_t now) {
	return p->begin_ns != 0 && now >= p->begin_ns + interval_ns();
}

// The entry of uid, its interval current: made if need be, in a free entry
// or one whose interval is over, else in the shared one.
static struct peer_log *peer_log_of(uid_t uid, uint64_t now) {
	struct peer_log *p = NULL, *spare = NULL;

	for (unsigned i = 0; i < SOCK_LOG_PEERS && p == NULL; i++) {
		struct peer_log *e = &peer_logs.peers[i];

		if (e->used && e->uid == uid)
			p = e;
		else if (spare == NULL && (!e->used || e->begin_ns == 0 || peer_log_over(e, now)))
			spare = e;
	}
	if (p == NULL && spare != NULL) {
		if (spare->used)
			peer_log_summary(spare);
		*spare = (struct peer_log){.uid = uid, .used = true};
		p = spare;
	}
	if (p == NULL)
		p = &peer_logs.others;
	if (peer_log_over(p, now))
		peer_log_summary(p);
	if (p->begin_ns == 0)
		p->begin_ns = now;
	return p;
}

// A summary will be due once p's interval is over: the timer for then, if
// it is not due sooner.
static void peer_log_arm(const struct peer_log *p, uint64_t now) {
	uint64_t due = p->begin_ns + interval_ns(), wait_ns;
	struct timeval tv;

	if (evtimer_pending(peer_logs.timer, NULL) && peer_logs.timer_ns <= due)
		return;
	// 1 ms more: the coarse clock may read a little behind the timer's.
	wait_ns = (due > now ? due - now : 0) + LOG_LIMIT_NS_PER_MS;
	tv.tv_sec = (time_t)(wait_ns / 1000000000ull);
	tv.tv_usec = (suseconds_t)(wait_ns % 1000000000ull / 1000);
	evtimer_add(peer_logs.timer, &tv);
	peer_logs.timer_ns = due;
}

// The summaries due; the timer again for the next one.
static void peer_log_on_timer(evutil_socket_t fd, short what, void *arg) {
	uint64_t now = log_limit_now_ns();
	const struct peer_log *next = NULL;

	(void)fd;
	(void)what;
	(void)arg;
	for (unsigned i = 0; i <= SOCK_LOG_PEERS; i++) {
		struct peer_log *p = i < SOCK_LOG_PEERS ? &peer_logs.peers[i] : &peer_logs.others;

		if (p->suppressed == 0 && p->faults_suppressed == 0)
			continue;
		if (peer_log_over(p, now))
			peer_log_summary(p);
		else if (next == NULL || p->begin_ns < next->begin_ns)
			next = p;
	}
	if (next != NULL)
		peer_log_arm(next, now);
}

bool sock_log_admit(uid_t uid, pid_t pid) {
	uint64_t now = log_limit_now_ns();
	struct peer_log *p = peer_log_of(uid, now);

	if (p->logged < SOCK_LOG_BURST) {
		p->logged++;
		return true;
	}
	p->suppressed++;
	p->last_pid = pid;
	peer_log_arm(p, now);
	return false;
}

bool sock_log_fault(uid_t uid) {
	uint64_t now = log_limit_now_ns();
	struct peer_log *p = peer_log_of(uid, now);

	if (p->faults_logged < SOCK_LOG_BURST) {
		p->faults_logged++;
		return true;
	}
	p->faults_suppressed++;
	peer_log_arm(p, now);
	return false;
}

int sock_log_init(void) {
	memset(&peer_logs, 0, sizeof(peer_logs));
	peer_logs.timer = evtimer_new(sock_base, peer_log_on_timer, NULL);
	return peer_logs.timer != NULL ? 0 : -ENOMEM;
}

void sock_log_fini(void) {
	if (peer_logs.timer == NULL)
		return;
	for (unsigned i = 0; i < SOCK_LOG_PEERS; i++)
		peer_log_summary(&peer_logs.peers[i]);
	peer_log_summary(&peer_logs.others);
	event_free(peer_logs.timer);
	peer_logs.timer = NULL;
}
