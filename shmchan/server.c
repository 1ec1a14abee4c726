// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The daemon's end of a channel. It trusts nothing in the region: a client
// can rewrite any byte of it at any moment. So it never calls the rte_ring
// enqueue or dequeue functions, which read size, mask and capacity from the
// shared ring header; it runs its own single-consumer (request ring) and
// single-producer (response ring) code, byte-compatible with rte_ring's
// layout, with the geometry and its own index kept in private memory
// (struct ring_view). From the region it reads only the length word of the
// frame at its request index (a frame is published by its length: layout
// version 5, shmchan_frame_publish()) and the client's consumer tail of the
// response ring, each once per use, and checks them before use.

#include "server.h"
#include "shmchan_probes.h"

#include <rte_ring.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

// rte_ring names, for rte_ring_dump() and debuggers only: rte_ring_init()
// registers nothing, so every region can use the same two.
#define REQ_RING_NAME "req"
// The poller is the only writer of a channel's counters; the stats handlers
// read them from other threads. A relaxed atomic store keeps those reads
// whole and costs what a plain store costs.
#define STAT_ADD(field, n) __atomic_store_n(&(field), (field) + (n), __ATOMIC_RELAXED)
#define RESP_RING_NAME "resp"

static void ring_view_init(struct ring_view *v, struct rte_ring *shared, uint32_t ring_cells) {
	v->shared = shared;
	v->cells = shmchan_ring_cells(shared);
	v->size = ring_cells;
	v->mask = ring_cells - 1;
	v->capacity = ring_cells - 1;
	v->pos = 0;
	v->published = 0;
	v->peer = 0;
}

static size_t ring_bytes(const struct ring_view *v) {
	return (size_t)v->size * SHMCHAN_CELL_SIZE;
}

// Copy n bytes out of the cells, from byte_off (< ring_bytes) on, wrapping
// at the end of the cell array. n is below ring_bytes: one wrap at most.
static void ring_copy_out(const struct ring_view *v, size_t byte_off, void *dst, size_t n) {
	size_t first = ring_bytes(v) - byte_off;

	if (first > n)
		first = n;
	shmchan_copy(dst, v->cells + byte_off, first);
	if (n > first)
		shmchan_copy((uint8_t *)dst + first, v->cells, n - first);
}

// Copy n bytes into the cells at byte_off (< ring_bytes), wrapping at the
// end. Returns the byte offset after them. n is below ring_bytes.
static size_t ring_copy_in(const struct ring_view *v, size_t byte_off, const void *src, size_t n) {
	size_t first = ring_bytes(v) - byte_off;

	if (first > n)
		first = n;
	if (first > 0)
		shmchan_copy(v->cells + byte_off, src, first);
	if (n > first)
		shmchan_copy(v->cells, (const uint8_t *)src + first, n - first);
	byte_off += n;
	if (byte_off >= ring_bytes(v))
		byte_off -= ring_bytes(v);
	return byte_off;
}

// The response doorbell: a Unix stream socketpair. We ring it with
// send(MSG_DONTWAIT) on our own end, whose open file description no client
// ever holds: a client can clear O_NONBLOCK on its end, fill it, or close it,
// and our send still cannot block (an eventfd, whose one description we would
// share with the client, lets it clear O_NONBLOCK and saturate the counter:
// our next write would block the poller for ever). A full send buffer means
// the client has unread rings, so it is readable anyway. Our end is shut for
// reading, so the client cannot queue bytes to it either (its sends fail with
// EPIPE).
static int response_doorbell_create(struct shmchan_server *s, const char *name) {
	int pair[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) < 0)
		return shmchan_fail(-errno, "channel %s: socketpair: %s", name, strerror(errno));
	s->resp_ring_fd = pair[0];
	s->resp_fd = pair[1];
	if (shutdown(s->resp_ring_fd, SHUT_RD) < 0)
		return shmchan_fail(
			-errno,
			"channel %s: shutdown of the doorbell's reading side: %s",
			name,
			strerror(errno)
		);
	return 0;
}

int shmchan_server_create(
	const struct shmchan_mem *mem,
	const struct shmchan_geometry *g,
	struct shmchan_server **out
) {
	uint8_t *base = mem->base;
	struct rte_ring *req, *resp;
	struct shmchan_server *s;
	struct shmchan_ctrl *ctrl;
	ssize_t dpdk_ring_size;
	int ret;

	ret = shmchan_geometry_check(g);
	if (ret < 0)
		return ret;
	if (base == NULL || (uintptr_t)base % SHMCHAN_CACHE_LINE != 0)
		return shmchan_fail(
			-EINVAL,
			"region %s at %p is not cache-line aligned",
			mem->name,
			base
		);
	if (mem->size < g->region_size)
		return shmchan_fail(
			-EINVAL,
			"region %s of %zu bytes, the layout needs %" PRIu64,
			mem->name,
			mem->size,
			g->region_size
		);
	// The client computes ring sizes without DPDK (shmchan_ring_memsize);
	// refuse to lay out a region if this DPDK disagrees with it.
	dpdk_ring_size = rte_ring_get_memsize_elem(SHMCHAN_CELL_SIZE, g->ring_cells);
	if (dpdk_ring_size < 0 || (uint64_t)dpdk_ring_size != shmchan_ring_memsize(g->ring_cells))
		return shmchan_fail(
			-EINVAL,
			"DPDK's ring of %" PRIu32
			" cells takes %zd bytes, the layout assumes %" PRIu64,
			g->ring_cells,
			dpdk_ring_size,
			shmchan_ring_memsize(g->ring_cells)
		);

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return shmchan_fail(-ENOMEM, "channel %s: out of memory", mem->name);
	s->req_fd = -1;
	s->resp_fd = -1;
	s->resp_ring_fd = -1;

	// Wipe everything: a memzone may come back from an earlier client, whose
	// messages the next one must not read.
	memset(base, 0, g->region_size);
	ctrl = (struct shmchan_ctrl *)base;
	ctrl->magic = SHMCHAN_MAGIC;
	ctrl->layout_version = SHMCHAN_LAYOUT_VERSION;
	ctrl->cell_size = SHMCHAN_CELL_SIZE;
	ctrl->ring_cells = g->ring_cells;
	ctrl->region_size = g->region_size;
	ctrl->req_ring_off = g->req_ring_off;
	ctrl->resp_ring_off = g->resp_ring_off;
	ctrl->cache_line = SHMCHAN_CACHE_LINE;
	ctrl->generation = g->generation;
	s->generation = g->generation;

	req = (struct rte_ring *)(base + g->req_ring_off);
	resp = (struct rte_ring *)(base + g->resp_ring_off);
	ret = rte_ring_init(req, REQ_RING_NAME, g->ring_cells, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ret == 0)
		ret = rte_ring_init(
			resp,
			RESP_RING_NAME,
			g->ring_cells,
			RING_F_SP_ENQ | RING_F_SC_DEQ
		);
	if (ret < 0) {
		ret = shmchan_fail(ret, "channel %s: rte_ring_init: %s", mem->name, strerror(-ret));
		goto err;
	}
	ring_view_init(&s->req, req, g->ring_cells);
	ring_view_init(&s->resp, resp, g->ring_cells);

	// Armed from the start: the daemon is asleep on this channel until its
	// poller first serves it, so the client's first request rings the bell.
	ctrl->daemon_sleeping = SHMCHAN_WAIT_REQUEST;
	ctrl->client_sleeping = 0;
	ctrl->daemon_cpu = SHMCHAN_CPU_UNKNOWN;
	ctrl->host_load = 0;
	ctrl->client_cpu = SHMCHAN_CPU_UNKNOWN;

	// The request doorbell: an eventfd the client writes and we only wait
	// on, with edge-triggered epoll (every client write is a new edge), so
	// we never read or write it and its file status flags, which the client
	// shares, mean nothing to us.
	s->req_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->req_fd < 0) {
		ret = shmchan_fail(-errno, "channel %s: eventfd: %s", mem->name, strerror(errno));
		goto err;
	}
	ret = response_doorbell_create(s, mem->name);
	if (ret < 0)
		goto err;

	// Release: a stale client of a recycled zone that sees UP sees the wipe
	// and the new generation before it, and fails its lease check.
	__atomic_store_n(&ctrl->state, SHMCHAN_STATE_UP, __ATOMIC_RELEASE);
	s->ctrl = ctrl;
	*out = s;
	return 0;

err:
	shmchan_server_destroy(s);
	return ret;
}

void shmchan_server_destroy(struct shmchan_server *s) {
	if (s == NULL)
		return;
	if (s->req_fd >= 0)
		close(s->req_fd);
	if (s->resp_fd >= 0)
		close(s->resp_fd);
	if (s->resp_ring_fd >= 0)
		close(s->resp_ring_fd);
	free(s);
}

void shmchan_server_detach(struct shmchan_server *s) {
	// No ordering needed: a client that sees DETACHED reads nothing more
	// from the region. What keeps a stale client out of a region given to
	// another is that the daemon does not give it away while that client may
	// still run (server/channel_memzone.c); this store only makes it fail at its next
	// operation instead of writing where nobody reads.
	__atomic_store_n(&s->ctrl->state, SHMCHAN_STATE_DETACHED, __ATOMIC_RELAXED);
}

int shmchan_server_req_fd(const struct shmchan_server *s) {
	return s->req_fd;
}

int shmchan_server_resp_fd(const struct shmchan_server *s) {
	return s->resp_fd;
}

// Hand the request cells taken so far back to the client.
static void request_cells_free(struct ring_view *v) {
	if (v->published == v->pos)
		return;
	// Release: our copies out of the cells are done before the client sees
	// them free and overwrites them.
	__atomic_store_n(&v->shared->cons.head, v->pos, __ATOMIC_RELEASE);
	__atomic_store_n(&v->shared->cons.tail, v->pos, __ATOMIC_RELEASE);
	v->published = v->pos;
}

int shmchan_server_recv(struct shmchan_server *s, void *buf, size_t buf_len) {
	struct ring_view *v = &s->req;
	uint32_t len, cells;
	size_t max_len, frame_off;

	// The frame's length at our index publishes it. One load into a private
	// variable, checked and used from there: the client may rewrite the
	// cell meanwhile, and a second read of it could return another length
	// than the one checked (double fetch).
	len = shmchan_frame_len_load(v->cells, v->mask, v->pos);
	if (len == 0)
		return 0;
	frame_off = (size_t)(v->pos & v->mask) * SHMCHAN_CELL_SIZE;
	max_len = buf_len < SHMCHAN_MSG_MAX ? buf_len : SHMCHAN_MSG_MAX;
	if (len < SHMCHAN_MSG_MIN || len > max_len)
		return shmchan_fail(
			-EBADMSG,
			"request ring: frame length %" PRIu32 " outside [%u, %zu]",
			len,
			SHMCHAN_MSG_MIN,
			max_len
		);
	// Within SHMCHAN_MSG_MAX: the frame's cells fit the ring, and the copy
	// reads none outside it (ring_copy_out() wraps).
	cells = SHMCHAN_MSG_CELLS(len);

	ring_copy_out(v, frame_off + SHMCHAN_FRAME_HDR, buf, len);
	v->pos += cells;
	s->unflushed = true;
	// The cells go back to the client at the next flush; those of a large
	// message at once, so that the client can write its next request while
	// this one is handled (beside a copy of 4 KiB or more, the store of the
	// index costs nothing).
	if (cells >= SERVER_FREE_NOW_CELLS)
		request_cells_free(v);

	STAT_ADD(s->stats.requests, 1);
	STAT_ADD(s->stats.req_bytes, len);
	return (int)len;
}

bool shmchan_server_has_request(const struct shmchan_server *s) {
	return shmchan_frame_len_load(s->req.cells, s->req.mask, s->req.pos) != 0;
}

int shmchan_server_idle_check(const struct shmchan_server *s) {
	const struct ring_view *v = &s->req;
	uint32_t magic = __atomic_load_n(&s->ctrl->magic, __ATOMIC_RELAXED);
	uint32_t generation = __atomic_load_n(&s->ctrl->generation, __ATOMIC_RELAXED);
	uint32_t tail = __atomic_load_n(&v->shared->prod.tail, __ATOMIC_RELAXED);

	if (magic != SHMCHAN_MAGIC || generation != s->generation)
		return shmchan_fail(
			-EBADMSG,
			"control block rewritten: magic %#" PRIx32 ", generation %" PRIu32
			" (set to %#x, %" PRIu32 ")",
			magic,
			generation,
			SHMCHAN_MAGIC,
			s->generation
		);
	// The client stores its index after each frame's length: ours may be
	// ahead of it by the last frame taken, at most the longest one; the
	// client's ahead of ours by at most the ring's capacity (frames not
	// taken yet). Unsigned differences: anything else is a huge distance.
	if (tail - v->pos > v->capacity && v->pos - tail > SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MAX))
		return shmchan_fail(
			-EBADMSG,
			"request ring: producer index %" PRIu32 ", ours %" PRIu32
			" (capacity %" PRIu32 ")",
			tail,
			v->pos,
			v->capacity
		);
	return 0;
}

// Store the response ring's producer index up to what was enqueued since the
// last time: prod.head, then prod.tail, as rte_ring keeps them. The client
// reads neither (each frame is published by its length, at enqueue): they
// are there for tools that dump the ring, and cost a store to a line no one
// else reads.
static void response_publish(struct ring_view *v) {
	if (v->published == v->pos)
		return;
	__atomic_store_n(&v->shared->prod.head, v->pos, __ATOMIC_RELEASE);
	__atomic_store_n(&v->shared->prod.tail, v->pos, __ATOMIC_RELEASE);
	v->published = v->pos;
}

// Publish the response held (shmchan_server_enqueue()), and with it those
// enqueued after it, whose lengths are stored already.
static void response_release(struct shmchan_server *s) {
	if (s->held_len == 0)
		return;
	shmchan_frame_publish(s->resp.cells, s->resp.mask, s->held_pos, s->held_len);
	s->held_len = 0;
}

void shmchan_server_flush(struct shmchan_server *s) {
	static const uint8_t ring = 1;
	struct ring_view *req = &s->req;
	ssize_t ret;

	if (!s->unflushed)
		return;
	s->unflushed = false;
	response_release(s);
	response_publish(&s->resp);
	request_cells_free(req);

	// Full fence between our publishing stores (the responses' lengths, the
	// held one's last, and the request ring's cons.tail) and our load of
	// client_sleeping. The client arms with the mirror sequence: store
	// client_sleeping, fence, load the word it waits on. Without this fence
	// our load could complete before those stores are visible, the client's
	// re-check could miss them while we miss its flag, and it would sleep
	// on a non-empty response ring or a request ring with room (lost
	// wake-up). A store then a load: needed on x86 too. One fence per
	// batch, not per message: a fence waits for every store before it,
	// cells included, to leave the store buffer.
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->ctrl->client_sleeping, __ATOMIC_RELAXED) == 0)
		return;
	STAT_ADD(s->stats.doorbells_rung, 1);
	// MSG_DONTWAIT: never blocks, whatever the flags of any description.
	// EAGAIN: our send buffer is full of rings the client has not read, so
	// it is readable (awake) anyway. EPIPE: the client shut down or closed
	// its end, and only it is left without wake-ups (MSG_NOSIGNAL: no
	// SIGPIPE). Nothing else can fail on a connected socket of ours.
	ret = send(s->resp_ring_fd, &ring, sizeof(ring), MSG_DONTWAIT | MSG_NOSIGNAL);
	SHMCHAN_PROBE(client_doorbell, s, ret);
	(void)ret;
}

// Read the client's consumer tail of the response ring into v->peer, after
// checking it: the client only moves it forward, from the value read last up
// to our index. Returns 0, or -EBADMSG if it moved backwards or past our
// index (a consumer that takes what was never published).
static int response_tail_load(struct ring_view *v) {
	// Acquire pairs with the client's release of cons.tail: its copies out
	// of the cells it freed are done before we overwrite them.
	uint32_t cons_tail = __atomic_load_n(&v->shared->cons.tail, __ATOMIC_ACQUIRE);

	// Unsigned: a tail behind v->peer is a huge distance, past pos - peer.
	if (cons_tail - v->peer > v->pos - v->peer)
		return shmchan_fail(
			-EBADMSG,
			"response ring: consumer tail %" PRIu32 " outside [%" PRIu32 ", %" PRIu32
			"] (the client had taken up to the first, we published up to the second)",
			cons_tail,
			v->peer,
			v->pos
		);
	v->peer = cons_tail;
	return 0;
}

void shmchan_server_count_overflow(struct shmchan_server *s) {
	STAT_ADD(s->stats.overflows, 1);
}

int shmchan_server_resp_taken(struct shmchan_server *s) {
	int ret = response_tail_load(&s->resp);

	if (ret < 0)
		return ret;
	ret = s->resp.peer != s->resp_taken_mark;
	s->resp_taken_mark = s->resp.peer;
	return ret;
}

int shmchan_server_enqueue(
	struct shmchan_server *s,
	const void *hdr,
	size_t hdr_len,
	const void *payload,
	size_t payload_len
) {
	static const uint8_t zeros[SHMCHAN_CELL_SIZE];
	struct ring_view *v = &s->resp;
	uint32_t used, cells;
	size_t len, off, frame_bytes;
	long msg_len;
	int ret;

	if (!shmchan_msg_len_ok(hdr_len, payload_len)) {
		msg_len = shmchan_msg_len(hdr_len, payload_len, "response");
		return msg_len < 0 ? (int)msg_len : -EINVAL;
	}
	len = hdr_len + payload_len;
	cells = SHMCHAN_MSG_CELLS(len);

	// Room by the consumer tail read last time (checked then, and the
	// client only moves it forward); read the client's cache line again only
	// when the message does not fit by it.
	used = v->pos - v->peer;
	if (cells > v->capacity - used) {
		ret = response_tail_load(v);
		if (ret < 0)
			return ret;
		used = v->pos - v->peer;
		if (cells > v->capacity - used)
			return -ENOBUFS;
	}

	frame_bytes = (size_t)cells * SHMCHAN_CELL_SIZE;
	off = (size_t)(v->pos & v->mask) * SHMCHAN_CELL_SIZE;
	// The frame with its length last, which publishes it to the client
	// polling that word; the producer index follows at the flush.
	shmchan_frame_terminate(v->cells, v->mask, v->pos, cells);
	if (hdr_len == SHMCHAN_MSG_MIN && off + frame_bytes <= ring_bytes(v)) {
		shmchan_frame_write(v->cells + off, hdr, payload, payload_len, frame_bytes);
	} else {
		size_t rest = ring_copy_in(v, off + SHMCHAN_FRAME_HDR, hdr, hdr_len);
		rest = ring_copy_in(v, rest, payload, payload_len);
		ring_copy_in(v, rest, zeros, frame_bytes - SHMCHAN_FRAME_HDR - len);
	}
	// Published at once when no request waits (a call, the last of a
	// batch), so that the client takes it while we look for the next. With
	// requests waiting, the first response is held, and the client sees it
	// and those after it together (at the flush, when no request waits any
	// more, or past SHMCHAN_RESP_HOLD_CELLS): the client polls the cell
	// after the last response it took, and a response published in a line
	// we write on would take the line back and forth for each one.
	if (s->held_len != 0) {
		shmchan_frame_publish(v->cells, v->mask, v->pos, (uint32_t)len);
	} else {
		s->held_pos = v->pos;
		s->held_len = (uint32_t)len;
	}
	v->pos += cells;
	s->unflushed = true;
	if (!shmchan_server_has_request(s) || v->pos - s->held_pos >= SHMCHAN_RESP_HOLD_CELLS)
		response_release(s);

	STAT_ADD(s->stats.responses, 1);
	STAT_ADD(s->stats.resp_bytes, len);
	return 0;
}

int shmchan_server_send(
	struct shmchan_server *s,
	const void *hdr,
	size_t hdr_len,
	const void *payload,
	size_t payload_len
) {
	int ret = shmchan_server_enqueue(s, hdr, hdr_len, payload, payload_len);

	if (ret == 0)
		shmchan_server_flush(s);
	return ret;
}

static void daemon_mark(struct shmchan_server *s, uint32_t why) {
	__atomic_store_n(&s->ctrl->daemon_sleeping, why, __ATOMIC_RELAXED);
	STAT_ADD(s->stats.sleeps, 1);
}

static void daemon_arm(struct shmchan_server *s, uint32_t why) {
	daemon_mark(s, why);
	// Full fence between this flag store and the caller's re-check (a load
	// of the length word at our request index, or of the response ring's
	// cons.tail by a retried send): the client may have published a request
	// or taken responses between our last look and the flag store, and read
	// the flag as 0. The fence keeps our re-check from completing before the
	// flag is visible, so either the client sees the flag and rings, or we
	// see what it stored.
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void shmchan_server_doorbell_arm(struct shmchan_server *s) {
	daemon_arm(s, SHMCHAN_WAIT_REQUEST);
}

void shmchan_server_doorbell_arm_room(struct shmchan_server *s) {
	daemon_arm(s, SHMCHAN_WAIT_ROOM);
}

void shmchan_server_doorbell_mark(struct shmchan_server *s) {
	daemon_mark(s, SHMCHAN_WAIT_REQUEST);
}

void shmchan_server_doorbell_mark_room(struct shmchan_server *s) {
	daemon_mark(s, SHMCHAN_WAIT_ROOM);
}

void shmchan_server_doorbell_disarm(struct shmchan_server *s) {
	__atomic_store_n(&s->ctrl->daemon_sleeping, 0, __ATOMIC_RELAXED);
}

void shmchan_server_cpu_publish(struct shmchan_server *s, int cpu) {
	uint32_t hint = cpu >= 0 ? (uint32_t)cpu + 1 : SHMCHAN_CPU_UNKNOWN;

	// Compared with our own copy: the line is the client's to read, and a
	// store only when the value changes keeps it in the client's cache.
	if (hint == s->cpu_published)
		return;
	s->cpu_published = hint;
	__atomic_store_n(&s->ctrl->daemon_cpu, hint, __ATOMIC_RELAXED);
}

void shmchan_server_host_publish(struct shmchan_server *s, uint32_t word) {
	// As the CPU: a store only when the word changed (once a second at
	// most, and never on a busy channel's path).
	if (word == s->host_published)
		return;
	s->host_published = word;
	__atomic_store_n(&s->ctrl->host_load, word, __ATOMIC_RELAXED);
}

void shmchan_server_peer(const struct shmchan_server *s, bool tail, struct shmchan_peer *peer) {
	uint32_t cpu = __atomic_load_n(&s->ctrl->client_cpu, __ATOMIC_RELAXED);

	// Hints, read with plain loads and never checked against anything but
	// themselves: a value that is no CPU number of this machine is "not
	// known", and nothing here moves our indices or copies.
	peer->cpu = cpu != SHMCHAN_CPU_UNKNOWN && cpu <= SHMCHAN_CPU_HINT_MAX ? (int)cpu - 1 : -1;
	uint32_t asleep = __atomic_load_n(&s->ctrl->client_sleeping, __ATOMIC_RELAXED);

	peer->sleeping = asleep != 0;
	peer->in_loop = asleep == SHMCHAN_CLIENT_ASLEEP_IN_LOOP;
	peer->taken = 0;
	peer->all_taken = false;
	if (!tail)
		return;
	// The client's consumer tail as it is, unchecked (response_tail_load()
	// checks the value our enqueues use): only compared with the last one
	// seen, and with what we published.
	peer->taken = __atomic_load_n(&s->resp.shared->cons.tail, __ATOMIC_RELAXED);
	peer->all_taken = peer->taken == s->resp.pos;
}

const struct shmchan_server_stats *shmchan_server_stats(const struct shmchan_server *s) {
	return &s->stats;
}
