// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Shared-memory channels of the daemon.
//
// Threads: the main thread attaches and detaches channels (it owns the
// registry list and every channel's lifetime); each poller serves the
// channels assigned to it. The registry is an RCU list of every channel, read
// by the handlers that list or count them; each poller has an RCU list of its
// own channels beside it, so that a pass costs its own channels only, however
// many the other pollers serve. Readers walk either list inside
// rcu_read_lock() without any lock, the main thread adds a channel to both
// and removes it from both, and a channel's memory and fds are freed by
// call_rcu() only after a grace period, so no reader ever touches a freed
// channel.
//
// Channel states: UP (served) -> FAULTED (a poller found the client at fault
// and shut the lease socket down; no longer served) -> CLOSED (the main
// thread saw the lease end and removed the channel; freed after the grace
// period). A channel whose lease ends while UP goes straight to CLOSED.
//
// A memzone goes from client to client: the daemon marks a region detached
// (shmchan_server_detach()) as soon as it gives up on it, gives every
// channel a new generation, and keeps a zone it took from a live client out
// of the pool until that process has exited (the memzone pool below).

#include "api.h"
#include "channel.h"
#include "channel_priv.h"
#include "event.h"
#include "fd_budget.h"
#include "poller.h"
#include "config.h"
#include "unix_diag.h"

#include <gr_shm.h>
#include <shmchan.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_memzone.h>
// Inline rcu_dereference() in the list walks of every poller pass (allowed
// for code under any licence, unlike _LGPL_SOURCE).
#define URCU_INLINE_SMALL_FUNCTIONS
#include <urcu.h>
#include <urcu/rculist.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

// Memzone names of channels: "shmc-<daemon pid>-<seq>", at most 31
// characters (RTE_MEMZONE_NAMESIZE - 1), unique per daemon instance.
#define CHANNEL_MEMZONE_PREFIX "shmc-"
// Regions are mapped by page; a memzone is aligned the same way.
#define CHANNEL_REGION_ALIGN 4096
// pidfd_open(2) flags: none.
#define PIDFD_OPEN_FLAGS 0

// Why a poller gave up on a client.
enum channel_fault {
	FAULT_CORRUPT, // the client wrote something invalid into its region
	FAULT_SLOW, // the client stopped reading its responses
};

// What a sleeping poller waits for on a channel (poller only): what
// channel_arm() set its flag for, and so how it re-checks it.
enum channel_armed {
	ARMED_NONE, // not marked: not up, or attached after the marks
	ARMED_REQUEST, // a request
	ARMED_BACKLOG, // room for its response backlog
	ARMED_EVENTS, // room for its queued events
};

// The public codes (api/gr_shm.h), as GR_SHM_CHANNEL_LIST reports them.
enum channel_state {
	CHANNEL_UP = GR_SHM_CHANNEL_UP,
	CHANNEL_FAULTED = GR_SHM_CHANNEL_FAULTED,
	CHANNEL_CLOSED = GR_SHM_CHANNEL_CLOSED,
};

// Who may still write into a memzone once its channel is gone
// (channel_zone_hold()).
struct zone_holder {
	pid_t pid; // the client that connected, 0: none (gone, or unknown)
	int pidfd; // pidfd_open(pid), readable once it has exited; -1: kill(pid, 0)
	bool peer_known; // peer: the client's end of the lease socket
	struct unix_sock_id peer;
};

// A response waiting for room in the response ring (poller only).
struct backlog_msg {
	struct backlog_msg *next;
	bool refused; // the ring refused it once: counted in overflows
	struct gr_api_response hdr;
	uint8_t payload[];
};

struct channel {
	struct cds_list_head node; // registry entry (main thread writes)
	struct cds_list_head poller_node; // entry in its poller's list (main thread writes)
	struct rcu_head rcu;
	// Setup only (main thread, before the channel is published).
	char name[GR_SHM_NAME_LEN];
	unsigned poller;
	struct shmchan_mem mem;
	struct shmchan_server *server;
	struct shmchan_geometry geometry;
	int fds[3]; // passed at attach: request doorbell, response doorbell, memfd
	unsigned n_fds; // 3 with a memfd, 2 with a memzone
	int lease_fd; // dup of the client's socket, shut down on a fault
	struct gr_api_ctx ctx; // dispatch state of requests arriving on the channel
	// Written by the owning poller, read by the main thread.
	_Atomic uint32_t state;
	enum channel_fault fault; // why the poller faulted it
	char fault_reason[192]; // what it found, for the log
	// Poller only.
	struct backlog_msg *backlog_head;
	struct backlog_msg **backlog_tail;
	size_t backlog_bytes;
	uint64_t backlog_since; // tsc when the backlog became non-empty
	bool served; // the poller served it once (its doorbell flag was cleared)
	bool event_held_back; // the ring refused the oldest queued event: counted
	enum channel_armed armed; // what channel_arm() marked it for, until its re-check
	// Main thread, at detach: the counters added to the totals then.
	struct shmchan_server_stats retired_at;
	// Main thread, at the detach of a memzone channel whose client may
	// still write into the zone (channel_zone_hold()).
	struct zone_holder holder;
};

// A zone taken from a client the daemon detached while it lived (a fault:
// slow or corrupt; or its connection closed by the daemon): held out of the
// pool until that process has exited and no process holds the client's end
// of its socket any more, whatever they are doing meanwhile (stopped,
// swapped out, in a debugger), since a process that still runs may still
// write into the zone: the one that connected, one it forked (which shares
// its mappings and its socket), or a secondary it passed the socket to.
struct memzone_held {
	const struct rte_memzone *mz;
	struct zone_holder holder;
};

// The memzone pool. Taken from by the main thread (attach), given back to by
// the call_rcu thread (channel_free), looked at by the stats handler (any
// thread): the mutex orders them. The free zones are a FIFO: the one freed
// longest ago goes out first, so a zone is reused as late as the pool
// allows.
static struct {
	pthread_mutex_t lock;
	const struct rte_memzone *free[CHANNEL_MEMZONE_POOL];
	unsigned free_head; // index of the oldest free zone
	unsigned n_free;
	struct memzone_held held[CHANNEL_MEMZONE_POOL];
	unsigned n_held;
	unsigned n_zones; // reserved at startup
} memzone_pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

// The descriptors a channel of this backing holds (channel.h).
static unsigned channel_fds(enum shmchan_backing backing) {
	return backing == SHMCHAN_BACKING_MEMFD ? CHANNEL_FDS_MAX : CHANNEL_FDS_MEMZONE;
}

static CDS_LIST_HEAD(registry);
// The channels of each poller, in the order they attached (main thread
// writes, poller i reads poller_channels[i]).
static struct cds_list_head poller_channels[GR_API_SERVER_MAX_POLLERS];
// Bumped by the main thread after each change of poller_channels[i], read by
// poller i: its view (below) is stale once this moved.
static _Atomic uint64_t poller_channels_gen[GR_API_SERVER_MAX_POLLERS];

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
#define CHANNEL_PARK_PASSES 64
#define CHANNEL_PARKED_CHECKS 2

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
};
static struct poller_view poller_views[GR_API_SERVER_MAX_POLLERS];
static unsigned n_channels; // main thread
static unsigned next_poller; // main thread: round robin
static unsigned channel_seq; // main thread: unique names
static uint32_t channel_generation; // main thread: the last one given
static uint64_t slow_limit_cycles;

// The per-channel counters (struct shmchan_server_stats) that the totals of
// GR_SHM_STATS (struct gr_shm_counters) add up.
#define CHANNEL_COUNTERS(X)                                                                        \
	X(requests) X(req_bytes) X(responses) X(resp_bytes) X(doorbells_rung) X(sleeps) X(overflows)

// Counters of channels already freed (added at detach by the main thread,
// read by the stats handlers on any thread).
static struct gr_shm_counters retired;

// Add a channel's counters (written by its poller) into to. Any thread: the
// loads are atomic, and so are the adds, since the retired totals are read
// by the stats handlers on other threads.
// With since not NULL, add only what s counted after the snapshot since.
static void counters_add_since(
	struct gr_shm_counters *to,
	const struct shmchan_server_stats *s,
	const struct shmchan_server_stats *since
) {
#define COUNTER_ADD(field)                                                                         \
	__atomic_fetch_add(                                                                        \
		&to->field,                                                                        \
		__atomic_load_n(&s->field, __ATOMIC_RELAXED) - (since != NULL ? since->field : 0), \
		__ATOMIC_RELAXED                                                                   \
	);
	CHANNEL_COUNTERS(COUNTER_ADD)
#undef COUNTER_ADD
}

static void counters_add(struct gr_shm_counters *to, const struct shmchan_server_stats *s) {
	counters_add_since(to, s, NULL);
}

// A copy of a channel's counters while its poller may still write them.
static void stats_snapshot(struct shmchan_server_stats *to, const struct shmchan_server_stats *s) {
#define STAT_LOAD(field) to->field = __atomic_load_n(&s->field, __ATOMIC_RELAXED);
	CHANNEL_COUNTERS(STAT_LOAD)
#undef STAT_LOAD
}

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

	if (ch->backlog_bytes + sizeof(*m) + hdr->payload_len > CHANNEL_BACKLOG_MAX_BYTES) {
		channel_fault(
			ch,
			FAULT_SLOW,
			"response backlog over its limit: the client is not reading",
			NULL
		);
		return -ENOBUFS;
	}
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
		if (ret == -ENOBUFS) {
			// Counted once, however many passes retry it.
			if (!m->refused)
				shmchan_server_count_overflow(ch->server);
			m->refused = true;
			break;
		}
		if (ret < 0) {
			channel_fault(
				ch,
				FAULT_CORRUPT,
				"corrupt response ring",
				shmchan_last_error()
			);
			break;
		}
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

static void backlog_free(struct channel *ch) {
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
// room (at most CHANNEL_BATCH). The caller flushes. Returns the number moved.
static unsigned channel_events_flush(struct channel *ch) {
	struct event_sub *sub = ch->ctx.events;
	const struct event_msg *m;
	unsigned moved = 0;
	const uint8_t *bytes;
	uint32_t len;
	int ret;

	if (sub == NULL || !event_sub_pending(sub))
		return 0;
	while (moved < CHANNEL_BATCH && (m = event_sub_peek(sub)) != NULL) {
		bytes = event_msg_bytes(m, EVENT_FRAMING_TAGGED, &len);
		ret = shmchan_server_enqueue(
			ch->server,
			bytes,
			sizeof(struct gr_api_response),
			bytes + sizeof(struct gr_api_response),
			len - sizeof(struct gr_api_response)
		);
		if (ret == -ENOBUFS) {
			// Counted once, however many passes retry it.
			if (!ch->event_held_back)
				shmchan_server_count_overflow(ch->server);
			ch->event_held_back = true;
			break;
		}
		if (ret < 0) {
			channel_fault(
				ch,
				FAULT_CORRUPT,
				"corrupt response ring",
				shmchan_last_error()
			);
			break;
		}
		event_sub_pop(sub);
		ch->event_held_back = false;
		moved++;
	}
	return moved;
}

static const struct api_transport shm_transport = {
	.name = "shm",
	.send = shm_send,
	.events_open = channel_events_open,
};

// Poller: serve one channel. Returns messages moved.
static unsigned channel_serve(struct channel *ch, uint8_t *buf) {
	const struct gr_api_request *req = (const void *)buf;
	unsigned n = 0, events = 0;
	bool locked = false;
	int len;

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
		n = backlog_flush(ch);
		if (ch->backlog_head != NULL)
			goto flush; // backpressure: read no request until the client drains
	}
	// Events after the responses held back, before new requests. They do
	// not count against the requests' batch: a stream of events cannot
	// starve the channel's requests (a full ring stops both).
	events = channel_events_flush(ch);
	while (n < CHANNEL_BATCH) {
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
		n++;
		// The whole batch runs under one hold of the handler lock.
		if (!locked) {
			api_lock();
			locked = true;
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
		if (ch->backlog_head != NULL)
			break;
	}
	if (locked) {
		api_unlock();
		api_faults_log(&ch->ctx, false);
	}
flush:
	// One fence and at most one doorbell for the whole batch: the
	// responses published and the request cells freed.
	shmchan_server_flush(ch->server);
	return n + events;
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
	return channel_serve(slot->ch, req_buf);
}

// Does a parked channel have work? Its ring's producer index, its events
// and its backlog: what channel_serve() would act on.
static bool channel_wants_service(const struct channel *ch) {
	if (atomic_load_explicit(&ch->state, memory_order_relaxed) != CHANNEL_UP)
		return false;
	return ch->backlog_head != NULL ||
	       (ch->ctx.events != NULL && event_sub_pending(ch->ctx.events)) ||
	       shmchan_server_has_request(ch->server);
}

// May ch, which had nothing to do for CHANNEL_PARK_PASSES passes, be parked?
// Not with responses or events waiting for room: those are retried on every
// pass.
static bool channel_may_park(const struct channel *ch) {
	return ch->served && ch->backlog_head == NULL &&
	       (ch->ctx.events == NULL || !event_sub_pending(ch->ctx.events));
}

unsigned channel_poll(unsigned poller_id, void *req_buf) {
	struct poller_view *v = &poller_views[poller_id];
	uint64_t gen = atomic_load_explicit(&poller_channels_gen[poller_id], memory_order_acquire);
	unsigned work = 0;

	if (!v->valid || v->gen != gen) {
		if (view_make(v, poller_id, gen) < 0) {
			struct channel *ch;

			cds_list_for_each_entry_rcu (ch, &poller_channels[poller_id], poller_node)
				work += channel_serve(ch, req_buf);
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
		} else if (++slot->idle_passes >= CHANNEL_PARK_PASSES && channel_may_park(slot->ch)) {
			view_swap(v, i, v->n_active - 1);
			v->n_active--;
		}
	}
	if (v->look_all) {
		// Every parked one, in order: one with work swaps with the first
		// parked, already looked at.
		v->look_all = false;
		for (unsigned i = v->n_active; i < v->n_slots; i++)
			if (channel_wants_service(v->slots[i].ch))
				work += view_unpark(v, i, req_buf);
		return work;
	}
	// A few parked ones, round robin.
	for (unsigned k = 0; k < CHANNEL_PARKED_CHECKS && v->n_active < v->n_slots; k++) {
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

void channel_disarm(unsigned poller_id) {
	struct channel *ch;

	cds_list_for_each_entry_rcu (ch, &poller_channels[poller_id], poller_node)
		shmchan_server_doorbell_disarm(ch->server);
	// Armed and re-checked, parked or not: whichever had work is served on
	// the next pass, not after its turn among the parked ones.
	poller_views[poller_id].look_all = true;
}

// Pool lock held: a free zone goes to the back of the FIFO.
static void memzone_pool_put_locked(const struct rte_memzone *mz) {
	unsigned tail = (memzone_pool.free_head + memzone_pool.n_free) % CHANNEL_MEMZONE_POOL;

	memzone_pool.free[tail] = mz;
	memzone_pool.n_free++;
}

// Has the process that connected exited?
static bool holder_pid_exited(const struct zone_holder *h) {
	if (h->pid <= 0)
		return true;
	if (h->pidfd >= 0) {
		struct pollfd pfd = {.fd = h->pidfd, .events = POLLIN};
		// A pidfd is readable once its process has exited (a zombie
		// too: it maps nothing any more). Never blocks: timeout 0.
		return poll(&pfd, 1, 0) == 1;
	}
	// Without a pidfd, the pid: a process that took it since only keeps
	// the zone out of the pool longer.
	return kill(h->pid, 0) < 0 && errno == ESRCH;
}

// Has every process that may write into a held zone let go of it? The pid
// first: it costs a poll(), the socket a netlink request. A socket the
// kernel cannot tell about keeps the zone held.
static bool memzone_holder_exited(const struct memzone_held *h) {
	return holder_pid_exited(&h->holder) &&
	       (!h->holder.peer_known || unix_diag_exists(&h->holder.peer) == 0);
}

// Pool lock held: the zones whose holder has exited go back to the pool.
static void memzone_pool_reclaim_locked(void) {
	unsigned i = 0;

	while (i < memzone_pool.n_held) {
		struct memzone_held *h = &memzone_pool.held[i];

		if (!memzone_holder_exited(h)) {
			i++;
			continue;
		}
		if (h->holder.pid == 0)
			LOG(INFO,
			    "memzone %s back in the pool: no process holds its socket",
			    h->mz->name);
		else
			LOG(INFO,
			    "memzone %s back in the pool: pid %d has exited%s",
			    h->mz->name,
			    (int)h->holder.pid,
			    h->holder.peer_known ? ", and no process holds its socket" : "");
		if (h->holder.pidfd >= 0) {
			close(h->holder.pidfd);
			fd_budget_give(1);
		}
		memzone_pool_put_locked(h->mz);
		*h = memzone_pool.held[--memzone_pool.n_held];
	}
}

// A memfd named name, or a memzone from the pool (which keeps the name it
// was reserved with: the client looks it up by that name).
static int channel_mem_alloc(
	struct shmchan_mem *mem,
	enum shmchan_backing backing,
	const char *name,
	size_t size
) {
	const struct rte_memzone *mz = NULL;

	if (backing == SHMCHAN_BACKING_MEMFD)
		return shmchan_memfd_create(mem, name, size);

	pthread_mutex_lock(&memzone_pool.lock);
	memzone_pool_reclaim_locked();
	if (memzone_pool.n_free > 0) {
		mz = memzone_pool.free[memzone_pool.free_head];
		memzone_pool.free_head = (memzone_pool.free_head + 1) % CHANNEL_MEMZONE_POOL;
		memzone_pool.n_free--;
	}
	pthread_mutex_unlock(&memzone_pool.lock);
	if (mz == NULL)
		return -ENOSPC;
	mem->backing = SHMCHAN_BACKING_MEMZONE;
	mem->base = mz->addr;
	mem->size = mz->len;
	mem->fd = -1;
	mem->cookie = mz;
	snprintf(mem->name, sizeof(mem->name), "%s", mz->name);
	return 0;
}

// Main thread or the call_rcu thread: a memzone goes back to the pool, or,
// with a holder (NULL: none), is held until the holder let go of it; the
// pool takes its pidfd.
static void channel_mem_free(struct shmchan_mem *mem, const struct zone_holder *holder) {
	if (mem->backing != SHMCHAN_BACKING_MEMZONE) {
		shmchan_memfd_destroy(mem);
		return;
	}
	if (mem->cookie == NULL)
		return;
	pthread_mutex_lock(&memzone_pool.lock);
	if (holder != NULL && (holder->pid > 0 || holder->peer_known))
		// Room for it: every zone is either handed out, free or held.
		memzone_pool.held[memzone_pool.n_held++] = (struct memzone_held){
			.mz = mem->cookie,
			.holder = *holder,
		};
	else
		memzone_pool_put_locked(mem->cookie);
	pthread_mutex_unlock(&memzone_pool.lock);
	mem->cookie = NULL;
}

// Memzones not in the pool now: handed out, or held for a client that may
// still write into them.
static uint32_t memzone_pool_in_use(void) {
	uint32_t in_use;

	pthread_mutex_lock(&memzone_pool.lock);
	memzone_pool_reclaim_locked();
	in_use = memzone_pool.n_zones - memzone_pool.n_free;
	pthread_mutex_unlock(&memzone_pool.lock);
	return in_use;
}

// Main thread, at startup, before any secondary can attach. The zones stay
// reserved until EAL cleanup: a server started again in the same process
// takes the pool it had.
static void memzone_pool_init(void) {
	struct shmchan_geometry g;
	char name[RTE_MEMZONE_NAMESIZE];

	if (memzone_pool.n_zones > 0 || shmchan_geometry_init(&g, SHMCHAN_RING_CELLS) < 0)
		return;
	for (unsigned i = 0; i < CHANNEL_MEMZONE_POOL; i++) {
		const struct rte_memzone *mz;

		snprintf(name, sizeof(name), CHANNEL_MEMZONE_PREFIX "%d-z%u", (int)getpid(), i);
		mz = rte_memzone_reserve_aligned(
			name,
			g.region_size,
			SOCKET_ID_ANY,
			0,
			CHANNEL_REGION_ALIGN
		);
		if (mz == NULL) {
			LOG(WARNING,
			    "memzone %s: %s: %u memzone channels only",
			    name,
			    rte_strerror(rte_errno),
			    i);
			break;
		}
		memzone_pool_put_locked(mz);
		memzone_pool.n_zones++;
	}
}

// Main thread, at shutdown, after the last channel_free(): the zones stay
// reserved until EAL cleanup; only the holders' pidfds are closed. A zone
// held stays held for a later start in the same process, which watches its
// holder by pid (and socket) alone.
static void memzone_pool_fini(void) {
	pthread_mutex_lock(&memzone_pool.lock);
	for (unsigned i = 0; i < memzone_pool.n_held; i++)
		if (memzone_pool.held[i].holder.pidfd >= 0) {
			close(memzone_pool.held[i].holder.pidfd);
			memzone_pool.held[i].holder.pidfd = -1;
			fd_budget_give(1);
		}
	pthread_mutex_unlock(&memzone_pool.lock);
}

// Main thread, at the detach of a memzone channel whose client the daemon
// gave up on (a fault, or its connection closed by the daemon): the client
// was alive then, and may run again later (it may be stopped). The zone is
// held out of the pool until that process has exited and the client's end
// of the lease socket (still open here) is closed in every process.
static void channel_zone_hold(struct channel *ch) {
	struct zone_holder *h = &ch->holder;
	pid_t pid = ch->ctx.peer_pid;
	int ret, err;

	if (ch->mem.backing != SHMCHAN_BACKING_MEMZONE)
		return; // a memfd is never given to anyone else
	ret = unix_diag_peer(ch->lease_fd, &h->peer);
	h->peer_known = ret == 0;
	if (ret < 0 && ret != -ENOTCONN)
		LOG(NOTICE,
		    "channel %s: the client's end of its socket cannot be watched (%s): watching"
		    " pid %d alone",
		    ch->name,
		    strerror(-ret),
		    (int)pid);
	if (pid > 0) {
		h->pidfd = (int)syscall(SYS_pidfd_open, pid, PIDFD_OPEN_FLAGS);
		err = h->pidfd < 0 ? errno : 0;
		if (err == 0)
			fd_budget_take(1);
		else if (err != ESRCH)
			LOG(NOTICE,
			    "channel %s: pidfd_open(%d): %s: watching the pid instead",
			    ch->name,
			    (int)pid,
			    strerror(err));
		// ESRCH: gone already; its socket may live on elsewhere.
		h->pid = err == ESRCH ? 0 : pid;
	}
	if (h->pid == 0 && !h->peer_known) {
		// Gone, and its socket closed everywhere: nothing writes into
		// the zone any more. Else it cannot be watched at all.
		if (pid <= 0 || ret != -ENOTCONN)
			LOG(NOTICE,
			    "channel %s: neither the client (pid %d) nor its socket can be watched:"
			    " memzone back in the pool after the grace period",
			    ch->name,
			    (int)pid);
		return;
	}
	if (h->pid == 0)
		LOG(INFO,
		    "channel %s: memzone held out of the pool until no process holds its socket",
		    ch->name);
	else
		LOG(INFO,
		    "channel %s: memzone held out of the pool until pid %d exits%s",
		    ch->name,
		    (int)pid,
		    h->peer_known ? " and no process holds its socket" : "");
}

// After the grace period: nothing can reach the channel any more.
static void channel_free(struct rcu_head *head) {
	struct channel *ch = caa_container_of(head, struct channel, rcu);

	// After the grace period no poller touches the counters any more, nor
	// the client's faults: say what is left of them.
	counters_add_since(&retired, shmchan_server_stats(ch->server), &ch->retired_at);
	api_faults_log(&ch->ctx, true);
	// No poller serves the channel any more: its subscriber can go.
	event_sub_free(ch->ctx.events);
	backlog_free(ch);
	shmchan_server_destroy(ch->server);
	fd_budget_give(channel_fds(ch->mem.backing));
	channel_mem_free(&ch->mem, &ch->holder);
	if (ch->lease_fd >= 0)
		close(ch->lease_fd);
	free(ch);
}

// How a channel ended, besides a fault.
enum channel_end_how {
	END_GIVEN_BACK, // the client asked for it (GR_SHM_DETACH): the lease lives on
	END_PEER_CLOSED, // the client closed its end of the lease
	END_CUT, // the daemon closed the lease with the client's end open
};

// Main thread: stop serving the channel and free it after the grace period.
static void channel_end(struct channel *ch, enum channel_end_how how) {
	uint32_t prev = atomic_exchange(&ch->state, CHANNEL_CLOSED);
	bool given_back = how == END_GIVEN_BACK;

	if (prev == CHANNEL_CLOSED)
		return;
	// Before the zone can go back to the pool: a client still running
	// fails its next ring operation.
	shmchan_server_detach(ch->server);
	// The daemon gave up on a client that did not go: it may still write
	// into its zone.
	if (prev == CHANNEL_FAULTED || how == END_CUT)
		channel_zone_hold(ch);
	// Its subscriptions end with it, at once; the subscriber itself goes
	// after the grace period (channel_free()): the poller may still be in
	// its last pass, and may have just made it (acquire: see
	// subscribe_common() in server/handlers_event.c).
	struct event_sub *events = __atomic_load_n(&ch->ctx.events, __ATOMIC_ACQUIRE);
	if (events != NULL)
		event_unsubscribe_all(events);
	cds_list_del_rcu(&ch->node);
	cds_list_del_rcu(&ch->poller_node);
	// Before call_rcu(): a poller section that still reads the old value
	// began before the grace period (see struct poller_view).
	atomic_fetch_add_explicit(&poller_channels_gen[ch->poller], 1, memory_order_release);
	poller_unwatch(ch->poller, ch->fds[0]);
	n_channels--;

	// The poller may still be in its last pass over the channel: its
	// counters are final only after the grace period. Retire them now, so
	// that the totals never drop, and what a racing pass adds when the
	// channel is freed (channel_free()).
	stats_snapshot(&ch->retired_at, shmchan_server_stats(ch->server));
	counters_add(&retired, &ch->retired_at);
	__atomic_fetch_add(&retired.detaches, 1, __ATOMIC_RELAXED);
	if (prev == CHANNEL_FAULTED) {
		if (ch->fault == FAULT_SLOW)
			__atomic_fetch_add(&retired.detach_slow, 1, __ATOMIC_RELAXED);
		else
			__atomic_fetch_add(&retired.detach_corrupt, 1, __ATOMIC_RELAXED);
	} else if (given_back) {
		__atomic_fetch_add(&retired.detach_request, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_add(&retired.detach_lease, 1, __ATOMIC_RELAXED);
	}
	// Given back: the handler logs it, through its client's faults.
	if (!given_back)
		LOG(INFO,
		    "channel %s (pid %d) detached: %s",
		    ch->name,
		    (int)ch->ctx.peer_pid,
		    prev == CHANNEL_FAULTED ? ch->fault_reason
		    : how == END_CUT	    ? "lease closed by the daemon"
					    : "lease closed");
	struct gr_shm_event_channel_detached ev = {
		.pid = ch->ctx.peer_pid,
		.reason = prev != CHANNEL_FAULTED
				  ? (given_back ? GR_SHM_DETACH_REQUEST : GR_SHM_DETACH_LEASE)
			  : ch->fault == FAULT_SLOW ? GR_SHM_DETACH_SLOW
						    : GR_SHM_DETACH_CORRUPT,
	};
	snprintf(ev.name, sizeof(ev.name), "%s", ch->name);
	gr_api_event_publish(GR_SHM_EVENT_CHANNEL_DETACHED, &ev, sizeof(ev));
	call_rcu(&ch->rcu, channel_free);
}

// Main thread: the lease (socket) ended, or the daemon stops.
static void channel_detach(void *arg, bool peer_closed) {
	channel_end(arg, peer_closed ? END_PEER_CLOSED : END_CUT);
}

static struct channel *
channel_create(const struct gr_api_ctx *sock_ctx, enum shmchan_backing backing, int *err) {
	struct channel *ch = calloc(1, sizeof(*ch));
	int ret;

	if (ch == NULL) {
		*err = ENOMEM;
		return NULL;
	}
	ch->lease_fd = -1;
	ch->holder.pidfd = -1;
	ch->mem.fd = -1;
	ch->mem.backing = backing;
	snprintf(
		ch->name,
		sizeof(ch->name),
		CHANNEL_MEMZONE_PREFIX "%d-%u",
		(int)getpid(),
		channel_seq++
	);
	ret = shmchan_geometry_init(&ch->geometry, SHMCHAN_RING_CELLS);
	// A new generation for every channel (never 0, a wiped region's): a
	// client of a zone's earlier channel then fails its lease check.
	if (++channel_generation == 0)
		channel_generation = 1;
	ch->geometry.generation = channel_generation;
	if (ret == 0)
		ret = channel_mem_alloc(&ch->mem, backing, ch->name, ch->geometry.region_size);
	if (ret == 0) {
		snprintf(ch->name, sizeof(ch->name), "%s", ch->mem.name);
		ret = shmchan_server_create(&ch->mem, &ch->geometry, &ch->server);
	}
	if (ret < 0) {
		LOG(ERR, "channel %s: %s", ch->name, strerror(-ret));
		goto fail;
	}
	ch->lease_fd = fcntl(sock_ctx->sock_fd, F_DUPFD_CLOEXEC, 0);
	if (ch->lease_fd < 0) {
		ret = -errno;
		LOG(ERR, "channel %s: dup lease socket: %s", ch->name, strerror(errno));
		goto fail;
	}
	ch->fds[0] = shmchan_server_req_fd(ch->server);
	ch->fds[1] = shmchan_server_resp_fd(ch->server);
	ch->fds[2] = ch->mem.fd;
	ch->n_fds = backing == SHMCHAN_BACKING_MEMFD ? 3 : 2;
	ch->ctx.transport = &shm_transport;
	ch->ctx.priv = ch;
	ch->ctx.hello_done = true; // said on the socket that holds the lease
	ch->ctx.api_version = sock_ctx->api_version;
	ch->ctx.peer_pid = sock_ctx->peer_pid;
	ch->ctx.peer_uid = sock_ctx->peer_uid;
	ch->ctx.peer_gid = sock_ctx->peer_gid;
	ch->ctx.sock_fd = -1;
	ch->poller = next_poller++ % poller_count();
	atomic_init(&ch->state, CHANNEL_UP);
	fd_budget_take(channel_fds(backing));
	return ch;
fail:
	if (ch->server != NULL)
		shmchan_server_destroy(ch->server);
	channel_mem_free(&ch->mem, NULL);
	if (ch->lease_fd >= 0)
		close(ch->lease_fd);
	free(ch);
	*err = -ret;
	return NULL;
}

static struct gr_api_out channel_attach(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct gr_shm_attach_req *req = request;
	enum shmchan_backing backing;
	struct gr_shm_attach_resp *resp;
	struct channel *ch;
	struct gr_api_out out;
	uint32_t offered;
	int err;

	(void)len;
	if (ctx->sock_fd < 0)
		return gr_api_out(EINVAL, 0, NULL); // only over the socket: it is the lease
	if (!server_conf.shm_enabled || poller_count() == 0)
		return gr_api_out(ENOTSUP, 0, NULL);
	if (ctx->lease_lost != NULL)
		return gr_api_out(EEXIST, 0, NULL);
	// One event subscriber per connection: once attached, the connection's
	// events go over its channel, and its socket subscribes no more
	// (server/handlers_event.c). A socket that has subscriptions or events
	// to deliver keeps them, and stays on the socket.
	if (ctx->events != NULL && event_sub_busy(ctx->events)) {
		api_fault(ctx, API_FAULT_ATTACH_SUBSCRIBED, NULL, 0, 0);
		return gr_api_out(EBUSY, 0, NULL);
	}
	if (req->layout_version != SHMCHAN_LAYOUT_VERSION) {
		api_fault(
			ctx,
			API_FAULT_ATTACH_LAYOUT,
			NULL,
			req->layout_version,
			SHMCHAN_LAYOUT_VERSION
		);
		return gr_api_out(EPROTO, 0, NULL);
	}
	offered = server_backings_offered();
	// A secondary asks for both and gets the memzone; anyone else gets the
	// memfd. The memzone is never handed out without being asked for.
	if (req->backings & offered & GR_SHM_BACKING_MEMZONE &&
	    memzone_pool_in_use() < memzone_pool.n_zones) {
		backing = SHMCHAN_BACKING_MEMZONE;
	} else if (req->backings & GR_SHM_BACKING_MEMFD) {
		backing = SHMCHAN_BACKING_MEMFD;
	} else {
		api_fault(ctx, API_FAULT_ATTACH_BACKINGS, NULL, req->backings, offered);
		return gr_api_out(ENOTSUP, 0, NULL);
	}
	if (!fd_budget_admits(channel_fds(backing), ctx->peer_uid == 0)) {
		api_fault(
			ctx,
			API_FAULT_ATTACH_FDS,
			NULL,
			fd_budget_held(),
			fd_budget_room(ctx->peer_uid == 0)
		);
		return gr_api_out(ENFILE, 0, NULL);
	}
	if (backing == SHMCHAN_BACKING_MEMFD && req->backings & offered & GR_SHM_BACKING_MEMZONE)
		api_fault(ctx, API_FAULT_MEMZONES_IN_USE, NULL, memzone_pool.n_zones, 0);
	resp = calloc(1, sizeof(*resp));
	if (resp == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	ch = channel_create(ctx, backing, &err);
	if (ch == NULL) {
		free(resp);
		return gr_api_out(err, 0, NULL);
	}
	err = poller_watch(ch->poller, ch->fds[0]);
	if (err < 0) {
		free(resp);
		channel_free(&ch->rcu);
		return gr_api_out(-err, 0, NULL);
	}
	resp->layout_version = ch->geometry.layout_version;
	resp->backing = backing;
	resp->region_size = ch->geometry.region_size;
	resp->req_ring_off = ch->geometry.req_ring_off;
	resp->resp_ring_off = ch->geometry.resp_ring_off;
	resp->ring_cells = ch->geometry.ring_cells;
	resp->cell_size = ch->geometry.cell_size;
	resp->n_fds = ch->n_fds;
	resp->generation = ch->geometry.generation;
	snprintf(resp->name, sizeof(resp->name), "%s", ch->name);
	snprintf(resp->file_prefix, sizeof(resp->file_prefix), "%s", server_conf.file_prefix);

	ctx->lease_lost = channel_detach;
	ctx->lease_arg = ch;
	// The socket's idle subscriber, if it had one: the channel makes its own.
	event_sub_free(ctx->events);
	ctx->events = NULL;
	cds_list_add_tail_rcu(&ch->node, &registry);
	cds_list_add_tail_rcu(&ch->poller_node, &poller_channels[ch->poller]);
	atomic_fetch_add_explicit(&poller_channels_gen[ch->poller], 1, memory_order_release);
	n_channels++;
	// A client can attach, give back and attach again on one connection:
	// logged outside the handler lock, at a bounded rate.
	api_fault_text(
		ctx,
		API_FAULT_CHANNEL_ATTACHED,
		"channel %s attached: pid %d uid %u, %s, poller %u",
		ch->name,
		(int)ctx->peer_pid,
		(unsigned)ctx->peer_uid,
		backing == SHMCHAN_BACKING_MEMZONE ? "memzone" : "memfd",
		ch->poller
	);
	struct gr_shm_event_channel ev = {.pid = ctx->peer_pid, .backing = resp->backing};
	snprintf(ev.name, sizeof(ev.name), "%s", ch->name);
	gr_api_event_publish(GR_SHM_EVENT_CHANNEL_ATTACHED, &ev, sizeof(ev));

	out = gr_api_out(0, sizeof(*resp), resp);
	out.fds = ch->fds;
	out.n_fds = ch->n_fds;
	return out;
}

// The client gives its channel back, typically because it could not map or
// validate it: without this the channel would stay polled until the
// connection closes, and a new attach would get EEXIST. Main thread, under
// the handler lock.
static struct gr_api_out
channel_give_back(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct channel *ch = ctx->lease_arg;

	(void)request;
	(void)len;
	if (ctx->sock_fd < 0)
		return gr_api_out(EINVAL, 0, NULL); // only over the socket, as attach
	if (ctx->lease_lost != channel_detach)
		return gr_api_out(ENOENT, 0, NULL);
	// The connection no longer holds the channel: its close must not end
	// it again (it is freed after the grace period).
	ctx->lease_lost = NULL;
	ctx->lease_arg = NULL;
	// A client can attach and give back at will on one connection:
	// logged outside the handler lock, at a bounded rate.
	api_fault_text(
		ctx,
		API_FAULT_CHANNEL_GIVEN_BACK,
		"channel %s (pid %d) detached: given back by the client",
		ch->name,
		(int)ch->ctx.peer_pid
	);
	channel_end(ch, END_GIVEN_BACK);
	return gr_api_out(0, 0, NULL);
}

static void channel_counters(const struct channel *ch, struct gr_shm_counters *c) {
	memset(c, 0, sizeof(*c));
	counters_add(c, shmchan_server_stats(ch->server));
}

void channel_stats_fill(struct gr_shm_stats_resp *resp) {
	struct channel *ch;

	memset(resp, 0, sizeof(*resp));
	resp->total.detaches = __atomic_load_n(&retired.detaches, __ATOMIC_RELAXED);
	resp->total.detach_corrupt = __atomic_load_n(&retired.detach_corrupt, __ATOMIC_RELAXED);
	resp->total.detach_slow = __atomic_load_n(&retired.detach_slow, __ATOMIC_RELAXED);
	resp->total.detach_lease = __atomic_load_n(&retired.detach_lease, __ATOMIC_RELAXED);
	resp->total.detach_request = __atomic_load_n(&retired.detach_request, __ATOMIC_RELAXED);
#define RETIRED_LOAD(field) resp->total.field = __atomic_load_n(&retired.field, __ATOMIC_RELAXED);
	CHANNEL_COUNTERS(RETIRED_LOAD)
#undef RETIRED_LOAD
	rcu_read_lock();
	cds_list_for_each_entry_rcu (ch, &registry, node) {
		if (atomic_load_explicit(&ch->state, memory_order_relaxed) == CHANNEL_CLOSED)
			continue;
		counters_add(&resp->total, shmchan_server_stats(ch->server));
		resp->channels++;
	}
	rcu_read_unlock();
	resp->memzones = memzone_pool_in_use();
}

static struct gr_api_out channel_stats(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_shm_stats_resp *resp = malloc(sizeof(*resp));

	(void)request;
	(void)len;
	(void)ctx;
	if (resp == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	channel_stats_fill(resp);
	return gr_api_out(0, sizeof(*resp), resp);
}

static struct gr_api_out channel_list(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_shm_channel_info info;
	struct channel *ch;
	int ret = 0;

	(void)request;
	(void)len;
	rcu_read_lock();
	cds_list_for_each_entry_rcu (ch, &registry, node) {
		memset(&info, 0, sizeof(info));
		snprintf(info.name, sizeof(info.name), "%s", ch->name);
		info.backing = ch->mem.backing;
		info.poller = ch->poller;
		info.client_pid = ch->ctx.peer_pid;
		info.state = atomic_load_explicit(&ch->state, memory_order_relaxed);
		channel_counters(ch, &info.counters);
		ret = gr_api_send(ctx, sizeof(info), &info);
		if (ret < 0)
			break;
	}
	rcu_read_unlock();
	if (ret < 0)
		return gr_api_out(-ret, 0, NULL);
	return gr_api_out(0, 0, NULL);
}

bool channel_of_client(const struct gr_api_ctx *sock_ctx, struct gr_shm_client_info *info) {
	const struct channel *ch = sock_ctx->lease_arg;

	if (sock_ctx->lease_lost != channel_detach)
		return false;
	snprintf(info->channel, sizeof(info->channel), "%s", ch->name);
	info->backing = ch->mem.backing;
	info->poller = ch->poller;
	info->channel_state = atomic_load_explicit(&ch->state, memory_order_relaxed);
	channel_counters(ch, &info->channel_counters);
	return true;
}

// Registered by gr_api_server_start() (api.h).
static struct gr_api_handler handlers_channel_array[] = {
	GR_API_HANDLER_INIT(GR_SHM_ATTACH, channel_attach),
	GR_API_HANDLER_INIT(GR_SHM_DETACH, channel_give_back),
	GR_API_HANDLER_INIT(GR_SHM_STATS, channel_stats),
	GR_API_HANDLER_INIT(GR_SHM_CHANNEL_LIST, channel_list),
};
API_HANDLER_TABLE(handlers_channel, handlers_channel_array);

int channel_module_init(struct event_base *base) {
	(void)base;
	rcu_register_thread();
	for (unsigned i = 0; i < GR_API_SERVER_MAX_POLLERS; i++)
		CDS_INIT_LIST_HEAD(&poller_channels[i]);
	slow_limit_cycles = rte_get_tsc_hz() / 1000 * CHANNEL_SLOW_LIMIT_MS;
	if (!server_conf.shm_enabled) {
		LOG(INFO, "shared-memory channels off (conf.shm_enabled): socket only");
		return 0;
	}
	if (server_conf.memzones)
		memzone_pool_init();
	server_state.memzone_channels = server_conf.memzones ? memzone_pool.n_zones : 0;
	return poller_start(server_conf.pollers, server_conf.spin_us);
}

void channel_module_fini(void) {
	struct channel *ch, *tmp;

	// Connections are closed first (each detaching its channel); detach
	// whatever is left, then stop the pollers and wait for the frees.
	cds_list_for_each_entry_safe (ch, tmp, &registry, node)
		channel_end(ch, END_CUT);
	poller_stop();
	for (unsigned i = 0; i < GR_API_SERVER_MAX_POLLERS; i++) {
		free(poller_views[i].slots);
		memset(&poller_views[i], 0, sizeof(poller_views[i]));
	}
	rcu_barrier();
	memzone_pool_fini();
	rcu_unregister_thread();
}
