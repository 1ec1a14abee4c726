// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench: the reference microbenchmarks every channel result is compared
// with (make bench, docs/performance.md). Most run between two processes
// (fork) that share a memfd; one process leads (times and stops the run),
// the other follows. By default the two are pinned with sched_setaffinity
// to the first two CPUs this process may use: two spinning processes on one
// CPU would measure the scheduler, not the mechanism, and pinning keeps the
// numbers repeatable. --no-pin leaves them to the scheduler, as the daemon
// and its clients are; for the sleeping tests (eventfd, unix) on a virtual
// machine that can be much faster, since the scheduler then often runs both
// on one CPU and no halted virtual CPU has to be woken.
//
//   cacheline      one cache line bounced between the processes: the
//                  hardware's round-trip limit (no pause in the spin loops)
//   ring-pingpong  a request and its answer through two SPSC rte_rings in the
//                  memfd, framed and sized as the channel does (16-byte
//                  cells, a 12-byte header + SIZE bytes of payload, 5 cells
//                  for GR_PING2), enqueued and dequeued whole with the
//                  rte_ring elem functions; spins with rte_pause()
//   ring-stream    the same messages one way, as fast as the consumer takes
//                  them: the streaming rate of one ring
//   ring-echo      the rings of ring-pingpong with --depth requests in
//                  flight, each echoed back: a pipelined call moves two
//                  messages and each side enqueues and dequeues once per
//                  call, so this, not ring-stream, is the raw ceiling of a
//                  client keeping DEPTH requests in flight
//   chan-pingpong  a round trip through a real channel with the channel
//   chan-stream    library alone (shmchan_client_send/recv on one side,
//                  shmchan_server_recv/send on the other, the region in a
//                  sealed memfd, the doorbells never needed): what the
//                  channel's framing, hardened daemon ring code and doorbell
//                  checks add to the raw rings, without the daemon's poller,
//                  dispatch and handler or the client library
//   chan-echo      ring-echo through the channel library, as chan-pingpong
//   lines-apart    only the cache-line transfers of the rte_ring layout: the
//                  ring-pingpong frames written into and copied out of the
//                  same cells, the producer index stored (release) on a line
//                  of its own after them and spun on (acquire, rte_pause()),
//                  and nothing else: no read of the peer's index, no checks.
//                  The floor of any code on this layout
//   lines-inline   the same frames with the index inside the frame's first
//                  cell (a sequence word stored last), the layout that would
//                  save the index line's transfer each way
//   ring-local     one process doing both sides of a ring-pingpong, or of a
//   chan-local     chan-pingpong, in turn: the instructions alone, every
//                  cache line local
//   eventfd        a wake-up each way through two blocking eventfds
//   unix           a 12-byte header + SIZE bytes each way over a Unix stream
//                  socketpair, blocking send and recv
//   unix-epoll     the same, the follower serving as an event loop does:
//                  epoll_wait on its end, recv(MSG_DONTWAIT) of what is
//                  there, send of the answer; the 3 system calls per request
//                  of shmchand's socket path, with none of its code
//   clock          the cost of clock_gettime(CLOCK_MONOTONIC), one process:
//                  ping2_perf reads it twice per call
//   syscall        the cost of the cheapest system call (getppid), one
//                  process: what every eventfd write or socket call pays
//                  before doing anything
//
// --gap-us US (eventfd, unix) sleeps US before each round trip and times
// each one alone: the wake-up of a peer that has been idle that long, the
// reference of the first request after idling.
//
// No EAL: rte_ring_init() and the ring functions need none.

#include <gr_api.h>
#include <shmchan.h>

#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "bench_util.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SECONDS 0.5
#define DEFAULT_WARMUP 1000
// The leader reads the clock once per CLOCK_CHECK_MASK + 1 operations in a
// timed run: rarely enough to cost nothing, often enough to stop within a
// few ms even at 128 KiB per operation.
#define CLOCK_CHECK_MASK 0x3f
// Cache line of the shared fields: written by different processes, each on
// its own line. DPDK's, as rte_ring's own fields.
#define CACHE_LINE RTE_CACHE_LINE_SIZE
// cacheline: the value the leader stores to stop the follower. The round
// trips store 1, 2, 3, ... and never reach it.
#define LINE_STOP UINT64_MAX
// A frame whose length field is 0 tells the ring follower to stop: a real
// frame holds at least a 12-byte header.
#define FRAME_STOP_LEN 0
// lines-*: a request id of 0 tells the follower to stop (never a client's).
#define LINES_STOP_ID 0
#define NSEC_PER_USEC 1000ull
// Longest --gap-us: one second.
#define MAX_GAP_US 1000000
// *-echo: requests in flight unless --depth says otherwise, as the depth-32
// cells of make bench and the depth-32 goal of docs/performance.md.
#define DEFAULT_DEPTH 32
// Most --depth: as many of the shortest messages (one cell) as fit a ring.
#define MAX_DEPTH (SHMCHAN_RING_CELLS - 1)

const char *log_prefix = "ref_bench";

struct options {
	const struct bench *bench;
	double seconds; // timed run, unless count is set
	uint64_t count; // exact number of operations, 0: timed
	uint64_t warmup;
	size_t size; // payload bytes (ring-*, chan-*, unix)
	bool pin;
	int cpus[2]; // leader, follower
	uint64_t gap_us; // sleep before each operation, 0: none
	unsigned depth; // *-echo: requests in flight; 0 elsewhere
	bool json;
};

// The start of the memfd, shared by both processes. Who writes what: line
// both, in turn (cacheline); stop and stream_warmup the leader; the
// follower_* results the follower, once, before it exits (the parent reads
// them after waitpid, which orders them). Each written by a different side
// sits on its own cache line.
struct shared {
	alignas(CACHE_LINE) uint64_t line;
	alignas(CACHE_LINE) uint32_t stop;
	uint64_t stream_warmup; // *-stream: messages before the measured ones
	alignas(CACHE_LINE) uint64_t follower_ops;
	uint64_t follower_cpu_ns;
	uint64_t follower_vcsw;
	// *-stream: the consumer's timing of the measured messages
	uint64_t stream_start_ns;
	uint64_t stream_end_ns;
};

struct ctx {
	const struct options *o;
	struct shared *sh;
	struct rte_ring *req_ring; // leader -> follower
	struct rte_ring *resp_ring; // follower -> leader
	unsigned cells; // ring-*, chan-*: cells per message
	unsigned in_flight; // *-echo: the leader's requests not answered yet
	uint8_t *tx_frame; // ring-*: a frame the leader enqueues
	uint8_t *rx_frame; // ring-*: where each side dequeues
	uint8_t *stop_frame; // ring-*: a frame of FRAME_STOP_LEN
	int efd_req, efd_resp; // eventfd
	int sock[2]; // unix: leader's end, follower's end
	size_t msg_len; // unix: bytes each way
	uint8_t *msg; // unix; chan-*: the payload
	struct shmchan_server *server; // chan-*: the follower's end
	struct shmchan_client *client; // chan-*: the leader's end
	uint8_t *chan_buf; // chan-*: SHMCHAN_MSG_MAX bytes, where each side receives
	unsigned srv_batch; // chan-*: requests the follower took since its last flush
};

struct bench {
	const char *name;
	const char *unit; // what one operation is
	bool two_processes;
	bool sizes; // takes -z
	bool sleeps; // the follower blocks in the kernel: --gap-us makes sense
	bool pipelined; // the leader keeps --depth requests in flight
	void (*leader_op)(struct ctx *);
	void (*leader_stop)(struct ctx *);
	void (*follower)(struct ctx *);
	// *-stream: the rate is the consumer's; NULL elsewhere.
	void (*leader_result)(struct ctx *, uint64_t *ops, uint64_t *elapsed_ns);
};

// ---- cacheline ----

static void cacheline_leader_op(struct ctx *c) {
	uint64_t v = __atomic_load_n(&c->sh->line, __ATOMIC_RELAXED) + 1;

	// Release/acquire is all a ping-pong needs; no pause: this is the
	// hardware limit, not a polite spin.
	__atomic_store_n(&c->sh->line, v, __ATOMIC_RELEASE);
	while (__atomic_load_n(&c->sh->line, __ATOMIC_ACQUIRE) == v)
		;
}

static void cacheline_leader_stop(struct ctx *c) {
	__atomic_store_n(&c->sh->line, LINE_STOP, __ATOMIC_RELEASE);
}

static void cacheline_follower(struct ctx *c) {
	uint64_t seen = 0, v, n = 0;

	for (;;) {
		while ((v = __atomic_load_n(&c->sh->line, __ATOMIC_ACQUIRE)) == seen)
			;
		if (v == LINE_STOP)
			break;
		seen = v + 1;
		__atomic_store_n(&c->sh->line, seen, __ATOMIC_RELEASE);
		n++;
	}
	c->sh->follower_ops = n;
}

// ---- rings ----

static void ring_enqueue(struct rte_ring *r, const uint8_t *frame, unsigned cells) {
	while (rte_ring_enqueue_bulk_elem(r, frame, SHMCHAN_CELL_SIZE, cells, NULL) == 0)
		rte_pause();
}

static void ring_dequeue(struct rte_ring *r, uint8_t *frame, unsigned cells) {
	while (rte_ring_dequeue_bulk_elem(r, frame, SHMCHAN_CELL_SIZE, cells, NULL) == 0)
		rte_pause();
}

static uint32_t frame_len(const uint8_t *frame) {
	uint32_t len;
	memcpy(&len, frame, sizeof(len));
	return len;
}

static void ring_send_request(struct ctx *c) {
	ring_enqueue(c->req_ring, c->tx_frame, c->cells);
}

static void ring_recv_response(struct ctx *c) {
	ring_dequeue(c->resp_ring, c->rx_frame, c->cells);
}

static void ring_pingpong_leader_op(struct ctx *c) {
	ring_send_request(c);
	ring_recv_response(c);
}

static void ring_leader_stop(struct ctx *c) {
	ring_enqueue(c->req_ring, c->stop_frame, c->cells);
}

// ring-pingpong and ring-echo: answer each request with itself.
static void ring_pingpong_follower(struct ctx *c) {
	uint64_t n = 0;

	for (;;) {
		ring_dequeue(c->req_ring, c->rx_frame, c->cells);
		if (frame_len(c->rx_frame) == FRAME_STOP_LEN)
			break;
		ring_enqueue(c->resp_ring, c->rx_frame, c->cells);
		n++;
	}
	c->sh->follower_ops = n;
}

// The consumer times the messages after the warmup ones: its steady rate,
// whatever was queued when the producer's clock started.
static void ring_stream_follower(struct ctx *c) {
	uint64_t warmup = c->sh->stream_warmup, n = 0;

	if (warmup == 0)
		c->sh->stream_start_ns = now_ns();
	for (;;) {
		ring_dequeue(c->req_ring, c->rx_frame, c->cells);
		if (frame_len(c->rx_frame) == FRAME_STOP_LEN)
			break;
		if (++n == warmup)
			c->sh->stream_start_ns = now_ns();
	}
	c->sh->stream_end_ns = now_ns();
	c->sh->follower_ops = n;
}

// ring-stream and chan-stream.
static void ring_stream_result(struct ctx *c, uint64_t *ops, uint64_t *elapsed_ns) {
	*ops = c->sh->follower_ops - c->sh->stream_warmup;
	*elapsed_ns = c->sh->stream_end_ns - c->sh->stream_start_ns;
}

// ---- lines: the cache-line transfers of a ring layout, and nothing else ----

// Where a lines-* side is in one direction's cells: the ring's cell array
// and its prod.tail (lines-apart publishes there), and its own index.
struct lines_dir {
	uint8_t *cells;
	uint32_t *index;
	uint32_t pos;
};

// The leader's and the follower's own, each in its process (the fork copies
// them): lines-* use the cells and prod.tail of ctx's two rte_rings, raw.
static struct lines_dir lines_req, lines_resp;

static void lines_dir_init(struct lines_dir *d, struct rte_ring *r) {
	d->cells = (uint8_t *)&r[1];
	d->index = (uint32_t *)&r->prod.tail;
	d->pos = 0;
}

// Copy a frame of c->cells cells between the cells at d->pos and buf,
// wrapping at the end of the cell array, as a ring does.
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

// lines-apart: the frame's cells, then the index on a line of its own
// (rte_ring's layout, without its functions: no reads of the peer's index;
// spins with rte_pause(), as the rings and the channel do).
static void lines_apart_send(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	lines_copy(c, d, frame, true);
	d->pos += c->cells;
	// Release: the cells are written before the reader sees the index.
	__atomic_store_n(d->index, d->pos, __ATOMIC_RELEASE);
}

static void lines_apart_recv(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	// Acquire pairs with the release above.
	while (__atomic_load_n(d->index, __ATOMIC_ACQUIRE) == d->pos)
		rte_pause();
	lines_copy(c, d, frame, false);
	d->pos += c->cells;
}

// lines-inline: the index inside the frame's first cell (its first word is
// a sequence, the frame's index + 1, in place of the length), stored last.
static void lines_inline_send(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	uint32_t seq = d->pos + 1;
	uint32_t *word =
		(uint32_t
			 *)(d->cells + (size_t)(d->pos & (SHMCHAN_RING_CELLS - 1)) * SHMCHAN_CELL_SIZE);

	// The copy writes 0 where the sequence goes: not yet published.
	memset(frame, 0, sizeof(seq));
	lines_copy(c, d, frame, true);
	// Release: the rest of the frame is written before the reader sees
	// the sequence.
	__atomic_store_n(word, seq, __ATOMIC_RELEASE);
	d->pos += c->cells;
}

static void lines_inline_recv(struct ctx *c, struct lines_dir *d, uint8_t *frame) {
	uint32_t *word =
		(uint32_t
			 *)(d->cells + (size_t)(d->pos & (SHMCHAN_RING_CELLS - 1)) * SHMCHAN_CELL_SIZE);

	// Acquire pairs with the release above.
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != d->pos + 1)
		rte_pause();
	lines_copy(c, d, frame, false);
	d->pos += c->cells;
}

static void lines_apart_leader_op(struct ctx *c) {
	lines_apart_send(c, &lines_req, c->tx_frame);
	lines_apart_recv(c, &lines_resp, c->rx_frame);
}

static void lines_inline_leader_op(struct ctx *c) {
	lines_inline_send(c, &lines_req, c->tx_frame);
	lines_inline_recv(c, &lines_resp, c->rx_frame);
}

// Both: a frame whose second word (the request id of the frame ref_bench
// sends) is LINES_STOP_ID stops the follower; the leader's requests carry
// id 1. (lines-inline keeps no length: its first word is the sequence.)
static void lines_stop_frame(uint8_t *frame) {
	uint32_t stop = LINES_STOP_ID;
	memcpy(frame + sizeof(uint32_t), &stop, sizeof(stop));
}

static void lines_apart_leader_stop(struct ctx *c) {
	lines_stop_frame(c->tx_frame);
	lines_apart_send(c, &lines_req, c->tx_frame);
}

static void lines_inline_leader_stop(struct ctx *c) {
	lines_stop_frame(c->tx_frame);
	lines_inline_send(c, &lines_req, c->tx_frame);
}

static bool lines_is_stop(const uint8_t *frame) {
	uint32_t id;
	memcpy(&id, frame + sizeof(uint32_t), sizeof(id));
	return id == LINES_STOP_ID;
}

static void lines_apart_follower(struct ctx *c) {
	uint64_t n = 0;

	for (;;) {
		lines_apart_recv(c, &lines_req, c->rx_frame);
		if (lines_is_stop(c->rx_frame))
			break;
		lines_apart_send(c, &lines_resp, c->rx_frame);
		n++;
	}
	c->sh->follower_ops = n;
}

static void lines_inline_follower(struct ctx *c) {
	uint64_t n = 0;

	for (;;) {
		lines_inline_recv(c, &lines_req, c->rx_frame);
		if (lines_is_stop(c->rx_frame))
			break;
		lines_inline_send(c, &lines_resp, c->rx_frame);
		n++;
	}
	c->sh->follower_ops = n;
}

// ---- channel library ----

// A request id of 0 never comes from a client: it tells the follower to stop.
#define CHAN_STOP_ID 0
#define CHAN_REQ_ID 1

// Requests the follower takes before it flushes, as a poller's pass
// (main/channel.c CHANNEL_BATCH).
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

static void chan_pingpong_leader_op(struct ctx *c) {
	chan_send_call(c);
	chan_recv_response(c);
}

static void chan_leader_stop(struct ctx *c) {
	chan_send_request(c, CHAN_STOP_ID, true);
}

// chan-pingpong and chan-echo: answer each request with its payload.
static void chan_pingpong_follower(struct ctx *c) {
	uint64_t n = 0;
	int len;

	while (chan_recv_request(c, &len) != CHAN_STOP_ID) {
		chan_send_response(c, len);
		n++;
	}
	c->sh->follower_ops = n;
}

static void chan_stream_follower(struct ctx *c) {
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

// ---- echo: DEPTH requests in flight ----

// One completed call: top the pipeline up to depth requests, then take one
// answer. The follower is the ping-pong's, which echoes whatever comes; with
// --depth 1 this is the ping-pong. Inlined with the ring or channel
// functions, so the reference pays no indirect call.
static inline __attribute__((always_inline)) void
echo_leader_op(struct ctx *c, void (*send)(struct ctx *), void (*recv)(struct ctx *)) {
	for (; c->in_flight < c->o->depth; c->in_flight++)
		send(c);
	recv(c);
	c->in_flight--;
}

// Take the answers still in flight before the stop request: every request
// sent is answered, and each ring needs room for depth messages, not depth +
// 1 (the stop request behind them while the answers fill the other ring).
static inline __attribute__((always_inline)) void
echo_leader_stop(struct ctx *c, void (*recv)(struct ctx *), void (*stop)(struct ctx *)) {
	for (; c->in_flight > 0; c->in_flight--)
		recv(c);
	stop(c);
}

static void ring_echo_leader_op(struct ctx *c) {
	echo_leader_op(c, ring_send_request, ring_recv_response);
}

static void ring_echo_leader_stop(struct ctx *c) {
	echo_leader_stop(c, ring_recv_response, ring_leader_stop);
}

static void chan_echo_leader_op(struct ctx *c) {
	echo_leader_op(c, chan_send_call, chan_recv_response);
}

static void chan_echo_leader_stop(struct ctx *c) {
	echo_leader_stop(c, chan_recv_response, chan_leader_stop);
}

// ---- one process, both sides ----

static void ring_local_op(struct ctx *c) {
	ring_enqueue(c->req_ring, c->tx_frame, c->cells);
	ring_dequeue(c->req_ring, c->rx_frame, c->cells);
	ring_enqueue(c->resp_ring, c->rx_frame, c->cells);
	ring_dequeue(c->resp_ring, c->rx_frame, c->cells);
}

static void chan_local_op(struct ctx *c) {
	int len;

	chan_send_request(c, CHAN_REQ_ID, true);
	chan_recv_request(c, &len);
	chan_send_response(c, len);
	chan_follower_flush(c);
	chan_recv_response(c);
}

// ---- eventfd ----

static void efd_write(int fd) {
	static const uint64_t one = 1;
	if (write(fd, &one, sizeof(one)) != sizeof(one))
		fail("eventfd write: %s", strerror(errno));
}

static void efd_read(int fd) {
	uint64_t v;
	while (read(fd, &v, sizeof(v)) != sizeof(v)) {
		if (errno != EINTR)
			fail("eventfd read: %s", strerror(errno));
	}
}

static void eventfd_leader_op(struct ctx *c) {
	efd_write(c->efd_req);
	efd_read(c->efd_resp);
}

static void eventfd_leader_stop(struct ctx *c) {
	__atomic_store_n(&c->sh->stop, 1, __ATOMIC_RELEASE);
	efd_write(c->efd_req);
}

static void eventfd_follower(struct ctx *c) {
	uint64_t n = 0;

	for (;;) {
		efd_read(c->efd_req);
		if (__atomic_load_n(&c->sh->stop, __ATOMIC_ACQUIRE))
			break;
		efd_write(c->efd_resp);
		n++;
	}
	c->sh->follower_ops = n;
}

// ---- unix ----

static void sock_send_all(int fd, const uint8_t *buf, size_t len) {
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("send: %s", strerror(errno));
		buf += n;
		len -= (size_t)n;
	}
}

// Returns false at end of file before the first byte.
static bool sock_recv_all(int fd, uint8_t *buf, size_t len) {
	size_t got = 0;
	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("recv: %s", strerror(errno));
		if (n == 0) {
			if (got == 0)
				return false;
			fail("recv: end of file inside a message");
		}
		got += (size_t)n;
	}
	return true;
}

static void unix_leader_op(struct ctx *c) {
	sock_send_all(c->sock[0], c->msg, c->msg_len);
	if (!sock_recv_all(c->sock[0], c->msg, c->msg_len))
		fail("the follower closed the socket");
}

static void unix_leader_stop(struct ctx *c) {
	shutdown(c->sock[0], SHUT_WR);
}

static void unix_follower(struct ctx *c) {
	uint64_t n = 0;

	while (sock_recv_all(c->sock[1], c->msg, c->msg_len)) {
		sock_send_all(c->sock[1], c->msg, c->msg_len);
		n++;
	}
	c->sh->follower_ops = n;
}

// The follower of unix-epoll: each request read as it comes, one
// recv(MSG_DONTWAIT) after each epoll_wait, a request in more than one
// piece waiting for the next wake-up, as an event loop's reads do.
static void unix_epoll_follower(struct ctx *c) {
	struct epoll_event ev = {.events = EPOLLIN};
	int fd = c->sock[1], ep = epoll_create1(EPOLL_CLOEXEC);
	size_t got = 0;
	uint64_t n = 0;

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		fail("epoll: %s", strerror(errno));
	for (;;) {
		int k = epoll_wait(ep, &ev, 1, -1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			fail("epoll_wait: %s", strerror(errno));
		ssize_t r = recv(fd, c->msg + got, c->msg_len - got, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			fail("recv: %s", strerror(errno));
		if (r == 0) {
			if (got != 0)
				fail("recv: end of file inside a message");
			break;
		}
		got += (size_t)r;
		if (got < c->msg_len)
			continue;
		got = 0;
		sock_send_all(fd, c->msg, c->msg_len);
		n++;
	}
	close(ep);
	c->sh->follower_ops = n;
}

// ---- clock ----

static void clock_leader_op(struct ctx *c) {
	struct timespec ts;
	(void)c;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	__asm__ volatile("" : : "r"(&ts) : "memory");
}

// ---- syscall ----

static void syscall_leader_op(struct ctx *c) {
	(void)c;
	syscall(SYS_getppid);
}

static const struct bench benches[] = {
	{"cacheline",
	 "round_trip",
	 true,
	 false,
	 false,
	 false,
	 cacheline_leader_op,
	 cacheline_leader_stop,
	 cacheline_follower,
	 NULL},
	{"ring-pingpong",
	 "round_trip",
	 true,
	 true,
	 false,
	 false,
	 ring_pingpong_leader_op,
	 ring_leader_stop,
	 ring_pingpong_follower,
	 NULL},
	{"ring-stream",
	 "message",
	 true,
	 true,
	 false,
	 false,
	 ring_send_request,
	 ring_leader_stop,
	 ring_stream_follower,
	 ring_stream_result},
	{"ring-echo",
	 "call",
	 true,
	 true,
	 false,
	 true,
	 ring_echo_leader_op,
	 ring_echo_leader_stop,
	 ring_pingpong_follower,
	 NULL},
	{"eventfd",
	 "round_trip",
	 true,
	 false,
	 true,
	 false,
	 eventfd_leader_op,
	 eventfd_leader_stop,
	 eventfd_follower,
	 NULL},
	{"unix",
	 "round_trip",
	 true,
	 true,
	 true,
	 false,
	 unix_leader_op,
	 unix_leader_stop,
	 unix_follower,
	 NULL},
	{"unix-epoll",
	 "round_trip",
	 true,
	 true,
	 true,
	 false,
	 unix_leader_op,
	 unix_leader_stop,
	 unix_epoll_follower,
	 NULL},
	{"chan-pingpong",
	 "round_trip",
	 true,
	 true,
	 false,
	 false,
	 chan_pingpong_leader_op,
	 chan_leader_stop,
	 chan_pingpong_follower,
	 NULL},
	{"chan-stream",
	 "message",
	 true,
	 true,
	 false,
	 false,
	 chan_send_call,
	 chan_leader_stop,
	 chan_stream_follower,
	 ring_stream_result},
	{"chan-echo",
	 "call",
	 true,
	 true,
	 false,
	 true,
	 chan_echo_leader_op,
	 chan_echo_leader_stop,
	 chan_pingpong_follower,
	 NULL},
	{"lines-apart",
	 "round_trip",
	 true,
	 true,
	 false,
	 false,
	 lines_apart_leader_op,
	 lines_apart_leader_stop,
	 lines_apart_follower,
	 NULL},
	{"lines-inline",
	 "round_trip",
	 true,
	 true,
	 false,
	 false,
	 lines_inline_leader_op,
	 lines_inline_leader_stop,
	 lines_inline_follower,
	 NULL},
	{"ring-local", "round_trip", false, true, false, false, ring_local_op, NULL, NULL, NULL},
	{"chan-local", "round_trip", false, true, false, false, chan_local_op, NULL, NULL, NULL},
	{"clock", "call", false, false, false, false, clock_leader_op, NULL, NULL, NULL},
	{"syscall", "call", false, false, false, false, syscall_leader_op, NULL, NULL, NULL},
};
#define N_BENCHES (sizeof(benches) / sizeof(benches[0]))

// ---- setup ----

static size_t align_up(size_t v, size_t a) {
	return (v + a - 1) / a * a;
}

static struct rte_ring *ring_init(uint8_t *mem, const char *name) {
	struct rte_ring *r = (struct rte_ring *)mem;
	int ret = rte_ring_init(r, name, SHMCHAN_RING_CELLS, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ret < 0)
		fail("rte_ring_init: %s", strerror(-ret));
	return r;
}

static uint8_t *frame_alloc(size_t bytes) {
	uint8_t *f = aligned_alloc(CACHE_LINE, align_up(bytes, CACHE_LINE));
	if (f == NULL)
		fail("%s", strerror(ENOMEM));
	memset(f, 0, bytes);
	return f;
}

// A channel as the daemon makes one (geometry, sealed memfd, rings,
// doorbells) and the client's end of it, opened on duplicates of the fds as
// if they had come over the socket. The server is disarmed for good: the
// follower polls and never sleeps, so no send rings a doorbell.
static void chan_setup(struct ctx *c) {
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

// The shared memfd (struct shared, then the two rings) and what each test
// needs, all made before the fork so that both processes inherit them.
static void setup(struct ctx *c, const struct options *o) {
	ssize_t ring_size = rte_ring_get_memsize_elem(SHMCHAN_CELL_SIZE, SHMCHAN_RING_CELLS);
	size_t head = align_up(sizeof(struct shared), CACHE_LINE);
	size_t region;
	uint8_t *base;
	int fd;

	if (ring_size < 0)
		fail("rte_ring_get_memsize_elem: %s", strerror((int)-ring_size));
	region = head + 2 * align_up((size_t)ring_size, CACHE_LINE);
	fd = memfd_create("ref_bench", MFD_CLOEXEC);
	if (fd < 0)
		fail("memfd_create: %s", strerror(errno));
	if (ftruncate(fd, (off_t)region) < 0)
		fail("ftruncate: %s", strerror(errno));
	base = mmap(NULL, region, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		fail("mmap: %s", strerror(errno));
	close(fd);

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->sh = (struct shared *)base;
	c->sh->stream_warmup = o->warmup;
	c->req_ring = ring_init(base + head, "ref_req");
	c->resp_ring = ring_init(base + head + align_up((size_t)ring_size, CACHE_LINE), "ref_resp");

	// A frame as the channel builds it: u32 length, request header,
	// payload, zero padding to whole cells.
	size_t msg = sizeof(struct gr_api_request) + o->size;
	uint32_t len32 = (uint32_t)msg;
	struct gr_api_request hdr = {.id = 1, .type = GR_PING2, .payload_len = (uint32_t)o->size};
	c->cells = SHMCHAN_MSG_CELLS(msg);
	if (c->cells > SHMCHAN_RING_CELLS - 1)
		fail("-z %zu: a message of %u cells does not fit the ring", o->size, c->cells);
	// All the requests in flight, or all their answers, may sit in one
	// ring at once: if they do not fit, the leader and the follower both
	// wait for room that only the other can make.
	if ((uint64_t)o->depth * c->cells > SHMCHAN_RING_CELLS - 1)
		fail("--depth %u: %u messages of %u cells do not fit a ring of %u cells",
		     o->depth,
		     o->depth,
		     c->cells,
		     SHMCHAN_RING_CELLS - 1);
	size_t frame_bytes = (size_t)c->cells * SHMCHAN_CELL_SIZE;
	c->tx_frame = frame_alloc(frame_bytes);
	c->rx_frame = frame_alloc(frame_bytes);
	c->stop_frame = frame_alloc(frame_bytes);
	memcpy(c->tx_frame, &len32, sizeof(len32));
	memcpy(c->tx_frame + SHMCHAN_FRAME_HDR, &hdr, sizeof(hdr));
	payload_fill(c->tx_frame + SHMCHAN_FRAME_HDR + sizeof(hdr), o->size);

	c->efd_req = eventfd(0, EFD_CLOEXEC);
	c->efd_resp = eventfd(0, EFD_CLOEXEC);
	if (c->efd_req < 0 || c->efd_resp < 0)
		fail("eventfd: %s", strerror(errno));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->sock) < 0)
		fail("socketpair: %s", strerror(errno));
	c->msg_len = msg;
	c->msg = frame_alloc(msg);
	memcpy(c->msg, c->tx_frame + SHMCHAN_FRAME_HDR, msg);

	chan_setup(c);
	lines_dir_init(&lines_req, c->req_ring);
	lines_dir_init(&lines_resp, c->resp_ring);
}

static void pin(int cpu) {
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		fail("sched_setaffinity to CPU %d: %s", cpu, strerror(errno));
}

// The first two CPUs this process may run on, or false if it has only one.
static bool default_cpus(int cpus[2]) {
	cpu_set_t set;
	int found = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		fail("sched_getaffinity: %s", strerror(errno));
	for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++) {
		if (CPU_ISSET(cpu, &set))
			cpus[found++] = cpu;
	}
	return found == 2;
}

static void usage(FILE *out) {
	fprintf(out,
		"usage: ref_bench [-T SECONDS | -n COUNT] [-w WARMUP] [-z SIZE] [--cpus A,B | "
		"--no-pin]\n"
		"                 [--gap-us US] [--depth N] [--json] TEST\n"
		"  TEST        cacheline, ring-pingpong, ring-stream, ring-echo, chan-pingpong,\n"
		"              chan-stream, chan-echo, lines-apart, lines-inline, ring-local,\n"
		"              chan-local, eventfd, unix, unix-epoll, clock or syscall\n"
		"  -T SECONDS  measure for this long (default %.1f)\n"
		"  -n COUNT    measure exactly COUNT operations instead\n"
		"  -w WARMUP   operations before measuring (default %d)\n"
		"  -z SIZE     payload bytes of ring-*, chan-*, lines-* and unix messages,\n"
		"              after a 12-byte header (default %d, as GR_PING2; at most %d)\n"
		"  --cpus A,B  pin the leader to CPU A and the follower to CPU B (default: the\n"
		"              first two CPUs this process may use)\n"
		"  --no-pin    let the scheduler place both processes\n"
		"  --gap-us US eventfd, unix: sleep US before each round trip, and time each\n"
		"              round trip alone (the sleeps are not counted)\n"
		"  --depth N   ring-echo, chan-echo only: keep N requests in flight (default %d;\n"
		"              all N must fit one ring); an operation is one call answered\n"
		"  --json      print one JSON object on stdout\n",
		DEFAULT_SECONDS,
		DEFAULT_WARMUP,
		GR_PING2_LEN,
		GR_API_MAX_MSG_LEN,
		DEFAULT_DEPTH);
}

enum long_only_option {
	OPT_CPUS = 256,
	OPT_NO_PIN,
	OPT_GAP_US,
	OPT_DEPTH,
	OPT_JSON,
};

static void parse_options(int argc, char **argv, struct options *o) {
	static const struct option long_options[] = {
		{"cpus", required_argument, NULL, OPT_CPUS},
		{"no-pin", no_argument, NULL, OPT_NO_PIN},
		{"gap-us", required_argument, NULL, OPT_GAP_US},
		{"depth", required_argument, NULL, OPT_DEPTH},
		{"json", no_argument, NULL, OPT_JSON},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool cpus_given = false;
	int ch;

	*o = (struct options){
		.seconds = DEFAULT_SECONDS,
		.warmup = DEFAULT_WARMUP,
		.size = GR_PING2_LEN,
		.pin = true,
	};
	while ((ch = getopt_long(argc, argv, "T:n:w:z:h", long_options, NULL)) != -1) {
		switch (ch) {
		case 'T':
			if (seconds_from_string(optarg, MAX_SECONDS, &o->seconds) < 0)
				fail("-T: '%s' is not a number of seconds from 0 to %d",
				     optarg,
				     MAX_SECONDS);
			break;
		case 'n':
			o->count = parse_number("-n", optarg, 1, UINT64_MAX);
			break;
		case 'w':
			o->warmup = parse_number("-w", optarg, 0, UINT64_MAX);
			break;
		case 'z':
			o->size = (size_t)parse_number("-z", optarg, 0, GR_API_MAX_MSG_LEN);
			break;
		case OPT_CPUS:
			if (sscanf(optarg, "%d,%d", &o->cpus[0], &o->cpus[1]) != 2 ||
			    o->cpus[0] < 0 || o->cpus[1] < 0 || o->cpus[0] >= CPU_SETSIZE ||
			    o->cpus[1] >= CPU_SETSIZE)
				fail("--cpus: '%s' is not two CPU numbers A,B", optarg);
			cpus_given = true;
			break;
		case OPT_NO_PIN:
			o->pin = false;
			break;
		case OPT_GAP_US:
			o->gap_us = parse_number("--gap-us", optarg, 1, MAX_GAP_US);
			break;
		case OPT_DEPTH:
			// The bound of the message size is checked in setup().
			o->depth = (unsigned)parse_number("--depth", optarg, 1, MAX_DEPTH);
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			usage(stderr);
			exit(EXIT_FAILURE);
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		exit(EXIT_FAILURE);
	}
	for (size_t i = 0; i < N_BENCHES; i++) {
		if (strcmp(argv[optind], benches[i].name) == 0)
			o->bench = &benches[i];
	}
	if (o->bench == NULL)
		fail("unknown test '%s' (see --help)", argv[optind]);
	if (o->gap_us > 0 && !o->bench->sleeps)
		fail("--gap-us: only eventfd and unix, whose follower sleeps");
	if (o->depth > 0 && !o->bench->pipelined)
		fail("--depth: only ring-echo and chan-echo, whose leader pipelines");
	if (o->bench->pipelined && o->depth == 0)
		o->depth = DEFAULT_DEPTH;
	if (cpus_given && !o->pin)
		fail("--cpus and --no-pin contradict each other");
	if (o->pin && !cpus_given && !default_cpus(o->cpus)) {
		fprintf(stderr,
			"ref_bench: one CPU only: not pinning; the spinning tests then measure the"
			" scheduler\n");
		o->pin = false;
	}
	if (!o->bench->two_processes)
		o->pin = false;
}

static void __attribute__((noreturn)) follower_main(struct ctx *c) {
	struct rusage ru;

	if (c->o->pin)
		pin(c->o->cpus[1]);
	close(c->sock[0]);
	c->o->bench->follower(c);
	getrusage(RUSAGE_SELF, &ru);
	c->sh->follower_cpu_ns = rusage_cpu_ns(&ru);
	c->sh->follower_vcsw = (uint64_t)ru.ru_nvcsw;
	exit(EXIT_SUCCESS);
}

struct result {
	uint64_t ops;
	uint64_t elapsed_ns;
	uint64_t gap_op_ns; // --gap-us: the operations' own time, the sleeps left out
	uint64_t gap_max_ns; // --gap-us: the slowest operation
	uint64_t leader_cpu_ns;
	uint64_t leader_vcsw;
};

// --gap-us: sleep, then time one operation, until count operations or
// seconds of wall time (sleeps included).
static void gap_run(struct ctx *c, struct result *r, uint64_t start) {
	const struct options *o = c->o;
	const struct timespec gap = {
		.tv_sec = (time_t)(o->gap_us / 1000000),
		.tv_nsec = (long)(o->gap_us % 1000000 * NSEC_PER_USEC),
	};
	uint64_t deadline = start + (uint64_t)(o->seconds * NSEC_PER_SEC);

	for (;;) {
		while (nanosleep(&gap, NULL) < 0 && errno == EINTR)
			;
		uint64_t t0 = now_ns();
		o->bench->leader_op(c);
		uint64_t t1 = now_ns();
		r->ops++;
		r->gap_op_ns += t1 - t0;
		if (t1 - t0 > r->gap_max_ns)
			r->gap_max_ns = t1 - t0;
		if (o->count > 0 ? r->ops >= o->count : t1 >= deadline)
			break;
	}
}

// Set once the leader has told the follower to stop: its exit is expected.
static volatile sig_atomic_t follower_stopping;

// The follower ended before the leader told it to stop (killed, or failed
// and said why): the leader would wait for its answer for ever, spinning or
// blocked. Async-signal-safe.
static void follower_died(int sig) {
	static const char msg[] = "ref_bench: the follower ended during the run\n";

	(void)sig;
	if (follower_stopping)
		return;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		// Nothing more to do: the exit status says it failed.
	}
	_exit(EXIT_FAILURE);
}

static void run(struct ctx *c, struct result *r) {
	const struct options *o = c->o;
	const struct bench *b = o->bench;
	struct rusage before, after;
	pid_t pid = -1;
	int status;

	*r = (struct result){0};
	if (b->two_processes) {
		struct sigaction sa = {.sa_handler = follower_died};
		pid_t leader = getpid();

		// Before the fork: a follower that dies at once is caught too.
		follower_stopping = 0;
		if (sigaction(SIGCHLD, &sa, NULL) < 0)
			fail("sigaction: %s", strerror(errno));
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			fail("fork: %s", strerror(errno));
		if (pid == 0) {
			// No follower spins on a pinned CPU as an orphan.
			die_with_parent(leader);
			follower_main(c);
		}
		close(c->sock[1]);
		if (o->pin)
			pin(o->cpus[0]);
	}

	for (uint64_t i = 0; i < o->warmup; i++)
		b->leader_op(c);
	getrusage(RUSAGE_SELF, &before);
	uint64_t start = now_ns(), end, n = 0;
	if (o->gap_us > 0) {
		gap_run(c, r, start);
		n = r->ops;
		end = start + r->elapsed_ns;
	} else if (o->count > 0) {
		for (; n < o->count; n++)
			b->leader_op(c);
		end = now_ns();
	} else {
		uint64_t deadline = start + (uint64_t)(o->seconds * NSEC_PER_SEC);
		for (;;) {
			b->leader_op(c);
			n++;
			if ((n & CLOCK_CHECK_MASK) == 0 && (end = now_ns()) >= deadline)
				break;
		}
	}
	getrusage(RUSAGE_SELF, &after);
	r->ops = n;
	r->elapsed_ns = end - start;
	if (o->gap_us > 0)
		r->elapsed_ns = r->gap_op_ns;
	r->leader_cpu_ns = rusage_cpu_ns(&after) - rusage_cpu_ns(&before);
	r->leader_vcsw = (uint64_t)(after.ru_nvcsw - before.ru_nvcsw);

	if (!b->two_processes)
		return;
	follower_stopping = 1;
	b->leader_stop(c);
	if (waitpid(pid, &status, 0) < 0)
		fail("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail("the follower exited with status 0x%x", status);
	if (b->leader_result != NULL)
		b->leader_result(c, &r->ops, &r->elapsed_ns);
}

static void print_result(const struct ctx *c, const struct result *r) {
	const struct options *o = c->o;
	const struct bench *b = o->bench;
	double ops = (double)r->ops;
	double ns_per_op = (double)r->elapsed_ns / ops;
	// The follower's totals cover its warmup operations too.
	double follower_ops = (double)(c->sh->follower_ops > 0 ? c->sh->follower_ops : 1);

	if (!o->json) {
		printf("%s", b->name);
		if (b->sizes)
			printf(", %zu bytes (%u cells)", o->size, c->cells);
		if (b->pipelined)
			printf(", %u in flight", o->depth);
		if (o->pin)
			printf(", CPUs %d,%d", o->cpus[0], o->cpus[1]);
		if (o->gap_us > 0)
			printf(", %" PRIu64 " us idle before each (slowest %.1f us)",
			       o->gap_us,
			       (double)r->gap_max_ns / 1e3);
		printf(": %" PRIu64 " in %.3f s: %.1f ns per %s, %.0f/s\n",
		       r->ops,
		       (double)r->elapsed_ns / NSEC_PER_SEC,
		       ns_per_op,
		       b->unit,
		       ops * NSEC_PER_SEC / (double)r->elapsed_ns);
		return;
	}
	printf("{\"test\": \"%s\", \"unit\": \"%s\"", b->name, b->unit);
	if (b->sizes)
		printf(", \"size\": %zu, \"cells\": %u", o->size, c->cells);
	else
		printf(", \"size\": null, \"cells\": null");
	if (b->pipelined)
		printf(", \"depth\": %u", o->depth);
	else
		printf(", \"depth\": null");
	if (o->pin)
		printf(", \"cpus\": [%d, %d]", o->cpus[0], o->cpus[1]);
	else
		printf(", \"cpus\": null");
	if (o->gap_us > 0)
		printf(", \"gap_us\": %" PRIu64 ", \"max_ns\": %" PRIu64, o->gap_us, r->gap_max_ns);
	else
		printf(", \"gap_us\": null, \"max_ns\": null");
	printf(", \"count\": %" PRIu64
	       ", \"seconds\": %.6f, \"ns_per_op\": %.2f, \"ops_per_s\": %.1f",
	       r->ops,
	       (double)r->elapsed_ns / NSEC_PER_SEC,
	       ns_per_op,
	       ops * NSEC_PER_SEC / (double)r->elapsed_ns);
	printf(", \"leader_cpu_ns_per_op\": %.2f, \"leader_vcsw_per_op\": %.4f",
	       (double)r->leader_cpu_ns / ops,
	       (double)r->leader_vcsw / ops);
	if (b->two_processes)
		printf(", \"follower_cpu_ns_per_op\": %.2f, \"follower_vcsw_per_op\": %.4f}\n",
		       (double)c->sh->follower_cpu_ns / follower_ops,
		       (double)c->sh->follower_vcsw / follower_ops);
	else
		printf(", \"follower_cpu_ns_per_op\": null, \"follower_vcsw_per_op\": null}\n");
}

int main(int argc, char **argv) {
	struct options o;
	struct result r;
	struct ctx c;

	parse_options(argc, argv, &o);
	setup(&c, &o);
	run(&c, &r);
	print_result(&c, &r);
	return EXIT_SUCCESS;
}
