// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Events: publishing, per-subscriber backlogs, the events-lost event, and
// the main-thread delivery of socket subscribers and of the removal of
// dropped subscriptions. The subscription table is in event_subscription.c,
// the handlers of the event requests in handlers_event.c.
//
// A published event is copied once into a struct event_msg; each
// subscriber's backlog (a ring of pointers, bounded in messages and bytes)
// takes a reference. The consumer of a backlog takes the messages in order
// and drops its reference once a message is written whole. The messages held
// by backlogs, each counted once however many backlogs hold it, are bounded
// together too (server_conf.event_memory_bytes), and readers never pay for
// subscribers that do not read: when a new event does not fit, the
// subscribers whose backlogs hold more than the one it is for would with it
// give back their newest events, the largest holder first, until it fits
// (memory_push_out()); each event given back is lost for its subscriber,
// and counted. Only a subscriber that holds as much as any (the slowest)
// loses the new event itself. So each subscriber's share of the memory is
// what the others leave it, and a subscriber that reads, whose backlog is
// short, always gets its events. Everything here is guarded by events_lock,
// a leaf lock.
//
// Lost events: a subscriber that lost events gets one GR_SHM_EVENT_LOST with
// their count once its backlog has room again, before any newer event. That
// message takes no room from events (the ring has a slot for it beyond the
// bound, and it counts in neither bound), and there is at most one in a
// backlog: when events come faster than the subscriber reads, the slots it
// frees go to events, and the one notice says how many were lost meanwhile.

#include "event_priv.h"
#include "api.h"
#include "config.h"

#include <gr_api.h>
#include <gr_shm.h>
#include <shmchan_probes.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <unistd.h>

// When the event memory is full, subscribers give back a little more than
// the new event needs: 1/16 of the memory (4 MiB of the default 64 MiB, one
// default backlog), so that the events after it fit without a search.
#define EVENT_GIVE_BACK_SLACK 16

// Dropped subscriptions the main thread removes from the table per turn of
// its loop: some tens of microseconds of the lock (docs/reliability.md), so
// a publisher never waits longer.
#define EVENT_REAP_BATCH 256

// Longest reason of a "dropping events" line.
#define FULL_LOG_DETAIL_LEN 96

#define MS_PER_S 1000u
#define US_PER_MS 1000

// Room an event message keeps before its payload.
#define EVENT_MSG_HDR_LEN (sizeof(struct gr_api_response) + sizeof(struct gr_api_event))

pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
struct event_totals totals;
static uint64_t publish_seq;
// Bytes of the events the backlogs hold, each counted once: added when an
// event goes to its first backlog, taken back when it leaves its last.
static size_t held_bytes;
// Subscribers that lost events and wait for room in the event memory to be
// told: each gets its events-lost event as soon as an event leaves the
// last backlog that held it and makes room.
static TAILQ_HEAD(, event_sub) starved = TAILQ_HEAD_INITIALIZER(starved);
// Every subscriber: those that give back events when the memory is full are
// found among them.
static TAILQ_HEAD(, event_sub) all_subs = TAILQ_HEAD_INITIALIZER(all_subs);
// While an event is offered: the smallest floor for which no subscriber
// could give back (memory_push_out()), so that each of the others it is
// for does not search again. SIZE_MAX: none yet.
static size_t push_out_failed = SIZE_MAX;

// Why a subscriber drops its events.
enum drop_reason {
	DROP_BACKLOG_FULL, // its own backlog is full
	DROP_MEMORY_FULL, // the backlogs together hold server_conf.event_memory_bytes
	DROP_GIVEN_BACK, // its newest events made room in the full memory for another's
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
struct event *main_ev; // on main_efd, or activated directly
static int main_efd = -1;
static bool main_signalled; // an eventfd write or activation is pending
static pthread_t main_thread;
// Timer of the next batch of removals: a turn of the loop later, after the
// other clients' events.
static struct event *reap_ev;

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
void main_signal(void) {
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

// Whether sub holds an event its consumer is not writing: any but its
// oldest, the one its consumer peeks at and writes outside the lock.
static bool sub_can_give_back(const struct event_sub *sub) {
	unsigned later;

	if (sub->count == 0)
		return false;
	later = sub->count - 1;
	// At most one notice in the ring: if it is not the oldest, it is
	// among the later ones.
	if (sub->notice != NULL && sub->ring[sub->head] != sub->notice)
		later--;
	return later > 0;
}

static void sub_note_drops(struct event_sub *sub, enum drop_reason reason);

// Take the newest event out of sub's backlog (sub_can_give_back()): lost
// for sub, and counted. A notice queued after it goes first, its count back
// into sub->lost: the losses stay at the end of the backlog, where the
// notice queued once there is room again says them all. events_lock held.
static void sub_give_back(struct event_sub *sub) {
	unsigned slots = sub->cap + 1;
	unsigned tail = (sub->head + sub->count - 1) % slots;
	struct event_msg *m = sub->ring[tail];

	if (m == sub->notice) {
		struct gr_shm_event_lost lost;

		memcpy(&lost, m->data + EVENT_MSG_HDR_LEN, sizeof(lost));
		sub->lost += lost.count;
		sub->notice = NULL;
		sub->ring[tail] = NULL;
		atomic_store_explicit(&sub->count, sub->count - 1, memory_order_relaxed);
		msg_put(m);
		tail = (tail + slots - 1) % slots;
		m = sub->ring[tail];
	}
	sub->ring[tail] = NULL;
	atomic_store_explicit(&sub->count, sub->count - 1, memory_order_relaxed);
	sub->lost++;
	totals.dropped++;
	SHMCHAN_PROBE(event_drop, sub->pid, m_type(m), DROP_GIVEN_BACK);
	sub_note_drops(sub, DROP_GIVEN_BACK);
	sub_release(sub, m);
	msg_put(m);
}

// Make room for len more bytes in the event memory, for a new event of a
// subscriber whose backlog would hold floor bytes with it: the subscribers
// whose backlogs hold more give back their newest events, the largest
// holder first, down to the next largest, until it fits; then a little
// more (EVENT_GIVE_BACK_SLACK), so that the next events fit without another
// search. An event another backlog still holds frees nothing when given
// back; it is lost all the same for the larger holder. Returns whether
// there is room. O(subscribers) per holder searched. events_lock held.
static bool memory_push_out(size_t len, size_t floor) {
	size_t slack = server_conf.event_memory_bytes / EVENT_GIVE_BACK_SLACK;
	struct event_sub *sub, *largest;
	size_t next;

	while (!memory_has_room(len)) {
		// No subscriber could give back for a smaller floor: none can
		// for this one (nothing grows while an event is offered).
		if (floor >= push_out_failed)
			return false;
		largest = NULL;
		next = floor;
		TAILQ_FOREACH (sub, &all_subs, all_next) {
			if (sub->bytes <= floor || !sub_can_give_back(sub))
				continue;
			if (largest == NULL || sub->bytes > largest->bytes) {
				if (largest != NULL && largest->bytes > next)
					next = largest->bytes;
				largest = sub;
			} else if (sub->bytes > next) {
				next = sub->bytes;
			}
		}
		if (largest == NULL) {
			push_out_failed = floor;
			return false;
		}
		// One at least: holders of equal size give back in turn.
		do
			sub_give_back(largest);
		while (largest->bytes > next && sub_can_give_back(largest) &&
		       !memory_has_room(len + slack));
	}
	return true;
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
		SHMCHAN_PROBE(event_drop, sub->pid, m_type(m), DROP_BACKLOG_FULL);
		return;
	}
	if (m->backlogs == 0) {
		if (!memory_push_out(msg_size(m), sub->bytes + m->len)) {
			sub_note_drops(sub, DROP_MEMORY_FULL);
			sub->lost++;
			totals.dropped++;
			SHMCHAN_PROBE(event_drop, sub->pid, m_type(m), DROP_MEMORY_FULL);
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
	if (ev_type == GR_EVENT_ALL || (payload == NULL && len > 0)) {
		api_misuse(
			API_MISUSE_ARGUMENT,
			"gr_api_event_publish(0x%08x) %s: refused (EINVAL)",
			ev_type,
			ev_type == GR_EVENT_ALL ? "of GR_EVENT_ALL, which no event is"
						: "with no payload (NULL) for its length"
		);
		return -EINVAL;
	}
	// The event and its headers fit in one message of either transport.
	if (len > GR_API_MAX_MSG_LEN) {
		api_misuse(
			API_MISUSE_ARGUMENT,
			"gr_api_event_publish(0x%08x) of %u bytes, above GR_API_MAX_MSG_LEN (%u):"
			" refused (EMSGSIZE)",
			ev_type,
			len,
			GR_API_MAX_MSG_LEN
		);
		return -EMSGSIZE;
	}
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
	push_out_failed = SIZE_MAX;
	offer_to_type(t, m, seq, pid);
	offer_to_type(&type_all, m, seq, pid);
	pthread_mutex_unlock(&events_lock);
	SHMCHAN_PROBE(event_publish, ev_type, len, pid, seq);
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
	pthread_mutex_lock(&events_lock);
	TAILQ_INSERT_TAIL(&all_subs, sub, all_next);
	pthread_mutex_unlock(&events_lock);
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

void event_sub_free(struct event_sub *sub) {
	struct event_msg **ring;
	unsigned head, count, slots;
	bool gone;

	if (sub == NULL)
		return;
	pthread_mutex_lock(&events_lock);
	unsubscribe_all_locked(sub);
	TAILQ_REMOVE(&all_subs, sub, all_next);
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
	if (reason == DROP_GIVEN_BACK) {
		snprintf(
			one,
			sizeof(one),
			"largest holder of the full event memory (%zu bytes held by all backlogs)",
			held
		);
		snprintf(
			last,
			sizeof(last),
			"largest holder of the full event memory: %zu bytes held by all backlogs",
			held
		);
	} else if (reason == DROP_MEMORY_FULL) {
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

// Arm the next batch of removals, a turn of the main loop from now. Main
// thread.
static void reap_arm(void) {
	static const struct timeval now = {0};

	if (reap_ev != NULL)
		evtimer_add(reap_ev, &now);
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
	    "events: at most %u subscriptions per connection (%s), %zu bytes of queued events in"
	    " all (%s)",
	    server_conf.event_subs_max,
	    server_names.event_subs_max,
	    server_conf.event_memory_bytes,
	    server_names.event_memory_bytes);
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
