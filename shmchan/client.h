// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Internal: the client's private state of one channel. In a header (not in
// client.c) only so that the unit tests can start the ring indices near
// 2^32 and check the client keeps working across their wrap.

#pragma once

#include "region.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The client's view of one ring. The geometry is copied at open from the
// geometry the daemon sent (and shmchan_geometry_check() passed), never read
// back from the shared rte_ring header: whoever else writes into the region
// (a daemon bug, a stale process, a stray pointer) cannot move the client's
// copies out of the cell array. Our own index is kept here too: published
// to the region, never read back from it.
struct client_ring {
	struct rte_ring *shared; // header in the region: we touch only the head/tail indices
	uint8_t *cells; // first cell, right after the shared header
	uint32_t size; // cells, a power of two
	uint32_t mask; // size - 1
	uint32_t capacity; // size - 1, as rte_ring without RING_F_EXACT_SZ
	// Our index: the producer position on the request ring, the consumer
	// position on the response ring.
	uint32_t pos;
	// The request ring's consumer tail as last read, read again only when a
	// frame does not fit by it (unused on the response ring, whose frames
	// are published by their length words).
	uint32_t peer;
	// Messages sent (request ring) or taken (response ring), wrapping:
	// what shmchan_client_rings_since() counts.
	uint32_t msgs;
};

// Aligned to a cache line, its size a multiple of one: shmchan_client_open()
// allocates it with aligned_alloc(), which wants both.
struct shmchan_client {
	alignas(SHMCHAN_CACHE_LINE) struct shmchan_ctrl *ctrl;
	struct client_ring req; // we are its single producer
	struct client_ring resp; // we are its single consumer
	void *map; // our mapping of the memfd; NULL for the memzone backing
	size_t map_len;
	int mem_fd; // -1 for the memzone backing
	int req_fd; // the daemon's doorbell: we ring it
	int resp_fd; // our doorbell (our end of a socketpair): we sleep on it
	bool unflushed; // enqueued since the last flush
	uint32_t generation; // of the region when we opened it: our lease
	// The value of the region's client_cpu we stored last (written only
	// when it changes; never read back from the region).
	uint32_t cpu_published;
	// Our consumer index of the response ring when shmchan_client_room_made()
	// last rang the daemon.
	uint32_t room_rung_pos;
};
_Static_assert(sizeof(struct shmchan_client) % SHMCHAN_CACHE_LINE == 0, "aligned_alloc() size");
