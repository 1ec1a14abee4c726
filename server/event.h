// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Events of shmchand: subscriptions, publishing, and one bounded backlog per
// subscriber that the thread serving that subscriber drains.
//
// Threads: anything may publish (handlers under the handler lock, on the
// main thread or a poller; the main thread outside it). Subscriptions are
// changed by the subscriber's handlers and by its end. Every structure here
// is guarded by one leaf lock, taken by each call below and never held
// across a call into anything else, so it nests inside the handler lock.
// A subscriber's backlog has one consumer: the main thread for a socket
// client, the owning poller for a channel.

#pragma once

#include <event2/event.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

// The bounds of the backlogs and of the subscriptions are the server's
// configuration: server_conf.event_backlog_msgs, event_backlog_bytes,
// event_memory_bytes and event_subs_max (gr_api_server.h).

// How a subscriber gets its events.
enum event_framing {
	// Grout's socket framing: the 16-byte gr_api_event header and the
	// payload, with no response header. The connection only reads events.
	EVENT_FRAMING_GROUT,
	// Inside a response with for_id 0: mixes with responses.
	EVENT_FRAMING_TAGGED,
};

// One queued event, shared by every subscriber that got it. data holds a
// response header (for_id 0, status 0), the event header and the payload:
// tagged subscribers take all of it, Grout-framed ones skip the response
// header.
struct event_msg {
	uint32_t refs; // atomic: one per backlog holding it
	uint32_t len; // bytes of data
	uint32_t backlogs; // backlogs holding it (events lock): counted in
			   // server_conf.event_memory_bytes while not 0
	uint8_t data[];
};

// The bytes of m a subscriber of framing writes, and their length.
const void *event_msg_bytes(const struct event_msg *m, enum event_framing, uint32_t *len);

struct event_sub;

// Called, with the events lock held, when a subscriber's backlog gets
// something to take (an event, or an events-lost event). Must not block nor
// call back into this file.
typedef void (*event_wake_fn)(void *arg);
// Called on the main thread to take what the backlog holds.
typedef void (*event_drain_fn)(void *arg);

// A subscriber for a client of pid. Served by a poller: wake tells it. Served
// by the main thread: pass wake NULL and drain, which the main loop calls
// soon after each publish that gave it something. Returns NULL if out of
// memory (logged).
struct event_sub *
event_sub_new(pid_t pid, enum event_framing, event_wake_fn wake, event_drain_fn drain, void *arg);

// Drop every subscription, then free the subscriber and its backlog. Its
// consumer no longer runs (or this is that consumer). Any thread; what is
// left of the subscriber goes once the main thread has removed its
// subscriptions from the table.
void event_sub_free(struct event_sub *);

enum event_framing event_sub_framing(const struct event_sub *);

// Whether the subscriber holds a subscription or has events to deliver.
bool event_sub_busy(const struct event_sub *);

// What a subscription asks for, besides its type.
struct event_sub_opts {
	enum event_framing framing;
	bool suppress_self; // skip events caused by requests of the subscriber's pid
	// GR_EVENT_ALL covers no event of the shm module: for a client of
	// Grout's own library (hello at a Grout API version, Grout's framing),
	// which fails on an event type it does not know and loses its framing.
	bool grout_types_only;
};

// Subscribe to ev_type (GR_EVENT_ALL: every type); again for a type updates
// its options but the framing. framing must be the subscriber's, unless it has no
// subscription and an empty backlog (then it becomes that). Returns 0,
// -EBUSY (other framing in use), -ENOSPC (server_conf.event_subs_max
// reached) or -ENOMEM. O(log types + subscribers of ev_type).
int event_subscribe(struct event_sub *, uint32_t ev_type, const struct event_sub_opts *);

// Drop every subscription of the subscriber, in a constant time: they count
// no more at once, and the main thread removes them from the table a batch
// per turn of its loop. What its backlog holds is still delivered.
void event_unsubscribe_all(struct event_sub *);

// Publishing (gr_api_event_publish(), public): O(log types +
// subscriptions to ev_type and to GR_EVENT_ALL), nothing but a table look-up
// for a type nobody subscribes to. The payload is copied. Subscribers whose
// subscription suppresses self events skip an event published while a
// handler serves a request of their own pid. A subscriber whose backlog is
// full loses it (counted); so does every subscriber it was for when the
// backlogs together hold server_conf.event_memory_bytes.

// Consumer side, the subscriber's serving thread only. peek: the oldest
// event of the backlog, NULL if empty; pop: remove it (after it was written
// whole). pending: a cheap check without the lock.
const struct event_msg *event_sub_peek(struct event_sub *);
void event_sub_pop(struct event_sub *);
bool event_sub_pending(const struct event_sub *);

// Totals for GR_SHM_EVENT_STATS.
struct event_totals {
	uint32_t subscribers; // subscribers with at least one subscription
	uint32_t subscriptions;
	uint32_t subscriptions_removing; // dropped, not yet out of the table
	uint64_t published; // events with at least one subscriber
	uint64_t queued; // events put in a backlog
	uint64_t dropped; // events lost to a full backlog, or to server_conf.event_memory_bytes
	size_t held_bytes; // of the events the backlogs hold now, each once
};
void event_totals_get(struct event_totals *);

// Start delivering to main-thread subscribers on base. Main thread, before
// the socket accepts clients. Returns 0 or -errno.
int event_module_init(struct event_base *base);
void event_module_fini(void);
