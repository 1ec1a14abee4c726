// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Internal: the daemon's private state of one channel. In a header (not in
// server.c) only so that the unit tests can start the ring indices near
// 2^32 and check the server keeps working across their wrap.

#pragma once

#include "region.h"

// A request of at least this many cells (4 KiB) has its cells handed back
// as soon as it is copied out, not at the flush that ends the batch.
#define SERVER_FREE_NOW_CELLS 256

// Responses enqueued while more requests wait are published together, at
// the latest once this many cells are held, 4 KiB: a response of 4 KiB or
// more is published at once.
#define SHMCHAN_RESP_HOLD_CELLS 256

// The daemon's view of one ring. Everything here lives in the daemon's own
// memory: the geometry is copied from the shmchan_geometry at create time,
// never read back from the shared rte_ring header (a client can rewrite
// size, mask and capacity there to send us out of bounds).
struct ring_view {
	struct rte_ring *shared; // header in the region: we touch only the head/tail indices
	uint8_t *cells; // first cell, right after the shared header
	uint32_t size; // cells, a power of two
	uint32_t mask; // size - 1
	uint32_t capacity; // size - 1, as rte_ring without RING_F_EXACT_SZ
	// Our own index: the consumer position on the request ring, the producer
	// position on the response ring. Published to the region, never read
	// back from it.
	uint32_t pos;
	// The value of pos last stored to the region, once per batch
	// (shmchan_server_flush()): the request ring's consumer index, which
	// hands the cells back to the client, and the response ring's producer
	// index, which only tools read (each response is published by its
	// length, at enqueue).
	uint32_t published;
	// The response ring's consumer tail as last read and checked, read
	// again only when the ring looks full, so that a batch costs one read
	// of the client's cache line, not one per message (unused on the
	// request ring, whose frames are published by their length words).
	uint32_t peer;
};

struct shmchan_server {
	struct shmchan_ctrl *ctrl;
	struct ring_view req; // we consume
	struct ring_view resp; // we produce
	int req_fd; // eventfd the client rings, we sleep on it
	// The response doorbell, a one-way Unix stream socketpair: the client
	// sleeps on resp_fd (passed at attach); we ring by sending a byte on
	// resp_ring_fd, our own end, which no client ever holds.
	int resp_fd;
	int resp_ring_fd;
	// The response ring's consumer tail at the last
	// shmchan_server_resp_taken(): how far the client had taken then.
	uint32_t resp_taken_mark;
	// Messages moved (either ring) since the last flush: the client may be
	// waiting for them or for the room they freed.
	bool unflushed;
	// The first response not published yet (held_len 0: none), with more
	// requests waiting behind it: its frame is written but for its length,
	// which is stored, publishing it and every response after it, when no
	// request waits any more, at the flush, or once SHMCHAN_RESP_HOLD_CELLS
	// are held (shmchan_server_enqueue()).
	uint32_t held_pos, held_len;
	// The generation written into the control block at create time, for
	// shmchan_server_idle_check().
	uint32_t generation;
	// The value of the region's daemon_cpu we stored last (written only
	// when it changes; never read back from the region).
	uint32_t cpu_published;
	uint32_t host_published; // the host_load word stored last
	struct shmchan_server_stats stats;
};
