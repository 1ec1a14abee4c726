// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench's pieces, one concern per file, tied together by ref_bench.c's
// table of tests and main(): the options (ref_bench_options.c), the shared
// memory and what each test needs made before the fork (ref_bench_setup.c),
// the leader and follower processes and the timed run (ref_bench_run.c),
// the output (ref_bench_output.c), and the tests by family: one cache line
// (ref_bench_cacheline.c), rte_rings (ref_bench_ring.c), the cache lines of
// their layout alone (ref_bench_lines.c), the channel library
// (ref_bench_chan.c), the kernel's wake-ups (ref_bench_wake.c) and the cost
// of one clock read or system call (ref_bench_costs.c). Each process runs
// one thread; what the two share is struct shared, in a memfd.

#pragma once

#include <shmchan.h>

#include <rte_ring.h>

#include "bench_util.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEFAULT_SECONDS 0.5
#define DEFAULT_WARMUP 1000
// The leader reads the clock once per CLOCK_CHECK_MASK + 1 operations in a
// timed run: rarely enough to cost nothing, often enough to stop within a
// few ms even at 128 KiB per operation.
#define CLOCK_CHECK_MASK 0x3f
// Cache line of the shared fields: written by different processes, each on
// its own line. DPDK's, as rte_ring's own fields.
#define CACHE_LINE RTE_CACHE_LINE_SIZE
// A frame whose length field is 0 tells the ring follower to stop: a real
// frame holds at least a 12-byte header.
#define FRAME_STOP_LEN 0
#define NSEC_PER_USEC 1000ull
// Longest --gap-us: one second.
#define MAX_GAP_US 1000000
// *-echo: requests in flight unless --depth says otherwise, as the depth-32
// cells of make bench and the depth-32 goal of docs/benchmark-method.md.
#define DEFAULT_DEPTH 32
// Most --depth: as many of the shortest messages (one cell) as fit a ring.
#define MAX_DEPTH (SHMCHAN_RING_CELLS - 1)

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

// The tests, in the order of the usage (ref_bench.c).
extern const struct bench benches[];
extern const size_t n_benches;

// ---- ref_bench_options.c ----

// Parse argv into *o, defaults filled in; the test by name from benches.
// Prints the usage and exits on --help (0) and on bad usage (1); fail()s
// on a bad value or options that contradict each other.
void parse_options(int argc, char **argv, struct options *o);

// ---- ref_bench_setup.c ----

// The shared memfd (struct shared, then the two rings) and what each test
// needs, all made before the fork so that both processes inherit them.
// fail()s on any error.
void setup(struct ctx *c, const struct options *o);

// bytes of zeroed memory, aligned on a cache line. fail()s without memory.
uint8_t *frame_alloc(size_t bytes);

// ---- ref_bench_run.c ----

// What the leader measured.
struct result {
	uint64_t ops;
	uint64_t elapsed_ns;
	uint64_t gap_op_ns; // --gap-us: the operations' own time, the sleeps left out
	uint64_t gap_max_ns; // --gap-us: the slowest operation
	uint64_t leader_cpu_ns;
	uint64_t leader_vcsw;
};

// Fork the follower (for a test of two processes), pin both, warm up, time
// the operations, stop the follower and wait for it. fail()s on any error,
// and at once if the follower ends before it is told to.
void run(struct ctx *c, struct result *r);

// ---- ref_bench_output.c ----

// The result as text, or as one JSON object with --json, on stdout.
void print_result(const struct ctx *c, const struct result *r);

// ---- the tests: leader operations, leader stops, followers ----

// ref_bench_cacheline.c
void cacheline_leader_op(struct ctx *c);
void cacheline_leader_stop(struct ctx *c);
void cacheline_follower(struct ctx *c);

// ref_bench_ring.c
void ring_pingpong_leader_op(struct ctx *c);
void ring_leader_stop(struct ctx *c);
void ring_pingpong_follower(struct ctx *c);
void ring_stream_leader_op(struct ctx *c);
void ring_stream_follower(struct ctx *c);
void ring_stream_result(struct ctx *c, uint64_t *ops, uint64_t *elapsed_ns);
void ring_echo_leader_op(struct ctx *c);
void ring_echo_leader_stop(struct ctx *c);
void ring_local_op(struct ctx *c);

// ref_bench_lines.c; lines_setup() in setup(), on the rings of c.
void lines_setup(struct ctx *c);
void lines_apart_leader_op(struct ctx *c);
void lines_apart_leader_stop(struct ctx *c);
void lines_apart_follower(struct ctx *c);
void lines_inline_leader_op(struct ctx *c);
void lines_inline_leader_stop(struct ctx *c);
void lines_inline_follower(struct ctx *c);

// ref_bench_chan.c; chan_setup() in setup().
void chan_setup(struct ctx *c);
void chan_pingpong_leader_op(struct ctx *c);
void chan_leader_stop(struct ctx *c);
void chan_pingpong_follower(struct ctx *c);
void chan_stream_leader_op(struct ctx *c);
void chan_stream_follower(struct ctx *c);
void chan_echo_leader_op(struct ctx *c);
void chan_echo_leader_stop(struct ctx *c);
void chan_local_op(struct ctx *c);

// ref_bench_wake.c
void eventfd_leader_op(struct ctx *c);
void eventfd_leader_stop(struct ctx *c);
void eventfd_follower(struct ctx *c);
void unix_leader_op(struct ctx *c);
void unix_leader_stop(struct ctx *c);
void unix_follower(struct ctx *c);
void unix_epoll_follower(struct ctx *c);

// ref_bench_costs.c
void clock_leader_op(struct ctx *c);
void syscall_leader_op(struct ctx *c);

// ---- echo: DEPTH requests in flight (ring-echo, chan-echo) ----

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
