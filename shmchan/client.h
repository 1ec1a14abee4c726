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

struct shmchan_client {
	struct shmchan_ctrl *ctrl;
	struct rte_ring *req_ring; // we are its single producer
	struct rte_ring *resp_ring; // we are its single consumer
	void *map; // our mapping of the memfd; NULL for the memzone backing
	size_t map_len;
	int mem_fd; // -1 for the memzone backing
	int req_fd; // the daemon's doorbell: we ring it
	int resp_fd; // our doorbell (our end of a socketpair): we sleep on it
	bool unflushed; // enqueued since the last flush (sending thread)
	// The request ring's consumer tail as last read (sending thread): read
	// again only when a frame does not fit by it.
	uint32_t req_cons;
	// The response ring's producer tail as last read (receiving thread):
	// read again only when the messages up to it are taken, so that a burst
	// of responses costs one transfer of the daemon's index line.
	uint32_t resp_tail;
};
