// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench chan-*: a round trip through a real channel with the channel
// library alone, both ends driven as the daemon and the client library
// drive them: chan-pingpong, chan-stream, chan-echo, chan-local
// (ref_bench.h).

#include "ref_bench.h"

#include <gr_api.h>

#include <rte_pause.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

// A request id of 0 never comes from a client: it tells the follower to stop.
#define CHAN_STOP_ID 0
#define CHAN_REQ_ID 1

// Requests the follower takes before it flushes, as a poller's pass
// (server/channel.h CHANNEL_BATCH).
#define CHAN_BATCH 32

// The channel is driven as the daemon and the client library drive it: a
// side enqueues, and flushes (one fence, a doorbell if the peer sleeps, which
// it never does here) when it has to wait, and the follower also after
// CHAN_BATCH requests. A ping-pong thus flushes once per message each way, a
// stream or a pipeline once per batch.
static void chan_send_request(struct ctx *c, uint32_t id, bool flush) {
	struct gr_api_request hdr = {
		.id = id,
		.type = GR_PING2,
		.payload_len = (uint32_t)c->o->size,
	};
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

// Returns the request's id.
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
	struct gr_api_response hdr = {
		.for_id = CHAN_REQ_ID,
		.payload_len = (uint32_t)len - sizeof(struct gr_api_request),
	};
	int ret;

	while ((ret = shmchan_server_enqueue(
			c->server,
			&hdr,
			sizeof(hdr),
			c->chan_buf + sizeof(struct gr_api_request),
			hdr.payload_len
		)) == -ENOBUFS) {
		chan_follower_flush(c);
		rte_pause();
	}
	if (ret < 0)
		fail("shmchan_server_enqueue: %s", shmchan_last_error());
}

// Batched: the next wait flushes.
static void chan_send_call(struct ctx *c) {
	chan_send_request(c, CHAN_REQ_ID, false);
}

void chan_stream_leader_op(struct ctx *c) {
	chan_send_call(c);
}

void chan_pingpong_leader_op(struct ctx *c) {
	chan_send_call(c);
	chan_recv_response(c);
}

void chan_leader_stop(struct ctx *c) {
	chan_send_request(c, CHAN_STOP_ID, true);
}

// chan-pingpong and chan-echo: answer each request with its payload.
void chan_pingpong_follower(struct ctx *c) {
	uint64_t n = 0;
	int len;

	while (chan_recv_request(c, &len) != CHAN_STOP_ID) {
		chan_send_response(c, len);
		n++;
	}
	c->sh->follower_ops = n;
}

void chan_stream_follower(struct ctx *c) {
	uint64_t warmup = c->sh->stream_warmup, n = 0;
	int len;

	if (warmup == 0)
		c->sh->stream_start_ns = now_ns();
	while (chan_recv_request(c, &len) != CHAN_STOP_ID) {
		if (++n == warmup)
			c->sh->stream_start_ns = now_ns();
	}
	c->sh->stream_end_ns = now_ns();
	c->sh->follower_ops = n;
}

void chan_echo_leader_op(struct ctx *c) {
	echo_leader_op(c, chan_send_call, chan_recv_response);
}

void chan_echo_leader_stop(struct ctx *c) {
	echo_leader_stop(c, chan_recv_response, chan_leader_stop);
}

void chan_local_op(struct ctx *c) {
	int len;

	chan_send_request(c, CHAN_REQ_ID, true);
	chan_recv_request(c, &len);
	chan_send_response(c, len);
	chan_follower_flush(c);
	chan_recv_response(c);
}

// A channel as the daemon makes one (geometry, sealed memfd, rings,
// doorbells) and the client's end of it, opened on duplicates of the fds as
// if they had come over the socket. The server is disarmed for good: the
// follower polls and never sleeps, so no send rings a doorbell.
void chan_setup(struct ctx *c) {
	struct shmchan_geometry g;
	struct shmchan_mem mem = {0};
	int ret;

	ret = shmchan_geometry_init(&g, SHMCHAN_RING_CELLS);
	if (ret == 0)
		ret = shmchan_memfd_create(&mem, "ref_bench_chan", g.region_size);
	if (ret == 0)
		ret = shmchan_server_create(&mem, &g, &c->server);
	if (ret < 0)
		fail("channel: %s", shmchan_last_error());
	shmchan_server_doorbell_disarm(c->server);
	int mem_fd = dup(mem.fd);
	int req_fd = dup(shmchan_server_req_fd(c->server));
	int resp_fd = dup(shmchan_server_resp_fd(c->server));
	if (mem_fd < 0 || req_fd < 0 || resp_fd < 0)
		fail("dup: %s", strerror(errno));
	ret = shmchan_client_open(&g, NULL, mem_fd, req_fd, resp_fd, &c->client);
	if (ret < 0)
		fail("channel client: %s", shmchan_last_error());
	c->chan_buf = frame_alloc(SHMCHAN_MSG_MAX);
}
