// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Events: the subscription table, subscribing, and the removal of dropped
// subscriptions. Publishing and the backlogs are in event.c.
//
// The table: one entry per event type that has subscriptions, in a balanced
// search tree keyed by type (tsearch(3): a red-black tree in glibc), plus one
// entry for GR_EVENT_ALL. A tree rather than a hash table: any client chooses
// the types it subscribes to, and no choice of types makes a look-up cost
// more than the tree's depth (at most twice the log2 of the types: 36 levels
// for every subscription 1024 connections hold by default), with no secret
// seed that timing could reveal, and no resize that would hold the lock over
// the whole table. An entry lists its subscriptions, and is freed with its
// last one: subscribing and unsubscribing leave nothing behind.
//
// Dropping subscriptions (an unsubscribe, a disconnect) holds the lock for a
// constant time however many the client held: they leave the subscriber's
// list at once, and stop counting at once (their generation is older than
// their subscriber's), and the main thread then takes them out of the table
// EVENT_REAP_BATCH at a time, one batch per turn of its loop, so that no
// publisher waits behind a whole client's subscriptions. A subscribe also
// removes EVENT_REAP_PER_SUBSCRIBE of its own subscriber's dropped ones
// first: a client that subscribes and unsubscribes in a loop cannot outrun
// the removal.

#include "event_priv.h"
#include "config.h"

#include <gr_shm.h>

#include <errno.h>
#include <pthread.h>
#include <search.h>
#include <stdlib.h>
#include <sys/queue.h>

// Dropped subscriptions of its own subscriber a subscribe removes first: more
// than the one it adds, so the dropped ones of a subscriber never outgrow
// its subscriptions.
#define EVENT_REAP_PER_SUBSCRIBE 2

void *type_tree; // of struct event_type, by ev_type
struct event_type type_all = {.ev_type = GR_EVENT_ALL};
// Subscribers with dropped subscriptions to remove, oldest first.
struct event_sub_list reap_list = TAILQ_HEAD_INITIALIZER(reap_list);

static struct event_type *type_get(uint32_t ev_type) {
	struct event_type *t = type_find(ev_type);

	if (t != NULL)
		return t;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->ev_type = ev_type;
	LIST_INIT(&t->subs);
	if (tsearch(t, &type_tree, type_cmp) == NULL) {
		free(t);
		return NULL;
	}
	return t;
}

// Free an entry left without subscriptions (never the GR_EVENT_ALL one).
static void type_put(struct event_type *t) {
	if (t == &type_all || !LIST_EMPTY(&t->subs))
		return;
	tdelete(t, &type_tree, type_cmp);
	free(t);
}

// The live subscription of sub to t, NULL if none: a walk of t's
// subscriptions, of at most one per subscriber. events_lock held.
static struct subscription *sub_find(const struct event_sub *sub, const struct event_type *t) {
	struct subscription *s;

	if (t == NULL)
		return NULL;
	LIST_FOREACH (s, &t->subs, in_type)
		if (s->sub == sub && subscription_live(s))
			return s;
	return NULL;
}

// events_lock held.
static void sub_update_wants_lost(struct event_sub *sub) {
	const struct subscription *all = sub_find(sub, &type_all);

	sub->wants_lost = sub_find(sub, type_find(GR_SHM_EVENT_LOST)) != NULL ||
			  (all != NULL && !all->grout_types_only);
}

// Take a dropped subscription out of the table and free it; free its
// subscriber too if that was its last and its owner let it go. Returns true
// if the subscriber is gone. events_lock held.
static bool subscription_reap(struct subscription *s) {
	struct event_sub *sub = s->sub;

	LIST_REMOVE(s, in_type);
	TAILQ_REMOVE(&sub->dropped, s, in_sub);
	type_put(s->type);
	free(s);
	totals.subscriptions_removing--;
	if (--sub->n_dropped > 0)
		return false;
	if (sub->reaping) {
		TAILQ_REMOVE(&reap_list, sub, reap_next);
		sub->reaping = false;
	}
	if (!sub->freed)
		return false;
	free(sub);
	return true;
}

// Remove up to n dropped subscriptions of sub. Returns true if sub is gone.
// events_lock held.
static bool sub_reap(struct event_sub *sub, unsigned n) {
	struct subscription *s;

	while (n-- > 0 && (s = TAILQ_FIRST(&sub->dropped)) != NULL)
		if (subscription_reap(s))
			return true;
	return false;
}

// Remove up to n dropped subscriptions, oldest subscriber first. Returns
// true if some are left. events_lock held.
bool reap_batch(unsigned n) {
	struct event_sub *sub;

	while (n > 0 && (sub = TAILQ_FIRST(&reap_list)) != NULL) {
		unsigned k = sub->n_dropped < n ? sub->n_dropped : n;

		sub_reap(sub, k);
		n -= k;
	}
	return !TAILQ_EMPTY(&reap_list);
}

int event_subscribe(struct event_sub *sub, uint32_t ev_type, const struct event_sub_opts *opts) {
	struct subscription *s;
	struct event_type *t;
	int ret = 0;

	pthread_mutex_lock(&events_lock);
	if (opts->framing != sub->framing) {
		if (sub->n_subs > 0 || sub->count > 0) {
			ret = -EBUSY;
			goto out;
		}
		sub->framing = opts->framing;
	}
	s = sub_find(sub, type_find(ev_type));
	if (s != NULL) {
		s->suppress_self = opts->suppress_self;
		s->grout_types_only = opts->grout_types_only;
		sub_update_wants_lost(sub);
		goto out;
	}
	if (sub->n_subs >= server_conf.event_subs_max) {
		ret = -ENOSPC;
		goto out;
	}
	sub_reap(sub, EVENT_REAP_PER_SUBSCRIBE);
	t = type_get(ev_type);
	s = t != NULL ? calloc(1, sizeof(*s)) : NULL;
	if (s == NULL) {
		if (t != NULL)
			type_put(t);
		ret = -ENOMEM;
		goto out;
	}
	s->type = t;
	s->sub = sub;
	s->gen = sub->gen;
	s->suppress_self = opts->suppress_self;
	s->grout_types_only = opts->grout_types_only;
	LIST_INSERT_HEAD(&t->subs, s, in_type);
	TAILQ_INSERT_TAIL(&sub->subs, s, in_sub);
	if (sub->n_subs++ == 0)
		totals.subscribers++;
	totals.subscriptions++;
	sub_update_wants_lost(sub);
out:
	pthread_mutex_unlock(&events_lock);
	return ret;
}

// Drop every subscription of sub: they count no more from now on, and the
// main thread removes them from the table (at once if it serves no loop).
// events_lock held.
void unsubscribe_all_locked(struct event_sub *sub) {
	if (sub->n_subs == 0)
		return;
	sub->gen++;
	TAILQ_CONCAT(&sub->dropped, &sub->subs, in_sub);
	sub->n_dropped += sub->n_subs;
	totals.subscriptions_removing += sub->n_subs;
	totals.subscriptions -= sub->n_subs;
	totals.subscribers--;
	sub->n_subs = 0;
	sub->wants_lost = false;
	if (main_ev == NULL) {
		sub_reap(sub, sub->n_dropped);
		return;
	}
	if (!sub->reaping) {
		TAILQ_INSERT_TAIL(&reap_list, sub, reap_next);
		sub->reaping = true;
	}
	main_signal();
}

void event_unsubscribe_all(struct event_sub *sub) {
	pthread_mutex_lock(&events_lock);
	unsubscribe_all_locked(sub);
	pthread_mutex_unlock(&events_lock);
}
