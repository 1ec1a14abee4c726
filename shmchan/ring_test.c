// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Region layout and message framing: geometry, both ring directions,
// wrap-around (of the cell array and of the 32-bit indices), a full ring, the
// longest message, and every check the daemon makes on what a hostile client
// can write. The region lives in plain process memory: no EAL is needed.

#include "client.h"
#include "server.h"

#include <rte_ring_elem.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

// Message lengths that take exactly 1, 2 and 3 cells with their frame length.
#define LEN_1_CELL 12
#define LEN_2_CELLS 28
#define LEN_3_CELLS 44
// Receive buffer: more than the longest message, so that a server that let
// a too long frame through would copy it and fail the checks, not overflow.
#define RECV_BUF_LEN (SHMCHAN_MSG_MAX + 2 * SHMCHAN_CELL_SIZE)

struct chan {
	struct shmchan_geometry g;
	struct shmchan_mem mem;
	struct shmchan_server *srv;
	struct shmchan_client *cli;
	struct rte_ring *req_ring; // shared headers, as the (hostile) client sees them
	struct rte_ring *resp_ring;
	uint8_t *buf; // RECV_BUF_LEN bytes
	uint8_t *expect; // SHMCHAN_MSG_MAX bytes
};

static int chan_setup(void **state) {
	struct chan *ch = calloc(1, sizeof(*ch));
	uint8_t *base;

	assert_non_null(ch);
	assert_int_equal(shmchan_geometry_init(&ch->g, SHMCHAN_RING_CELLS), 0);
	base = aligned_alloc(SHMCHAN_REGION_ALIGN, ch->g.region_size);
	assert_non_null(base);
	// Garbage everywhere: the server must wipe and lay out everything itself.
	memset(base, 0xa5, ch->g.region_size);
	ch->mem = (struct shmchan_mem){
		.backing = SHMCHAN_BACKING_MEMZONE,
		.base = base,
		.size = ch->g.region_size,
		.fd = -1,
		.name = "ring_test",
	};
	assert_int_equal(shmchan_server_create(&ch->mem, &ch->g, &ch->srv), 0);
	assert_int_equal(
		shmchan_client_open(
			&ch->g,
			base,
			-1,
			dup(shmchan_server_req_fd(ch->srv)),
			dup(shmchan_server_resp_fd(ch->srv)),
			&ch->cli
		),
		0
	);
	ch->req_ring = (struct rte_ring *)(base + ch->g.req_ring_off);
	ch->resp_ring = (struct rte_ring *)(base + ch->g.resp_ring_off);
	ch->buf = malloc(RECV_BUF_LEN);
	ch->expect = malloc(SHMCHAN_MSG_MAX);
	assert_non_null(ch->buf);
	assert_non_null(ch->expect);
	*state = ch;
	return 0;
}

static int chan_teardown(void **state) {
	struct chan *ch = *state;

	shmchan_client_close(ch->cli);
	shmchan_server_destroy(ch->srv);
	free(ch->mem.base);
	free(ch->buf);
	free(ch->expect);
	free(ch);
	return 0;
}

// Deterministic bytes of message number seed.
static void msg_fill(uint8_t *msg, size_t len, uint32_t seed) {
	for (size_t i = 0; i < len; i++)
		msg[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

// Header and payload are passed separately, as the daemon and client do.
static int client_send_msg(struct chan *ch, size_t len, uint32_t seed) {
	msg_fill(ch->expect, len, seed);
	return shmchan_client_send(
		ch->cli,
		ch->expect,
		SHMCHAN_MSG_MIN,
		ch->expect + SHMCHAN_MSG_MIN,
		len - SHMCHAN_MSG_MIN
	);
}

static int server_send_msg(struct chan *ch, size_t len, uint32_t seed) {
	msg_fill(ch->expect, len, seed);
	return shmchan_server_send(
		ch->srv,
		ch->expect,
		SHMCHAN_MSG_MIN,
		ch->expect + SHMCHAN_MSG_MIN,
		len - SHMCHAN_MSG_MIN
	);
}

// Takes one request and ends the batch, as a poller pass does.
static void server_recv_expect(struct chan *ch, size_t len, uint32_t seed) {
	msg_fill(ch->expect, len, seed);
	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), (int)len);
	assert_memory_equal(ch->buf, ch->expect, len);
	shmchan_server_flush(ch->srv);
}

static void client_recv_expect(struct chan *ch, size_t len, uint32_t seed) {
	msg_fill(ch->expect, len, seed);
	assert_int_equal(shmchan_client_peek_len(ch->cli), (int)len);
	assert_int_equal(shmchan_client_recv(ch->cli, ch->buf, SHMCHAN_MSG_MAX), (int)len);
	assert_memory_equal(ch->buf, ch->expect, len);
}

// Enqueue a hand-made frame in a ring, as a hostile client (or a broken
// daemon) would: frame length frame_len, then n_cells cells in all.
static void raw_enqueue(struct rte_ring *r, uint32_t frame_len, unsigned n_cells) {
	uint8_t *cells = calloc(n_cells, SHMCHAN_CELL_SIZE);

	assert_non_null(cells);
	memcpy(cells, &frame_len, sizeof(frame_len));
	assert_int_equal(
		rte_ring_enqueue_bulk_elem(r, cells, SHMCHAN_CELL_SIZE, n_cells, NULL),
		n_cells
	);
	free(cells);
}

// A hostile client's store of the request ring's producer index.
static void set_req_tail(struct chan *ch, uint32_t tail) {
	__atomic_store_n(&ch->req_ring->prod.tail, tail, __ATOMIC_RELAXED);
}

// Move both sides of both rings to index pos, as if that much traffic had
// gone through.
static void set_all_indices(struct chan *ch, uint32_t pos) {
	struct rte_ring *rings[] = {ch->req_ring, ch->resp_ring};

	for (unsigned i = 0; i < 2; i++) {
		rings[i]->prod.head = rings[i]->prod.tail = pos;
		rings[i]->cons.head = rings[i]->cons.tail = pos;
	}
	ch->srv->req.pos = ch->srv->req.published = ch->srv->req.peer = pos;
	ch->srv->resp.pos = ch->srv->resp.published = ch->srv->resp.peer = pos;
	ch->cli->req.pos = ch->cli->req.peer = pos;
	ch->cli->resp.pos = pos;
}

// Messages of the longest length that fits n_cells cells.
static size_t len_of_cells(unsigned n_cells) {
	return (size_t)n_cells * SHMCHAN_CELL_SIZE - SHMCHAN_FRAME_HDR;
}

// ---- geometry ----

static void test_geometry_init(void **state) {
	struct shmchan_geometry g;

	(void)state;
	assert_int_equal(shmchan_geometry_init(&g, SHMCHAN_RING_CELLS), 0);
	assert_int_equal(g.layout_version, SHMCHAN_LAYOUT_VERSION);
	assert_int_equal(g.cell_size, SHMCHAN_CELL_SIZE);
	assert_int_equal(g.ring_cells, SHMCHAN_RING_CELLS);
	assert_true(g.req_ring_off >= sizeof(struct shmchan_ctrl));
	assert_int_equal(g.req_ring_off % SHMCHAN_CACHE_LINE, 0);
	assert_int_equal(g.resp_ring_off % SHMCHAN_CACHE_LINE, 0);
	assert_int_equal(g.region_size % SHMCHAN_REGION_ALIGN, 0);
	// Our DPDK-free size formula agrees with DPDK's.
	assert_int_equal(
		shmchan_ring_memsize(SHMCHAN_RING_CELLS),
		rte_ring_get_memsize_elem(SHMCHAN_CELL_SIZE, SHMCHAN_RING_CELLS)
	);
	assert_int_equal(g.resp_ring_off, g.req_ring_off + shmchan_ring_memsize(g.ring_cells));
	assert_true(g.resp_ring_off + shmchan_ring_memsize(g.ring_cells) <= g.region_size);
	assert_int_equal(shmchan_geometry_check(&g), 0);

	assert_int_equal(shmchan_geometry_init(&g, 2 * SHMCHAN_RING_CELLS), 0);
	assert_int_equal(shmchan_geometry_check(&g), 0);

	assert_int_equal(shmchan_geometry_init(&g, 0), -EINVAL);
	assert_int_equal(shmchan_geometry_init(&g, SHMCHAN_RING_CELLS + 1), -EINVAL);
	assert_int_equal(shmchan_geometry_init(&g, SHMCHAN_RING_CELLS / 2), -EINVAL);
	assert_int_equal(shmchan_geometry_init(&g, SHMCHAN_RING_CELLS_MAX * 2), -EINVAL);
	assert_true(strlen(shmchan_last_error()) > 0);
}

static void test_geometry_check_rejects(void **state) {
	uint64_t ring_size = shmchan_ring_memsize(SHMCHAN_RING_CELLS);
	struct shmchan_geometry good, g;

	(void)state;
	assert_int_equal(shmchan_geometry_init(&good, SHMCHAN_RING_CELLS), 0);

	g = good;
	g.layout_version = SHMCHAN_LAYOUT_VERSION + 1;
	assert_int_equal(shmchan_geometry_check(&g), -EPROTO);

	g = good;
	g.cell_size = 8;
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);

	g = good;
	g.ring_cells = SHMCHAN_RING_CELLS - 1; // not a power of two
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);
	g.ring_cells = SHMCHAN_RING_CELLS / 2; // too small for the longest message
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);
	g.ring_cells = 0;
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);

	g = good;
	g.region_size = 0;
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);
	g.region_size = good.region_size + 8; // not whole pages
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);
	g.region_size = good.region_size - SHMCHAN_REGION_ALIGN; // response ring overruns the end
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);

	g = good;
	g.req_ring_off += 8; // not cache-line aligned
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);

	g = good;
	g.req_ring_off = 0; // on top of the control block
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);

	g = good;
	g.resp_ring_off = good.region_size; // starts at the end
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);
	g.resp_ring_off = good.region_size - SHMCHAN_CACHE_LINE;
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);
	// Offsets so large that offset + ring size would wrap around 2^64.
	g.resp_ring_off = UINT64_MAX - SHMCHAN_CACHE_LINE + 1;
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);

	g = good;
	g.resp_ring_off = good.req_ring_off + SHMCHAN_CACHE_LINE; // rings overlap
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);
	g.resp_ring_off = good.req_ring_off; // same ring twice
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);

	// Either order is fine as long as they do not overlap.
	g = good;
	g.resp_ring_off = good.req_ring_off;
	g.req_ring_off = good.req_ring_off + ring_size;
	assert_int_equal(shmchan_geometry_check(&g), 0);
	// ... and overlapping with the response ring first is caught too.
	g.req_ring_off = good.req_ring_off + ring_size - SHMCHAN_CACHE_LINE;
	assert_int_equal(shmchan_geometry_check(&g), -EINVAL);
}

// ---- setup checks ----

static void test_server_create_rejects(void **state) {
	struct chan *ch = *state;
	struct shmchan_server *srv = NULL;
	struct shmchan_geometry g = ch->g;
	struct shmchan_mem mem = ch->mem;

	mem.size = ch->g.region_size - 1;
	assert_int_equal(shmchan_server_create(&mem, &ch->g, &srv), -EINVAL);
	mem = ch->mem;
	mem.base = (uint8_t *)mem.base + 8;
	assert_int_equal(shmchan_server_create(&mem, &ch->g, &srv), -EINVAL);
	mem = ch->mem;
	g.layout_version++;
	assert_int_equal(shmchan_server_create(&mem, &g, &srv), -EPROTO);
	assert_null(srv);
}

static void test_server_layout(void **state) {
	struct chan *ch = *state;
	const struct shmchan_ctrl *ctrl = ch->mem.base;
	struct rte_ring *rings[] = {ch->req_ring, ch->resp_ring};

	assert_int_equal(ctrl->magic, SHMCHAN_MAGIC);
	assert_int_equal(ctrl->layout_version, SHMCHAN_LAYOUT_VERSION);
	assert_int_equal(ctrl->cell_size, SHMCHAN_CELL_SIZE);
	assert_int_equal(ctrl->ring_cells, ch->g.ring_cells);
	assert_int_equal(ctrl->region_size, ch->g.region_size);
	assert_int_equal(ctrl->req_ring_off, ch->g.req_ring_off);
	assert_int_equal(ctrl->resp_ring_off, ch->g.resp_ring_off);
	assert_int_equal(ctrl->state, SHMCHAN_STATE_UP);
	assert_int_equal(ctrl->cache_line, RTE_CACHE_LINE_SIZE);
	// The fields each side writes sit on DPDK's cache lines.
	assert_int_equal(offsetof(struct shmchan_ctrl, daemon_sleeping), RTE_CACHE_LINE_SIZE);
	assert_int_equal(offsetof(struct shmchan_ctrl, client_sleeping), 2 * RTE_CACHE_LINE_SIZE);
	assert_int_equal(ch->g.req_ring_off, 3 * RTE_CACHE_LINE_SIZE);
	// Armed: the daemon sleeps until its poller first serves the channel.
	assert_int_equal(ctrl->daemon_sleeping, 1);
	assert_int_equal(ctrl->client_sleeping, 0);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(rings[i]->size, ch->g.ring_cells);
		assert_int_equal(rings[i]->capacity, ch->g.ring_cells - 1);
		assert_int_equal(rings[i]->prod.sync_type, RTE_RING_SYNC_ST);
		assert_int_equal(rings[i]->cons.sync_type, RTE_RING_SYNC_ST);
		assert_int_equal(rte_ring_count(rings[i]), 0);
	}
	assert_string_equal(ch->req_ring->name, "req");
	assert_string_equal(ch->resp_ring->name, "resp");
}

static void test_client_open_rejects(void **state) {
	struct chan *ch = *state;
	struct shmchan_ctrl *ctrl = ch->mem.base;
	struct shmchan_client *cli = NULL;
	struct shmchan_geometry g;
	int fds[2];

	fds[0] = shmchan_server_req_fd(ch->srv);
	fds[1] = shmchan_server_resp_fd(ch->srv);

	ctrl->magic++;
	assert_int_equal(shmchan_client_open(&ch->g, ctrl, -1, fds[0], fds[1], &cli), -EINVAL);
	ctrl->magic--;

	ctrl->layout_version++;
	assert_int_equal(shmchan_client_open(&ch->g, ctrl, -1, fds[0], fds[1], &cli), -EPROTO);
	ctrl->layout_version--;

	ctrl->state = 0;
	assert_int_equal(shmchan_client_open(&ch->g, ctrl, -1, fds[0], fds[1], &cli), -EINVAL);
	ctrl->state = SHMCHAN_STATE_UP;

	// A daemon built for another cache line size laid it out.
	ctrl->cache_line = 2 * RTE_CACHE_LINE_SIZE;
	assert_int_equal(shmchan_client_open(&ch->g, ctrl, -1, fds[0], fds[1], &cli), -EPROTO);
	ctrl->cache_line = RTE_CACHE_LINE_SIZE;

	// A geometry that passes its own check but is not this region's.
	assert_int_equal(shmchan_geometry_init(&g, 2 * SHMCHAN_RING_CELLS), 0);
	assert_int_equal(shmchan_client_open(&g, ctrl, -1, fds[0], fds[1], &cli), -EINVAL);

	g = ch->g;
	g.layout_version++;
	assert_int_equal(shmchan_client_open(&g, ctrl, -1, fds[0], fds[1], &cli), -EPROTO);

	ch->resp_ring->cons.sync_type = RTE_RING_SYNC_MT;
	assert_int_equal(shmchan_client_open(&ch->g, ctrl, -1, fds[0], fds[1], &cli), -EINVAL);
	ch->resp_ring->cons.sync_type = RTE_RING_SYNC_ST;

	assert_int_equal(
		shmchan_client_open(&ch->g, (uint8_t *)ctrl + 8, -1, fds[0], fds[1], &cli),
		-EINVAL
	);
	assert_int_equal(shmchan_client_open(&ch->g, NULL, -1, fds[0], fds[1], &cli), -EINVAL);
	assert_int_equal(shmchan_client_open(&ch->g, ctrl, -1, -1, fds[1], &cli), -EINVAL);
	assert_null(cli);
}

// ---- framing ----

static void test_roundtrip_both_directions(void **state) {
	struct chan *ch = *state;
	uint64_t bytes = 0;
	uint32_t seed = 0;

	for (size_t len = SHMCHAN_MSG_MIN; len <= 300; len++, seed++) {
		assert_int_equal(client_send_msg(ch, len, seed), 0);
		assert_true(shmchan_server_has_request(ch->srv));
		server_recv_expect(ch, len, seed);
		assert_false(shmchan_server_has_request(ch->srv));
		assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), 0);

		assert_int_equal(server_send_msg(ch, len, seed), 0);
		assert_true(shmchan_client_has_response(ch->cli));
		client_recv_expect(ch, len, seed);
		assert_false(shmchan_client_has_response(ch->cli));
		assert_int_equal(shmchan_client_recv(ch->cli, ch->buf, SHMCHAN_MSG_MAX), 0);
		assert_int_equal(shmchan_client_peek_len(ch->cli), 0);
		bytes += len;
	}
	assert_int_equal(shmchan_server_stats(ch->srv)->requests, seed);
	assert_int_equal(shmchan_server_stats(ch->srv)->req_bytes, bytes);
	assert_int_equal(shmchan_server_stats(ch->srv)->responses, seed);
	assert_int_equal(shmchan_server_stats(ch->srv)->resp_bytes, bytes);
}

// Several messages queued at once come out in order, whole.
static void test_pipelined(void **state) {
	struct chan *ch = *state;

	for (uint32_t i = 0; i < 100; i++) {
		assert_int_equal(client_send_msg(ch, SHMCHAN_MSG_MIN + i * 13, i), 0);
		assert_int_equal(server_send_msg(ch, SHMCHAN_MSG_MIN + i * 17, i), 0);
	}
	for (uint32_t i = 0; i < 100; i++) {
		server_recv_expect(ch, SHMCHAN_MSG_MIN + i * 13, i);
		client_recv_expect(ch, SHMCHAN_MSG_MIN + i * 17, i);
	}
}

// The frame a side writes (client_to_server: the client's request, else the
// server's response): length, message, then zeros to the cell end, whatever
// the cells held before, and past the frame only a zero length in the next
// cell (the consumer finds no frame there until the next is published). Frames of 12 + 0, 12 +
// 8 (24 bytes: 8 bytes of padding in the 2nd cell) and 12 + 64 bytes
// (GR_PING2: 80 bytes, no padding), one after the other.
static void check_frame_bytes(struct chan *ch, bool client_to_server) {
	static const size_t lens[] = {SHMCHAN_MSG_MIN, 20, 76};
	struct rte_ring *r = client_to_server ? ch->req_ring : ch->resp_ring;
	uint8_t *cells = shmchan_ring_cells(r);
	uint32_t frame_len, at = 0;

	memset(cells, 0xee, 16 * SHMCHAN_CELL_SIZE);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t len = lens[k];
		uint8_t *f = cells + (size_t)at * SHMCHAN_CELL_SIZE;
		uint32_t n_cells = SHMCHAN_MSG_CELLS(len);

		if (client_to_server)
			assert_int_equal(client_send_msg(ch, len, 7 + (uint32_t)k), 0);
		else
			assert_int_equal(server_send_msg(ch, len, 7 + (uint32_t)k), 0);
		memcpy(&frame_len, f, sizeof(frame_len));
		assert_int_equal(frame_len, len);
		assert_memory_equal(f + SHMCHAN_FRAME_HDR, ch->expect, len);
		for (size_t i = SHMCHAN_FRAME_HDR + len; i < n_cells * SHMCHAN_CELL_SIZE; i++)
			assert_int_equal(f[i], 0);
		at += n_cells;
		// Past the frame: the next cell's length zeroed, nothing else.
		uint8_t *next = cells + (size_t)at * SHMCHAN_CELL_SIZE;
		memcpy(&frame_len, next, sizeof(frame_len));
		assert_int_equal(frame_len, 0);
		for (size_t i = SHMCHAN_FRAME_HDR; i < SHMCHAN_CELL_SIZE; i++)
			assert_int_equal(next[i], 0xee);
		assert_int_equal(rte_ring_count(r), at);
	}
}

static void test_req_frame_bytes(void **state) {
	check_frame_bytes(*state, true);
}

static void test_resp_frame_bytes(void **state) {
	check_frame_bytes(*state, false);
}

// Send and take filler messages until the next frame starts at cell index
// target (of the 32-bit ring index) in the request ring (client_to_server)
// or in the response ring.
static void advance_to(struct chan *ch, bool client_to_server, uint32_t target) {
	uint32_t pos = client_to_server ? ch->srv->req.pos : ch->srv->resp.pos;
	uint32_t seed = 1000;

	while (pos != target) {
		uint32_t n_cells = target - pos;

		if (n_cells > 1000)
			n_cells = 1000;
		if (client_to_server) {
			assert_int_equal(client_send_msg(ch, len_of_cells(n_cells), seed), 0);
			server_recv_expect(ch, len_of_cells(n_cells), seed);
		} else {
			assert_int_equal(server_send_msg(ch, len_of_cells(n_cells), seed), 0);
			client_recv_expect(ch, len_of_cells(n_cells), seed);
		}
		pos += n_cells;
		seed++;
	}
}

// Messages that cross the end of the cell array, starting k cells before
// it, and one that ends exactly at it.
static void check_wrap(struct chan *ch, bool client_to_server) {
	uint32_t size = ch->g.ring_cells;
	uint32_t lap = 0;

	for (uint32_t k = 1; k <= 9; k++) {
		size_t len = len_of_cells(8) - k; // 8 cells, a partial last one

		lap += size;
		advance_to(ch, client_to_server, lap - k);
		if (client_to_server) {
			assert_int_equal(client_send_msg(ch, len, k), 0);
			server_recv_expect(ch, len, k);
		} else {
			assert_int_equal(server_send_msg(ch, len, k), 0);
			client_recv_expect(ch, len, k);
		}
	}
	// Ends exactly on the last cell; the next frame starts at cell 0.
	lap += size;
	advance_to(ch, client_to_server, lap - 3);
	if (client_to_server) {
		assert_int_equal(client_send_msg(ch, len_of_cells(3), 1), 0);
		assert_int_equal(client_send_msg(ch, len_of_cells(2), 2), 0);
		server_recv_expect(ch, len_of_cells(3), 1);
		server_recv_expect(ch, len_of_cells(2), 2);
		assert_int_equal(ch->srv->req.pos, lap + 2);
	} else {
		assert_int_equal(server_send_msg(ch, len_of_cells(3), 1), 0);
		assert_int_equal(server_send_msg(ch, len_of_cells(2), 2), 0);
		client_recv_expect(ch, len_of_cells(3), 1);
		client_recv_expect(ch, len_of_cells(2), 2);
		assert_int_equal(ch->resp_ring->cons.tail, lap + 2);
	}
}

static void test_wrap_client_to_server(void **state) {
	check_wrap(*state, true);
}

static void test_wrap_server_to_client(void **state) {
	check_wrap(*state, false);
}

// The 32-bit ring indices wrap after 64 GiB of traffic: a few seconds at
// full speed. Start just below 2^32 and cross it both ways.
static void test_index_wrap_u32(void **state) {
	struct chan *ch = *state;

	set_all_indices(ch, UINT32_MAX - 40);
	for (uint32_t i = 0; i < 30; i++) {
		assert_int_equal(client_send_msg(ch, LEN_3_CELLS, i), 0);
		assert_int_equal(server_send_msg(ch, LEN_3_CELLS, i), 0);
	}
	for (uint32_t i = 0; i < 30; i++) {
		server_recv_expect(ch, LEN_3_CELLS, i);
		client_recv_expect(ch, LEN_3_CELLS, i);
	}
	assert_int_equal(ch->srv->req.pos, (uint32_t)(UINT32_MAX - 40 + 90));
	assert_int_equal(ch->req_ring->cons.tail, ch->srv->req.pos);
	assert_int_equal(ch->resp_ring->prod.tail, ch->srv->resp.pos);
	assert_false(shmchan_server_has_request(ch->srv));
	assert_false(shmchan_client_has_response(ch->cli));
}

// Fill a ring to its last cell (capacity = size - 1), check the next send
// fails with nothing written, drain one message and send again.
static void check_full_ring(struct chan *ch, bool client_to_server) {
	uint32_t capacity = ch->g.ring_cells - 1;
	uint32_t n_2cells = (capacity - 3) / 2, seed;
	struct rte_ring *r = client_to_server ? ch->req_ring : ch->resp_ring;
	int (*send)(struct chan *, size_t, uint32_t) =
		client_to_server ? client_send_msg : server_send_msg;
	void (*recv)(struct chan *, size_t, uint32_t) =
		client_to_server ? server_recv_expect : client_recv_expect;

	assert_int_equal((capacity - 3) % 2, 0);
	for (seed = 0; seed < n_2cells; seed++)
		assert_int_equal(send(ch, LEN_2_CELLS, seed), 0);
	assert_int_equal(send(ch, LEN_3_CELLS, seed), 0);
	assert_int_equal(rte_ring_count(r), capacity);
	assert_int_equal(rte_ring_free_count(r), 0);

	assert_int_equal(send(ch, LEN_1_CELL, 0), -ENOBUFS);
	assert_int_equal(rte_ring_count(r), capacity);

	recv(ch, LEN_2_CELLS, 0);
	assert_int_equal(send(ch, LEN_3_CELLS, 1), -ENOBUFS); // 2 cells free
	assert_int_equal(send(ch, LEN_2_CELLS, n_2cells + 1), 0);
	assert_int_equal(send(ch, LEN_1_CELL, 0), -ENOBUFS);

	for (seed = 1; seed < n_2cells; seed++)
		recv(ch, LEN_2_CELLS, seed);
	recv(ch, LEN_3_CELLS, n_2cells);
	recv(ch, LEN_2_CELLS, n_2cells + 1);
	assert_int_equal(rte_ring_count(r), 0);
}

static void test_full_ring_client_to_server(void **state) {
	check_full_ring(*state, true);
}

static void test_full_ring_server_to_client(void **state) {
	struct chan *ch = *state;

	check_full_ring(ch, false);
	// Refused sends count nothing: the caller counts what it holds back.
	assert_int_equal(shmchan_server_stats(ch->srv)->overflows, 0);
	shmchan_server_count_overflow(ch->srv);
	assert_int_equal(shmchan_server_stats(ch->srv)->overflows, 1);
}

// The longest message fits an empty ring whole, both ways, also when it
// wraps around the end of the cell array.
static void test_max_message(void **state) {
	struct chan *ch = *state;
	uint32_t starts[] = {0, 3 * ch->g.ring_cells / 4, 2 * ch->g.ring_cells - 1};

	for (unsigned i = 0; i < 3; i++) {
		set_all_indices(ch, starts[i]);
		assert_int_equal(client_send_msg(ch, SHMCHAN_MSG_MAX, i), 0);
		server_recv_expect(ch, SHMCHAN_MSG_MAX, i);
		assert_int_equal(server_send_msg(ch, SHMCHAN_MSG_MAX, i), 0);
		client_recv_expect(ch, SHMCHAN_MSG_MAX, i);
	}
}

static void test_message_size_limits(void **state) {
	struct chan *ch = *state;
	static uint8_t big[SHMCHAN_MSG_MAX + 1];

	assert_int_equal(
		shmchan_client_send(ch->cli, big, 12, big, SHMCHAN_MSG_MAX - 11),
		-EMSGSIZE
	);
	assert_int_equal(
		shmchan_server_send(ch->srv, big, 12, big, SHMCHAN_MSG_MAX - 11),
		-EMSGSIZE
	);
	// hdr_len + payload_len would wrap around SIZE_MAX.
	assert_int_equal(shmchan_client_send(ch->cli, big, 12, big, SIZE_MAX - 4), -EMSGSIZE);
	assert_int_equal(shmchan_server_send(ch->srv, big, 12, big, SIZE_MAX - 4), -EMSGSIZE);
	assert_int_equal(shmchan_client_send(ch->cli, big, 11, NULL, 0), -EINVAL);
	assert_int_equal(shmchan_server_send(ch->srv, big, 8, big, 3), -EINVAL);
	assert_int_equal(rte_ring_count(ch->req_ring), 0);
	assert_int_equal(rte_ring_count(ch->resp_ring), 0);
	// A whole message in the header part or in the payload part is fine.
	assert_int_equal(shmchan_client_send(ch->cli, big, SHMCHAN_MSG_MAX, NULL, 0), 0);
	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), SHMCHAN_MSG_MAX);
	assert_int_equal(shmchan_server_send(ch->srv, NULL, 0, big, SHMCHAN_MSG_MIN), 0);
	assert_int_equal(shmchan_client_recv(ch->cli, ch->buf, SHMCHAN_MSG_MAX), SHMCHAN_MSG_MIN);
}

// ---- client side: what it checks ----

static void test_client_recv_small_buffer(void **state) {
	struct chan *ch = *state;

	assert_int_equal(server_send_msg(ch, 100, 5), 0);
	assert_int_equal(shmchan_client_recv(ch->cli, ch->buf, 99), -EMSGSIZE);
	// Still there, whole.
	client_recv_expect(ch, 100, 5);
}

static void test_client_recv_bad_frame(void **state) {
	struct chan *ch = *state;

	raw_enqueue(ch->resp_ring, 5, 1);
	assert_int_equal(shmchan_client_peek_len(ch->cli), -EBADMSG);
	assert_int_equal(shmchan_client_recv(ch->cli, ch->buf, SHMCHAN_MSG_MAX), -EBADMSG);
}

// A frame is published by its length alone: cells the producer index
// covers but whose length is not written are no frame, and the length makes
// them one.
static void test_client_recv_unpublished(void **state) {
	struct chan *ch = *state;
	const uint32_t len = 100;

	raw_enqueue(ch->resp_ring, 0, SHMCHAN_MSG_CELLS(len));
	assert_false(shmchan_client_has_response(ch->cli));
	assert_int_equal(shmchan_client_recv(ch->cli, ch->buf, SHMCHAN_MSG_MAX), 0);
	__atomic_store_n(
		shmchan_cell_word(
			shmchan_ring_cells(ch->resp_ring),
			ch->cli->resp.pos & ch->cli->resp.mask
		),
		len,
		__ATOMIC_RELEASE
	);
	assert_true(shmchan_client_has_response(ch->cli));
	assert_int_equal(shmchan_client_recv(ch->cli, ch->buf, SHMCHAN_MSG_MAX), (int)len);
}

// ---- server side: what a hostile client can do to the request ring ----

static void assert_server_rejects(struct chan *ch, size_t buf_len) {
	uint64_t requests = shmchan_server_stats(ch->srv)->requests;
	uint32_t pos = ch->srv->req.pos;

	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, buf_len), -EBADMSG);
	// Nothing taken, nothing counted.
	assert_int_equal(ch->srv->req.pos, pos);
	assert_int_equal(shmchan_server_stats(ch->srv)->requests, requests);
	assert_true(strlen(shmchan_last_error()) > 0);
}

static void test_server_frame_too_short(void **state) {
	struct chan *ch = *state;

	raw_enqueue(ch->req_ring, SHMCHAN_MSG_MIN - 1, 1);
	assert_server_rejects(ch, SHMCHAN_MSG_MAX);
}

// A zero length is no frame, whatever the producer index says.
static void test_server_frame_zero(void **state) {
	struct chan *ch = *state;

	raw_enqueue(ch->req_ring, 0, 1);
	assert_false(shmchan_server_has_request(ch->srv));
	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), 0);
	assert_int_equal(ch->srv->req.pos, 0);
}

static void test_server_frame_too_long(void **state) {
	struct chan *ch = *state;

	// All its cells are published: only the length itself is wrong.
	raw_enqueue(ch->req_ring, SHMCHAN_MSG_MAX + 1, SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MAX + 1));
	assert_server_rejects(ch, RECV_BUF_LEN);
}

static void test_server_frame_huge(void **state) {
	struct chan *ch = *state;

	raw_enqueue(ch->req_ring, UINT32_MAX, 1);
	assert_server_rejects(ch, SHMCHAN_MSG_MAX);
}

static void test_server_frame_over_buf_len(void **state) {
	struct chan *ch = *state;

	assert_int_equal(client_send_msg(ch, 100, 1), 0);
	assert_server_rejects(ch, 99);
	server_recv_expect(ch, 100, 1);
}

// A frame's cells written but not its length: nothing to take, until the
// length comes.
static void test_server_partial_message(void **state) {
	struct chan *ch = *state;
	const uint32_t len = 100;

	raw_enqueue(ch->req_ring, 0, SHMCHAN_MSG_CELLS(len));
	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), 0);
	__atomic_store_n(
		shmchan_cell_word(shmchan_ring_cells(ch->req_ring), 0),
		len,
		__ATOMIC_RELEASE
	);
	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), (int)len);
	assert_int_equal(ch->srv->req.pos, SHMCHAN_MSG_CELLS(len));
}

// A valid message waits at the daemon's index in each case: only the
// producer tail is wrong. The busy path never reads it (the message is
// taken); the check before the poller sleeps catches it.
static void test_server_prod_tail_backwards(void **state) {
	struct chan *ch = *state;
	const uint32_t lag = SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MAX);

	assert_int_equal(client_send_msg(ch, 40, 1), 0);
	server_recv_expect(ch, 40, 1);
	assert_int_equal(shmchan_server_idle_check(ch->srv), 0);
	assert_int_equal(client_send_msg(ch, 40, 2), 0);
	set_req_tail(ch, ch->srv->req.pos - lag - 1);
	assert_int_equal(shmchan_server_idle_check(ch->srv), -EBADMSG);
	assert_true(strlen(shmchan_last_error()) > 0);
	server_recv_expect(ch, 40, 2);
	// Behind by the longest frame at most: what the daemon sees after it
	// took a frame by its length, before the client stored its index.
	set_req_tail(ch, ch->srv->req.pos - lag);
	assert_int_equal(shmchan_server_idle_check(ch->srv), 0);
	set_req_tail(ch, ch->srv->req.pos - ch->g.ring_cells);
	assert_int_equal(shmchan_server_idle_check(ch->srv), -EBADMSG);
}

static void test_server_prod_tail_past_capacity(void **state) {
	struct chan *ch = *state;

	assert_int_equal(client_send_msg(ch, 40, 1), 0);
	set_req_tail(ch, ch->srv->req.pos + ch->g.ring_cells);
	assert_int_equal(shmchan_server_idle_check(ch->srv), -EBADMSG);
	set_req_tail(ch, ch->srv->req.pos + UINT32_MAX / 2);
	assert_int_equal(shmchan_server_idle_check(ch->srv), -EBADMSG);
	// At most the capacity published: fine.
	set_req_tail(ch, ch->srv->req.pos + ch->g.ring_cells - 1);
	assert_int_equal(shmchan_server_idle_check(ch->srv), 0);
	server_recv_expect(ch, 40, 1);
}

// What the daemon wrote into the control block and the client never may:
// a client that wiped or rewrote it is caught before the poller sleeps.
static void test_server_idle_check_control_block(void **state) {
	struct chan *ch = *state;
	struct shmchan_ctrl *ctrl = ch->srv->ctrl;

	assert_int_equal(shmchan_server_idle_check(ch->srv), 0);
	ctrl->magic = 0;
	assert_int_equal(shmchan_server_idle_check(ch->srv), -EBADMSG);
	ctrl->magic = SHMCHAN_MAGIC;
	ctrl->generation++;
	assert_int_equal(shmchan_server_idle_check(ch->srv), -EBADMSG);
	ctrl->generation--;
	assert_int_equal(shmchan_server_idle_check(ch->srv), 0);
}

// The client writes the daemon's side of the request ring: the daemon never
// reads it, and overwrites it with its own index.
static void test_server_ignores_cons_index(void **state) {
	struct chan *ch = *state;

	assert_int_equal(client_send_msg(ch, 50, 1), 0);
	ch->req_ring->cons.head = 12345;
	ch->req_ring->cons.tail = 999;
	server_recv_expect(ch, 50, 1);
	assert_int_equal(ch->req_ring->cons.head, ch->srv->req.pos);
	assert_int_equal(ch->req_ring->cons.tail, ch->srv->req.pos);
}

// ---- server side: what a hostile client can do to the response ring ----

// The daemon reads the client's consumer tail only when a response does not
// fit by the value it read last; then it checks it.
static void test_server_cons_tail_past_producer(void **state) {
	struct chan *ch = *state;
	uint32_t capacity = ch->g.ring_cells - 1, pos, seed = 0;

	// Fill the ring (the client takes nothing) until a response is refused.
	while (server_send_msg(ch, LEN_2_CELLS, seed) == 0)
		seed++;
	pos = ch->srv->resp.pos;
	assert_true(pos >= capacity - 1);
	ch->resp_ring->cons.tail = pos + 1;
	assert_int_equal(server_send_msg(ch, 40, 2), -EBADMSG);
	ch->resp_ring->cons.tail = pos + UINT32_MAX / 2;
	assert_int_equal(server_send_msg(ch, 40, 2), -EBADMSG);
	// Too far behind: more than the capacity in use.
	ch->resp_ring->cons.tail = pos - ch->g.ring_cells;
	assert_int_equal(server_send_msg(ch, 40, 2), -EBADMSG);
	assert_int_equal(ch->srv->resp.pos, pos);
	assert_int_equal(ch->resp_ring->prod.tail, pos);
	// Behind what the client had taken: its index moved backwards.
	ch->resp_ring->cons.tail = ch->srv->resp.peer - 1;
	assert_int_equal(server_send_msg(ch, 40, 2), -EBADMSG);
	// Where it was: a full ring, not corruption.
	ch->resp_ring->cons.tail = ch->srv->resp.peer;
	assert_int_equal(server_send_msg(ch, 40, 2), -ENOBUFS);
	assert_int_equal(shmchan_server_stats(ch->srv)->responses, seed);
	// Room again: the send reads the tail again and goes through.
	ch->resp_ring->cons.tail = pos;
	assert_int_equal(server_send_msg(ch, 40, 2), 0);
}

// The cells of the requests taken go back to the client at the flush that
// ends the batch, not at each take: the client sees the ring's room grow
// once per batch.
static void test_server_frees_cells_at_flush(void **state) {
	struct chan *ch = *state;
	uint32_t free_before;

	free_before = rte_ring_free_count(ch->req_ring);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(client_send_msg(ch, 40, i), 0);
	for (uint32_t i = 0; i < 3; i++) {
		msg_fill(ch->expect, 40, i);
		assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), 40);
		assert_memory_equal(ch->buf, ch->expect, 40);
	}
	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), 0);
	assert_int_equal(ch->req_ring->cons.tail, 0);
	assert_int_equal(
		rte_ring_free_count(ch->req_ring),
		free_before - 3 * SHMCHAN_MSG_CELLS(40)
	);
	shmchan_server_flush(ch->srv);
	assert_int_equal(ch->req_ring->cons.head, ch->srv->req.pos);
	assert_int_equal(ch->req_ring->cons.tail, ch->srv->req.pos);
	assert_int_equal(rte_ring_free_count(ch->req_ring), free_before);

	// A large message's cells go back at once: the client can write the
	// next one while the daemon handles it.
	assert_int_equal(client_send_msg(ch, 4096, 7), 0);
	msg_fill(ch->expect, 4096, 7);
	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), 4096);
	assert_memory_equal(ch->buf, ch->expect, 4096);
	assert_int_equal(ch->req_ring->cons.tail, ch->srv->req.pos);
	assert_int_equal(rte_ring_free_count(ch->req_ring), free_before);
}

// The daemon never reads the client's producer tail on the busy path:
// messages published by their lengths are taken whatever the tail says.
static void test_server_uses_checked_tail(void **state) {
	struct chan *ch = *state;

	assert_int_equal(client_send_msg(ch, 40, 1), 0);
	assert_int_equal(client_send_msg(ch, 60, 2), 0);
	set_req_tail(ch, 0);
	server_recv_expect(ch, 40, 1);
	server_recv_expect(ch, 60, 2);
	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), 0);
}

// A client rewrites size, mask and capacity of both shared ring headers (and
// the daemon's own indices there): the daemon goes on with its private
// geometry, inside the region.
static void test_server_ignores_ring_header(void **state) {
	struct chan *ch = *state;
	struct rte_ring *rings[] = {ch->req_ring, ch->resp_ring};
	const uint32_t bogus[][3] = {
		{UINT32_MAX, UINT32_MAX, UINT32_MAX},
		{0, 0, 0},
		{1u << 30, (1u << 30) - 1, (1u << 30) - 1},
		{16, 15, 15},
	};

	for (unsigned b = 0; b < 4; b++) {
		// Place the next frames across the end of the cell array, where a
		// wrong mask or size would go astray.
		set_all_indices(ch, b * 7 * ch->g.ring_cells + ch->g.ring_cells - 2);
		for (uint32_t i = 0; i < 3; i++)
			assert_int_equal(client_send_msg(ch, 100 + i, b * 10 + i), 0);
		for (unsigned r = 0; r < 2; r++) {
			rings[r]->size = bogus[b][0];
			rings[r]->mask = bogus[b][1];
			rings[r]->capacity = bogus[b][2];
		}
		ch->resp_ring->prod.head = 77;
		ch->resp_ring->prod.tail = ch->srv->resp.pos + 5;

		for (uint32_t i = 0; i < 3; i++)
			server_recv_expect(ch, 100 + i, b * 10 + i);
		assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), 0);
		for (uint32_t i = 0; i < 3; i++)
			assert_int_equal(server_send_msg(ch, 200 + i, b * 10 + i), 0);

		for (unsigned r = 0; r < 2; r++) {
			rings[r]->size = ch->g.ring_cells;
			rings[r]->mask = ch->g.ring_cells - 1;
			rings[r]->capacity = ch->g.ring_cells - 1;
		}
		// The daemon republished its own producer index.
		assert_int_equal(ch->resp_ring->prod.head, ch->srv->resp.pos);
		assert_int_equal(ch->resp_ring->prod.tail, ch->srv->resp.pos);
		for (uint32_t i = 0; i < 3; i++)
			client_recv_expect(ch, 200 + i, b * 10 + i);
	}
}

// What a daemon bug or a stale process could do to the client: size, mask
// and capacity of both shared ring headers rewritten, and the client's own
// indices there too. The client goes on with its private geometry: its
// frames land in the cells, and cross the end of the cell array, where the
// daemon (with its own private geometry) finds them, it reads the daemon's
// frames from the right cells, and the request ring holds exactly its
// capacity, no more.
static void test_client_ignores_ring_header(void **state) {
	struct chan *ch = *state;
	struct rte_ring *rings[] = {ch->req_ring, ch->resp_ring};
	const uint32_t capacity = ch->g.ring_cells - 1;
	const uint32_t bogus[][3] = {
		{UINT32_MAX, UINT32_MAX, UINT32_MAX},
		{0, 0, 0},
		{1u << 30, (1u << 30) - 1, (1u << 30) - 1},
		{16, 15, 15},
	};

	for (unsigned b = 0; b < 4; b++) {
		uint32_t sent = 0;
		int ret;

		// Place the next frames across the end of the cell array, where a
		// wrong mask or size would go astray.
		set_all_indices(ch, b * 7 * ch->g.ring_cells + ch->g.ring_cells - 2);
		for (unsigned r = 0; r < 2; r++) {
			rings[r]->size = bogus[b][0];
			rings[r]->mask = bogus[b][1];
			rings[r]->capacity = bogus[b][2];
		}
		ch->req_ring->prod.head = 77;
		ch->resp_ring->cons.head = 77;

		for (uint32_t i = 0; i < 3; i++)
			assert_int_equal(client_send_msg(ch, 100 + i, b * 10 + i), 0);
		for (uint32_t i = 0; i < 3; i++)
			server_recv_expect(ch, 100 + i, b * 10 + i);
		for (uint32_t i = 0; i < 3; i++)
			assert_int_equal(server_send_msg(ch, 200 + i, b * 10 + i), 0);
		assert_true(shmchan_client_has_response(ch->cli));
		for (uint32_t i = 0; i < 3; i++)
			client_recv_expect(ch, 200 + i, b * 10 + i);
		assert_false(shmchan_client_has_response(ch->cli));
		// The client republished its own indices.
		assert_int_equal(ch->req_ring->prod.head, ch->srv->req.pos);
		assert_int_equal(ch->resp_ring->cons.head, ch->srv->resp.pos);

		// Exactly capacity cells of 2-cell messages (and the odd cell
		// left), whatever the shared header says.
		shmchan_server_flush(ch->srv);
		assert_true(shmchan_client_can_enqueue(ch->cli, LEN_2_CELLS));
		while (sent <= capacity && (ret = client_send_msg(ch, LEN_2_CELLS, sent)) == 0)
			sent++;
		assert_int_equal(ret, -ENOBUFS);
		assert_int_equal(sent, capacity / 2);
		assert_false(shmchan_client_can_enqueue(ch->cli, LEN_2_CELLS));
		for (uint32_t i = 0; i < sent; i++)
			server_recv_expect(ch, LEN_2_CELLS, i);
		assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), 0);
		shmchan_server_flush(ch->srv);
	}
}

// The response ring's producer tail, which the daemon stores at the flush
// (for tools: the client reads the frames' lengths).
static uint32_t resp_published(const struct chan *ch) {
	return __atomic_load_n(&ch->resp_ring->prod.tail, __ATOMIC_ACQUIRE);
}

static void server_enqueue_msg(struct chan *ch, size_t len, uint32_t seed) {
	msg_fill(ch->expect, len, seed);
	assert_int_equal(
		shmchan_server_enqueue(
			ch->srv,
			ch->expect,
			SHMCHAN_MSG_MIN,
			ch->expect + SHMCHAN_MSG_MIN,
			len - SHMCHAN_MSG_MIN
		),
		0
	);
}

// A response is published (its length written) at once when no request
// waits; while requests wait, the first is held, and with it those after
// it, until no request waits, the flush, or SHMCHAN_RESP_HOLD_CELLS held.
// The producer index follows at the flush.
static void test_server_publishes_responses(void **state) {
	struct chan *ch = *state;
	// A response of this many cells reaches the bound in four.
	const size_t big = SHMCHAN_RESP_HOLD_CELLS / 4 * SHMCHAN_CELL_SIZE - SHMCHAN_FRAME_HDR;

	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(client_send_msg(ch, LEN_1_CELL, i), 0);
	// Two requests wait behind the first and the second: held.
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), LEN_1_CELL);
		server_enqueue_msg(ch, LEN_1_CELL, 10 + i);
		assert_false(shmchan_client_has_response(ch->cli));
		assert_int_equal(shmchan_client_recv(ch->cli, ch->buf, RECV_BUF_LEN), 0);
	}
	// The last one: all three go at once, the index at the flush.
	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), LEN_1_CELL);
	server_enqueue_msg(ch, LEN_1_CELL, 12);
	assert_true(shmchan_client_has_response(ch->cli));
	assert_int_equal(resp_published(ch), 0);
	shmchan_server_flush(ch->srv);
	assert_int_equal(resp_published(ch), 3);
	for (uint32_t i = 0; i < 3; i++)
		client_recv_expect(ch, LEN_1_CELL, 10 + i);

	// Held while a request waits, published by the flush.
	for (uint32_t i = 0; i < 2; i++)
		assert_int_equal(client_send_msg(ch, LEN_1_CELL, i), 0);
	assert_int_equal(shmchan_server_recv(ch->srv, ch->buf, SHMCHAN_MSG_MAX), LEN_1_CELL);
	server_enqueue_msg(ch, LEN_1_CELL, 20);
	assert_false(shmchan_client_has_response(ch->cli));
	shmchan_server_flush(ch->srv);
	assert_true(shmchan_client_has_response(ch->cli));
	assert_int_equal(resp_published(ch), 4);
	client_recv_expect(ch, LEN_1_CELL, 20);

	// Held while a request waits, up to the bound: the fourth large
	// response reaches it and publishes all four.
	server_recv_expect(ch, LEN_1_CELL, 1);
	for (uint32_t i = 0; i < 2; i++)
		assert_int_equal(client_send_msg(ch, LEN_1_CELL, i), 0);
	server_recv_expect(ch, LEN_1_CELL, 0);
	for (uint32_t i = 0; i < 3; i++) {
		server_enqueue_msg(ch, big, 30 + i);
		assert_false(shmchan_client_has_response(ch->cli));
	}
	server_enqueue_msg(ch, big, 33);
	assert_true(shmchan_client_has_response(ch->cli));
	for (uint32_t i = 0; i < 4; i++)
		client_recv_expect(ch, big, 30 + i);
	server_recv_expect(ch, LEN_1_CELL, 1);
}

int main(void) {
#define CHAN_TEST(f) cmocka_unit_test_setup_teardown(f, chan_setup, chan_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry_init),
		cmocka_unit_test(test_geometry_check_rejects),
		CHAN_TEST(test_server_create_rejects),
		CHAN_TEST(test_server_layout),
		CHAN_TEST(test_client_open_rejects),
		CHAN_TEST(test_roundtrip_both_directions),
		CHAN_TEST(test_pipelined),
		CHAN_TEST(test_req_frame_bytes),
		CHAN_TEST(test_resp_frame_bytes),
		CHAN_TEST(test_wrap_client_to_server),
		CHAN_TEST(test_wrap_server_to_client),
		CHAN_TEST(test_index_wrap_u32),
		CHAN_TEST(test_full_ring_client_to_server),
		CHAN_TEST(test_full_ring_server_to_client),
		CHAN_TEST(test_max_message),
		CHAN_TEST(test_message_size_limits),
		CHAN_TEST(test_client_recv_small_buffer),
		CHAN_TEST(test_client_recv_bad_frame),
		CHAN_TEST(test_client_recv_unpublished),
		CHAN_TEST(test_server_frame_too_short),
		CHAN_TEST(test_server_frame_zero),
		CHAN_TEST(test_server_frame_too_long),
		CHAN_TEST(test_server_frame_huge),
		CHAN_TEST(test_server_frame_over_buf_len),
		CHAN_TEST(test_server_partial_message),
		CHAN_TEST(test_server_prod_tail_backwards),
		CHAN_TEST(test_server_prod_tail_past_capacity),
		CHAN_TEST(test_server_idle_check_control_block),
		CHAN_TEST(test_server_ignores_cons_index),
		CHAN_TEST(test_server_cons_tail_past_producer),
		CHAN_TEST(test_server_frees_cells_at_flush),
		CHAN_TEST(test_server_uses_checked_tail),
		CHAN_TEST(test_server_ignores_ring_header),
		CHAN_TEST(test_client_ignores_ring_header),
		CHAN_TEST(test_server_publishes_responses),
	};
#undef CHAN_TEST

	return cmocka_run_group_tests(tests, NULL, NULL);
}
