// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench's tests over shared memory, every wait a spin (ref_bench.h); what
// each measures: usage() in ref_bench.c.

#include "ref_bench.h"
#include "bench_ring.h"

#include <rte_pause.h>

#define LINE_STOP UINT64_MAX // cacheline: the round trips store 1, 2, 3, ...
#define FRAME_STOP_LEN 0 // ring-*: a real frame holds a 12-byte header
#define STOP_ID 0 // lines-*, chan-*: never a client's request id
#define CHAN_REQ_ID 1
#define CHAN_BATCH 32 // the chan-* follower's flush, as a poller's (server/channel.h)

// A family's ping-pong, pipelined call (top the pipeline up to depth requests,
// take one answer) and stream consumer (its steady rate: the messages after
// the warmup ones, whatever was queued when the producer's clock started),
// from its send, recv and take; a macro, so that no indirect call is timed.
#define FAMILY_TESTS(family, send, recv, take)                                                     \
	static void family##_pingpong_op(struct ctx *c) {                                          \
		send(c);                                                                           \
		recv(c);                                                                           \
	}                                                                                          \
                                                                                                   \
	static void family##_echo_op(struct ctx *c) {                                              \
		for (; c->in_flight < c->o->depth; c->in_flight++)                                 \
			send(c);                                                                   \
		recv(c);                                                                           \
		c->in_flight--;                                                                    \
	}                                                                                          \
                                                                                                   \
	static uint64_t family##_consumer(struct ctx *c) {                                         \
		uint64_t warmup = c->sh->stream_warmup, n = 0;                                     \
		if (warmup == 0)                                                                   \
			c->sh->stream_start_ns = now_ns();                                         \
		while (take(c)) {                                                                  \
			if (++n == warmup)                                                         \
				c->sh->stream_start_ns = now_ns();                                 \
		}                                                                                  \
		c->sh->stream_end_ns = now_ns();                                                   \
		return n;                                                                          \
	}

// Release/acquire is all a ping-pong needs, and no pause in the spins: this is
// the hardware's limit, not a polite spin.
static void line_op(struct ctx *c) {
	uint64_t v = __atomic_load_n(&c->sh->line, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&c->sh->line, v, __ATOMIC_RELEASE);
	while (__atomic_load_n(&c->sh->line, __ATOMIC_ACQUIRE) == v)
		;
}

static void line_stop(struct ctx *c) {
	__atomic_store_n(&c->sh->line, LINE_STOP, __ATOMIC_RELEASE);
}

static uint64_t line_follower(struct ctx *c) {
	uint64_t seen = 0, v, n;
	for (n = 0;; n++) {
		while ((v = __atomic_load_n(&c->sh->line, __ATOMIC_ACQUIRE)) == seen)
			;
		if (v == LINE_STOP)
			return n;
		seen = v + 1;
		__atomic_store_n(&c->sh->line, seen, __ATOMIC_RELEASE);
	}
}

static void ring_send(struct ctx *c) {
	bench_ring_put(c->req_ring, c->tx_frame, c->cells);
}

static void ring_recv(struct ctx *c) {
	bench_ring_get(c->resp_ring, c->rx_frame, c->cells);
}

static bool ring_take(struct ctx *c) {
	bench_ring_get(c->req_ring, c->rx_frame, c->cells);
	return bench_frame_len(c->rx_frame) != FRAME_STOP_LEN;
}

FAMILY_TESTS(ring, ring_send, ring_recv, ring_take)

// The answers still in flight (*-echo) first: each ring then needs room for
// depth messages, not depth + 1.
static void ring_stop(struct ctx *c) {
	for (; c->in_flight > 0; c->in_flight--)
		ring_recv(c);
	bench_ring_put(c->req_ring, c->stop_frame, c->cells);
}

static uint64_t ring_follower(struct ctx *c) {
	uint64_t n;
	for (n = 0; ring_take(c); n++)
		bench_ring_put(c->resp_ring, c->rx_frame, c->cells);
	return n;
}

static void ring_local_op(struct ctx *c) {
	bench_ring_put(c->req_ring, c->tx_frame, c->cells);
	bench_ring_get(c->req_ring, c->rx_frame, c->cells);
	bench_ring_put(c->resp_ring, c->rx_frame, c->cells);
	bench_ring_get(c->resp_ring, c->rx_frame, c->cells);
}

// lines-*: one direction's cells and prod.tail of an rte_ring, used raw, and a side's position.
struct lines_dir {
	uint8_t *cells;
	uint32_t *index;
	uint32_t pos;
};

static struct lines_dir lines_req, lines_resp;

static struct lines_dir lines_dir(struct rte_ring *r) {
	return (struct lines_dir){(uint8_t *)&r[1], (uint32_t *)&r->prod.tail, 0};
}

static uint8_t *lines_cell(const struct lines_dir *d) {
	return d->cells + (size_t)(d->pos & (SHMCHAN_RING_CELLS - 1)) * SHMCHAN_CELL_SIZE;
}

// Copy a frame between the cells at d->pos and buf, wrapping as a ring does.
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

// By the request id, the second word: lines-inline's first is its sequence.
static bool lines_is_stop(const uint8_t *frame) {
	uint32_t id;
	memcpy(&id, frame + sizeof(uint32_t), sizeof(id));
	return id == STOP_ID;
}

// A lines-* test's leader operation, stop and follower, from its send and recv.
#define LINES_TESTS(kind)                                                                          \
	static void kind##_op(struct ctx *c) {                                                     \
		kind##_send(c, &lines_req, c->tx_frame);                                           \
		kind##_recv(c, &lines_resp, c->rx_frame);                                          \
	}                                                                                          \
                                                                                                   \
	static void kind##_stop(struct ctx *c) {                                                   \
		kind##_send(c, &lines_req, c->stop_frame);                                         \
	}                                                                                          \
                                                                                                   \
	static uint64_t kind##_follower(struct ctx *c) {                                           \
		uint64_t n;                                                                        \
		for (n = 0; kind##_recv(c, &lines_req, c->rx_frame), !lines_is_stop(c->rx_frame);  \
		     n++)                                                                          \
			kind##_send(c, &lines_resp, c->rx_frame);                                  \
		return n;                                                                          \
	}

// lines-apart: rte_ring's layout without its functions (no read of the peer's
// index), spinning with rte_pause() as the rings and the channel do.
static void apart_send(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	lines_copy(c, d, frame, true);
	d->pos += c->cells;
	// Release: the cells are written before the reader sees the index.
	__atomic_store_n(d->index, d->pos, __ATOMIC_RELEASE);
}

static void apart_recv(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	while (__atomic_load_n(d->index, __ATOMIC_ACQUIRE) == d->pos)
		rte_pause();
	lines_copy(c, d, frame, false);
	d->pos += c->cells;
}

LINES_TESTS(apart)

// lines-inline: the frame's first word is a sequence (its index + 1), stored
// last, the copy having written 0 there: not yet published.
static void inline_send(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	uint32_t seq = d->pos + 1, *word = (uint32_t *)lines_cell(d);
	memset(frame, 0, sizeof(seq));
	lines_copy(c, d, frame, true);
	// Release: the rest of the frame is written before the reader sees the sequence.
	__atomic_store_n(word, seq, __ATOMIC_RELEASE);
	d->pos += c->cells;
}

static void inline_recv(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	uint32_t *word = (uint32_t *)lines_cell(d);
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != d->pos + 1)
		rte_pause();
	lines_copy(c, d, frame, false);
	d->pos += c->cells;
}

LINES_TESTS(inline)

// chan-*: each side enqueues, and flushes (a fence; a doorbell if the peer
// sleeps, never here) when it has to wait, the follower also after CHAN_BATCH
// requests, as the daemon and client do: once per message each way in a
// ping-pong, once per batch in a stream or pipeline.
static void chan_send_request(struct ctx *c, uint32_t id, bool flush) {
	struct gr_api_request hdr = {.id = id, .type = GR_PING2, .payload_len = c->o->size};
	int ret;
	while ((ret = shmchan_client_enqueue(c->client, &hdr, sizeof(hdr), c->msg, c->o->size)) ==
	       -ENOBUFS) {
		shmchan_client_flush(c->client);
		rte_pause();
	}
	if (ret < 0)
		fail("shmchan_client_enqueue: %s", shmchan_last_error());
	if (flush)
		shmchan_client_flush(c->client);
}

static void chan_recv_response(struct ctx *c) {
	int n;
	while ((n = shmchan_client_recv(c->client, c->chan_buf, SHMCHAN_MSG_MAX)) == 0) {
		shmchan_client_flush(c->client);
		rte_pause();
	}
	if (n < 0)
		fail("shmchan_client_recv: %s", shmchan_last_error());
}

static void chan_follower_flush(struct ctx *c) {
	shmchan_server_flush(c->server);
	c->srv_batch = 0;
}

static uint32_t chan_recv_request(struct ctx *c, int *len) {
	struct gr_api_request hdr;
	while ((*len = shmchan_server_recv(c->server, c->chan_buf, SHMCHAN_MSG_MAX)) == 0) {
		if (c->srv_batch > 0)
			chan_follower_flush(c);
		rte_pause();
	}
	if (*len < 0)
		fail("shmchan_server_recv: %s", shmchan_last_error());
	if (++c->srv_batch == CHAN_BATCH)
		chan_follower_flush(c);
	memcpy(&hdr, c->chan_buf, sizeof(hdr));
	return hdr.id;
}

// The echo of the request in chan_buf, as the daemon's GR_PING2 answers.
static void chan_send_response(struct ctx *c, int len) {
	struct gr_api_response hdr = {.for_id = CHAN_REQ_ID};
	const uint8_t *payload = c->chan_buf + sizeof(struct gr_api_request);
	int ret;
	hdr.payload_len = (uint32_t)len - sizeof(struct gr_api_request);
	while ((ret = shmchan_server_enqueue(c->server, &hdr, sizeof(hdr), payload, hdr.payload_len)
	       ) == -ENOBUFS) {
		chan_follower_flush(c);
		rte_pause();
	}
	if (ret < 0)
		fail("shmchan_server_enqueue: %s", shmchan_last_error());
}

// Batched: the next wait flushes.
static void chan_send(struct ctx *c) {
	chan_send_request(c, CHAN_REQ_ID, false);
}

static bool chan_take(struct ctx *c) {
	int len;
	return chan_recv_request(c, &len) != STOP_ID;
}

FAMILY_TESTS(chan, chan_send, chan_recv_response, chan_take)

static void chan_stop(struct ctx *c) {
	for (; c->in_flight > 0; c->in_flight--)
		chan_recv_response(c);
	chan_send_request(c, STOP_ID, true);
}

static uint64_t chan_follower(struct ctx *c) {
	uint64_t n;
	int len;
	for (n = 0; chan_recv_request(c, &len) != STOP_ID; n++)
		chan_send_response(c, len);
	return n;
}

static void chan_local_op(struct ctx *c) {
	int len;
	chan_send_request(c, CHAN_REQ_ID, true);
	chan_recv_request(c, &len);
	chan_send_response(c, len);
	chan_follower_flush(c);
	chan_recv_response(c);
}

// A channel as the daemon makes one, and the client's end opened on duplicates
// of its fds as if they came over the socket. Disarmed for good: the follower
// never sleeps, so no send rings a doorbell.
void shm_setup(struct ctx *c) {
	struct shmchan_geometry g;
	struct shmchan_mem mem = {0};
	int ret = shmchan_geometry_init(&g, SHMCHAN_RING_CELLS);
	if (ret == 0)
		ret = shmchan_memfd_create(&mem, "ref_bench_chan", g.region_size);
	if (ret == 0)
		ret = shmchan_server_create(&mem, &g, &c->server);
	if (ret < 0)
		fail("channel: %s", shmchan_last_error());
	shmchan_server_doorbell_disarm(c->server);
	int mem_fd = check(dup(mem.fd), "dup");
	int req_fd = check(dup(shmchan_server_req_fd(c->server)), "dup");
	int resp_fd = check(dup(shmchan_server_resp_fd(c->server)), "dup");
	ret = shmchan_client_open(&g, NULL, mem_fd, req_fd, resp_fd, &c->client);
	if (ret < 0)
		fail("channel client: %s", shmchan_last_error());
	c->chan_buf = frame_alloc(SHMCHAN_MSG_MAX);
	lines_req = lines_dir(c->req_ring);
	lines_resp = lines_dir(c->resp_ring);
}

const struct bench shm_benches[] = {
	{"cacheline", "round_trip", 0, line_op, line_stop, line_follower},
	{"ring-pingpong", "round_trip", SIZED, ring_pingpong_op, ring_stop, ring_follower},
	{"ring-stream", "message", SIZED | STREAM, ring_send, ring_stop, ring_consumer},
	{"ring-echo", "call", SIZED | PIPELINED, ring_echo_op, ring_stop, ring_follower},
	{"chan-pingpong", "round_trip", SIZED, chan_pingpong_op, chan_stop, chan_follower},
	{"chan-stream", "message", SIZED | STREAM, chan_send, chan_stop, chan_consumer},
	{"chan-echo", "call", SIZED | PIPELINED, chan_echo_op, chan_stop, chan_follower},
	{"lines-apart", "round_trip", SIZED, apart_op, apart_stop, apart_follower},
	{"lines-inline", "round_trip", SIZED, inline_op, inline_stop, inline_follower},
	{"ring-local", "round_trip", SIZED, ring_local_op, NULL, NULL},
	{"chan-local", "round_trip", SIZED, chan_local_op, NULL, NULL},
	{0},
};
