// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What the files of the events share: publishing and the backlogs
// (event.c), the subscription table (event_subscription.c).
//
// Threads: every structure and variable here is guarded by events_lock (a
// leaf lock: event.h), written and read with it held on any thread, unless
// its comment says otherwise; each function below is called with it held,
// on any thread, unless its comment says otherwise.

#pragma once

#include "event.h"

#include <gr_api.h>

#include <event2/event.h>

#include <pthread.h>
#include <search.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

struct subscription;

// The subscriptions to one event type.
struct event_type {
	uint32_t ev_type; // the key of the tree
	LIST_HEAD(, subscription) subs;
};

struct subscription {
	LIST_ENTRY(subscription) in_type;
	TAILQ_ENTRY(subscription) in_sub; // in its subscriber's subs, or its dropped
	struct event_type *type;
	struct event_sub *sub;
	uint64_t gen; // the subscriber's generation when made: dropped once it moves on
	bool suppress_self;
	bool grout_types_only; // GR_EVENT_ALL without the shm module's events
};

TAILQ_HEAD(subscription_list, subscription);

struct event_sub {
	pid_t pid;
	enum event_framing framing;
	event_wake_fn wake; // NULL: main-thread consumer, drain is called
	event_drain_fn drain;
	void *arg;
	struct subscription_list subs;
	unsigned n_subs;
	// Subscriptions dropped and still in the table: the main thread
	// removes them (reap_next links the subscribers that have some).
	struct subscription_list dropped;
	unsigned n_dropped;
	uint64_t gen; // bumped by each unsubscribe: older subscriptions count no more
	bool reaping; // on the reap list
	bool freed; // its owner let go: freed with its last dropped subscription
	TAILQ_ENTRY(event_sub) reap_next;
	bool wants_lost; // Grout framing: subscribed to GR_SHM_EVENT_LOST or all
	uint64_t last_seq; // publish sequence of the last event queued here
	// The backlog: a ring of cap + 1 pointers (cap events and one
	// events-lost notice), head taken next.
	struct event_msg **ring;
	unsigned cap;
	unsigned head;
	_Atomic unsigned count; // read without the lock by event_sub_pending()
	size_t bytes; // of the events, the notice not counted
	struct event_msg *notice; // the events-lost event in the ring, if any
	uint64_t lost; // events dropped since the last events-lost event
	bool dropping; // dropped the last event offered (logged once per run)
	bool starving; // on the starved list
	TAILQ_ENTRY(event_sub) starved_next;
	bool dirty; // main-thread consumer: on the dirty list
	TAILQ_ENTRY(event_sub) dirty_next;
	TAILQ_ENTRY(event_sub) all_next; // in every subscriber's list (event.c)
};

TAILQ_HEAD(event_sub_list, event_sub);

// Hidden (the library is built so, but an extern declaration does not say
// it): each file reaches these variables directly, not through the GOT, as
// when each was the static of one file.
#pragma GCC visibility push(hidden)

// ---- event.c ----

extern pthread_mutex_t events_lock;
extern struct event_totals totals;
// The main loop's delivery event: set by event_module_init() and cleared by
// event_module_fini() (main thread, the lock held for the clear). NULL: no
// loop is served, and dropped subscriptions are removed at once.
extern struct event *main_ev;

// Make the main loop run main_deliver() soon.
void main_signal(void);

// ---- event_subscription.c ----

extern void *type_tree; // of struct event_type, by ev_type
extern struct event_type type_all;
// Subscribers with dropped subscriptions to remove, oldest first.
extern struct event_sub_list reap_list;

// Remove up to n dropped subscriptions, oldest subscriber first. Returns
// true if some are left. Main thread.
bool reap_batch(unsigned n);

// What event_unsubscribe_all() does, for event_sub_free() too.
void unsubscribe_all_locked(struct event_sub *sub);

// Inline: a publish looks its type up, and checks each subscription to it.

static inline int type_cmp(const void *a, const void *b) {
	uint32_t x = ((const struct event_type *)a)->ev_type;
	uint32_t y = ((const struct event_type *)b)->ev_type;

	return x < y ? -1 : x > y;
}

static inline struct event_type *type_find(uint32_t ev_type) {
	struct event_type key = {.ev_type = ev_type};
	void *node;

	if (ev_type == GR_EVENT_ALL)
		return &type_all;
	node = tfind(&key, &type_tree, type_cmp);
	return node != NULL ? *(struct event_type **)node : NULL;
}

static inline bool subscription_live(const struct subscription *s) {
	return s->gen == s->sub->gen;
}

#pragma GCC visibility pop
