// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Serving the channels, on their pollers: each poller's pass over its own
// channels (its view of them, active and parked), a channel's batch of
// requests, its response backlog and its events, its faults, and the arming
// and re-check before a poller sleeps. The hot path (channel_poll() ->
// channel_serve() -> dispatch -> shm_send()) calls nothing in the other
// files of the channels, so that the compiler inlines what it calls per
// request: keep it so. Their lifetime is in channel.c.

#include "api.h"
#include "channel.h"
#include "channel_priv.h"
#include "deferred.h"
#include "stream.h"
#include "event.h"
#include "poller.h"
#include "config.h"

#include <gr_shm.h>
#include <shmchan.h>

#include <rte_cycles.h>
// Inline rcu_dereference() in the list walks of every poller pass (allowed
// for code under any licence, unlike _LGPL_SOURCE).
#define URCU_INLINE_SMALL_FUNCTIONS
#include <urcu.h>
#include <urcu/rculist.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

// A response waiting for room in the response ring (poller only).
struct backlog_msg {
	struct backlog_msg *next;
	bool refused; // the ring refused it once: counted in overflows
	struct gr_api_response hdr;
	uint8_t payload[];
};

// A busy poller serves its "active" channels on every pass, and looks at its
// "parked" ones, those that had nothing to do for CHANNEL_PARK_PASSES passes
// in a row, only CHANNEL_PARKED_CHECKS per pass, round robin: an idle
// channel then costs a busy one nothing but its share of those looks (each
// pass over a channel touches a few cache lines, one of them the client's
// producer index, however idle it is). A look that finds a request or an
// event makes the channel active again and serves it. So a parked channel's
// first request waits at most (parked channels / CHANNEL_PARKED_CHECKS)
// passes of the busy poller. A poller that goes to sleep arms and re-checks
// every channel, parked or not, and looks at every parked one on its first
// pass after: a wake-up costs far more than that look.
//
// A turn cut by its bound (CHANNEL_TURN_RESPONSES, its channel has more)
// buys CHANNEL_PARKED_LOOKS_PER_CUT more looks, made right after the active
// channels' turns of the same pass: the poller
// gives every channel with work a turn before the busy one's next, parked
// ones too, up to that many of them per busy turn (a look costs a few cache
// lines, some tens of nanoseconds, against the 32 responses of a cut turn:
// at most about half of it). So a parked channel waits for at most
// (parked channels / CHANNEL_PARKED_LOOKS_PER_CUT) turns of a busy one.
#define CHANNEL_PARK_PASSES 64
#define CHANNEL_PARKED_CHECKS 2
#define CHANNEL_PARKED_LOOKS_PER_CUT 32

// One channel in a poller's view, with how many passes in a row it had
// nothing to do.
struct view_slot {
	struct channel *ch;
	uint32_t idle_passes;
};

// A poller's own copy of poller_channels[i] (poller only): slots[0, n_active)
// are active, slots[n_active, n_slots) parked. It holds pointers across RCU
// read-side critical sections, so it is used only in one that read gen equal
// to poller_channels_gen[i]: such a section began before the grace period of
// any channel removed since the view was made, which cannot be freed before
// the section ends.
struct poller_view {
	bool valid; // made, and not failed for want of memory
	bool look_all; // look at every parked channel in the next pass
	uint64_t gen; // poller_channels_gen[i] when made
	struct view_slot *slots;
	unsigned n_slots, cap, n_active;
	unsigned parked_next; // round robin cursor among the parked slots
	unsigned looks_owed; // parked looks bought by turns cut on their bound
	// For the poller's spin (channel_spin_peer()): the channel whose
	// serve moved messages last, and the one whose work opened or
	// extended the spin window. Pointers of the view, valid as its slots
	// are; NULL when the view was made since.
	struct channel *worker, *owner;
	// The period of counting clients (channel_clients_counted()), never
	// 0, and the channels with work in it so far.
	uint32_t counted_period;
	unsigned clients;
};
static struct poller_view poller_views[GR_API_SERVER_MAX_POLLERS];

// ch moved messages in a pass of v's poller: a client of the period being
// counted.
static inline void view_count(struct poller_view *v, struct channel *ch) {
	if (ch->counted_period != v->counted_period) {
		ch->counted_period = v->counted_period;
		v->clients++;
	}
}

// The same, in a pass over the view: ch is also the last worker.
static inline void view_worked(struct poller_view *v, struct channel *ch) {
	v->worker = ch;
	view_count(v, ch);
}
// CHANNEL_SLOW_LIMIT_MS in TSC cycles (channel_module_init()).
uint64_t slow_limit_cycles;

// Poller: stop serving the channel and end its lease. The client sees EOF on
// its socket; the main thread sees it too and detaches the channel. detail
// is what the channel library found (shmchan_last_error()), or NULL.
static void channel_fault(
	struct channel *ch,
	enum channel_fault fault,
	const char *reason,
	const char *detail
) {
	uint32_t up = CHANNEL_UP;

	// Only this poller faults the channel; the main thread may close it
	// meanwhile. The reason is written before the state change publishes
	// it: the main thread reads it once it sees FAULTED.
	if (atomic_load(&ch->state) != CHANNEL_UP)
		return;
	ch->fault = fault;
	snprintf(
		ch->fault_reason,
		sizeof(ch->fault_reason),
		"%s%s%s",
		reason,
		detail != NULL && detail[0] != '\0' ? ": " : "",
		detail != NULL ? detail : ""
	);
	if (!atomic_compare_exchange_strong(&ch->state, &up, CHANNEL_FAULTED))
		return;
	// The client may still run: its next ring operation fails now.
	shmchan_server_detach(ch->server);
	LOG(WARNING,
	    "channel %s (pid %d): %s: detaching",
	    ch->name,
	    (int)ch->ctx.peer_pid,
	    ch->fault_reason);
	if (shutdown(ch->lease_fd, SHUT_RDWR) < 0)
		LOG(ERR, "channel %s: shutdown lease: %s", ch->name, strerror(errno));
}

// Hold a response back, the ring refused it (refused: counted now) or
// older ones wait.
static int backlog_push(
	struct channel *ch,
	const struct gr_api_response *hdr,
	const void *payload,
	bool refused
) {
	struct backlog_msg *m;

	// No byte limit here: a request's stream is held whole, however long
	// (a route table's list), as the socket holds it. The backlog grows
	// past CHANNEL_BACKLOG_MAX_BYTES by one request's responses at most:
	// channel_serve() reads no request above it, and a client that takes
	// nothing for CHANNEL_SLOW_LIMIT_MS is detached (backlog_flush()).
	m = malloc(sizeof(*m) + hdr->payload_len);
	if (m == NULL) {
		channel_fault(ch, FAULT_SLOW, "no memory for the response backlog", NULL);
		return -ENOMEM;
	}
	m->next = NULL;
	m->hdr = *hdr;
	if (hdr->payload_len > 0)
		memcpy(m->payload, payload, hdr->payload_len);
	if (ch->backlog_head == NULL) {
		ch->backlog_tail = &ch->backlog_head;
		ch->backlog_since = rte_rdtsc();
	}
	*ch->backlog_tail = m;
	ch->backlog_tail = &m->next;
	ch->backlog_bytes += sizeof(*m) + hdr->payload_len;
	m->refused = refused;
	if (refused)
		shmchan_server_count_overflow(ch->server);
	return 0;
}

// Poller: whether a message held back (a backlogged response, a queued
// event) went into the ring, given what shmchan_server_enqueue() returned.
// A full ring counts one overflow per message, however many passes retry it
// (*refused remembers that it was counted); any other error is the client's
// corrupt ring, and faults the channel.
static bool held_back_enqueued(struct channel *ch, int ret, bool *refused) {
	if (ret == -ENOBUFS) {
		if (!*refused)
			shmchan_server_count_overflow(ch->server);
		*refused = true;
		return false;
	}
	if (ret < 0) {
		channel_fault(ch, FAULT_CORRUPT, "corrupt response ring", shmchan_last_error());
		return false;
	}
	return true;
}

// Poller: move backlogged responses into the ring while there is room.
// Returns the number moved. The caller flushes (shmchan_server_flush).
static unsigned backlog_flush(struct channel *ch) {
	unsigned moved = 0;
	struct backlog_msg *m;
	int ret;

	while ((m = ch->backlog_head) != NULL) {
		ret = shmchan_server_enqueue(
			ch->server,
			&m->hdr,
			sizeof(m->hdr),
			m->payload,
			m->hdr.payload_len
		);
		if (!held_back_enqueued(ch, ret, &m->refused))
			break;
		ch->backlog_head = m->next;
		ch->backlog_bytes -= sizeof(*m) + m->hdr.payload_len;
		free(m);
		moved++;
	}
	if (ch->backlog_head == NULL) {
		ch->backlog_since = 0;
		return moved;
	}
	// The slow-client limit counts from the last time the client took a
	// response, whether or not that made room for the next backlogged one:
	// a client that reads one small response every 50 ms while a 128 KiB
	// one waits is slow, not stopped.
	ret = moved > 0 ? 1 : shmchan_server_resp_taken(ch->server);
	if (ret < 0)
		channel_fault(ch, FAULT_CORRUPT, "corrupt response ring", shmchan_last_error());
	else if (ret > 0)
		ch->backlog_since = rte_rdtsc();
	else if (rte_rdtsc() - ch->backlog_since > slow_limit_cycles)
		channel_fault(
			ch,
			FAULT_SLOW,
			"response ring full for too long: the client stopped reading",
			NULL
		);
	return moved;
}

void backlog_free(struct channel *ch) {
	struct backlog_msg *m;

	while ((m = ch->backlog_head) != NULL) {
		ch->backlog_head = m->next;
		free(m);
	}
	ch->backlog_bytes = 0;
}

// Transport of channel clients: poller thread, handler lock held.
static int shm_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	struct gr_api_response hdr = {
		.for_id = for_id,
		.status = out->status,
		.payload_len = out->len,
	};
	struct channel *ch = ctx->priv;
	int ret;

	if (out->n_fds > 0)
		return -ENOTSUP; // fds travel only over the socket
	if (atomic_load_explicit(&ch->state, memory_order_relaxed) != CHANNEL_UP)
		return -ECONNRESET;
	ch->turn_responses++;
	ch->turn_bytes += sizeof(hdr) + out->len;
	if (ch->backlog_head == NULL) {
		// Published now; the poller flushes (fence, doorbell) once per
		// batch, at the end of channel_serve().
		ret = shmchan_server_enqueue(ch->server, &hdr, sizeof(hdr), out->payload, out->len);
		if (ret != -ENOBUFS) {
			if (ret < 0)
				channel_fault(
					ch,
					FAULT_CORRUPT,
					"corrupt response ring",
					shmchan_last_error()
				);
			return ret;
		}
	}
	// A stream's turn ends here: its producer makes the next response
	// once the client has taken this one (the backlog holds one response
	// of a stream at most, whatever its length).
	if (ctx->stream_turn)
		ctx->stream_full = true;
	return backlog_push(ch, &hdr, out->payload, ch->backlog_head == NULL);
}

// Any thread, events lock held: events were queued for the channel.
static void channel_events_wake(void *arg) {
	const struct channel *ch = arg;
	poller_wake(ch->poller);
}

// Poller, at the channel's first subscribe.
static struct event_sub *channel_events_open(struct gr_api_ctx *ctx) {
	struct channel *ch = ctx->priv;
	return event_sub_new(ctx->peer_pid, EVENT_FRAMING_TAGGED, channel_events_wake, NULL, ch);
}

// Poller: move queued events into the response ring, tagged, while there is
// room (at most CHANNEL_TURN_EVENTS). The caller flushes. Returns the number
// moved.
static unsigned channel_events_flush(struct channel *ch) {
	struct event_sub *sub = ch->ctx.events;
	const struct event_msg *m;
	unsigned moved = 0;
	const uint8_t *bytes;
	uint32_t len;
	int ret;

	if (sub == NULL || !event_sub_pending(sub))
		return 0;
	while (moved < CHANNEL_TURN_EVENTS && (m = event_sub_peek(sub)) != NULL) {
		bytes = event_msg_bytes(m, EVENT_FRAMING_TAGGED, &len);
		ret = shmchan_server_enqueue(
			ch->server,
			bytes,
			sizeof(struct gr_api_response),
			bytes + sizeof(struct gr_api_response),
			len - sizeof(struct gr_api_response)
		);
		if (!held_back_enqueued(ch, ret, &ch->event_held_back))
			break;
		event_sub_pop(sub);
		ch->event_held_back = false;
		moved++;
	}
	return moved;
}

// Any thread, the deferred lock held: replies were queued for the channel.
static void channel_deferred_wake(struct gr_api_ctx *ctx) {
	const struct channel *ch = ctx->priv;
	poller_wake(ch->poller);
}

const struct api_transport shm_transport = {
	.name = "shm",
	.send = shm_send,
	.events_open = channel_events_open,
	.deferred_wake = channel_deferred_wake,
	.streams = true,
};

// Whether the turn of ch, which served requests so far, has done its work:
// CHANNEL_TURN_RESPONSES responses, each request counting for one at least,
// or CHANNEL_TURN_BYTES bytes of them.
static inline bool turn_spent(const struct channel *ch, unsigned requests) {
	uint32_t responses = ch->turn_responses > requests ? ch->turn_responses : requests;

	return responses >= CHANNEL_TURN_RESPONSES || ch->turn_bytes >= CHANNEL_TURN_BYTES;
}

// Whether ch holds back more responses than CHANNEL_BACKLOG_MAX_BYTES: its
// requests wait until the client takes some.
static bool backlog_over(const struct channel *ch) {
	return ch->backlog_bytes > CHANNEL_BACKLOG_MAX_BYTES;
}

// Poller: serve one channel. Returns messages moved.
static unsigned channel_serve(struct channel *ch, uint8_t *buf) {
	const struct gr_api_request *req = (const void *)buf;
	unsigned moved = 0, requests = 0, events = 0;
	bool locked = false;
	int len, ret;

	if (atomic_load_explicit(&ch->state, memory_order_relaxed) != CHANNEL_UP)
		return 0;
	// A channel starts with the daemon's need-wakeup flag set (it is asleep
	// to the client until served), and only the idle path clears it: a
	// poller kept busy by other channels would leave it set, and every send
	// of this client would ring the doorbell. No fence: a request published
	// before this store is read below, and the poller re-checks every ring
	// after arming before it sleeps.
	if (!ch->served) {
		shmchan_server_doorbell_disarm(ch->server);
		ch->served = true;
	}
	if (ch->backlog_head != NULL) {
		moved = backlog_flush(ch);
		// Backpressure: above its limit, read no request until the
		// client drains the backlog (or is detached as slow).
		if (atomic_load_explicit(&ch->state, memory_order_relaxed) != CHANNEL_UP ||
		    backlog_over(ch))
			goto flush;
	}
	// Events after the responses held back, before new requests. They do
	// not count against the turn's responses: a stream of events cannot
	// starve the channel's requests (a full ring stops both).
	if (ch->backlog_head == NULL)
		events = channel_events_flush(ch);
	// Replies its handlers deferred, answered since: before new requests,
	// and, like events, not counted against the turn.
	if (api_deferred_pending(&ch->ctx)) {
		events += api_deferred_flush(&ch->ctx);
		if (atomic_load_explicit(&ch->state, memory_order_relaxed) != CHANNEL_UP)
			goto flush;
	}
	ch->turn_responses = 0;
	ch->turn_bytes = 0;
	ch->turn_cut = false;
	// A stream being produced: a turn of its producer once the client took
	// what it was sent last (no backlog), and no request meanwhile: they
	// wait for its end, as the client's responses keep their order.
	if (api_stream_active(&ch->ctx)) {
		if (ch->backlog_head == NULL) {
			api_lock();
			ret = api_stream_turn_locked(&ch->ctx);
			api_unlock();
			api_faults_log(&ch->ctx, false);
			// Not ended, and not stopped by a full ring: it has more,
			// and the poller serves the others first, parked ones too.
			ch->turn_cut =
				ret == 0 && api_stream_active(&ch->ctx) && ch->backlog_head == NULL;
			moved += ch->turn_responses;
		}
		if (api_stream_active(&ch->ctx) ||
		    atomic_load_explicit(&ch->state, memory_order_relaxed) != CHANNEL_UP)
			goto flush;
	}
	// The turn: requests until they produced its bound of responses or
	// bytes (each request counts for one response at least, whatever its
	// handler sent).
	while (!turn_spent(ch, requests)) {
		len = shmchan_server_recv(ch->server, buf, SHMCHAN_MSG_MAX);
		if (len == 0)
			break;
		if (len < 0) {
			channel_fault(
				ch,
				FAULT_CORRUPT,
				"corrupt request ring",
				shmchan_last_error()
			);
			break;
		}
		requests++;
		// Taken off the ring: its queueing time (the request's figures)
		// runs from here, the wait for the handler lock included.
		ch->ctx.taken_tsc = rte_rdtsc();
		// The whole turn runs under one hold of the handler lock.
		if (!locked) {
			ch->ctx.lock_waited = api_lock_waited();
			locked = true;
		} else {
			ch->ctx.lock_waited = false;
		}
		// From here on only the private copy in buf is read.
		if ((size_t)len < sizeof(*req) || req->payload_len != len - sizeof(*req)) {
			channel_fault(
				ch,
				FAULT_CORRUPT,
				"request frame length disagrees with its payload_len",
				NULL
			);
			break;
		}
		if (api_check_header(req) < 0) {
			api_reject_locked(&ch->ctx, req->id, EMSGSIZE);
			channel_fault(ch, FAULT_CORRUPT, "request payload over the maximum", NULL);
			break;
		}
		if (api_dispatch_locked(&ch->ctx, req, buf + sizeof(*req)) < 0)
			break;
		// A stream started: its next turns come before any request.
		if (backlog_over(ch) || api_stream_active(&ch->ctx))
			break;
	}
	// Cut by its bound with requests left, or with a stream still to
	// produce: the poller serves the others first, parked ones too
	// (channel_poll()).
	ch->turn_cut = (turn_spent(ch, requests) && shmchan_server_has_request(ch->server)) ||
		       (api_stream_active(&ch->ctx) && ch->backlog_head == NULL);
	if (locked) {
		api_unlock();
		api_faults_log(&ch->ctx, false);
	}
flush:
	// One fence and at most one doorbell for the whole turn: the
	// responses published and the request cells freed.
	shmchan_server_flush(ch->server);
	return moved + requests + events;
}

// Poller, in a read-side critical section: make v from poller_channels[i]
// as of gen, every channel active. Returns 0 or -ENOMEM (v is then invalid).
static int view_make(struct poller_view *v, unsigned poller_id, uint64_t gen) {
	struct channel *ch;
	unsigned n = 0;

	cds_list_for_each_entry_rcu (ch, &poller_channels[poller_id], poller_node)
		n++;
	if (n > v->cap) {
		struct view_slot *slots = realloc(v->slots, n * sizeof(*slots));
		if (slots == NULL) {
			if (v->valid)
				LOG(ERR,
				    "poller %u: no memory for %u channels: serving all",
				    poller_id,
				    n);
			v->valid = false;
			return -ENOMEM;
		}
		v->slots = slots;
		v->cap = n;
	}
	n = 0;
	// A channel attached after the count is left out: gen moved with it,
	// and the next pass makes the view again.
	cds_list_for_each_entry_rcu (ch, &poller_channels[poller_id], poller_node) {
		if (n == v->cap)
			break;
		v->slots[n++] = (struct view_slot){.ch = ch};
	}
	v->n_slots = n;
	v->n_active = n;
	v->parked_next = 0;
	v->looks_owed = 0;
	v->worker = NULL;
	v->owner = NULL;
	v->gen = gen;
	v->valid = true;
	return 0;
}

static void view_swap(struct poller_view *v, unsigned a, unsigned b) {
	struct view_slot t = v->slots[a];

	v->slots[a] = v->slots[b];
	v->slots[b] = t;
}

// Make parked slot i active (it swaps with the first parked one) and serve
// its channel. Returns the messages moved.
static unsigned view_unpark(struct poller_view *v, unsigned i, void *req_buf) {
	struct view_slot *slot;

	view_swap(v, i, v->n_active);
	slot = &v->slots[v->n_active++];
	slot->idle_passes = 0;
	unsigned n = channel_serve(slot->ch, req_buf);
	if (n > 0)
		view_worked(v, slot->ch);
	return n;
}

// Does a parked channel have work? Its ring's producer index, its events
// and its backlog: what channel_serve() would act on.
static bool channel_wants_service(const struct channel *ch) {
	if (atomic_load_explicit(&ch->state, memory_order_relaxed) != CHANNEL_UP)
		return false;
	return ch->backlog_head != NULL || api_stream_active(&ch->ctx) ||
	       (ch->ctx.events != NULL && event_sub_pending(ch->ctx.events)) ||
	       api_deferred_pending(&ch->ctx) || shmchan_server_has_request(ch->server);
}

// May ch, which had nothing to do for CHANNEL_PARK_PASSES passes, be parked?
// Not with responses or events waiting for room: those are retried on every
// pass.
static bool channel_may_park(const struct channel *ch) {
	return ch->served && ch->backlog_head == NULL && !api_stream_active(&ch->ctx) &&
	       !api_deferred_pending(&ch->ctx) &&
	       (ch->ctx.events == NULL || !event_sub_pending(ch->ctx.events));
}

unsigned channel_poll(unsigned poller_id, void *req_buf) {
	struct poller_view *v = &poller_views[poller_id];
	uint64_t gen = atomic_load_explicit(&poller_channels_gen[poller_id], memory_order_acquire);
	unsigned work = 0;

	if (!v->valid || v->gen != gen) {
		if (view_make(v, poller_id, gen) < 0) {
			struct channel *ch;

			cds_list_for_each_entry_rcu (ch, &poller_channels[poller_id], poller_node) {
				unsigned n = channel_serve(ch, req_buf);

				work += n;
				if (n > 0)
					view_count(v, ch);
			}
			return work;
		}
	}
	// The active channels, from the last: one that is parked swaps with the
	// last active one, already served in this pass.
	for (unsigned i = v->n_active; i-- > 0;) {
		struct view_slot *slot = &v->slots[i];
		unsigned n = channel_serve(slot->ch, req_buf);

		work += n;
		if (n > 0) {
			slot->idle_passes = 0;
			if (slot->ch->turn_cut)
				v->looks_owed += CHANNEL_PARKED_LOOKS_PER_CUT;
			view_worked(v, slot->ch);
		} else if (++slot->idle_passes >= CHANNEL_PARK_PASSES && channel_may_park(slot->ch)) {
			view_swap(v, i, v->n_active - 1);
			v->n_active--;
		}
	}
	if (v->look_all) {
		// Every parked one, in order: one with work swaps with the first
		// parked, already looked at.
		v->look_all = false;
		v->looks_owed = 0;
		for (unsigned i = v->n_active; i < v->n_slots; i++)
			if (channel_wants_service(v->slots[i].ch))
				work += view_unpark(v, i, req_buf);
		return work;
	}
	// A few parked ones, round robin, and as many more as cut turns bought.
	unsigned looks = CHANNEL_PARKED_CHECKS + v->looks_owed;
	v->looks_owed = 0;
	if (looks > v->n_slots - v->n_active)
		looks = v->n_slots - v->n_active; // each once at most
	for (unsigned k = 0; k < looks && v->n_active < v->n_slots; k++) {
		unsigned n_parked = v->n_slots - v->n_active;
		unsigned i = v->n_active + v->parked_next % n_parked;

		v->parked_next = (v->parked_next + 1) % n_parked;
		if (channel_wants_service(v->slots[i].ch))
			work += view_unpark(v, i, req_buf);
	}
	return work;
}

// Milliseconds from now until the slow-client limit of ch's backlog
// expires, at least 1.
static int backlog_deadline_ms(const struct channel *ch) {
	uint64_t waited = rte_rdtsc() - ch->backlog_since;
	uint64_t left = waited < slow_limit_cycles ? slow_limit_cycles - waited : 0;

	return (int)(left * 1000 / rte_get_tsc_hz()) + 1;
}

// Poller: set ch's need-wakeup flag for what it waits for, with no fence,
// and remember which, for the re-check after the fence (channel_recheck()).
static void channel_mark(struct channel *ch) {
	if (atomic_load_explicit(&ch->state, memory_order_relaxed) != CHANNEL_UP) {
		ch->armed = ARMED_NONE;
	} else if (ch->backlog_head != NULL) {
		// Waiting for room in the response ring: the client rings when it
		// has taken its responses and is about to sleep.
		shmchan_server_doorbell_mark_room(ch->server);
		ch->armed = ARMED_BACKLOG;
	} else if (ch->ctx.events != NULL && event_sub_pending(ch->ctx.events)) {
		// Events wait for room in the response ring: armed for room, as
		// for a backlog, but with no deadline (events are dropped, never
		// a reason to detach). The client also rings when it sends a
		// request (any flag value).
		shmchan_server_doorbell_mark_room(ch->server);
		ch->armed = ARMED_EVENTS;
	} else {
		shmchan_server_doorbell_mark(ch->server);
		ch->armed = ARMED_REQUEST;
	}
}

// Poller, after the fence that follows channel_mark(): does ch have work
// its client may not ring for? Lowers *timeout_ms to its slow-client
// deadline if it waits with a backlog.
static bool channel_recheck(struct channel *ch, int *timeout_ms) {
	enum channel_armed armed = ch->armed;

	ch->armed = ARMED_NONE;
	// Before sleeping on it: a region its client wiped or whose index it
	// moved (the busy path reads neither) is that client's fault.
	if (armed != ARMED_NONE && shmchan_server_idle_check(ch->server) < 0) {
		channel_fault(ch, FAULT_CORRUPT, "corrupt region", shmchan_last_error());
		return false;
	}
	switch (armed) {
	case ARMED_NONE:
		// Not up, or attached after the marks: a new channel starts with
		// its flag set (shmchan_server_create()), so its client rings.
		return false;
	case ARMED_BACKLOG: {
		// A retry of the backlog: its first send reads the client's
		// consumer tail again.
		if (backlog_flush(ch) > 0)
			return true;
		// Below its limit the backlog does not hold the requests back
		// (the client rings for a request whatever its flag says).
		if (!backlog_over(ch) && shmchan_server_has_request(ch->server))
			return true;
		// Wake up in time to apply the slow-client limit.
		int ms = backlog_deadline_ms(ch);
		if (*timeout_ms < 0 || ms < *timeout_ms)
			*timeout_ms = ms;
		return false;
	}
	case ARMED_EVENTS:
		return channel_events_flush(ch) > 0 || shmchan_server_has_request(ch->server);
	case ARMED_REQUEST:
		// Events queued since the mark, which looked before the fence:
		// served (or armed for room) on the next pass instead of slept on.
		if (ch->ctx.events != NULL && event_sub_pending(ch->ctx.events))
			return true;
		// Replies deferred and answered since the mark: the same. A
		// stream with no backlog has a producer's turn due.
		if (api_deferred_pending(&ch->ctx) || api_stream_active(&ch->ctx))
			return true;
		return shmchan_server_has_request(ch->server);
	}
	return false;
}

unsigned channel_arm(unsigned poller_id, int *timeout_ms) {
	struct cds_list_head *channels = &poller_channels[poller_id];
	struct channel *ch;
	unsigned pending = 0;

	*timeout_ms = -1;
	cds_list_for_each_entry_rcu (ch, channels, poller_node)
		channel_mark(ch);
	// One full fence for every channel, between the flag stores above (and
	// the poller's sleeping flag, stored before this call) and the loads of
	// the re-check below. A client may publish a request (or take its
	// responses) between our last look at its ring and its flag store, and
	// read its flag as 0 then: without the fence, our re-check could load
	// its index before our flag store is visible, and we would sleep on a
	// request (or on room) that no doorbell announces. With it, either the
	// client sees its flag and rings, or we see its index. The same holds
	// for the sleeping flag against poller_wake() and the events backlogs.
	// A store then a load: needed on x86 too. One fence per sleep, not one
	// per channel: a fence waits for every store before it to leave the
	// store buffer, and a second one finds nothing left to wait for.
	atomic_thread_fence(memory_order_seq_cst);
	cds_list_for_each_entry_rcu (ch, channels, poller_node)
		if (channel_recheck(ch, timeout_ms))
			pending++;
	return pending;
}

void channel_disarm(unsigned poller_id, int cpu) {
	struct channel *ch;

	// Awake, and where: a client waiting on this CPU stops spinning on it.
	cds_list_for_each_entry_rcu (ch, &poller_channels[poller_id], poller_node) {
		shmchan_server_doorbell_disarm(ch->server);
		shmchan_server_cpu_publish(ch->server, cpu);
	}
	// Armed and re-checked, parked or not: whichever had work is served on
	// the next pass, not after its turn among the parked ones.
	poller_views[poller_id].look_all = true;
}

void channel_cpu_publish(unsigned poller_id, int cpu) {
	struct channel *ch;

	cds_list_for_each_entry_rcu (ch, &poller_channels[poller_id], poller_node)
		shmchan_server_cpu_publish(ch->server, cpu);
}

void channel_host_publish(unsigned poller_id, uint32_t word) {
	struct channel *ch;

	cds_list_for_each_entry_rcu (ch, &poller_channels[poller_id], poller_node)
		shmchan_server_host_publish(ch->server, word);
}

unsigned channel_clients_counted(unsigned poller_id) {
	struct poller_view *v = &poller_views[poller_id];
	unsigned clients = v->clients;

	v->clients = 0;
	// Never 0, which a channel has before its first work.
	if (++v->counted_period == 0)
		v->counted_period = 1;
	return clients;
}

bool channel_spin_peer(unsigned poller_id, bool owner, bool tail, struct shmchan_peer *peer) {
	struct poller_view *v = &poller_views[poller_id];
	uint64_t gen = atomic_load_explicit(&poller_channels_gen[poller_id], memory_order_acquire);
	struct channel *ch = owner ? v->owner : v->worker;

	// The view's pointers are valid while its generation is current
	// (struct poller_view).
	if (!v->valid || v->gen != gen || ch == NULL ||
	    atomic_load_explicit(&ch->state, memory_order_relaxed) != CHANNEL_UP)
		return false;
	shmchan_server_peer(ch->server, tail, peer);
	return true;
}

void channel_spin_own(unsigned poller_id) {
	poller_views[poller_id].owner = poller_views[poller_id].worker;
}

void channel_views_free(void) {
	for (unsigned i = 0; i < GR_API_SERVER_MAX_POLLERS; i++) {
		free(poller_views[i].slots);
		memset(&poller_views[i], 0, sizeof(poller_views[i]));
	}
}
