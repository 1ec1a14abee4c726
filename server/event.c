// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Events: the subscription table, publishing, per-subscriber backlogs, the
// events-lost event, the main-thread delivery of socket subscribers, the
// removal of dropped subscriptions, and the handlers of the event requests.
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
//
// A published event is copied once into a struct event_msg; each
// subscriber's backlog (a ring of pointers, bounded in messages and bytes)
// takes a reference. The consumer of a backlog takes the messages in order
// and drops its reference once a message is written whole. The messages held
// by backlogs, each counted once however many backlogs hold it, are bounded
// together too (server_conf.event_memory_bytes): past that bound a new event goes to no
// backlog, and every subscriber it was for counts it lost. Everything here
// is guarded by events_lock, a leaf lock.
//
// Lost events: a subscriber that lost events gets one GR_SHM_EVENT_LOST with
// their count once its backlog has room again, before any newer event. That
// message takes no room from events (the ring has a slot for it beyond the
// bound, and it counts in neither bound), and there is at most one in a
// backlog: when events come faster than the subscriber reads, the slots it
// frees go to events, and the one notice says how many were lost meanwhile.

#include "event.h"
#include "api.h"
#include "config.h"

#include <gr_api.h>
#include <gr_shm.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <search.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <unistd.h>

// Dropped subscriptions the main thread removes from the table per turn of
// its loop: some tens of microseconds of the lock (docs/reliability.md), so
// a publisher never waits longer.
#define EVENT_REAP_BATCH 256
// Dropped subscriptions of its own subscriber a subscribe removes first: more
// than the one it adds, so the dropped ones of a subscriber never outgrow
// its subscriptions.
#define EVENT_REAP_PER_SUBSCRIBE 2

// Longest reason of a "dropping events" line.
#define FULL_LOG_DETAIL_LEN 96

#define MS_PER_S 1000u
#define US_PER_MS 1000

// Room an event message keeps before its payload.
#define EVENT_MSG_HDR_LEN (sizeof(struct gr_api_response) + sizeof(struct gr_api_event))

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
};

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static void *type_tree; // of struct event_type, by ev_type
static struct event_type type_all = {.ev_type = GR_EVENT_ALL};
static struct event_totals totals;
static uint64_t publish_seq;
// Bytes of the events the backlogs hold, each counted once: added when an
// event goes to its first backlog, taken back when it leaves its last.
static size_t held_bytes;
// Subscribers with dropped subscriptions to remove, oldest first.
static TAILQ_HEAD(, event_sub) reap_list = TAILQ_HEAD_INITIALIZER(reap_list);
// Subscribers that lost events and wait for room in the event memory to be
// told: each gets its events-lost event as soon as an event leaves the
// last backlog that held it and makes room.
static TAILQ_HEAD(, event_sub) starved = TAILQ_HEAD_INITIALIZER(starved);

// Why a subscriber drops its events.
enum drop_reason {
	DROP_BACKLOG_FULL, // its own backlog is full
	DROP_MEMORY_FULL, // the backlogs together hold server_conf.event_memory_bytes
};

// Subscribers whose events began to be dropped. Noted by the publisher (any
// thread, under events_lock, maybe under the handler lock too), logged by
// the main thread outside every lock, at a bounded rate: a subscriber can
// stop and resume reading at will, and each time its drops begin anew.
static struct {
	struct log_limit limit;
	bool logged; // a line about it came already
	pid_t pid; // the last one's, its backlog then, and why
	unsigned count;
	size_t bytes;
	size_t held; // bytes the backlogs held together
	enum drop_reason reason;
} full_note;
static struct event *full_log_ev; // timer: the next line due

// Main-thread delivery: subscribers with something to take, and how the
// main loop learns of them.
static TAILQ_HEAD(, event_sub) dirty = TAILQ_HEAD_INITIALIZER(dirty);
static struct event *main_ev; // on main_efd, or activated directly
static int main_efd = -1;
static bool main_signalled; // an eventfd write or activation is pending
static pthread_t main_thread;
// Timer of the next batch of removals: a turn of the loop later, after the
// other clients' events.
static struct event *reap_ev;

static int type_cmp(const void *a, const void *b) {
	uint32_t x = ((const struct event_type *)a)->ev_type;
	uint32_t y = ((const struct event_type *)b)->ev_type;

	return x < y ? -1 : x > y;
}

static struct event_type *type_find(uint32_t ev_type) {
	struct event_type key = {.ev_type = ev_type};
	void *node;

	if (ev_type == GR_EVENT_ALL)
		return &type_all;
	node = tfind(&key, &type_tree, type_cmp);
	return node != NULL ? *(struct event_type **)node : NULL;
}

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

// The event type of a message.
static uint32_t m_type(const struct event_msg *m) {
	struct gr_api_event ev;
	memcpy(&ev, m->data + sizeof(struct gr_api_response), sizeof(ev));
	return ev.ev_type;
}

// What a message costs while a backlog holds it.
static size_t msg_size(const struct event_msg *m) {
	return sizeof(*m) + m->len;
}

static void msg_put(struct event_msg *m) {
	if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(m);
}

// Whether the event memory has room for len more bytes. events_lock held.
static bool memory_has_room(size_t len) {
	return held_bytes + len <= server_conf.event_memory_bytes;
}

// Whether it has room for the smallest event: what an events-lost event
// waits for (it takes none itself). events_lock held.
static bool memory_has_room_again(void) {
	return memory_has_room(sizeof(struct event_msg) + EVENT_MSG_HDR_LEN);
}

const void *event_msg_bytes(const struct event_msg *m, enum event_framing framing, uint32_t *len) {
	if (framing == EVENT_FRAMING_TAGGED) {
		*len = m->len;
		return m->data;
	}
	*len = m->len - (uint32_t)sizeof(struct gr_api_response);
	return m->data + sizeof(struct gr_api_response);
}

static struct event_msg *msg_new(uint32_t ev_type, const void *payload, uint32_t len) {
	struct event_msg *m = malloc(sizeof(*m) + EVENT_MSG_HDR_LEN + len);
	struct gr_api_response resp = {
		.for_id = 0,
		.status = 0,
		.payload_len = (uint32_t)sizeof(struct gr_api_event) + len,
	};
	struct gr_api_event ev = {.ev_type = ev_type, .reserved = 0, .payload_len = len};

	if (m == NULL)
		return NULL;
	m->refs = 0;
	m->backlogs = 0;
	m->len = (uint32_t)EVENT_MSG_HDR_LEN + len;
	memcpy(m->data, &resp, sizeof(resp));
	memcpy(m->data + sizeof(resp), &ev, sizeof(ev));
	if (len > 0)
		memcpy(m->data + EVENT_MSG_HDR_LEN, payload, len);
	return m;
}

// Make the main loop run main_deliver() soon. events_lock held.
static void main_signal(void) {
	uint64_t one = 1;

	if (main_signalled || main_ev == NULL)
		return;
	main_signalled = true;
	// libevent is not thread-safe: another thread can only write the
	// eventfd the main loop watches.
	if (pthread_equal(pthread_self(), main_thread))
		event_active(main_ev, EV_READ, 0);
	else if (write(main_efd, &one, sizeof(one)) < 0)
		LOG(ERR, "events: waking the main thread: %s", strerror(errno));
}

// Tell the consumer of sub it has something to take. events_lock held.
static void sub_wake(struct event_sub *sub) {
	if (sub->wake != NULL) {
		sub->wake(sub->arg);
		return;
	}
	if (!sub->dirty) {
		sub->dirty = true;
		TAILQ_INSERT_TAIL(&dirty, sub, dirty_next);
	}
	main_signal();
}

// Events in the backlog, the notice not counted.
static unsigned sub_events(const struct event_sub *sub) {
	return sub->count - (sub->notice != NULL);
}

static bool sub_has_room(const struct event_sub *sub, uint32_t len) {
	return sub_events(sub) < sub->cap && sub->bytes + len <= server_conf.event_backlog_bytes;
}

static void sub_push(struct event_sub *sub, struct event_msg *m) {
	unsigned was = sub->count;

	sub->ring[(sub->head + was) % (sub->cap + 1)] = m;
	__atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
	// Release: a consumer that sees the count sees the slot (it takes the
	// lock before reading the slot anyway; the pending check only hints).
	atomic_store_explicit(&sub->count, was + 1, memory_order_release);
	if (was == 0)
		sub_wake(sub);
}

static void sub_starving_end(struct event_sub *sub) {
	if (sub->starving) {
		TAILQ_REMOVE(&starved, sub, starved_next);
		sub->starving = false;
	}
}

// Queue the events-lost event if sub lost events, should get it, has none
// queued, and has room for events again: in its backlog (else its next pop
// calls again) and in the event memory (else the next event to leave the
// memory does, memory_released()). events_lock held.
static void sub_push_lost(struct event_sub *sub) {
	struct gr_shm_event_lost lost = {.count = sub->lost};
	struct event_msg *m;

	if (sub->lost == 0 || sub->notice != NULL || !sub_has_room(sub, EVENT_MSG_HDR_LEN))
		return;
	if (!memory_has_room_again()) {
		if (!sub->starving) {
			TAILQ_INSERT_TAIL(&starved, sub, starved_next);
			sub->starving = true;
		}
		return;
	}
	sub_starving_end(sub);
	if (sub->framing == EVENT_FRAMING_GROUT && !sub->wants_lost) {
		// A Grout client that did not ask for it could not parse it.
		sub->lost = 0;
		return;
	}
	m = msg_new(GR_SHM_EVENT_LOST, &lost, sizeof(lost));
	if (m == NULL)
		return; // retried at the next pop or release
	sub->lost = 0;
	sub->notice = m;
	sub_push(sub, m);
}

// An event left the last backlog that held it: tell the subscribers that
// waited for room in the event memory. The notices take none of it, so the
// room stays and every one of them gets its own (or, without room in its
// own backlog, waits for its next pop). events_lock held.
static void memory_released(struct event_msg *m) {
	struct event_sub *sub;

	held_bytes -= msg_size(m);
	if (!memory_has_room_again())
		return;
	while ((sub = TAILQ_FIRST(&starved)) != NULL) {
		sub_starving_end(sub);
		sub_push_lost(sub);
	}
}

// A backlog lets go of m (taken, or its subscriber freed): the caller drops
// its reference outside the lock. events_lock held.
static void sub_release(struct event_sub *sub, struct event_msg *m) {
	if (m == sub->notice) {
		sub->notice = NULL;
		return;
	}
	sub->bytes -= m->len;
	if (--m->backlogs == 0)
		memory_released(m);
}

// Note that sub begins to drop its events, for the log. events_lock held.
static void sub_note_drops(struct event_sub *sub, enum drop_reason reason) {
	if (sub->dropping)
		return;
	sub->dropping = true;
	log_limit_count(&full_note.limit);
	full_note.pid = sub->pid;
	full_note.count = sub_events(sub);
	full_note.bytes = sub->bytes;
	full_note.held = held_bytes;
	full_note.reason = reason;
	main_signal();
}

// Queue m for sub, or count it lost. events_lock held.
static void sub_offer(struct event_sub *sub, struct event_msg *m) {
	sub_push_lost(sub);
	if (sub->lost > 0 || !sub_has_room(sub, m->len)) {
		sub_note_drops(sub, DROP_BACKLOG_FULL);
		sub->lost++;
		totals.dropped++;
		return;
	}
	if (m->backlogs == 0) {
		if (!memory_has_room(msg_size(m))) {
			sub_note_drops(sub, DROP_MEMORY_FULL);
			sub->lost++;
			totals.dropped++;
			// Its backlog may be empty: nothing of its own would
			// call again.
			sub_push_lost(sub);
			return;
		}
		held_bytes += msg_size(m);
	}
	m->backlogs++;
	sub->dropping = false;
	sub->bytes += m->len;
	totals.queued++;
	sub_push(sub, m);
}

static bool subscription_live(const struct subscription *s) {
	return s->gen == s->sub->gen;
}

static void offer_to_type(struct event_type *t, struct event_msg *m, uint64_t seq, pid_t pid) {
	struct subscription *s;

	if (t == NULL)
		return;
	LIST_FOREACH (s, &t->subs, in_type) {
		if (!subscription_live(s))
			continue; // dropped, waiting for the main thread
		if (s->sub->last_seq == seq)
			continue; // already got it through another subscription
		if (s->suppress_self && pid != 0 && s->sub->pid == pid)
			continue;
		if (t == &type_all && s->grout_types_only &&
		    GR_MSG_MODULE(m_type(m)) == GR_SHM_MODULE)
			continue;
		s->sub->last_seq = seq;
		sub_offer(s->sub, m);
	}
}

GR_API_EXPORT int gr_api_event_publish(uint32_t ev_type, const void *payload, uint32_t len) {
	pid_t pid = api_current_pid();
	struct event_type *t;
	struct event_msg *m;
	uint64_t seq;

	// GR_EVENT_ALL names every type in a subscription, none in an event.
	if (ev_type == GR_EVENT_ALL || (payload == NULL && len > 0))
		return -EINVAL;
	// The event and its headers fit in one message of either transport.
	if (len > GR_API_MAX_MSG_LEN)
		return -EMSGSIZE;
	pthread_mutex_lock(&events_lock);
	t = type_find(ev_type);
	if (t == NULL && LIST_EMPTY(&type_all.subs)) {
		pthread_mutex_unlock(&events_lock);
		return 0;
	}
	m = msg_new(ev_type, payload, len);
	if (m == NULL) {
		pthread_mutex_unlock(&events_lock);
		LOG(ERR, "events: no memory for event 0x%08x of %u bytes", ev_type, len);
		return -ENOMEM;
	}
	// The message starts with one reference of our own, so that it lives
	// until every backlog took its own.
	m->refs = 1;
	seq = ++publish_seq;
	totals.published++;
	offer_to_type(t, m, seq, pid);
	offer_to_type(&type_all, m, seq, pid);
	pthread_mutex_unlock(&events_lock);
	msg_put(m);
	return 0;
}

struct event_sub *event_sub_new(
	pid_t pid,
	enum event_framing framing,
	event_wake_fn wake,
	event_drain_fn drain,
	void *arg
) {
	struct event_sub *sub = calloc(1, sizeof(*sub));

	if (sub != NULL) {
		sub->cap = server_conf.event_backlog_msgs;
		sub->ring = calloc(sub->cap + 1, sizeof(*sub->ring));
	}
	if (sub == NULL || sub->ring == NULL) {
		LOG(ERR, "events: no memory for a subscriber of pid %d", (int)pid);
		free(sub);
		return NULL;
	}
	sub->pid = pid;
	sub->framing = framing;
	sub->wake = wake;
	sub->drain = drain;
	sub->arg = arg;
	TAILQ_INIT(&sub->subs);
	TAILQ_INIT(&sub->dropped);
	return sub;
}

enum event_framing event_sub_framing(const struct event_sub *sub) {
	return sub->framing;
}

bool event_sub_busy(const struct event_sub *sub) {
	bool busy;

	pthread_mutex_lock(&events_lock);
	busy = sub->n_subs > 0 || sub->count > 0;
	pthread_mutex_unlock(&events_lock);
	return busy;
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
static bool reap_batch(unsigned n) {
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

// Arm the next batch of removals, a turn of the main loop from now. Main
// thread.
static void reap_arm(void) {
	static const struct timeval now = {0};

	if (reap_ev != NULL)
		evtimer_add(reap_ev, &now);
}

// Drop every subscription of sub: they count no more from now on, and the
// main thread removes them from the table (at once if it serves no loop).
// events_lock held.
static void unsubscribe_all_locked(struct event_sub *sub) {
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

void event_sub_free(struct event_sub *sub) {
	struct event_msg **ring;
	unsigned head, count, slots;
	bool gone;

	if (sub == NULL)
		return;
	pthread_mutex_lock(&events_lock);
	unsubscribe_all_locked(sub);
	if (sub->dirty)
		TAILQ_REMOVE(&dirty, sub, dirty_next);
	sub_starving_end(sub);
	// No publisher reaches the backlog any more: its messages are let go
	// outside the lock.
	ring = sub->ring;
	head = sub->head;
	count = sub->count;
	slots = sub->cap + 1;
	for (unsigned i = 0; i < count; i++)
		sub_release(sub, ring[(head + i) % slots]);
	atomic_store_explicit(&sub->count, 0, memory_order_relaxed);
	sub->lost = 0;
	sub->ring = NULL;
	sub->freed = true;
	gone = sub->n_dropped == 0;
	pthread_mutex_unlock(&events_lock);
	for (unsigned i = 0; i < count; i++)
		msg_put(ring[(head + i) % slots]);
	free(ring);
	// Else the removal of its last dropped subscription frees it.
	if (gone)
		free(sub);
}

bool event_sub_pending(const struct event_sub *sub) {
	return atomic_load_explicit(&sub->count, memory_order_relaxed) > 0;
}

const struct event_msg *event_sub_peek(struct event_sub *sub) {
	const struct event_msg *m = NULL;

	pthread_mutex_lock(&events_lock);
	if (sub->count > 0)
		m = sub->ring[sub->head];
	pthread_mutex_unlock(&events_lock);
	return m;
}

void event_sub_pop(struct event_sub *sub) {
	struct event_msg *m = NULL;

	pthread_mutex_lock(&events_lock);
	if (sub->count > 0) {
		m = sub->ring[sub->head];
		sub->ring[sub->head] = NULL;
		sub->head = (sub->head + 1) % (sub->cap + 1);
		atomic_store_explicit(&sub->count, sub->count - 1, memory_order_relaxed);
		sub_release(sub, m);
		// Room again: say what was lost meanwhile.
		sub_push_lost(sub);
	}
	pthread_mutex_unlock(&events_lock);
	if (m != NULL)
		msg_put(m);
}

void event_totals_get(struct event_totals *out) {
	pthread_mutex_lock(&events_lock);
	*out = totals;
	out->held_bytes = held_bytes;
	pthread_mutex_unlock(&events_lock);
}

// Main thread, no lock held: log the subscribers that began to drop, if a
// line is due (final: whatever is left); else come back when one is.
static void full_log(bool final) {
	uint64_t now = log_limit_now_ns(), n;
	unsigned count, wait_ms = 0;
	enum drop_reason reason;
	char one[FULL_LOG_DETAIL_LEN], last[FULL_LOG_DETAIL_LEN];
	size_t bytes, held;
	bool logged;
	pid_t pid;

	pthread_mutex_lock(&events_lock);
	n = log_limit_due(&full_note.limit, now, final);
	logged = full_note.logged;
	full_note.logged |= n > 0;
	pid = full_note.pid;
	count = full_note.count;
	bytes = full_note.bytes;
	held = full_note.held;
	reason = full_note.reason;
	if (full_note.limit.pending > 0)
		wait_ms = log_limit_wait_ms(&full_note.limit, now);
	pthread_mutex_unlock(&events_lock);
	// Why: for the line of one subscriber, then for the last of several.
	if (reason == DROP_MEMORY_FULL) {
		snprintf(
			one,
			sizeof(one),
			"event memory full (%zu bytes held by all backlogs)",
			held
		);
		snprintf(
			last,
			sizeof(last),
			"event memory full: %zu bytes held by all backlogs",
			held
		);
	} else {
		snprintf(one, sizeof(one), "backlog full (%u events, %zu bytes)", count, bytes);
		snprintf(last, sizeof(last), "%u events, %zu bytes", count, bytes);
	}
	if (n == 1)
		LOG(NOTICE, "events: subscriber pid %d: %s: dropping its events", (int)pid, one);
	else if (n > 1)
		LOG(NOTICE,
		    "events: %" PRIu64 " %sbacklogs full%s, the last: subscriber pid %d"
		    " (%s): dropping their events",
		    n,
		    logged ? "more " : "",
		    logged ? " suppressed" : "",
		    (int)pid,
		    last);
	if (wait_ms > 0 && !final && full_log_ev != NULL) {
		struct timeval tv = {
			.tv_sec = wait_ms / MS_PER_S,
			.tv_usec = (suseconds_t)(wait_ms % MS_PER_S) * US_PER_MS,
		};
		evtimer_add(full_log_ev, &tv);
	}
}

static void full_log_due(evutil_socket_t fd, short what, void *arg) {
	(void)fd;
	(void)what;
	(void)arg;
	full_log(false);
}

// Main thread: drain every main-thread subscriber that got something, and
// start removing dropped subscriptions.
static void main_deliver(evutil_socket_t fd, short what, void *arg) {
	struct event_sub *sub;
	bool reap;
	uint64_t n;

	(void)what;
	(void)arg;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		LOG(ERR, "events: reading the main eventfd: %s", strerror(errno));
	pthread_mutex_lock(&events_lock);
	main_signalled = false;
	while ((sub = TAILQ_FIRST(&dirty)) != NULL) {
		TAILQ_REMOVE(&dirty, sub, dirty_next);
		sub->dirty = false;
		// The drain takes the lock itself (peek, pop); a publish
		// meanwhile puts the subscriber back on the list.
		pthread_mutex_unlock(&events_lock);
		sub->drain(sub->arg);
		pthread_mutex_lock(&events_lock);
	}
	reap = !TAILQ_EMPTY(&reap_list);
	pthread_mutex_unlock(&events_lock);
	full_log(false);
	if (reap)
		reap_arm();
}

// Main thread: the next batch of dropped subscriptions out of the table.
static void reap_due(evutil_socket_t fd, short what, void *arg) {
	bool more;

	(void)fd;
	(void)what;
	(void)arg;
	pthread_mutex_lock(&events_lock);
	more = reap_batch(EVENT_REAP_BATCH);
	pthread_mutex_unlock(&events_lock);
	if (more)
		reap_arm();
}

int event_module_init(struct event_base *base) {
	main_thread = pthread_self();
	main_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (main_efd < 0) {
		LOG(ERR, "events: eventfd: %s", strerror(errno));
		return -errno;
	}
	main_ev = event_new(base, main_efd, EV_READ | EV_PERSIST, main_deliver, NULL);
	full_log_ev = evtimer_new(base, full_log_due, NULL);
	reap_ev = evtimer_new(base, reap_due, NULL);
	if (main_ev == NULL || full_log_ev == NULL || reap_ev == NULL ||
	    event_add(main_ev, NULL) < 0) {
		LOG(ERR, "events: cannot watch the main eventfd");
		event_module_fini();
		return -ENOMEM;
	}
	LOG(INFO,
	    "events: at most %u subscriptions per connection (conf.event_subs_max), %zu"
	    " bytes of queued events in all (conf.event_memory_bytes)",
	    server_conf.event_subs_max,
	    server_conf.event_memory_bytes);
	return 0;
}

void event_module_fini(void) {
	full_log(true);
	if (full_log_ev != NULL) {
		event_free(full_log_ev);
		full_log_ev = NULL;
	}
	// Every subscription dropped is removed now, and any dropped from
	// here on at once (unsubscribe_all_locked()).
	pthread_mutex_lock(&events_lock);
	while (reap_batch(EVENT_REAP_BATCH))
		;
	if (main_ev != NULL) {
		event_free(main_ev);
		main_ev = NULL;
	}
	pthread_mutex_unlock(&events_lock);
	if (reap_ev != NULL) {
		event_free(reap_ev);
		reap_ev = NULL;
	}
	if (main_efd >= 0) {
		close(main_efd);
		main_efd = -1;
	}
}

// ---- Requests ----

static int subscribe_common(
	const struct gr_event_subscribe_req *req,
	struct gr_api_ctx *ctx,
	enum event_framing framing
) {
	struct event_sub *sub = ctx->events;

	// A channel has one framing: tagged, in its response ring.
	if (ctx->sock_fd < 0)
		framing = EVENT_FRAMING_TAGGED;
	// One subscriber per connection: once a channel is attached over the
	// socket (it holds the lease), the connection's events go over the
	// channel, and the channel's attach refuses a socket that has a
	// subscriber busy (server/channel.c).
	if (ctx->sock_fd >= 0 && ctx->lease_lost != NULL) {
		api_fault(ctx, API_FAULT_SUBSCRIBE_CHANNEL, NULL, 0, 0);
		return EBUSY;
	}
	if (sub == NULL) {
		if (ctx->transport->events_open == NULL)
			return ENOTSUP;
		sub = ctx->transport->events_open(ctx);
		if (sub == NULL)
			return ENOMEM;
		// Release: the main thread reads a channel's subscriber when the
		// channel ends (server/channel.c), while its poller may still run.
		__atomic_store_n(&ctx->events, sub, __ATOMIC_RELEASE);
	}
	struct event_sub_opts opts = {
		.framing = framing,
		.suppress_self = req->suppress_self_events,
		.grout_types_only = framing == EVENT_FRAMING_GROUT &&
				    (ctx->api_version == GR_API_VERSION_GROUT_0_17 ||
				     ctx->api_version == GR_API_VERSION_GROUT_MAIN),
	};
	int ret = event_subscribe(sub, req->ev_type, &opts);
	// Logged outside the handler lock, at a bounded rate: a client can
	// repeat them at will.
	if (ret == -EBUSY)
		api_fault(ctx, API_FAULT_SUBSCRIBE_FRAMING, NULL, 0, 0);
	else if (ret == -ENOSPC)
		api_fault(ctx, API_FAULT_SUBSCRIBE_LIMIT, NULL, server_conf.event_subs_max, 0);
	return -ret;
}

// Grout's subscribe: Grout's framing on the socket.
static struct gr_api_out subscribe(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)len;
	return gr_api_out((uint32_t)subscribe_common(request, ctx, EVENT_FRAMING_GROUT), 0, NULL);
}

static struct gr_api_out shm_subscribe(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)len;
	return gr_api_out((uint32_t)subscribe_common(request, ctx, EVENT_FRAMING_TAGGED), 0, NULL);
}

static struct gr_api_out unsubscribe(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	if (ctx->events != NULL)
		event_unsubscribe_all(ctx->events);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out publish(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)ctx;
	return gr_api_out(
		(uint32_t)-gr_api_event_publish(GR_SHM_EVENT_TEST, request, len),
		0,
		NULL
	);
}

static struct gr_api_out stats(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_shm_event_stats_resp *resp = calloc(1, sizeof(*resp));
	struct event_totals t;

	(void)request;
	(void)len;
	(void)ctx;
	if (resp == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	event_totals_get(&t);
	resp->subscribers = t.subscribers;
	resp->subscriptions = t.subscriptions;
	resp->published = t.published;
	resp->queued = t.queued;
	resp->dropped = t.dropped;
	return gr_api_out(0, sizeof(*resp), resp);
}

static struct gr_api_handler handlers_event_array[] = {
	GR_API_HANDLER_INIT(GR_EVENT_SUBSCRIBE, subscribe),
	GR_API_HANDLER_INIT(GR_EVENT_UNSUBSCRIBE, unsubscribe),
	GR_API_HANDLER_INIT(GR_SHM_EVENT_SUBSCRIBE, shm_subscribe),
	GR_API_HANDLER_INIT(GR_SHM_EVENT_PUBLISH, publish),
	GR_API_HANDLER_INIT(GR_SHM_EVENT_STATS, stats),
};
API_HANDLER_TABLE(handlers_event, handlers_event_array);
