// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Deferred replies of socket clients (deferred.h): any thread that answers
// one puts its connection on the list of replies due and wakes the loop,
// which sends them as a batch per connection, in the order they were
// answered. The list has its own leaf lock, taken inside the deferred lock
// (the wake) and alone (the loop).

#include "sock_priv.h"
#include "deferred.h"
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static pthread_mutex_t replies_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn_list replies_due = TAILQ_HEAD_INITIALIZER(replies_due);
static bool replies_signalled; // the loop will look at the list (replies_lock)
static struct event *replies_ev; // on replies_efd, or activated directly
static int replies_efd = -1;
static pthread_t loop_thread;

void sock_deferred_wake(struct gr_api_ctx *ctx) {
	struct conn *conn = ctx->priv;
	uint64_t one = 1;

	pthread_mutex_lock(&replies_lock);
	if (!conn->replies_due) {
		conn->replies_due = true;
		TAILQ_INSERT_TAIL(&replies_due, conn, replies_next);
	}
	if (!replies_signalled && replies_ev != NULL) {
		replies_signalled = true;
		// libevent is not thread-safe: another thread can only write the
		// eventfd the loop watches.
		if (pthread_equal(pthread_self(), loop_thread))
			event_active(replies_ev, EV_READ, 0);
		else if (write(replies_efd, &one, sizeof(one)) < 0)
			LOG(ERR, "deferred replies: waking the socket's loop: %s", strerror(errno));
	}
	pthread_mutex_unlock(&replies_lock);
}

// Send what one connection was answered, as one batch: one write for all.
static void conn_replies_send(struct conn *conn) {
	if (conn->state == CONN_CLOSED)
		return;
	conn->serving = true;
	api_deferred_flush(&conn->ctx);
	conn->serving = false;
	if (conn->state == CONN_CLOSED) {
		conn_free(conn);
		return;
	}
	conn_flush_staged(conn);
}

// The loop: replies were answered for some connections.
static void replies_on_due(evutil_socket_t fd, short what, void *arg) {
	struct conn *conn;
	uint64_t n;

	(void)what;
	(void)arg;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		LOG(ERR, "deferred replies: reading the eventfd: %s", strerror(errno));
	pthread_mutex_lock(&replies_lock);
	replies_signalled = false;
	while ((conn = TAILQ_FIRST(&replies_due)) != NULL) {
		TAILQ_REMOVE(&replies_due, conn, replies_next);
		conn->replies_due = false;
		// A reply meanwhile puts it back on the list.
		pthread_mutex_unlock(&replies_lock);
		conn_replies_send(conn);
		pthread_mutex_lock(&replies_lock);
	}
	pthread_mutex_unlock(&replies_lock);
}

void conn_replies_forget(struct conn *conn) {
	// No wake for it after this.
	api_deferred_close(&conn->ctx);
	pthread_mutex_lock(&replies_lock);
	if (conn->replies_due) {
		TAILQ_REMOVE(&replies_due, conn, replies_next);
		conn->replies_due = false;
	}
	pthread_mutex_unlock(&replies_lock);
	// The loop is the only reader of ctx.deferred: this is it.
	api_deferred_release(&conn->ctx);
}

int sock_replies_init(void) {
	loop_thread = pthread_self();
	replies_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (replies_efd < 0)
		return -errno;
	replies_ev = event_new(sock_base, replies_efd, EV_READ | EV_PERSIST, replies_on_due, NULL);
	if (replies_ev == NULL || event_add(replies_ev, NULL) < 0) {
		sock_replies_fini();
		return -ENOMEM;
	}
	return 0;
}

void sock_replies_fini(void) {
	pthread_mutex_lock(&replies_lock);
	if (replies_ev != NULL) {
		event_free(replies_ev);
		replies_ev = NULL;
	}
	replies_signalled = false;
	pthread_mutex_unlock(&replies_lock);
	if (replies_efd >= 0) {
		close(replies_efd);
		replies_efd = -1;
	}
}
