// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench lines-*: only the cache-line transfers of the rte_ring layout,
// the frames written into and copied out of a ring's cells, the index
// apart (lines-apart) or inside the frame (lines-inline) (ref_bench.h).

#include "ref_bench.h"

#include <rte_pause.h>

#include <string.h>

// lines-*: a request id of 0 tells the follower to stop (never a client's).
#define LINES_STOP_ID 0

// Where a lines-* side is in one direction's cells: the ring's cell array
// and its prod.tail (lines-apart publishes there), and its own index.
struct lines_dir {
	uint8_t *cells;
	uint32_t *index;
	uint32_t pos;
};

// The leader's and the follower's own, each in its process (the fork copies
// them): lines-* use the cells and prod.tail of ctx's two rte_rings, raw.
static struct lines_dir lines_req, lines_resp;

static void lines_dir_init(struct lines_dir *d, struct rte_ring *r) {
	d->cells = (uint8_t *)&r[1];
	d->index = (uint32_t *)&r->prod.tail;
	d->pos = 0;
}

void lines_setup(struct ctx *c) {
	lines_dir_init(&lines_req, c->req_ring);
	lines_dir_init(&lines_resp, c->resp_ring);
}

// Copy a frame of c->cells cells between the cells at d->pos and buf,
// wrapping at the end of the cell array, as a ring does.
static void lines_copy(const struct ctx *c, const struct lines_dir *d, uint8_t *buf, bool in) {
	size_t off = (size_t)(d->pos & (SHMCHAN_RING_CELLS - 1)) * SHMCHAN_CELL_SIZE;
	size_t n = (size_t)c->cells * SHMCHAN_CELL_SIZE;
	size_t end = (size_t)SHMCHAN_RING_CELLS * SHMCHAN_CELL_SIZE;
	size_t first = n < end - off ? n : end - off;

	if (in) {
		memcpy(d->cells + off, buf, first);
		memcpy(d->cells, buf + first, n - first);
	} else {
		memcpy(buf, d->cells + off, first);
		memcpy(buf + first, d->cells, n - first);
	}
}

// lines-apart: the frame's cells, then the index on a line of its own
// (rte_ring's layout, without its functions: no reads of the peer's index;
// spins with rte_pause(), as the rings and the channel do).
static void lines_apart_send(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	lines_copy(c, d, frame, true);
	d->pos += c->cells;
	// Release: the cells are written before the reader sees the index.
	__atomic_store_n(d->index, d->pos, __ATOMIC_RELEASE);
}

static void lines_apart_recv(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	// Acquire pairs with the release above.
	while (__atomic_load_n(d->index, __ATOMIC_ACQUIRE) == d->pos)
		rte_pause();
	lines_copy(c, d, frame, false);
	d->pos += c->cells;
}

// lines-inline: the index inside the frame's first cell (its first word is
// a sequence, the frame's index + 1, in place of the length), stored last.
static void lines_inline_send(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	uint32_t seq = d->pos + 1;
	uint32_t *word =
		(uint32_t
			 *)(d->cells + (size_t)(d->pos & (SHMCHAN_RING_CELLS - 1)) * SHMCHAN_CELL_SIZE);

	// The copy writes 0 where the sequence goes: not yet published.
	memset(frame, 0, sizeof(seq));
	lines_copy(c, d, frame, true);
	// Release: the rest of the frame is written before the reader sees
	// the sequence.
	__atomic_store_n(word, seq, __ATOMIC_RELEASE);
	d->pos += c->cells;
}

static void lines_inline_recv(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	uint32_t *word =
		(uint32_t
			 *)(d->cells + (size_t)(d->pos & (SHMCHAN_RING_CELLS - 1)) * SHMCHAN_CELL_SIZE);

	// Acquire pairs with the release above.
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != d->pos + 1)
		rte_pause();
	lines_copy(c, d, frame, false);
	d->pos += c->cells;
}

void lines_apart_leader_op(struct ctx *c) {
	lines_apart_send(c, &lines_req, c->tx_frame);
	lines_apart_recv(c, &lines_resp, c->rx_frame);
}

void lines_inline_leader_op(struct ctx *c) {
	lines_inline_send(c, &lines_req, c->tx_frame);
	lines_inline_recv(c, &lines_resp, c->rx_frame);
}

// Both: a frame whose second word (the request id of the frame ref_bench
// sends) is LINES_STOP_ID stops the follower; the leader's requests carry
// id 1. (lines-inline keeps no length: its first word is the sequence.)
static void lines_stop_frame(uint8_t *frame) {
	uint32_t stop = LINES_STOP_ID;
	memcpy(frame + sizeof(uint32_t), &stop, sizeof(stop));
}

void lines_apart_leader_stop(struct ctx *c) {
	lines_stop_frame(c->tx_frame);
	lines_apart_send(c, &lines_req, c->tx_frame);
}

void lines_inline_leader_stop(struct ctx *c) {
	lines_stop_frame(c->tx_frame);
	lines_inline_send(c, &lines_req, c->tx_frame);
}

static bool lines_is_stop(const uint8_t *frame) {
	uint32_t id;
	memcpy(&id, frame + sizeof(uint32_t), sizeof(id));
	return id == LINES_STOP_ID;
}

void lines_apart_follower(struct ctx *c) {
	uint64_t n = 0;

	for (;;) {
		lines_apart_recv(c, &lines_req, c->rx_frame);
		if (lines_is_stop(c->rx_frame))
			break;
		lines_apart_send(c, &lines_resp, c->rx_frame);
		n++;
	}
	c->sh->follower_ops = n;
}

void lines_inline_follower(struct ctx *c) {
	uint64_t n = 0;

	for (;;) {
		lines_inline_recv(c, &lines_req, c->rx_frame);
		if (lines_is_stop(c->rx_frame))
			break;
		lines_inline_send(c, &lines_resp, c->rx_frame);
		n++;
	}
	c->sh->follower_ops = n;
}
