// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Events: the subscription table, publishing, per-subscriber backlogs, the
// events-lost event, the main-thread delivery of socket subscribers, and the
// handlers of the event requests.
//
// The table: one entry per event type that has subscribers, in a hash
// table of chained buckets, plus one entry for GR_EVENT_ALL. An entry lists
// its subscriptions; each subscriber lists its own, so that unsubscribing
// costs its own subscriptions and nothing else. An entry is freed with its
// last subscription: subscribing and unsubscribing leave nothing behind.
//
// A published event is copied once into a struct event_msg; each
// subscriber's backlog (a ring of pointers, bounded in messages and bytes)
// takes a reference. The consumer of a backlog takes the messages in order
// and drops its reference once a message is written whole. Everything here
// is guarded by events_lock, a leaf lock.

#include "event.h"
#include "api.h"
#include "shmchand.h"

#include <gr_api.h>
#include <gr_shm.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <unistd.h>

// Buckets of the type table: far more than the types a daemon publishes.
#define EVENT_TYPE_BUCKETS 256
#define EVENT_TYPE_BUCKET_BITS 8
_Static_assert(EVENT_TYPE_BUCKETS == 1u << EVENT_TYPE_BUCKET_BITS, "the hash yields a bucket");

#define MS_PER_S 1000u
#define US_PER_MS 1000

// Room an event message keeps before its payload.
#define EVENT_MSG_HDR_LEN (sizeof(struct gr_api_response) + sizeof(struct gr_api_event))

struct subscription;

// The subscriptions to one event type.
struct event_type {
	struct event_type *next; // in its bucket
	uint32_t ev_type;
	LIST_HEAD(, subscription) subs;
};

struct subscription {
	LIST_ENTRY(subscription) in_type;
	LIST_ENTRY(subscription) in_sub;
	struct event_type *type;
	struct event_sub *sub;
	bool suppress_self;
	bool grout_types_only; // GR_EVENT_ALL without the shm module's events
};

struct event_sub {
	pid_t pid;
	enum event_framing framing;
	event_wake_fn wake; // NULL: main-thread consumer, drain is called
	event_drain_fn drain;
	void *arg;
	LIST_HEAD(, subscription) subs;
	unsigned n_subs;
	bool wants_lost; // Grout framing: subscribed to GR_SHM_EVENT_LOST or all
	uint64_t last_seq; // publish sequence of the last event queued here
	// The backlog: a ring of cap pointers, head taken next.
	struct event_msg **ring;
	unsigned cap;
	unsigned head;
	_Atomic unsigned count; // read without the lock by event_sub_pending()
	size_t bytes;
	uint64_t lost; // events dropped since the last events-lost event
	bool dropping; // dropped the last event offered (logged once per run)
	bool dirty; // main-thread consumer: on the dirty list
	TAILQ_ENTRY(event_sub) dirty_next;
};

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static struct event_type *type_buckets[EVENT_TYPE_BUCKETS];
static struct event_type type_all = {.ev_type = GR_EVENT_ALL};
static struct event_totals totals;
static uint64_t publish_seq;

// Subscribers whose backlogs filled and began to drop events. Noted by the
// publisher (any thread, under events_lock, maybe under the handler lock
// too), logged by the main thread outside every lock, at a bounded rate: a
// subscriber can stop and resume reading at will, and each time its drops
// begin anew.
static struct {
	struct log_limit limit;
	bool logged; // a line about it came already
	pid_t pid; // the last one's, and its backlog then
	unsigned count;
	size_t bytes;
} full_note;
static struct event *full_log_ev; // timer: the next line due

// Main-thread delivery: subscribers with something to take, and how the
// main loop learns of them.
static TAILQ_HEAD(, event_sub) dirty = TAILQ_HEAD_INITIALIZER(dirty);
static struct event *main_ev; // on main_efd, or activated directly
static int main_efd = -1;
static bool main_signalled; // an eventfd write or activation is pending
static pthread_t main_thread;

static unsigned type_bucket(uint32_t ev_type) {
	return (uint32_t)(ev_type * 2654435761u) >> (32 - EVENT_TYPE_BUCKET_BITS);
}

static struct event_type *type_find(uint32_t ev_type) {
	struct event_type *t;

	if (ev_type == GR_EVENT_ALL)
		return &type_all;
	for (t = type_buckets[type_bucket(ev_type)]; t != NULL; t = t->next)
		if (t->ev_type == ev_type)
			return t;
	return NULL;
}

static struct event_type *type_get(uint32_t ev_type) {
	struct event_type *t = type_find(ev_type);
	unsigned b;

	if (t != NULL)
		return t;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->ev_type = ev_type;
	LIST_INIT(&t->subs);
	b = type_bucket(ev_type);
	t->next = type_buckets[b];
	type_buckets[b] = t;
	return t;
}

// Free an entry left without subscriptions (never the GR_EVENT_ALL one).
static void type_put(struct event_type *t) {
	struct event_type **p;

	if (t == &type_all || !LIST_EMPTY(&t->subs))
		return;
	for (p = &type_buckets[type_bucket(t->ev_type)]; *p != NULL; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			free(t);
			return;
		}
	}
}

// The event type of a message.
static uint32_t m_type(const struct event_msg *m) {
	struct gr_api_event ev;
	memcpy(&ev, m->data + sizeof(struct gr_api_response), sizeof(ev));
	return ev.ev_type;
}

static void msg_put(struct event_msg *m) {
	if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(m);
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

static bool sub_has_room(const struct event_sub *sub, uint32_t len) {
	return sub->count < sub->cap && sub->bytes + len <= shmchand_config.event_backlog_bytes;
}

static void sub_push(struct event_sub *sub, struct event_msg *m) {
	unsigned was = sub->count;

	sub->ring[(sub->head + was) % sub->cap] = m;
	__atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
	sub->bytes += m->len;
	// Release: a consumer that sees the count sees the slot (it takes the
	// lock before reading the slot anyway; the pending check only hints).
	atomic_store_explicit(&sub->count, was + 1, memory_order_release);
	totals.queued++;
	if (was == 0)
		sub_wake(sub);
}

// Queue the events-lost event if sub lost events, should get it, and has
// room. events_lock held.
static void sub_push_lost(struct event_sub *sub) {
	struct gr_shm_event_lost lost = {.count = sub->lost};
	struct event_msg *m;

	if (sub->lost == 0)
		return;
	if (sub->framing == EVENT_FRAMING_GROUT && !sub->wants_lost) {
		// A Grout client that did not ask for it could not parse it.
		sub->lost = 0;
		return;
	}
	if (!sub_has_room(sub, (uint32_t)(EVENT_MSG_HDR_LEN + sizeof(lost))))
		return;
	m = msg_new(GR_SHM_EVENT_LOST, &lost, sizeof(lost));
	if (m == NULL)
		return; // retried at the next pop
	sub->lost = 0;
	sub_push(sub, m);
}

// Queue m for sub, or count it lost. events_lock held.
static void sub_offer(struct event_sub *sub, struct event_msg *m) {
	sub_push_lost(sub);
	if (sub->lost > 0 || !sub_has_room(sub, m->len)) {
		if (!sub->dropping) {
			log_limit_count(&full_note.limit);
			full_note.pid = sub->pid;
			full_note.count = sub->count;
			full_note.bytes = sub->bytes;
			main_signal();
		}
		sub->dropping = true;
		sub->lost++;
		totals.dropped++;
		return;
	}
	sub->dropping = false;
	sub_push(sub, m);
}

static void offer_to_type(struct event_type *t, struct event_msg *m, uint64_t seq, pid_t pid) {
	struct subscription *s;

	if (t == NULL)
		return;
	LIST_FOREACH (s, &t->subs, in_type) {
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

void event_publish(uint32_t ev_type, const void *payload, uint32_t len) {
	pid_t pid = api_current_pid();
	struct event_type *t;
	struct event_msg *m;
	uint64_t seq;

	pthread_mutex_lock(&events_lock);
	t = ev_type == GR_EVENT_ALL ? NULL : type_find(ev_type);
	if (t == NULL && LIST_EMPTY(&type_all.subs)) {
		pthread_mutex_unlock(&events_lock);
		return;
	}
	m = msg_new(ev_type, payload, len);
	if (m == NULL) {
		pthread_mutex_unlock(&events_lock);
		LOG(ERR, "events: no memory for event 0x%08x of %u bytes", ev_type, len);
		return;
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
		sub->cap = shmchand_config.event_backlog_msgs;
		sub->ring = calloc(sub->cap, sizeof(*sub->ring));
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
	LIST_INIT(&sub->subs);
	return sub;
}

enum event_framing event_sub_framing(const struct event_sub *sub) {
	return sub->framing;
}

// events_lock held.
static void sub_update_wants_lost(struct event_sub *sub) {
	struct subscription *s;

	sub->wants_lost = false;
	LIST_FOREACH (s, &sub->subs, in_sub) {
		if (s->type->ev_type == GR_SHM_EVENT_LOST ||
		    (s->type == &type_all && !s->grout_types_only))
			sub->wants_lost = true;
	}
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
	LIST_FOREACH (s, &sub->subs, in_sub) {
		if (s->type->ev_type == ev_type) {
			s->suppress_self = opts->suppress_self;
			s->grout_types_only = opts->grout_types_only;
			sub_update_wants_lost(sub);
			goto out;
		}
	}
	if (sub->n_subs >= EVENT_SUBS_PER_CLIENT_MAX) {
		ret = -ENOSPC;
		goto out;
	}
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
	s->suppress_self = opts->suppress_self;
	s->grout_types_only = opts->grout_types_only;
	LIST_INSERT_HEAD(&t->subs, s, in_type);
	LIST_INSERT_HEAD(&sub->subs, s, in_sub);
	if (sub->n_subs++ == 0)
		totals.subscribers++;
	totals.subscriptions++;
	sub_update_wants_lost(sub);
out:
	pthread_mutex_unlock(&events_lock);
	return ret;
}

// events_lock held.
static void unsubscribe_all_locked(struct event_sub *sub) {
	struct subscription *s;

	while ((s = LIST_FIRST(&sub->subs)) != NULL) {
		LIST_REMOVE(s, in_sub);
		LIST_REMOVE(s, in_type);
		type_put(s->type);
		free(s);
		totals.subscriptions--;
	}
	if (sub->n_subs > 0)
		totals.subscribers--;
	sub->n_subs = 0;
	sub->wants_lost = false;
}

void event_unsubscribe_all(struct event_sub *sub) {
	pthread_mutex_lock(&events_lock);
	unsubscribe_all_locked(sub);
	pthread_mutex_unlock(&events_lock);
}

void event_sub_free(struct event_sub *sub) {
	if (sub == NULL)
		return;
	pthread_mutex_lock(&events_lock);
	unsubscribe_all_locked(sub);
	if (sub->dirty)
		TAILQ_REMOVE(&dirty, sub, dirty_next);
	while (sub->count > 0) {
		msg_put(sub->ring[sub->head]);
		sub->head = (sub->head + 1) % sub->cap;
		sub->count--;
	}
	pthread_mutex_unlock(&events_lock);
	free(sub->ring);
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
		sub->head = (sub->head + 1) % sub->cap;
		sub->bytes -= m->len;
		atomic_store_explicit(&sub->count, sub->count - 1, memory_order_relaxed);
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
	pthread_mutex_unlock(&events_lock);
}

// Main thread, no lock held: log the subscribers that began to drop, if a
// line is due (final: whatever is left); else come back when one is.
static void full_log(bool final) {
	uint64_t now = log_limit_now_ns(), n;
	unsigned count, wait_ms = 0;
	bool logged;
	size_t bytes;
	pid_t pid;

	pthread_mutex_lock(&events_lock);
	n = log_limit_due(&full_note.limit, now, final);
	logged = full_note.logged;
	full_note.logged |= n > 0;
	pid = full_note.pid;
	count = full_note.count;
	bytes = full_note.bytes;
	if (full_note.limit.pending > 0)
		wait_ms = log_limit_wait_ms(&full_note.limit, now);
	pthread_mutex_unlock(&events_lock);
	if (n == 1)
		LOG(NOTICE,
		    "events: subscriber pid %d: backlog full (%u events, %zu bytes):"
		    " dropping its events",
		    (int)pid,
		    count,
		    bytes);
	else if (n > 1)
		LOG(NOTICE,
		    "events: %" PRIu64 " %sbacklogs full%s, the last: subscriber pid %d"
		    " (%u events, %zu bytes): dropping their events",
		    n,
		    logged ? "more " : "",
		    logged ? " suppressed" : "",
		    (int)pid,
		    count,
		    bytes);
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

// Main thread: drain every main-thread subscriber that got something.
static void main_deliver(evutil_socket_t fd, short what, void *arg) {
	struct event_sub *sub;
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
	pthread_mutex_unlock(&events_lock);
	full_log(false);
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
	if (main_ev == NULL || full_log_ev == NULL || event_add(main_ev, NULL) < 0) {
		LOG(ERR, "events: cannot watch the main eventfd");
		event_module_fini();
		return -ENOMEM;
	}
	return 0;
}

void event_module_fini(void) {
	full_log(true);
	if (full_log_ev != NULL) {
		event_free(full_log_ev);
		full_log_ev = NULL;
	}
	if (main_ev != NULL) {
		event_free(main_ev);
		main_ev = NULL;
	}
	if (main_efd >= 0) {
		close(main_efd);
		main_efd = -1;
	}
}

// ---- Requests ----

static int subscribe_common(
	const struct gr_event_subscribe_req *req,
	struct api_ctx *ctx,
	enum event_framing framing
) {
	// A channel has one framing: tagged, in its response ring.
	if (ctx->sock_fd < 0)
		framing = EVENT_FRAMING_TAGGED;
	if (ctx->events == NULL) {
		if (ctx->transport->events_open == NULL)
			return ENOTSUP;
		ctx->events = ctx->transport->events_open(ctx);
		if (ctx->events == NULL)
			return ENOMEM;
	}
	struct event_sub_opts opts = {
		.framing = framing,
		.suppress_self = req->suppress_self_events,
		.grout_types_only = framing == EVENT_FRAMING_GROUT &&
				    (ctx->api_version == GR_API_VERSION_GROUT_0_17 ||
				     ctx->api_version == GR_API_VERSION_GROUT_MAIN),
	};
	int ret = event_subscribe(ctx->events, req->ev_type, &opts);
	// Logged outside the handler lock, at a bounded rate: a client can
	// repeat them at will.
	if (ret == -EBUSY)
		api_fault(ctx, API_FAULT_SUBSCRIBE_FRAMING, NULL, 0, 0);
	else if (ret == -ENOSPC)
		api_fault(ctx, API_FAULT_SUBSCRIBE_LIMIT, NULL, EVENT_SUBS_PER_CLIENT_MAX, 0);
	return -ret;
}

// Grout's subscribe: Grout's framing on the socket.
static struct api_out subscribe(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)len;
	return api_out((uint32_t)subscribe_common(request, ctx, EVENT_FRAMING_GROUT), 0, NULL);
}

static struct api_out shm_subscribe(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)len;
	return api_out((uint32_t)subscribe_common(request, ctx, EVENT_FRAMING_TAGGED), 0, NULL);
}

static struct api_out unsubscribe(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)request;
	(void)len;
	if (ctx->events != NULL)
		event_unsubscribe_all(ctx->events);
	return api_out(0, 0, NULL);
}

static struct api_out publish(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)ctx;
	event_publish(GR_SHM_EVENT_TEST, request, len);
	return api_out(0, 0, NULL);
}

static struct api_out stats(const void *request, uint32_t len, struct api_ctx *ctx) {
	struct gr_shm_event_stats_resp *resp = calloc(1, sizeof(*resp));
	struct event_totals t;

	(void)request;
	(void)len;
	(void)ctx;
	if (resp == NULL)
		return api_out(ENOMEM, 0, NULL);
	event_totals_get(&t);
	resp->subscribers = t.subscribers;
	resp->subscriptions = t.subscriptions;
	resp->published = t.published;
	resp->queued = t.queued;
	resp->dropped = t.dropped;
	return api_out(0, sizeof(*resp), resp);
}

API_HANDLER(GR_EVENT_SUBSCRIBE, subscribe);
API_HANDLER(GR_EVENT_UNSUBSCRIBE, unsubscribe);
API_HANDLER(GR_SHM_EVENT_SUBSCRIBE, shm_subscribe);
API_HANDLER(GR_SHM_EVENT_PUBLISH, publish);
API_HANDLER(GR_SHM_EVENT_STATS, stats);
