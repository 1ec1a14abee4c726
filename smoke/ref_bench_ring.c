// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench ring-*: request and answer frames through two SPSC rte_rings in
// the shared memfd, framed and sized as the channel does, enqueued and
// dequeued whole with the rte_ring elem functions: ring-pingpong,
// ring-stream, ring-echo and ring-local (ref_bench.h).

#include "ref_bench.h"

#include "bench_ring.h"

static void ring_send_request(struct ctx *c) {
	bench_ring_put(c->req_ring, c->tx_frame, c->cells);
}

static void ring_recv_response(struct ctx *c) {
	bench_ring_get(c->resp_ring, c->rx_frame, c->cells);
}

void ring_pingpong_leader_op(struct ctx *c) {
	ring_send_request(c);
	ring_recv_response(c);
}

void ring_leader_stop(struct ctx *c) {
	bench_ring_put(c->req_ring, c->stop_frame, c->cells);
}

// ring-pingpong and ring-echo: answer each request with itself.
void ring_pingpong_follower(struct ctx *c) {
	uint64_t n = 0;

	for (;;) {
		bench_ring_get(c->req_ring, c->rx_frame, c->cells);
		if (bench_frame_len(c->rx_frame) == FRAME_STOP_LEN)
			break;
		bench_ring_put(c->resp_ring, c->rx_frame, c->cells);
		n++;
	}
	c->sh->follower_ops = n;
}

// The consumer times the messages after the warmup ones: its steady rate,
// whatever was queued when the producer's clock started.
void ring_stream_follower(struct ctx *c) {
	uint64_t warmup = c->sh->stream_warmup, n = 0;

	if (warmup == 0)
		c->sh->stream_start_ns = now_ns();
	for (;;) {
		bench_ring_get(c->req_ring, c->rx_frame, c->cells);
		if (bench_frame_len(c->rx_frame) == FRAME_STOP_LEN)
			break;
		if (++n == warmup)
			c->sh->stream_start_ns = now_ns();
	}
	c->sh->stream_end_ns = now_ns();
	c->sh->follower_ops = n;
}

void ring_stream_leader_op(struct ctx *c) {
	ring_send_request(c);
}

// ring-stream and chan-stream.
void ring_stream_result(struct ctx *c, uint64_t *ops, uint64_t *elapsed_ns) {
	*ops = c->sh->follower_ops - c->sh->stream_warmup;
	*elapsed_ns = c->sh->stream_end_ns - c->sh->stream_start_ns;
}

void ring_echo_leader_op(struct ctx *c) {
	echo_leader_op(c, ring_send_request, ring_recv_response);
}

void ring_echo_leader_stop(struct ctx *c) {
	echo_leader_stop(c, ring_recv_response, ring_leader_stop);
}

void ring_local_op(struct ctx *c) {
	bench_ring_put(c->req_ring, c->tx_frame, c->cells);
	bench_ring_get(c->req_ring, c->rx_frame, c->cells);
	bench_ring_put(c->resp_ring, c->rx_frame, c->cells);
	bench_ring_get(c->resp_ring, c->rx_frame, c->cells);
}
