// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Region geometry: computed by the daemon, checked by the client before it
// maps anything. Built into both the client and the server library: it uses
// only the size of struct rte_ring, no DPDK function.

#include "region.h"

#include <errno.h>
#include <inttypes.h>

static bool ring_cells_valid(uint32_t ring_cells) {
	if (ring_cells == 0 || (ring_cells & (ring_cells - 1)) != 0)
		return false;
	// rte_ring keeps one cell free: capacity is size - 1.
	if (ring_cells - 1 < SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MAX))
		return false;
	return ring_cells <= SHMCHAN_RING_CELLS_MAX;
}

static uint64_t align_up(uint64_t v, uint64_t align) {
	return (v + align - 1) & ~(align - 1);
}

int shmchan_geometry_init(struct shmchan_geometry *g, uint32_t ring_cells) {
	uint64_t ring_size = shmchan_ring_memsize(ring_cells);

	if (!ring_cells_valid(ring_cells))
		return shmchan_fail(
			-EINVAL,
			"ring of %" PRIu32 " cells: not a power of two in [%u, %u]",
			ring_cells,
			SHMCHAN_RING_CELLS,
			SHMCHAN_RING_CELLS_MAX
		);

	g->layout_version = SHMCHAN_LAYOUT_VERSION;
	g->cell_size = SHMCHAN_CELL_SIZE;
	g->ring_cells = ring_cells;
	g->req_ring_off = align_up(sizeof(struct shmchan_ctrl), SHMCHAN_CACHE_LINE);
	// ring_size is a multiple of the cache line: the response ring is aligned too.
	g->resp_ring_off = g->req_ring_off + ring_size;
	g->region_size = align_up(g->resp_ring_off + ring_size, SHMCHAN_REGION_ALIGN);
	g->generation = 0;
	return 0;
}

// True if [off, off + len) lies inside a region of region_size bytes. Written
// without off + len, which a hostile or broken geometry could make wrap.
static bool inside(uint64_t off, uint64_t len, uint64_t region_size) {
	return off <= region_size && len <= region_size - off;
}

int shmchan_geometry_check(const struct shmchan_geometry *g) {
	uint64_t ring_size;

	if (g->layout_version != SHMCHAN_LAYOUT_VERSION)
		return shmchan_fail(
			-EPROTO,
			"layout version %" PRIu32 ", this library speaks %u",
			g->layout_version,
			SHMCHAN_LAYOUT_VERSION
		);
	if (g->cell_size != SHMCHAN_CELL_SIZE)
		return shmchan_fail(
			-EINVAL,
			"cell size %" PRIu32 ", expected %u",
			g->cell_size,
			SHMCHAN_CELL_SIZE
		);
	if (!ring_cells_valid(g->ring_cells))
		return shmchan_fail(
			-EINVAL,
			"ring of %" PRIu32 " cells: not a power of two in [%u, %u]",
			g->ring_cells,
			SHMCHAN_RING_CELLS,
			SHMCHAN_RING_CELLS_MAX
		);
	if (g->region_size == 0 || g->region_size % SHMCHAN_REGION_ALIGN != 0)
		return shmchan_fail(
			-EINVAL,
			"region size %" PRIu64 " is not a positive multiple of %u",
			g->region_size,
			SHMCHAN_REGION_ALIGN
		);

	ring_size = shmchan_ring_memsize(g->ring_cells);
	if (g->req_ring_off % SHMCHAN_CACHE_LINE != 0 || g->resp_ring_off % SHMCHAN_CACHE_LINE != 0)
		return shmchan_fail(
			-EINVAL,
			"ring offsets %" PRIu64 " and %" PRIu64 " are not cache-line aligned",
			g->req_ring_off,
			g->resp_ring_off
		);
	if (g->req_ring_off < sizeof(struct shmchan_ctrl) ||
	    g->resp_ring_off < sizeof(struct shmchan_ctrl))
		return shmchan_fail(
			-EINVAL,
			"ring offsets %" PRIu64 " and %" PRIu64 " overlap the control block",
			g->req_ring_off,
			g->resp_ring_off
		);
	if (!inside(g->req_ring_off, ring_size, g->region_size) ||
	    !inside(g->resp_ring_off, ring_size, g->region_size))
		return shmchan_fail(
			-EINVAL,
			"rings at %" PRIu64 " and %" PRIu64 " of %" PRIu64
			" bytes overrun the region of %" PRIu64 " bytes",
			g->req_ring_off,
			g->resp_ring_off,
			ring_size,
			g->region_size
		);
	// Both rings are inside the region now, so these sums cannot wrap.
	if (g->req_ring_off < g->resp_ring_off + ring_size &&
	    g->resp_ring_off < g->req_ring_off + ring_size)
		return shmchan_fail(
			-EINVAL,
			"rings at %" PRIu64 " and %" PRIu64 " of %" PRIu64 " bytes overlap",
			g->req_ring_off,
			g->resp_ring_off,
			ring_size
		);
	return 0;
}

long shmchan_msg_len(size_t hdr_len, size_t payload_len, const char *what) {
	size_t len;

	if (hdr_len > SHMCHAN_MSG_MAX || payload_len > SHMCHAN_MSG_MAX - hdr_len)
		return shmchan_fail(
			-EMSGSIZE,
			"%s of %zu + %zu bytes, at most %u",
			what,
			hdr_len,
			payload_len,
			SHMCHAN_MSG_MAX
		);
	len = hdr_len + payload_len;
	if (len < SHMCHAN_MSG_MIN)
		return shmchan_fail(
			-EINVAL,
			"%s of %zu bytes, at least %u",
			what,
			len,
			SHMCHAN_MSG_MIN
		);
	return (long)len;
}
