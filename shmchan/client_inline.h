// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Internal: the client end's per-message operations, inline, for the client
// library's busy path (client/shm.c) and for shmchan/client.c, whose
// functions of the same names without _inline are these, out of line. A
// busy call's send and receive then run in the library's own functions,
// without a call per ring operation, whatever the build's link-time
// optimisation. The same loads, stores, barriers and checks as those
// functions: see shmchan.h for what each returns. Failures are reported
// out of line (their messages are long, and cold).

#pragma once

#include "client.h"
#include "shmchan.h"

#include <string.h>

// ---- Out of line, in client.c: the rare and the cold ----

// The channel is detached or given to another client: its reason, and
// -ECONNRESET.
int shmchan_client_lease_lost(const struct shmchan_client *) __attribute__((cold));
// A response frame's length is out of the framing's bounds: its reason,
// and -EBADMSG.
int shmchan_client_resp_frame_bad(uint32_t len) __attribute__((cold));
// The request ring's consumer tail is past our index: its reason, and
// -EBADMSG.
int shmchan_client_req_tail_bad(const struct shmchan_client *, uint32_t cons_tail, uint32_t used)
	__attribute__((cold));
// A response does not fit the caller's buffers: its reason, and -EMSGSIZE.
int shmchan_client_resp_too_long(uint32_t len, size_t hdr_len, size_t buf_len)
	__attribute__((cold));
// Ring the daemon's doorbell, telling it first where we run: the poller
// woken may be put on our CPU, and then should not spin there. A system
// call: out of line.
void shmchan_client_daemon_ring(struct shmchan_client *);

// ---- The frame's bytes ----

// A frame's cells, as bytes: len1 bytes at p1 up to the end of the cell
// array, then the rest at p2.
struct zc_bytes {
	uint8_t *p1;
	size_t len1;
	uint8_t *p2;
};

// The bytes of n cells of r from index head on, split where the cell array
// wraps (n is at most the ring's capacity). Private geometry only.
static inline struct zc_bytes ring_bytes(const struct client_ring *r, uint32_t head, uint32_t n) {
	uint32_t idx = head & r->mask;
	uint32_t n1 = n < r->size - idx ? n : r->size - idx;

	return (struct zc_bytes){
		r->cells + (size_t)idx * SHMCHAN_CELL_SIZE,
		(size_t)n1 * SHMCHAN_CELL_SIZE,
		r->cells,
	};
}

// Copy n bytes into a frame's cells at byte off (src NULL: zeros).
static inline void zc_write(const struct zc_bytes *z, size_t off, const void *src, size_t n) {
	size_t first = off < z->len1 ? z->len1 - off : 0;

	if (first > n)
		first = n;
	if (first > 0) {
		if (src != NULL)
			shmchan_copy(z->p1 + off, src, first);
		else
			memset(z->p1 + off, 0, first);
	}
	if (n > first) {
		uint8_t *dst = z->p2 + (off + first - z->len1);
		if (src != NULL)
			shmchan_copy(dst, (const uint8_t *)src + first, n - first);
		else
			memset(dst, 0, n - first);
	}
}

// Copy n bytes out of a frame's cells from byte off.
static inline void zc_read(const struct zc_bytes *z, size_t off, void *dst, size_t n) {
	size_t first = off < z->len1 ? z->len1 - off : 0;

	if (first > n)
		first = n;
	if (first > 0)
		shmchan_copy(dst, z->p1 + off, first);
	if (n > first)
		shmchan_copy((uint8_t *)dst + first, z->p2 + (off + first - z->len1), n - first);
}

// ---- The lease ----

// The lease check before each ring operation (shmchan.h): the daemon has not
// detached the channel, and the region is still of the generation we opened.
// Line 0 of the control block changes only at setup and detach, so this is a
// load from our own cache while the channel is busy.
static inline bool shmchan_client_lease_held(const struct shmchan_client *c) {
	// Acquire pairs with the release store of UP in shmchan_server_create():
	// having seen UP in a zone laid out again for another client, we see
	// its new generation too, not ours from before the wipe.
	uint32_t state = __atomic_load_n(&c->ctrl->state, __ATOMIC_ACQUIRE);

	return state == SHMCHAN_STATE_UP &&
	       __atomic_load_n(&c->ctrl->generation, __ATOMIC_RELAXED) == c->generation;
}

// ---- Requests ----

static inline __attribute__((always_inline)) int shmchan_client_enqueue_inline(
	struct shmchan_client *c,
	const void *hdr,
	size_t hdr_len,
	const void *payload,
	size_t payload_len
) {
	struct client_ring *r = &c->req;

	if (!shmchan_client_lease_held(c))
		return shmchan_client_lease_lost(c);
	if (!shmchan_msg_len_ok(hdr_len, payload_len)) {
		long msg_len = shmchan_msg_len(hdr_len, payload_len, "request");
		return msg_len < 0 ? (int)msg_len : -EINVAL;
	}
	size_t len = hdr_len + payload_len;
	unsigned cells = SHMCHAN_MSG_CELLS(len);
	size_t frame_len = (size_t)cells * SHMCHAN_CELL_SIZE;

	// rte_ring's single-producer enqueue, by hand, as the dequeue in
	// shmchan_client_recv_inline(): room by the consumer tail read last
	// (checked then), which is read again only when the frame does not fit
	// by it.
	uint32_t head = r->pos;
	if (cells > r->capacity - (head - r->peer)) {
		// Acquire pairs with the daemon's release of cons.tail: its copies
		// out of the cells it freed are done before we overwrite them.
		uint32_t cons_tail = __atomic_load_n(&r->shared->cons.tail, __ATOMIC_ACQUIRE);
		uint32_t used = head - cons_tail;
		if (used > r->capacity)
			return shmchan_client_req_tail_bad(c, cons_tail, used);
		r->peer = cons_tail;
		if (cells > r->capacity - used)
			return -ENOBUFS;
	}
	// Write the frame straight into its cells, its length last, which
	// publishes it (shmchan_frame_publish()): the daemon polls that word,
	// on a line it reads anyway, not our index. prod.head and prod.tail
	// follow, as rte_ring keeps them, for tools that dump the ring.
	struct zc_bytes z = ring_bytes(r, head, cells);
	shmchan_frame_terminate(r->cells, r->mask, head, cells);
	if (hdr_len == SHMCHAN_MSG_MIN && z.len1 == frame_len) {
		shmchan_frame_write(z.p1, hdr, payload, payload_len, frame_len);
	} else {
		zc_write(&z, SHMCHAN_FRAME_HDR, hdr, hdr_len);
		zc_write(&z, SHMCHAN_FRAME_HDR + hdr_len, payload, payload_len);
		zc_write(&z, SHMCHAN_FRAME_HDR + len, NULL, frame_len - SHMCHAN_FRAME_HDR - len);
	}
	shmchan_frame_publish(r->cells, r->mask, head, (uint32_t)len);
	head += cells;
	r->pos = head;
	r->msgs++;
	__atomic_store_n(&r->shared->prod.head, head, __ATOMIC_RELAXED);
	__atomic_store_n(&r->shared->prod.tail, head, __ATOMIC_RELEASE);
	c->unflushed = true;
	return 0;
}

static inline __attribute__((always_inline)) bool
shmchan_client_flush_inline(struct shmchan_client *c) {
	if (!c->unflushed)
		return false;
	c->unflushed = false;
	// Full fence between the enqueues' stores of the frames' lengths and our
	// load of daemon_sleeping. The daemon arms with the mirror sequence:
	// store daemon_sleeping, fence, load the length word at its index.
	// Without this fence our load could complete before our length store is
	// visible, the daemon's re-check could miss the request while we miss
	// its flag, and it would sleep with a request in the ring (lost
	// wake-up). A store then a load: needed on x86 too. Once per batch: the
	// fence waits for every store before it (the cells too) to leave the
	// store buffer.
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->ctrl->daemon_sleeping, __ATOMIC_RELAXED) == 0)
		return false;
	shmchan_client_daemon_ring(c);
	return true;
}

static inline void shmchan_client_room_check_inline(struct shmchan_client *c) {
	if (__atomic_load_n(&c->ctrl->daemon_sleeping, __ATOMIC_RELAXED) == SHMCHAN_WAIT_ROOM)
		shmchan_client_daemon_ring(c);
}

// The share of the response ring a client takes between two rings of
// shmchan_client_room_made(): an eighth. A daemon woken for less room would
// fill it and wait again at once, and each ring is a write() of the client's
// while the daemon wakes (tens of microseconds: hundreds of responses taken
// meanwhile).
#define ROOM_RING_SHARE 8

static inline void shmchan_client_room_made_inline(struct shmchan_client *c) {
	if (__atomic_load_n(&c->ctrl->daemon_sleeping, __ATOMIC_RELAXED) != SHMCHAN_WAIT_ROOM)
		return;
	if (c->resp.pos - c->room_rung_pos < c->resp.capacity / ROOM_RING_SHARE)
		return;
	c->room_rung_pos = c->resp.pos;
	shmchan_client_daemon_ring(c);
}

// ---- Responses ----

// Look at the next frame without taking it. Returns 1 and its message length
// and cells, 0 if the ring is empty (no length published at our index),
// -EBADMSG for a bad frame, -ECONNRESET if the lease is lost. Most of every
// receive, and of every look that finds the ring empty.
static inline __attribute__((always_inline)) int
shmchan_client_peek_inline(struct shmchan_client *c, uint32_t *len, uint32_t *cells) {
	struct client_ring *r = &c->resp;

	if (!shmchan_client_lease_held(c))
		return shmchan_client_lease_lost(c);
	// Our own index (we are the ring's only consumer), and the frame's
	// length there: the cell's line is the one the copy reads next, and
	// the daemon's index line is never read.
	*len = shmchan_frame_len_load(r->cells, r->mask, r->pos);
	if (*len == 0)
		return 0;
	*cells = SHMCHAN_MSG_CELLS(*len);
	// The length within the framing's bounds: its cells then fit the ring
	// (SHMCHAN_RING_CELLS).
	if (*len < SHMCHAN_MSG_MIN || *len > SHMCHAN_MSG_MAX)
		return shmchan_client_resp_frame_bad(*len);
	return 1;
}

// The cells of the frame peeked (cells of them) are taken: cons.head, then a
// release store of cons.tail, which hands them back to the daemon only once
// every copy out of them is done.
static inline __attribute__((always_inline)) void
shmchan_client_resp_release(struct shmchan_client *c, uint32_t cells) {
	struct client_ring *r = &c->resp;
	uint32_t head = r->pos + cells;

	r->pos = head;
	r->msgs++;
	__atomic_store_n(&r->shared->cons.head, head, __ATOMIC_RELAXED);
	__atomic_store_n(&r->shared->cons.tail, head, __ATOMIC_RELEASE);
}

static inline __attribute__((always_inline)) int
shmchan_client_recv_inline(struct shmchan_client *c, void *buf, size_t buf_len) {
	uint32_t len = 0, cells = 0;
	int ret = shmchan_client_peek_inline(c, &len, &cells);
	if (ret <= 0)
		return ret;
	if (len > buf_len)
		return shmchan_client_resp_too_long(len, 0, buf_len);
	// rte_ring's single-consumer dequeue, by hand, but for the frame's
	// publication (its length, not the producer tail). Same stores, same
	// order: the copy out of the cells, then cons.head, then a release
	// store of cons.tail.
	struct zc_bytes z = ring_bytes(&c->resp, c->resp.pos, cells);
	zc_read(&z, SHMCHAN_FRAME_HDR, buf, len);
	shmchan_client_resp_release(c, cells);
	return (int)len;
}

static inline __attribute__((always_inline)) int shmchan_client_recv_keyed_inline(
	struct shmchan_client *c,
	void *hdr,
	size_t hdr_len,
	uint32_t key,
	void *payload,
	size_t payload_len,
	void *stage,
	size_t stage_len,
	bool *to_payload
) {
	const struct client_ring *r = &c->resp;
	uint32_t len = 0, cells = 0, first;

	if (hdr_len < sizeof(first))
		return shmchan_fail(-EINVAL, "a header of %zu bytes holds no key", hdr_len);
	int ret = shmchan_client_peek_inline(c, &len, &cells);
	if (ret <= 0)
		return ret;
	if (len < hdr_len || len - hdr_len > stage_len)
		return shmchan_client_resp_too_long(len, hdr_len, stage_len);
	// As shmchan_client_recv_inline(): the copies out of the cells, then
	// the release of the cells.
	size_t rest = len - hdr_len;
	uint32_t idx = r->pos & r->mask;
	if (hdr_len == SHMCHAN_MSG_MIN && cells <= r->size - idx) {
		// A response header and a frame that does not wrap, as nearly
		// every one: the header is the rest of the first cell, the
		// payload starts at the second.
		const uint8_t *frame = r->cells + (size_t)idx * SHMCHAN_CELL_SIZE;

		memcpy(hdr, frame + SHMCHAN_FRAME_HDR, SHMCHAN_MSG_MIN);
		memcpy(&first, hdr, sizeof(first));
		*to_payload = first == key && rest <= payload_len;
		shmchan_copy(*to_payload ? payload : stage, frame + SHMCHAN_CELL_SIZE, rest);
	} else {
		struct zc_bytes z = ring_bytes(r, r->pos, cells);
		zc_read(&z, SHMCHAN_FRAME_HDR, hdr, hdr_len);
		memcpy(&first, hdr, sizeof(first));
		*to_payload = first == key && rest <= payload_len;
		zc_read(&z, SHMCHAN_FRAME_HDR + hdr_len, *to_payload ? payload : stage, rest);
	}
	shmchan_client_resp_release(c, cells);
	return (int)len;
}

static inline bool shmchan_client_has_response_inline(const struct shmchan_client *c) {
	if (!shmchan_client_lease_held(c))
		return true; // the caller's recv says why
	// Acquire, as in shmchan_client_peek_inline().
	return shmchan_frame_len_load(c->resp.cells, c->resp.mask, c->resp.pos) != 0;
}
