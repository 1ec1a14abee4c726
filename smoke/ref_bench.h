// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench, one concern per file: the options and the output (ref_bench.c),
// the setup and the timed run of the two processes (ref_bench_run.c), and the
// tests, each family beside its table: over shared memory (ref_bench_shm.c)
// and through the kernel (ref_bench_kernel.c). Each process runs one thread.

#pragma once

#include <gr_api.h>
#include <rte_ring.h>
#include <shmchan.h>

#include "bench_util.h"

#include <stdalign.h>

struct options {
	const struct bench *bench;
	double seconds; // timed run, unless count is set
	uint64_t count, warmup; // count: exact number of operations, 0: timed
	size_t size; // payload bytes (ring-*, chan-*, lines-*, unix*)
	bool pin;
	int cpus[2]; // leader, follower
	uint64_t gap_us; // sleep before each operation, 0: none
	unsigned depth; // *-echo: requests in flight; 0 elsewhere
};

// The start of the memfd both processes map, each side's fields on lines of
// their own. line: both, in turn (cacheline); stop, stream_warmup: the leader;
// the rest: the follower as it exits (read after waitpid, which orders them).
struct shared {
	alignas(RTE_CACHE_LINE_SIZE) uint64_t line;
	alignas(RTE_CACHE_LINE_SIZE) uint32_t stop;
	uint64_t stream_warmup; // *-stream: messages before the measured ones
	alignas(RTE_CACHE_LINE_SIZE) uint64_t follower_ops;
	uint64_t follower_cpu_ns, follower_vcsw;
	uint64_t stream_start_ns, stream_end_ns; // *-stream: the consumer's measured messages
};

// Made by setup() before the fork: each process then has its own copy. The
// last fields are what the leader measured.
struct ctx {
	const struct options *o;
	struct shared *sh;
	struct rte_ring *req_ring, *resp_ring; // in the memfd: to the follower, to the leader
	unsigned cells; // ring-*, chan-*, lines-*: cells per message
	unsigned in_flight; // *-echo: the leader's requests not answered yet
	uint8_t *tx_frame, *rx_frame; // ring-*, lines-*: the leader's frame, where each receives
	uint8_t *stop_frame; // ring-*, lines-*: zeros (length 0, request id 0)
	int efd_req, efd_resp, sock[2]; // eventfd; unix*: the leader's end, the follower's
	size_t msg_len; // unix*: bytes each way
	uint8_t *msg; // unix*: header and payload; chan-*: its first -z bytes, the payload
	struct shmchan_server *server; // chan-*: the follower's end
	struct shmchan_client *client; // chan-*: the leader's end
	uint8_t *chan_buf; // chan-*: SHMCHAN_MSG_MAX bytes, where each side receives
	unsigned srv_batch; // chan-*: requests the follower took since its last flush
	uint64_t ops, elapsed_ns, leader_cpu_ns, leader_vcsw;
	uint64_t gap_op_ns, gap_max_ns; // --gap-us: the operations' own time, the slowest
};

enum bench_flags {
	SIZED = 1 << 0, // takes -z
	SLEEPS = 1 << 1, // the follower blocks in the kernel: --gap-us makes sense
	PIPELINED = 1 << 2, // the leader keeps --depth requests in flight
	STREAM = 1 << 3, // the rate is the consumer's (struct shared's stream_*)
};

// A test: the leader's operation; for two processes, how the leader stops the
// follower, and the follower, which returns the requests it took (warmup too).
struct bench {
	const char *name;
	const char *unit; // what one operation is
	unsigned flags;
	void (*leader_op)(struct ctx *);
	void (*leader_stop)(struct ctx *);
	uint64_t (*follower)(struct ctx *);
};

// Each family's tests, ended by a row of NULL name.
extern const struct bench shm_benches[], kernel_benches[];

// ref_bench_run.c. setup(): the memfd (struct shared, then the two rings) and
// all the tests need. run(): fork, pin, warm up, time, stop the follower and
// wait for it. Both fail() on any error, run() at once if the follower ends
// before it is told to. frame_alloc(): zeroed bytes on a cache line, or fail().
void setup(struct ctx *c, const struct options *o);
void run(struct ctx *c);
uint8_t *frame_alloc(size_t bytes);

// ref_bench_shm.c: the channel and the lines-* directions, for setup().
void shm_setup(struct ctx *c);
