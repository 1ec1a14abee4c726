// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Internal: the byte layout of a channel region, shared by the server side,
// the client side and the unit tests. Nothing here is a public contract; the
// layout version (SHMCHAN_LAYOUT_VERSION) changes whenever it changes, a
// field added in padding included (docs/protocol.md, "The region").
//
// Region layout (offsets only, never pointers: the daemon and the client map
// the region at different addresses):
//
//   0               struct shmchan_ctrl (control block)
//   req_ring_off    request rte_ring (client -> daemon), cache-line aligned
//   resp_ring_off   response rte_ring (daemon -> client), cache-line aligned
//   region_size     end, rounded up to SHMCHAN_REGION_ALIGN
//
// Each ring is a struct rte_ring followed by ring_cells elements of
// SHMCHAN_CELL_SIZE bytes (rte_ring_get_memsize_elem() bytes in all). A
// message is framed as a u32 frame length (the message's bytes) followed by
// the message, padded with zeros to SHMCHAN_MSG_CELLS(len) cells, enqueued
// with one bulk operation and dequeued whole.

#pragma once

#include "shmchan.h"

#include <gr_api.h>

#include <rte_ring_core.h>

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Alignment of every ring and of every field written by a different side:
// DPDK's cache line (rte_config.h: 64 bytes on x86, 128 on some arm64
// builds), the one rte_ring aligns its own fields to. It shapes the layout,
// so the region records it (shmchan_ctrl.cache_line) and a client of
// another one refuses the region.
#define SHMCHAN_CACHE_LINE RTE_CACHE_LINE_SIZE
_Static_assert(
	SHMCHAN_CACHE_LINE >= 64 && (SHMCHAN_CACHE_LINE & (SHMCHAN_CACHE_LINE - 1)) == 0,
	"a cache line is a power of two of at least 64 bytes"
);
// Regions are mapped whole pages: the memfd is mmap'ed by both sides.
#define SHMCHAN_REGION_ALIGN 4096
// Largest ring accepted by geometry init and check: 2^24 cells, 256 MiB a
// ring, far above any useful backlog, and keeps byte offsets inside 32 bits.
#define SHMCHAN_RING_CELLS_MAX (1u << 24)
// Bytes of the longest frame: frame length + SHMCHAN_MSG_MAX, in whole cells.
#define SHMCHAN_FRAME_MAX_BYTES (SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MAX) * SHMCHAN_CELL_SIZE)
_Static_assert(SHMCHAN_MSG_MIN == sizeof(struct gr_api_request), "");
_Static_assert(SHMCHAN_MSG_MIN == sizeof(struct gr_api_response), "");
_Static_assert(
	SHMCHAN_MSG_MAX ==
		sizeof(struct gr_api_response) + sizeof(struct gr_api_event) + GR_API_MAX_MSG_LEN,
	"the longest message is an event of the longest payload"
);

// Values of shmchan_ctrl.state: UP once the daemon finished laying out the
// region, DETACHED once it gave up on the channel (shmchan_server_detach()).
// Anything else (0 while a recycled zone is laid out again) is not UP.
#define SHMCHAN_STATE_UP 1
#define SHMCHAN_STATE_DETACHED 2

// Values of shmchan_ctrl.daemon_sleeping.
#define SHMCHAN_WAIT_REQUEST 1
#define SHMCHAN_WAIT_ROOM 2

// Values of shmchan_ctrl.daemon_cpu and client_cpu: the CPU number plus
// one, so that a zeroed control block says "not known".
#define SHMCHAN_CPU_UNKNOWN 0

// Values of client_sleeping: awake (0), asleep in one of the client
// library's own waits, or asleep in its caller's event loop (which never
// spins: a hint for the poller, docs/spin-budgets.md). The daemon rings
// for any value but 0.
#define SHMCHAN_CLIENT_ASLEEP 1
#define SHMCHAN_CLIENT_ASLEEP_IN_LOOP 2

// The control block at offset 0 of every region.
//
// Who writes what: the setup fields are written by the daemon in
// shmchan_server_create(), before the region is handed to the client (the
// fd passing or the memzone lookup orders them before any client read), and
// never again, but for state, which the daemon sets to DETACHED once when it
// gives up on the channel. daemon_sleeping is written by the daemon only,
// client_sleeping by the client only. The daemon never trusts any of these
// fields: it keeps its own copy of the geometry, never reads state or
// generation back, and reads only client_sleeping, as a hint.
//
// The lease fields: the client compares state and generation with what it
// was attached to before each ring operation (a memzone goes from client to
// client, and a process the daemon detached may still run). They share line
// 0 with the setup fields, which nobody writes while the channel is busy, so
// the check costs a load of a line that stays in the client's cache.
struct shmchan_ctrl {
	// Setup only (daemon).
	uint32_t magic; // SHMCHAN_MAGIC
	uint32_t layout_version; // SHMCHAN_LAYOUT_VERSION
	uint32_t cell_size; // SHMCHAN_CELL_SIZE
	uint32_t ring_cells;
	uint64_t region_size;
	uint64_t req_ring_off;
	uint64_t resp_ring_off;
	uint32_t state; // SHMCHAN_STATE_UP, then SHMCHAN_STATE_DETACHED
	uint32_t cache_line; // SHMCHAN_CACHE_LINE of the daemon's build
	// Which attach of this region the channel is: shmchan_geometry's, sent
	// in the attach response too.
	uint32_t generation;

	// Need-wakeup flag of the daemon: non-zero while the daemon sleeps (or
	// is about to) on the request doorbell, SHMCHAN_WAIT_REQUEST when it
	// waits for a request, SHMCHAN_WAIT_ROOM when it waits for room in the
	// response ring (it holds responses that do not fit). Written by the
	// daemon, read by the client after each batch of sends (any value) and
	// before it sleeps (SHMCHAN_WAIT_ROOM: it has just freed room). On its
	// own cache line so that the daemon arming it does not invalidate the
	// line the client writes.
	alignas(SHMCHAN_CACHE_LINE) uint32_t daemon_sleeping;
	// The CPU the poller serving this channel last ran on, plus 1
	// (SHMCHAN_CPU_UNKNOWN: not told yet), written by the daemon when it
	// changes: after each wake-up of the poller and when it migrates, so
	// rarely that the line stays in the client's cache. A client whose
	// wait runs on that CPU while the poller is awake is holding the CPU
	// its answer needs, and sleeps instead of spinning
	// (docs/spin-budgets.md).
	uint32_t daemon_cpu;
	// How busy the host's CPUs were at the poller's last look at them, and
	// when (shmchan_host_word(); 0: not told), written by the daemon about
	// once a second while the channel is in use, at a moment the poller
	// has nothing else to do. A client that woke the poller reads it
	// instead of /proc/loadavg to choose between a spin and a sleep; any
	// value costs it at most a spin or a wake-up (docs/spin-budgets.md).
	uint32_t host_load;

	// Need-wakeup flag of the client: non-zero while the client sleeps on the
	// response doorbell, waiting for a response or for room in the request
	// ring (SHMCHAN_CLIENT_ASLEEP, or SHMCHAN_CLIENT_ASLEEP_IN_LOOP when it
	// waits in its caller's event loop). Written by the client, read by the
	// daemon after each batch of messages it moved. Its own cache line, for
	// the same reason.
	alignas(SHMCHAN_CACHE_LINE) uint32_t client_sleeping;
	// The CPU the client last waited or rang the daemon from, plus 1
	// (SHMCHAN_CPU_UNKNOWN: not told), written by the client when it
	// changes. A hint for the poller's spin: a poller running on that CPU
	// stops spinning for this client, which cannot run until it does. Any
	// value is harmless: the daemon only compares it with its own CPU, and
	// it decides only about the spin that this client's own requests
	// started.
	uint32_t client_cpu;
};

_Static_assert(offsetof(struct shmchan_ctrl, daemon_sleeping) % SHMCHAN_CACHE_LINE == 0, "");
_Static_assert(offsetof(struct shmchan_ctrl, client_sleeping) % SHMCHAN_CACHE_LINE == 0, "");
_Static_assert(
	offsetof(struct shmchan_ctrl, client_sleeping) >=
		offsetof(struct shmchan_ctrl, daemon_sleeping) + SHMCHAN_CACHE_LINE,
	"the two need-wakeup flags sit on different cache lines"
);
_Static_assert(sizeof(struct shmchan_ctrl) % SHMCHAN_CACHE_LINE == 0, "");

// Bytes of one ring of ring_cells cells: the rte_ring header then the cells,
// rounded up to a cache line. Same formula as rte_ring_get_memsize_elem(),
// computed here because the client side links no DPDK library; the server
// checks at create time that both agree.
static inline uint64_t shmchan_ring_memsize(uint32_t ring_cells) {
	uint64_t sz = sizeof(struct rte_ring) + (uint64_t)ring_cells * SHMCHAN_CELL_SIZE;
	return (sz + SHMCHAN_CACHE_LINE - 1) & ~(uint64_t)(SHMCHAN_CACHE_LINE - 1);
}

// The cells of a ring start right after its header, as in rte_ring.
static inline uint8_t *shmchan_ring_cells(struct rte_ring *r) {
	return (uint8_t *)&r[1];
}

// The frame length and a 12-byte header fill a frame's first cell exactly.
_Static_assert(
	SHMCHAN_FRAME_HDR + SHMCHAN_MSG_MIN == SHMCHAN_CELL_SIZE,
	"a frame length and a request or response header make one cell"
);

// Copies longer than this go to memcpy(), whose wide moves win once the
// message is long (measured: 4 KiB faster by 16-byte moves, 16 KiB and more
// faster by memcpy()).
#define SHMCHAN_COPY_MOVES_MAX 8192

// Copy n bytes into or out of a ring's cells, 16 bytes a load and a store.
// The C library's memcpy() moves 32 or 64 bytes at a time where the CPU has
// the vector registers; at a cell's 16-byte alignment such a move straddles
// two cache lines, and between two CPUs, where each line comes from the
// other one's cache, that made a busy round trip of 64 bytes a third slower
// than 16-byte moves on an Intel Xeon (docs/benchmark-method.md). The last
// 16 bytes are copied again, ending at n, where n is not a multiple of 16:
// no byte outside either buffer is touched. Fewer than 16 bytes, or more
// than SHMCHAN_COPY_MOVES_MAX: memcpy().
static inline void shmchan_copy(void *dst, const void *src, size_t n) {
#if defined(__SSE2__)
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (n >= 16 && n <= SHMCHAN_COPY_MOVES_MAX) {
		size_t i;

		for (i = 0; i + 16 <= n; i += 16)
			_mm_storeu_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
		if (i < n)
			_mm_storeu_si128(
				(__m128i *)(d + n - 16),
				_mm_loadu_si128((const __m128i *)(s + n - 16))
			);
		return;
	}
#endif
	memcpy(dst, src, n);
}

// The length word of cell idx (< the ring's size) of a cell array: a
// frame's length when a frame starts there, zero while none is published
// there (layout version 5).
static inline uint32_t *shmchan_cell_word(uint8_t *cells, uint32_t idx) {
	return (uint32_t *)(cells + (size_t)idx * SHMCHAN_CELL_SIZE);
}

// The length a consumer finds at index pos of a ring of mask + 1 cells: 0
// while no frame is published there. Acquire pairs with the producer's
// release in shmchan_frame_publish(): the frame's other bytes are visible
// once its length is. One load, into the caller's private variable: the
// peer may rewrite the cell at any moment.
static inline uint32_t shmchan_frame_len_load(const uint8_t *cells, uint32_t mask, uint32_t pos) {
	return __atomic_load_n(
		(const uint32_t *)(cells + (size_t)(pos & mask) * SHMCHAN_CELL_SIZE),
		__ATOMIC_ACQUIRE
	);
}

// Before writing a frame of n cells at index pos: zero the length word of
// the cell right after it, where the consumer looks once it took this
// frame, so that it finds no frame there until the next one is published.
// That cell is free: a ring holds at most size - 1 cells (rte_ring's
// capacity), so the cell after the last one used is never one the consumer
// has not taken yet.
static inline void
shmchan_frame_terminate(uint8_t *cells, uint32_t mask, uint32_t pos, uint32_t n) {
	__atomic_store_n(shmchan_cell_word(cells, (pos + n) & mask), 0, __ATOMIC_RELAXED);
}

// Publish the frame at index pos, whose other bytes are written: a release
// store of its length, the last of its stores (shmchan_frame_len_load()).
static inline void
shmchan_frame_publish(uint8_t *cells, uint32_t mask, uint32_t pos, uint32_t len) {
	__atomic_store_n(shmchan_cell_word(cells, pos & mask), len, __ATOMIC_RELEASE);
}

// Write a whole frame whose cells do not wrap at dst, but its length: the
// payload and the zero padding up to frame_bytes, then the 12-byte header
// hdr (SHMCHAN_MSG_MIN bytes) in the rest of the first cell. The caller
// publishes it with shmchan_frame_publish(). The general path (any header
// length, a frame that wraps) copies the pieces one by one. Either side, on
// cells only it writes.
static inline void shmchan_frame_write(
	uint8_t *dst,
	const void *hdr,
	const void *payload,
	size_t payload_len,
	size_t frame_bytes
) {
	size_t pad = frame_bytes - SHMCHAN_CELL_SIZE - payload_len;

	if (payload_len > 0)
		shmchan_copy(dst + SHMCHAN_CELL_SIZE, payload, payload_len);
	if (pad > 0)
		memset(dst + SHMCHAN_CELL_SIZE + payload_len, 0, pad);
	memcpy(dst + SHMCHAN_FRAME_HDR, hdr, SHMCHAN_MSG_MIN);
}

// Record why the calling thread's last shmchan call failed (see
// shmchan_last_error()) and return err, a negative errno value.
int shmchan_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Length of a message of hdr_len + payload_len bytes, checked against the
// framing's bounds; what ("request", "response") names it in the failure.
// Returns the length, -EMSGSIZE (over SHMCHAN_MSG_MAX) or -EINVAL (under
// SHMCHAN_MSG_MIN). Both sides, any thread.
long shmchan_msg_len(size_t hdr_len, size_t payload_len, const char *what);

// The bounds shmchan_msg_len() checks, inline for the enqueues: a message
// within them needs no call, and one outside calls it for its failure.
static inline bool shmchan_msg_len_ok(size_t hdr_len, size_t payload_len) {
	return hdr_len <= SHMCHAN_MSG_MAX && payload_len <= SHMCHAN_MSG_MAX - hdr_len &&
	       hdr_len + payload_len >= SHMCHAN_MSG_MIN;
}
