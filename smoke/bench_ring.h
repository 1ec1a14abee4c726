// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The raw rte_ring side of the references, shared by ref_bench's ring-* tests
// and ping2_perf --beside-ring: whole frames of cells in and out of an SPSC
// ring with the elem functions, spinning with rte_pause() while the ring is
// full or empty, and the frame length a frame starts with.

#pragma once

#include <region.h>

#include <rte_pause.h>
#include <rte_ring_elem.h>

#include <stdint.h>
#include <string.h>

static inline void bench_ring_put(struct rte_ring *r, const uint8_t *frame, unsigned cells) {
	while (rte_ring_enqueue_bulk_elem(r, frame, SHMCHAN_CELL_SIZE, cells, NULL) == 0)
		rte_pause();
}

static inline void bench_ring_get(struct rte_ring *r, uint8_t *frame, unsigned cells) {
	while (rte_ring_dequeue_bulk_elem(r, frame, SHMCHAN_CELL_SIZE, cells, NULL) == 0)
		rte_pause();
}

static inline uint32_t bench_frame_len(const uint8_t *frame) {
	uint32_t len;

	memcpy(&len, frame, sizeof(len));
	return len;
}
