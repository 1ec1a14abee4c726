// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// libFuzzer harness of the daemon's end of a channel (shmchan/server.c). The
// input is a program of a hostile client: it writes any bytes anywhere in its
// region (cells, frame lengths, ring headers, indices, need-wakeup flags, the
// control block), publishes frames honest or not, moves the producer tail of
// the request ring and the consumer tail of the response ring to any value,
// between the daemon's calls of shmchan_server_recv(),
// shmchan_server_enqueue(), shmchan_server_send(), shmchan_server_flush() and
// shmchan_server_idle_check(). After each recv the harness applies the
// channel's own validation of a request (as channel_serve() in
// server/channel_serve.c: frame length against payload_len, then
// api_check_header() of server/api.c).
//
// Checked after every call, against a model of the protocol written from
// docs/protocol.md (layout version 5: a frame is published by its length
// word, and a consumer never reads the producer's index): the return value
// (message, empty, -EBADMSG, -ENOBUFS, -EMSGSIZE), the bytes copied out (the
// frame's, wrapping at the end of the cells, and not one byte more into the
// daemon's buffer), the daemon's own index, and the whole region byte for
// byte: the model writes into a copy of the region what the daemon must
// write, and nothing else, and the region must then equal that copy. The
// model of recv never looks at the request ring's producer index, which the
// fuzzer moves at will: a daemon that still read it would disagree with the
// model. The region is a heap block of exactly its size, and so is the
// daemon's buffer of a recv, so AddressSanitizer catches any access outside
// either.
//
// Two more oracles take the client's side. While the client behaves (its
// frames as the client library writes them, within the room it has, and
// nothing else written into the request ring or the control block's setup
// fields), the daemon must never refuse a request nor fail its idle check.
// While the client leaves the response ring alone, a client walking the
// length words from its own index, as the client library does, must find
// exactly the responses the daemon published: up to the first one held
// (more requests waiting), and every one of them after a flush.

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
// Bytes of a response header at most: a response's 12, then an event's 16,
// as the daemon frames an event.
#define FUZZ_HDR_MAX (sizeof(struct gr_api_response) + sizeof(struct gr_api_event))
// What the harness fills the daemon's buffer with before a recv: any byte of
// it still there past the message was not written.
#define FUZZ_CANARY 0xa5

// New operations go at the end: the seeds of fuzz/corpus/ are programs of
// these numbers.
enum fuzz_op {
	OP_WRITE_CELLS, // u32 offset, u8 n, n bytes: into the request ring's cells
	OP_PUBLISH_FRAME, // u32 frame length, u16 n, n bytes: a frame at the client's index
	OP_SET_PROD_TAIL, // u32: the request ring's producer head and tail
	OP_RECV, // the daemon takes a request, and validates it
	OP_SEND, // u32 payload length: the daemon sends a response (enqueue, flush)
	OP_SET_CONS_TAIL, // u32: the response ring's consumer head and tail
	OP_CONSUME_ALL, // the client reads every response published
	OP_SCRIBBLE, // u32 offset, u8 n, n bytes: anywhere in the region
	OP_SLEEP_FLAG, // u32: client_sleeping
	OP_ARM, // the daemon arms its doorbell and re-checks the ring
	OP_FLUSH, // the daemon ends a batch
	OP_CPU_HINT, // u32: client_cpu, then the poller reads the client's hints
	OP_ENQUEUE, // u8 flags, u32 length (see op_enqueue()): enqueue, no flush
	OP_IDLE_CHECK, // the daemon checks the region before it sleeps
	OP_RECV_SHORT, // u32 buffer length: a recv into a buffer of that many bytes
	OP_MOVE_PROD_TAIL, // u8 side, u32 distance: the request ring's producer index
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
	uint8_t *expect; // g.region_size bytes: the region as the model says it must be
	struct shmchan_server *s;
	struct shmchan_ctrl *ctrl; // at the region's start
	struct rte_ring *req, *resp;
	uint8_t *req_cells, *resp_cells;
	size_t ring_bytes;
	uint32_t client_pos; // the hostile client's producer index (its own idea)
	uint32_t client_resp_pos; // the client's consumer index of responses (its own idea)
	uint8_t *buf; // SHMCHAN_MSG_MAX: the daemon's private copy of a request
	uint8_t *want; // SHMCHAN_MSG_MAX: what the model expects
	uint8_t *payload; // SHMCHAN_MSG_MAX: payload of the daemon's responses
	uint8_t *frame; // SHMCHAN_FRAME_MAX_BYTES: a response frame as the model writes it
	uint8_t hdr[FUZZ_HDR_MAX]; // header of the daemon's responses
};

static struct harness h;

// What the daemon must have done so far, kept by the harness from the calls
// it made and their results only: never read back from the daemon's state
// or the region, so that the checks compare the daemon with the protocol,
// not with itself.
struct model {
	uint32_t req_pos; // the daemon's consumer index of the request ring
	uint32_t req_published; // the request ring's consumer index last stored
	uint32_t resp_pos; // the daemon's producer index of the response ring
	uint32_t resp_published; // the response ring's producer index last stored
	uint32_t resp_peer; // the response ring's consumer tail last read and accepted
	// The first response whose length is held back (held_len 0: none): it
	// and every response after it are not published yet.
	uint32_t held_pos, held_len;
	// The client has behaved on the request side so far (see the top).
	bool req_honest;
	// The response ring holds only what the daemon wrote, and the client's
	// consumer index is its own, at a frame's start (see the top).
	bool resp_clean;
};

static struct model m;

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
	h.expect = malloc(h.g.region_size);
	h.buf = malloc(SHMCHAN_MSG_MAX);
	h.want = malloc(SHMCHAN_MSG_MAX);
	h.payload = malloc(SHMCHAN_MSG_MAX);
	h.frame = malloc(SHMCHAN_FRAME_MAX_BYTES);
	FUZZ_CHECK(
		h.region && h.expect && h.buf && h.want && h.payload && h.frame,
		"out of memory"
	);
	for (size_t i = 0; i < SHMCHAN_MSG_MAX; i++)
		h.payload[i] = (uint8_t)(i * 7 + 3);
	h.ctrl = (struct shmchan_ctrl *)h.region;
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

// The length word of the cell at index pos of a ring, in the region: a
// frame's length, or 0 while none is published there.
static uint32_t word_at(const uint8_t *cells, uint32_t pos) {
	uint32_t w;
	memcpy(&w, cells + cell_off(pos), sizeof(w));
	return w;
}

// The bytes of the expected image that stand for p, a pointer into the region.
static uint8_t *in_expect(const void *p) {
	return h.expect + ((const uint8_t *)p - h.region);
}

// Start the model's image of the region from the region as it is now,
// before a daemon call: the model then writes into it what the call must
// write.
static void expect_begin(void) {
	memcpy(h.expect, h.region, h.g.region_size);
}

// A field of the region: a ring index (volatile in rte_ring) or a flag.
static void expect_u32(const volatile uint32_t *field, uint32_t v) {
	size_t off = (size_t)((const volatile uint8_t *)field - h.region);

	memcpy(h.expect + off, &v, sizeof(v));
}

static void expect_word(const uint8_t *cells, uint32_t pos, uint32_t v) {
	memcpy(in_expect(cells) + cell_off(pos), &v, sizeof(v));
}

static const char *region_part(size_t off) {
	if (off < h.g.req_ring_off)
		return "control block";
	if (off < (size_t)(h.req_cells - h.region))
		return "request ring header";
	if (off < h.g.resp_ring_off)
		return "request cells";
	if (off < (size_t)(h.resp_cells - h.region))
		return "response ring header";
	return "response cells";
}

// The region must be what the model wrote: the daemon wrote everything it
// must, and nothing else (no byte it has no business with, none it must
// leave to the client). The first difference is named, to read a finding.
static void expect_check(const char *after) {
	if (memcmp(h.expect, h.region, h.g.region_size) == 0)
		return;
	size_t off = 0;
	while (h.expect[off] == h.region[off])
		off++;
	FUZZ_CHECK(
		false,
		"in %s, the region differs from the model at byte %zu (%s): %#x, the model %#x",
		after,
		off,
		region_part(off),
		h.region[off],
		h.expect[off]
	);
}

// The first index of the response ring whose frame the client cannot see
// yet: the first response held, or the daemon's index.
static uint32_t resp_visible_end(void) {
	return m.held_len != 0 ? m.held_pos : m.resp_pos;
}

// What a client finds from index from on, reading the length words as the
// client library does (shmchan_client_peek_inline()): the frames one after
// the other, up to a cell whose length is 0 (nothing published there) or
// out of the framing's bounds, at most the ring's capacity in all. Returns
// the index past the last frame found.
static uint32_t resp_walk(uint32_t from) {
	uint32_t pos = from;

	for (;;) {
		uint32_t len = word_at(h.resp_cells, pos);
		if (len < SHMCHAN_MSG_MIN || len > SHMCHAN_MSG_MAX)
			return pos;
		uint32_t cells = SHMCHAN_MSG_CELLS(len);
		if (pos - from + cells > capacity())
			return pos;
		pos += cells;
	}
}

// A client that left the response ring alone sees exactly the responses
// published, no more (a held one hides itself and those after it) and no
// fewer (each one's length written, and a zero length after the last).
static void resp_visible_check(const char *after) {
	if (!m.resp_clean)
		return;
	uint32_t end = resp_walk(h.client_resp_pos);
	FUZZ_CHECK(
		end == resp_visible_end(),
		"after %s, a client reading from %u finds responses up to %u, published up to %u",
		after,
		h.client_resp_pos,
		end,
		resp_visible_end()
	);
}

static bool request_waits(void) {
	return word_at(h.req_cells, m.req_pos) != 0;
}

// The client wrote the byte at offset off of the region: the oracles that
// take its side hold only while it kept out of what they rely on.
static void client_wrote(size_t off) {
	if (off < offsetof(struct shmchan_ctrl, daemon_sleeping) ||
	    (off >= h.g.req_ring_off && off < h.g.resp_ring_off))
		m.req_honest = false;
	if (off >= h.g.resp_ring_off)
		m.resp_clean = false;
}

// The channel's validation of the private copy of a request of len bytes
// (channel_serve()).
static void channel_check(const uint8_t *buf, uint32_t len) {
	struct gr_api_request req;

	memcpy(&req, buf, sizeof(req));
	if (req.payload_len != len - sizeof(req))
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

// A recv into a buffer of exactly buf_len bytes, on the heap: a copy past
// it is caught.
static void op_recv(size_t buf_len) {
	uint32_t pos = m.req_pos;
	size_t max_len = buf_len < SHMCHAN_MSG_MAX ? buf_len : SHMCHAN_MSG_MAX;
	uint8_t *buf = buf_len == SHMCHAN_MSG_MAX ? h.buf : malloc(buf_len ? buf_len : 1);
	int want;

	FUZZ_CHECK(buf != NULL, "out of memory");
	// The model: the length word at the daemon's own index says it all. 0:
	// nothing published there yet; out of the framing's bounds (or of the
	// caller's buffer): a corrupt ring; else a frame of that length, whose
	// bytes follow the word, wrapping at the end of the cells.
	uint32_t len = word_at(h.req_cells, pos);
	if (len == 0)
		want = 0;
	else if (len < SHMCHAN_MSG_MIN || len > max_len)
		want = -EBADMSG;
	else
		want = (int)len;

	expect_begin();
	if (want > 0) {
		uint32_t cells = SHMCHAN_MSG_CELLS(len);
		cells_out(
			h.req_cells,
			(cell_off(pos) + SHMCHAN_FRAME_HDR) % h.ring_bytes,
			h.want,
			len
		);
		m.req_pos += cells;
		// The cells go back to the client at the flush, a large frame's
		// at once: the only write of a recv.
		if (cells >= SERVER_FREE_NOW_CELLS) {
			expect_u32(&h.req->cons.head, m.req_pos);
			expect_u32(&h.req->cons.tail, m.req_pos);
			m.req_published = m.req_pos;
		}
	}

	memset(buf, FUZZ_CANARY, buf_len);
	int got = shmchan_server_recv(h.s, buf, buf_len);
	FUZZ_CHECK(got == want, "recv returned %d, the model %d (length word %u)", got, want, len);
	FUZZ_CHECK(
		h.s->req.pos == m.req_pos,
		"recv left the index at %u, the model at %u",
		h.s->req.pos,
		m.req_pos
	);
	expect_check(got > 0 ? "recv" : "a recv that took nothing");
	FUZZ_CHECK(
		!(m.req_honest && got < 0 && buf_len >= SHMCHAN_MSG_MAX),
		"recv refused a frame of an honest client: %d",
		got
	);
	size_t copied = got > 0 ? (size_t)got : 0;
	if (copied > 0)
		FUZZ_CHECK(
			memcmp(buf, h.want, copied) == 0,
			"recv copied other bytes than the frame's"
		);
	for (size_t i = copied; i < buf_len; i++)
		FUZZ_CHECK(
			buf[i] == FUZZ_CANARY,
			"recv of %d wrote byte %zu of its buffer of %zu",
			got,
			i,
			buf_len
		);
	if (got > 0)
		channel_check(buf, (uint32_t)got);
	if (buf != h.buf)
		free(buf);
}

// The end of a batch, in the model: the held response released (its length
// written, which publishes it and every one after it), the response ring's
// producer index stored for tools, the request cells handed back. Each index
// only if it moved since it was stored last: the daemon never reads its
// indices back, so a client that rewrote one keeps what it wrote.
static void model_flush(void) {
	if (m.held_len != 0) {
		expect_word(h.resp_cells, m.held_pos, m.held_len);
		m.held_len = 0;
	}
	if (m.resp_published != m.resp_pos) {
		expect_u32(&h.resp->prod.head, m.resp_pos);
		expect_u32(&h.resp->prod.tail, m.resp_pos);
		m.resp_published = m.resp_pos;
	}
	if (m.req_published != m.req_pos) {
		expect_u32(&h.req->cons.head, m.req_pos);
		expect_u32(&h.req->cons.tail, m.req_pos);
		m.req_published = m.req_pos;
	}
}

// After a flush, whatever the client did before it: every response is
// published, and the producer index is the daemon's if a response was
// enqueued since the last flush (moved: the model's index had moved past
// the one stored).
static void flush_check(bool moved, const char *after) {
	expect_check(after);
	if (moved)
		FUZZ_CHECK(
			h.resp->prod.tail == m.resp_pos && h.resp->prod.head == m.resp_pos,
			"after %s, the response ring's producer index is %u, the daemon's %u",
			after,
			h.resp->prod.tail,
			m.resp_pos
		);
	resp_visible_check(after);
}

// The model of an enqueue of a response of hdr_len + payload_len bytes:
// writes into the expected image what the daemon must write, moves the
// model's state, and returns what the enqueue must return.
static int model_enqueue(size_t hdr_len, uint32_t payload_len) {
	if (payload_len > SHMCHAN_MSG_MAX - hdr_len)
		return -EMSGSIZE;
	uint32_t len = (uint32_t)hdr_len + payload_len;
	uint32_t cells = SHMCHAN_MSG_CELLS(len), pos = m.resp_pos;

	// Room by the consumer tail read (and checked) last; the client's tail
	// is read only when the frame does not fit by it. It only moves
	// forward from the value read last, up to the daemon's index (what
	// was written, published or held: the daemon cannot tell): anything
	// else is corrupt.
	if (cells > capacity() - (pos - m.resp_peer)) {
		uint32_t tail = h.resp->cons.tail;
		if (tail - m.resp_peer > pos - m.resp_peer)
			return -EBADMSG;
		m.resp_peer = tail;
		if (cells > capacity() - (pos - tail))
			return -ENOBUFS;
	}

	// The frame in the order the protocol writes it: a zero length in the
	// cell after it (where the client looks once it took this one), the
	// frame's other bytes (the header, the payload, zeros to the end of
	// its last cell), its length last.
	size_t frame_bytes = (size_t)cells * SHMCHAN_CELL_SIZE;
	memset(h.frame, 0, frame_bytes);
	memcpy(h.frame + SHMCHAN_FRAME_HDR, h.hdr, hdr_len);
	memcpy(h.frame + SHMCHAN_FRAME_HDR + hdr_len, h.payload, payload_len);
	expect_word(h.resp_cells, pos + cells, 0);
	cells_in(
		in_expect(h.resp_cells),
		(cell_off(pos) + SHMCHAN_FRAME_HDR) % h.ring_bytes,
		h.frame + SHMCHAN_FRAME_HDR,
		frame_bytes - SHMCHAN_FRAME_HDR
	);
	// Its length: written at once, unless requests wait and it is the
	// first of a run, which is then held, its length unwritten, and hides
	// the run from the client.
	if (m.held_len != 0) {
		expect_word(h.resp_cells, pos, len);
	} else {
		m.held_pos = pos;
		m.held_len = len;
	}
	m.resp_pos = pos + cells;
	// The run is released (the held length written) once no request waits
	// any more at the daemon's index, or once it holds
	// SHMCHAN_RESP_HOLD_CELLS: a response of that size or more goes at once.
	if (m.held_len != 0 &&
	    (!request_waits() || m.resp_pos - m.held_pos >= SHMCHAN_RESP_HOLD_CELLS)) {
		expect_word(h.resp_cells, m.held_pos, m.held_len);
		m.held_len = 0;
	}
	return 0;
}

// A response of hdr_len bytes of header (a response's, or an event's inside
// it) and payload_len of payload: an enqueue, and with flush a send (an
// enqueue, then on success a flush).
static void op_respond(size_t hdr_len, uint32_t payload_len, bool flush) {
	struct gr_api_response rh = {
		.for_id = payload_len,
		.status = 0,
		.payload_len = payload_len};
	const char *what = flush ? "send" : "enqueue";
	uint32_t pos = m.resp_pos;

	memcpy(h.hdr, &rh, sizeof(rh));
	for (size_t i = sizeof(rh); i < hdr_len; i++)
		h.hdr[i] = (uint8_t)(payload_len + i);

	expect_begin();
	bool moved = m.resp_published != m.resp_pos;
	int want = model_enqueue(hdr_len, payload_len);
	if (want == 0 && flush) {
		moved = true;
		model_flush();
	}

	int got = flush ? shmchan_server_send(h.s, h.hdr, hdr_len, h.payload, payload_len)
			: shmchan_server_enqueue(h.s, h.hdr, hdr_len, h.payload, payload_len);
	FUZZ_CHECK(got == want, "%s returned %d, the model %d", what, got, want);
	FUZZ_CHECK(
		h.s->resp.pos == m.resp_pos,
		"%s left the index at %u, the model at %u (was %u)",
		what,
		h.s->resp.pos,
		m.resp_pos,
		pos
	);
	// A consumer that only ever took what was published leaves its tail
	// where the daemon accepts it.
	FUZZ_CHECK(
		!(m.resp_clean && got == -EBADMSG),
		"%s refused the consumer tail of a client that behaved",
		what
	);
	if (got == 0 && flush) {
		flush_check(moved, what);
		return;
	}
	expect_check(got == 0 ? what : flush ? "a failed send" : "a failed enqueue");
	resp_visible_check(what);
}

// The request ring's producer index moved by a client to around the
// daemon's index (a client knows it: the consumer index, after a flush).
// Side 0: ahead by d, 1: behind by d; 2 and 3: within a few cells (d's low
// byte, signed) of the bounds of the idle check's window, behind and ahead,
// where an off-by-one would hide: an exact distance of thousands of cells
// is out of the fuzzer's reach otherwise.
static void op_move_prod_tail(uint8_t side, uint32_t d) {
	const uint32_t behind = SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MAX);
	uint32_t near = (uint32_t)(int32_t)(int8_t)d, tail;

	switch (side & 3) {
	case 0:
		tail = m.req_pos + d;
		break;
	case 1:
		tail = m.req_pos - d;
		break;
	case 2:
		tail = m.req_pos - behind + near;
		break;
	default:
		tail = m.req_pos + capacity() + near;
		break;
	}
	h.req->prod.head = h.req->prod.tail = tail;
	m.req_honest = false;
}

// An enqueue of a response of a length of v, flags bit 0 with an event's
// header (28 bytes, not the 12 of the daemon's fast path). Flags bit 1: v
// counts the frame's cells, not the payload's bytes, up to twice the hold
// limit (SHMCHAN_RESP_HOLD_CELLS), the frame filling its last cell: the
// daemon compares the cells held with that limit, and a run of responses
// that ends exactly on it is then within the fuzzer's reach.
static void op_enqueue(uint8_t flags, uint32_t v) {
	size_t hdr_len = flags & 1 ? FUZZ_HDR_MAX : sizeof(struct gr_api_response);
	uint32_t payload_len;

	if (flags & 2) {
		size_t cells = v % (2 * SHMCHAN_RESP_HOLD_CELLS + 1);
		size_t len = cells > 0 ? cells * SHMCHAN_CELL_SIZE - SHMCHAN_FRAME_HDR : 0;
		payload_len = len > hdr_len ? (uint32_t)(len - hdr_len) : 0;
	} else {
		payload_len = v % (GR_API_MAX_MSG_LEN + SHMCHAN_CELL_SIZE * 2);
	}
	op_respond(hdr_len, payload_len, false);
}

static void op_flush(void) {
	bool moved = m.resp_published != m.resp_pos;

	expect_begin();
	model_flush();
	shmchan_server_flush(h.s);
	flush_check(moved, "flush");
}

// The daemon's check before it sleeps, against its definition: the control
// block's magic and generation as the daemon wrote them, and the request
// ring's producer index in [pos - SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MAX), pos +
// capacity] around the daemon's index pos (behind by at most the frame it
// took before the client stored its index, ahead by at most a full ring),
// counted modulo 2^32.
static void op_idle_check(void) {
	const uint32_t behind = SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MAX);
	uint32_t tail = h.req->prod.tail;
	bool ctrl_ok = h.ctrl->magic == SHMCHAN_MAGIC && h.ctrl->generation == h.g.generation;
	// The window's distance from its own start: one unsigned comparison.
	bool tail_ok = tail - (m.req_pos - behind) <= behind + capacity();
	int want = ctrl_ok && tail_ok ? 0 : -EBADMSG;

	expect_begin();
	int got = shmchan_server_idle_check(h.s);
	FUZZ_CHECK(
		got == want,
		"idle check returned %d, the model %d (producer index %u, ours %u)",
		got,
		want,
		tail,
		m.req_pos
	);
	FUZZ_CHECK(!(m.req_honest && got != 0), "idle check failed an honest client");
	expect_check("idle check");
}

// A frame of n bytes (below 64 KiB, so always under SHMCHAN_MSG_MAX) that
// announces frame_len, whatever n is, published as the protocol says: a
// zero length in the cell after it, its bytes, its length, then the producer
// indices (which the daemon's recv must not need). The client behaves if the
// frame is legal, its length is n and it fits the room the consumer index
// leaves (docs/protocol.md).
static void op_publish_frame(struct reader *r) {
	uint32_t frame_len = take_u32(r), zero = 0;
	size_t n = take_u16(r);
	uint32_t cells = SHMCHAN_MSG_CELLS(n);
	uint32_t used = h.client_pos - h.req->cons.tail;

	take(r, h.want, n);
	if (frame_len != n || n < SHMCHAN_MSG_MIN || used > capacity() || cells > capacity() - used)
		m.req_honest = false;
	size_t off = cell_off(h.client_pos);
	cells_in(h.req_cells, cell_off(h.client_pos + cells), &zero, sizeof(zero));
	cells_in(h.req_cells, (off + SHMCHAN_FRAME_HDR) % h.ring_bytes, h.want, n);
	cells_in(h.req_cells, off, &frame_len, sizeof(frame_len));
	h.client_pos += cells;
	h.req->prod.head = h.client_pos;
	h.req->prod.tail = h.client_pos;
}

// The client takes the responses. One that left the ring alone walks the
// length words from its own index and must find exactly those published;
// one that did not picks up at the daemon's producer index, stored at its
// last flush, and is in step again if nothing is held or written past it
// and no length is found there (what a terminator left).
static void op_consume_all(void) {
	uint32_t visible = resp_visible_end();

	if (m.resp_clean) {
		resp_visible_check("the client's read");
		h.client_resp_pos = visible;
	} else {
		h.client_resp_pos = h.resp->prod.tail;
		m.resp_clean = h.client_resp_pos == visible && visible == m.resp_pos &&
			       word_at(h.resp_cells, visible) == 0;
	}
	h.resp->cons.head = h.client_resp_pos;
	h.resp->cons.tail = h.client_resp_pos;
}

static void op_write(struct reader *r, size_t base, size_t span) {
	size_t off = take_u32(r) % span;
	uint8_t n = take_u8(r), bytes[UINT8_MAX];

	take(r, bytes, n);
	for (size_t i = 0; i < n; i++) {
		h.region[base + (off + i) % span] = bytes[i];
		client_wrote(base + (off + i) % span);
	}
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

	// Start both rings at any index: the wrap of 2^32 is in reach. The
	// generation follows from it, so that it is not always 0.
	uint32_t start = take_u32(&r);
	h.g.generation = ~start;
	FUZZ_CHECK(shmchan_server_create(&mem, &h.g, &h.s) == 0, "%s", shmchan_last_error());
	struct rte_ring *rings[] = {h.req, h.resp};
	for (unsigned i = 0; i < 2; i++) {
		rings[i]->prod.head = rings[i]->prod.tail = start;
		rings[i]->cons.head = rings[i]->cons.tail = start;
	}
	// The request ring's peer is not the daemon's any more (frames are
	// published by their lengths): left as created.
	h.s->req.pos = h.s->req.published = start;
	h.s->resp.pos = h.s->resp.published = h.s->resp.peer = start;
	h.client_pos = start;
	h.client_resp_pos = start;
	m = (struct model){
		.req_pos = start,
		.req_published = start,
		.resp_pos = start,
		.resp_published = start,
		.resp_peer = start,
		.req_honest = true,
		.resp_clean = true,
	};

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
			m.req_honest = false;
			break;
		case OP_RECV:
			op_recv(SHMCHAN_MSG_MAX);
			break;
		case OP_SEND:
			op_respond(
				sizeof(struct gr_api_response),
				take_u32(&r) % (GR_API_MAX_MSG_LEN + SHMCHAN_CELL_SIZE * 2),
				true
			);
			break;
		case OP_SET_CONS_TAIL: {
			// Any value but the client's own index may tell the
			// daemon that cells still unread are free.
			uint32_t tail = take_u32(&r);
			h.resp->cons.head = h.resp->cons.tail = tail;
			if (tail != h.client_resp_pos)
				m.resp_clean = false;
			break;
		}
		case OP_CONSUME_ALL:
			op_consume_all();
			break;
		case OP_SCRIBBLE:
			op_write(&r, 0, h.g.region_size);
			break;
		case OP_SLEEP_FLAG:
			h.ctrl->client_sleeping = take_u32(&r);
			break;
		case OP_ARM: {
			expect_begin();
			expect_u32(&h.ctrl->daemon_sleeping, SHMCHAN_WAIT_REQUEST);
			shmchan_server_doorbell_arm(h.s);
			expect_check("arm");
			// A request waits exactly when a length is published at
			// the daemon's index, whatever the producer index says.
			bool pending = shmchan_server_has_request(h.s);
			FUZZ_CHECK(pending == request_waits(), "has_request says %d", pending);
			expect_u32(&h.ctrl->daemon_sleeping, 0);
			shmchan_server_doorbell_disarm(h.s);
			expect_check("disarm");
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
			h.ctrl->client_cpu = take_u32(&r);
			expect_begin();
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
			expect_check("reading the hints");
			break;
		}
		case OP_ENQUEUE: {
			uint8_t flags = take_u8(&r);
			op_enqueue(flags, take_u32(&r));
			break;
		}
		case OP_IDLE_CHECK:
			op_idle_check();
			break;
		case OP_RECV_SHORT:
			op_recv(take_u32(&r) % (SHMCHAN_MSG_MAX + SHMCHAN_CELL_SIZE * 2));
			break;
		case OP_MOVE_PROD_TAIL: {
			uint8_t side = take_u8(&r);
			op_move_prod_tail(side, take_u32(&r));
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
