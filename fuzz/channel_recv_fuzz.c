// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// libFuzzer harness of the daemon's end of a channel (shmchan/server.c). The
// input is a program of a hostile client: it writes any bytes anywhere in its
// region (cells, frame lengths, ring headers, indices, need-wakeup flags),
// publishes frames honest or not, moves the producer tail of the request ring
// and the consumer tail of the response ring to any value, between the
// daemon's calls of shmchan_server_recv(), shmchan_server_send() and
// shmchan_server_flush(). After
// each recv the harness applies the channel's own validation of a request (as
// channel_serve() in server/channel_serve.c: frame length against payload_len, then
// api_check_header() of server/api.c).
//
// Checked after every call, against a model of the protocol written from
// docs/protocol.md: the return value (message, empty, -EBADMSG, -ENOBUFS),
// the bytes copied out or framed in, the daemon's own index, and that the
// daemon wrote nothing in the region but its own index and, for a send, the
// cells of the frame. The region is a heap block of exactly its size, so
// AddressSanitizer catches any access outside it.

#include "api.h"
#include "server.h"

#include <gr_api.h>
#include <shmchan.h>

#include <rte_log.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Operations of one input at most: enough to wrap a ring many times.
#define FUZZ_OPS_MAX 512

enum fuzz_op {
	OP_WRITE_CELLS, // u32 offset, u8 n, n bytes: into the request ring's cells
	OP_PUBLISH_FRAME, // u32 frame length, u16 n, n bytes: a frame at the client's index
	OP_SET_PROD_TAIL, // u32: the request ring's producer head and tail
	OP_RECV, // the daemon takes a request, and validates it
	OP_SEND, // u32 payload length: the daemon sends a response
	OP_SET_CONS_TAIL, // u32: the response ring's consumer head and tail
	OP_CONSUME_ALL, // the client reads every response (consumer tail = producer tail)
	OP_SCRIBBLE, // u32 offset, u8 n, n bytes: anywhere in the region
	OP_SLEEP_FLAG, // u32: client_sleeping
	OP_ARM, // the daemon arms its doorbell and re-checks the ring
	OP_FLUSH, // the daemon ends a batch
	OP_CPU_HINT, // u32: client_cpu, then the poller reads the client's hints
	OP_COUNT,
};

// The input, read from the front; past its end every field reads as zero.
struct reader {
	const uint8_t *p;
	size_t left;
};

static void take(struct reader *r, void *out, size_t n) {
	size_t k = n < r->left ? n : r->left;

	memcpy(out, r->p, k);
	memset((uint8_t *)out + k, 0, n - k);
	r->p += k;
	r->left -= k;
}

static uint32_t take_u32(struct reader *r) {
	uint32_t v;
	take(r, &v, sizeof(v));
	return v;
}

static uint16_t take_u16(struct reader *r) {
	uint16_t v;
	take(r, &v, sizeof(v));
	return v;
}

static uint8_t take_u8(struct reader *r) {
	uint8_t v;
	take(r, &v, sizeof(v));
	return v;
}

struct harness {
	struct shmchan_geometry g;
	uint8_t *region; // g.region_size bytes, heap: overflows are caught
	uint8_t *shadow; // copy of the region before a daemon call
	struct shmchan_server *s;
	struct rte_ring *req, *resp;
	uint8_t *req_cells, *resp_cells;
	size_t ring_bytes;
	uint32_t client_pos; // the hostile client's producer index (its own idea)
	uint8_t *buf; // SHMCHAN_MSG_MAX: the daemon's private copy of a request
	uint8_t *want; // SHMCHAN_MSG_MAX: what the model expects
	uint8_t *payload; // SHMCHAN_MSG_MAX: payload of the daemon's responses
};

static struct harness h;

#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "channel_recv_fuzz: %s: ", #cond);                         \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv) {
	(void)argc;
	(void)argv;
	FUZZ_CHECK(
		shmchan_geometry_init(&h.g, SHMCHAN_RING_CELLS) == 0,
		"%s",
		shmchan_last_error()
	);
	h.region = aligned_alloc(SHMCHAN_CACHE_LINE, h.g.region_size);
	h.shadow = malloc(h.g.region_size);
	h.buf = malloc(SHMCHAN_MSG_MAX);
	h.want = malloc(SHMCHAN_MSG_MAX);
	h.payload = malloc(SHMCHAN_MSG_MAX);
	FUZZ_CHECK(h.region && h.shadow && h.buf && h.want && h.payload, "out of memory");
	for (size_t i = 0; i < SHMCHAN_MSG_MAX; i++)
		h.payload[i] = (uint8_t)(i * 7 + 3);
	h.req = (struct rte_ring *)(h.region + h.g.req_ring_off);
	h.resp = (struct rte_ring *)(h.region + h.g.resp_ring_off);
	h.req_cells = shmchan_ring_cells(h.req);
	h.resp_cells = shmchan_ring_cells(h.resp);
	h.ring_bytes = (size_t)h.g.ring_cells * SHMCHAN_CELL_SIZE;
	return 0;
}

// Copy n bytes (n below the ring's bytes) from or to a ring's cells at byte
// offset off, wrapping at their end.
static void cells_out(const uint8_t *cells, size_t off, void *dst, size_t n) {
	size_t first = h.ring_bytes - off < n ? h.ring_bytes - off : n;
	memcpy(dst, cells + off, first);
	memcpy((uint8_t *)dst + first, cells, n - first);
}

static void cells_in(uint8_t *cells, size_t off, const void *src, size_t n) {
	size_t first = h.ring_bytes - off < n ? h.ring_bytes - off : n;
	memcpy(cells + off, src, first);
	memcpy(cells, (const uint8_t *)src + first, n - first);
}

static size_t cell_off(uint32_t pos) {
	return (size_t)(pos & (h.g.ring_cells - 1)) * SHMCHAN_CELL_SIZE;
}

static uint32_t capacity(void) {
	return h.g.ring_cells - 1;
}

// Put back into the shadow what the daemon may have written: the region must
// then equal the shadow.
static void shadow_allow(size_t off, size_t n) {
	memcpy(h.shadow + off, h.region + off, n);
}

static void shadow_allow_cells(const uint8_t *cells, uint32_t pos, uint32_t cells_n) {
	size_t off = cell_off(pos), n = (size_t)cells_n * SHMCHAN_CELL_SIZE;
	size_t base = (size_t)(cells - h.region);
	size_t first = h.ring_bytes - off < n ? h.ring_bytes - off : n;

	shadow_allow(base + off, first);
	shadow_allow(base, n - first);
}

static void shadow_check(const char *after) {
	FUZZ_CHECK(
		memcmp(h.shadow, h.region, h.g.region_size) == 0,
		"the daemon wrote in the region where it must not, in %s",
		after
	);
}

static void op_recv(void) {
	uint32_t pos = h.s->req.pos, published = h.req->cons.tail;
	// The daemon reads the client's tail only when the cells up to the tail
	// it read (and checked) last are used up (docs/protocol.md).
	bool reload = h.s->req.peer == pos;
	uint32_t tail = reload ? h.req->prod.tail : h.s->req.peer;
	uint32_t entries = tail - pos, len;
	int want;

	// The model: what docs/protocol.md says the daemon must do.
	cells_out(h.req_cells, cell_off(pos), &len, sizeof(len));
	if (entries == 0)
		want = 0;
	else if (entries > capacity() || len < SHMCHAN_MSG_MIN || len > SHMCHAN_MSG_MAX || SHMCHAN_MSG_CELLS(len) > entries)
		want = -EBADMSG;
	else
		want = (int)len;
	if (want > 0)
		cells_out(
			h.req_cells,
			(cell_off(pos) + SHMCHAN_FRAME_HDR) % h.ring_bytes,
			h.want,
			len
		);

	memcpy(h.shadow, h.region, h.g.region_size);
	int got = shmchan_server_recv(h.s, h.buf, SHMCHAN_MSG_MAX);
	FUZZ_CHECK(got == want, "recv returned %d, the model %d", got, want);
	if (got <= 0) {
		FUZZ_CHECK(h.s->req.pos == pos, "a failed recv moved the index");
		shadow_check("a failed recv");
		return;
	}
	FUZZ_CHECK(memcmp(h.buf, h.want, len) == 0, "recv copied other bytes than the frame's");
	FUZZ_CHECK(h.s->req.pos == pos + SHMCHAN_MSG_CELLS(len), "index not moved past the frame");
	// The cells go back to the client at the flush, a large frame's at once.
	if (SHMCHAN_MSG_CELLS(len) >= SERVER_FREE_NOW_CELLS) {
		shadow_allow(
			h.g.req_ring_off + offsetof(struct rte_ring, cons),
			sizeof(h.req->cons)
		);
		FUZZ_CHECK(
			h.req->cons.tail == h.s->req.pos && h.req->cons.head == h.s->req.pos,
			"consumer index of a large frame not published"
		);
	} else {
		FUZZ_CHECK(
			h.req->cons.tail == published,
			"consumer index published before the flush"
		);
	}
	shadow_check("recv");

	// The channel's validation of the private copy (channel_serve()).
	struct gr_api_request req;
	memcpy(&req, h.buf, sizeof(req));
	if (req.payload_len != (uint32_t)got - sizeof(req))
		return; // detached: frame length disagrees with payload_len
	if (api_check_header(&req) < 0) {
		FUZZ_CHECK(req.payload_len > GR_API_MAX_MSG_LEN, "a legal payload refused");
		return; // answered EMSGSIZE, detached
	}
	FUZZ_CHECK(
		req.payload_len <= GR_API_MAX_MSG_LEN,
		"payload of %u accepted",
		req.payload_len
	);
}

// After a flush: the request cells taken since the last one handed back, if
// any were (the daemon publishes its index when it moved, and never reads it
// back: a client that rewrote it keeps what it wrote). pending: whether the
// daemon's index had moved past what it published, before the flush.
static void flush_check(bool pending, const char *after) {
	if (pending) {
		shadow_allow(
			h.g.req_ring_off + offsetof(struct rte_ring, cons),
			sizeof(h.req->cons)
		);
		FUZZ_CHECK(
			h.req->cons.tail == h.s->req.pos && h.req->cons.head == h.s->req.pos,
			"request cells not handed back by the flush, in %s",
			after
		);
	}
	shadow_check(after);
}

static void op_send(uint32_t payload_len) {
	struct gr_api_response hdr = {
		.for_id = payload_len,
		.status = 0,
		.payload_len = payload_len};
	uint32_t pos = h.s->resp.pos, used = pos - h.s->resp.peer;
	uint32_t len = (uint32_t)sizeof(hdr) + payload_len;
	int want;

	// Room by the consumer tail read (and checked) last; the client's tail
	// is read only when the frame does not fit by it.
	if (payload_len > SHMCHAN_MSG_MAX - sizeof(hdr)) {
		want = -EMSGSIZE;
	} else if (SHMCHAN_MSG_CELLS(len) <= capacity() - used) {
		want = 0;
	} else {
		// The client's tail only moves forward from the value read
		// last, up to our index: anything else is corrupt.
		uint32_t tail = h.resp->cons.tail;
		used = pos - tail;
		if (tail - h.s->resp.peer > pos - h.s->resp.peer)
			want = -EBADMSG;
		else if (SHMCHAN_MSG_CELLS(len) > capacity() - used)
			want = -ENOBUFS;
		else
			want = 0;
	}

	bool pending = h.s->req.published != h.s->req.pos;
	memcpy(h.shadow, h.region, h.g.region_size);
	int got = shmchan_server_send(h.s, &hdr, sizeof(hdr), h.payload, payload_len);
	FUZZ_CHECK(got == want, "send returned %d, the model %d", got, want);
	if (got < 0) {
		FUZZ_CHECK(h.s->resp.pos == pos, "a failed send moved the index");
		shadow_check("a failed send");
		return;
	}
	uint32_t cells = SHMCHAN_MSG_CELLS(len);
	FUZZ_CHECK(h.s->resp.pos == pos + cells, "index not moved past the frame");
	FUZZ_CHECK(
		h.resp->prod.tail == h.s->resp.pos && h.resp->prod.head == h.s->resp.pos,
		"producer index not published"
	);
	// The frame: its length, the header, the payload, zeros to the cell end.
	size_t frame_bytes = (size_t)cells * SHMCHAN_CELL_SIZE;
	uint8_t *copy = malloc(frame_bytes);
	FUZZ_CHECK(copy != NULL, "out of memory");
	cells_out(h.resp_cells, cell_off(pos), copy, frame_bytes);
	FUZZ_CHECK(memcmp(copy, &len, sizeof(len)) == 0, "frame length");
	FUZZ_CHECK(memcmp(copy + SHMCHAN_FRAME_HDR, &hdr, sizeof(hdr)) == 0, "frame header");
	FUZZ_CHECK(
		memcmp(copy + SHMCHAN_FRAME_HDR + sizeof(hdr), h.payload, payload_len) == 0,
		"frame payload"
	);
	for (size_t i = SHMCHAN_FRAME_HDR + len; i < frame_bytes; i++)
		FUZZ_CHECK(copy[i] == 0, "padding byte %zu is %#x", i, copy[i]);
	free(copy);
	shadow_allow_cells(h.resp_cells, pos, cells);
	shadow_allow(h.g.resp_ring_off + offsetof(struct rte_ring, prod), sizeof(h.resp->prod));
	// A send ends its batch: the request cells taken go back too.
	flush_check(pending, "send");
}

static void op_flush(void) {
	bool pending = h.s->req.published != h.s->req.pos;

	memcpy(h.shadow, h.region, h.g.region_size);
	shmchan_server_flush(h.s);
	flush_check(pending, "flush");
}

// A frame of n bytes (below 64 KiB, so always under SHMCHAN_MSG_MAX) that
// announces frame_len, whatever n is.
static void op_publish_frame(struct reader *r) {
	uint32_t frame_len = take_u32(r);
	size_t n = take_u16(r);

	take(r, h.want, n);
	size_t off = cell_off(h.client_pos);
	cells_in(h.req_cells, off, &frame_len, sizeof(frame_len));
	cells_in(h.req_cells, (off + SHMCHAN_FRAME_HDR) % h.ring_bytes, h.want, n);
	h.client_pos += (uint32_t)SHMCHAN_MSG_CELLS(n);
	h.req->prod.head = h.client_pos;
	h.req->prod.tail = h.client_pos;
}

static void op_write(struct reader *r, size_t base, size_t span) {
	size_t off = take_u32(r) % span;
	uint8_t n = take_u8(r), bytes[UINT8_MAX];

	take(r, bytes, n);
	for (size_t i = 0; i < n; i++)
		h.region[base + (off + i) % span] = bytes[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct reader r = {.p = data, .left = size};
	struct shmchan_mem mem = {
		.backing = SHMCHAN_BACKING_MEMFD,
		.base = h.region,
		.size = h.g.region_size,
		.fd = -1,
		.name = "fuzz",
	};

	FUZZ_CHECK(shmchan_server_create(&mem, &h.g, &h.s) == 0, "%s", shmchan_last_error());
	// Start both rings at any index: the wrap of 2^32 is in reach.
	uint32_t start = take_u32(&r);
	struct rte_ring *rings[] = {h.req, h.resp};
	for (unsigned i = 0; i < 2; i++) {
		rings[i]->prod.head = rings[i]->prod.tail = start;
		rings[i]->cons.head = rings[i]->cons.tail = start;
	}
	h.s->req.pos = h.s->req.published = h.s->req.peer = start;
	h.s->resp.pos = h.s->resp.published = h.s->resp.peer = start;
	h.client_pos = start;

	for (unsigned i = 0; i < FUZZ_OPS_MAX && r.left > 0; i++) {
		switch ((enum fuzz_op)(take_u8(&r) % OP_COUNT)) {
		case OP_WRITE_CELLS:
			op_write(&r, (size_t)(h.req_cells - h.region), h.ring_bytes);
			break;
		case OP_PUBLISH_FRAME:
			op_publish_frame(&r);
			break;
		case OP_SET_PROD_TAIL:
			h.req->prod.head = h.req->prod.tail = take_u32(&r);
			break;
		case OP_RECV:
			op_recv();
			break;
		case OP_SEND:
			op_send(take_u32(&r) % (GR_API_MAX_MSG_LEN + SHMCHAN_CELL_SIZE * 2));
			break;
		case OP_SET_CONS_TAIL:
			h.resp->cons.head = h.resp->cons.tail = take_u32(&r);
			break;
		case OP_CONSUME_ALL:
			h.resp->cons.head = h.resp->cons.tail = h.resp->prod.tail;
			break;
		case OP_SCRIBBLE:
			op_write(&r, 0, h.g.region_size);
			break;
		case OP_SLEEP_FLAG:
			h.s->ctrl->client_sleeping = take_u32(&r);
			break;
		case OP_ARM: {
			shmchan_server_doorbell_arm(h.s);
			bool pending = shmchan_server_has_request(h.s);
			FUZZ_CHECK(
				pending == (h.s->req.peer != h.s->req.pos ||
					    h.req->prod.tail != h.s->req.pos),
				"has_request says %d",
				pending
			);
			shmchan_server_doorbell_disarm(h.s);
			break;
		}
		case OP_FLUSH:
			op_flush();
			break;
		case OP_CPU_HINT: {
			// Hints only: any value reads as a CPU number of this
			// machine or as "not known", and moves none of the
			// daemon's own indices.
			struct ring_view req = h.s->req, resp = h.s->resp;
			struct shmchan_peer peer;
			h.s->ctrl->client_cpu = take_u32(&r);
			shmchan_server_peer(h.s, true, &peer);
			FUZZ_CHECK(
				peer.cpu >= -1 && peer.cpu < SHMCHAN_CPU_HINT_MAX,
				"client cpu hint %d",
				peer.cpu
			);
			FUZZ_CHECK(
				memcmp(&req, &h.s->req, sizeof(req)) == 0 &&
					memcmp(&resp, &h.s->resp, sizeof(resp)) == 0,
				"reading the hints moved the daemon's ring views"
			);
			break;
		}
		case OP_COUNT:
			break;
		}
	}
	shmchan_server_destroy(h.s);
	h.s = NULL;
	return 0;
}
