// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf --beside-ring: the busy round trip over the channel and the raw
// rte_ring ping-pong, alternated block by block. The hypervisor moves the
// vCPUs of a guest between physical cores (so between cache-line costs)
// within seconds, and ref_bench's ring-pingpong run before and after a
// one-second cell may ride another placement than the cell did. Here one
// block of each, a millisecond or two apiece, makes a pair: both run where
// the vCPUs are at that moment, and the ratio of the pair is free of the
// placement. The median of the pairs' ratios is the measurement
// (ping2_perf.h).
//
// The ring pair is this process (the leader, in the thread that makes the
// calls) and a follower process forked before the connection, which echoes
// each request frame back. Between its blocks the follower sleeps in a
// read() of the command pipe; between the channel's blocks the daemon's
// poller spins out its budget and sleeps too. Every block starts with
// BESIDE_WARMUP_NS of untimed round trips, more than a spinning daemon's
// budget, so that the other pair's spinner has stopped before the clock
// starts.

#include "ping2_perf.h"

#include "bench_ring.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

// Cells of each of the two rings: room for a frame of any -z.
#define BESIDE_RING_CELLS 16384
// The frame length that tells the follower its block is over (a real frame
// is at least SHMCHAN_MSG_MIN bytes).
#define BESIDE_STOP_LEN 0
// The clock is read every this many untimed round trips of a warm-up.
#define BESIDE_WARMUP_CHECK 64

// The two rings in the shared mapping, and this side's frames.
struct beside_rings {
	struct rte_ring *req, *resp;
	unsigned cells;
	uint8_t *tx, *rx, *stop;
	void *mem;
	size_t mem_len;
};

// Two single-producer single-consumer rings in one shared anonymous mapping,
// and frames framed as the channel frames a request of o->size bytes.
static void rings_init(const struct options *o, struct beside_rings *b) {
	ssize_t ring_size = rte_ring_get_memsize_elem(SHMCHAN_CELL_SIZE, BESIDE_RING_CELLS);
	size_t msg = SHMCHAN_MSG_MIN + o->size, frame_bytes;
	uint32_t len32 = (uint32_t)msg;
	int ret;

	if (ring_size < 0)
		fail("rte_ring_get_memsize_elem: %s", strerror((int)-ring_size));
	b->cells = SHMCHAN_MSG_CELLS(msg);
	if (b->cells > BESIDE_RING_CELLS - 1)
		fail("-z %zu: a frame of %u cells does not fit the ring", o->size, b->cells);
	b->mem_len = 2 * (size_t)ring_size;
	b->mem = mmap(NULL, b->mem_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b->mem == MAP_FAILED)
		fail("mmap: %s", strerror(errno));
	b->req = b->mem;
	b->resp = (struct rte_ring *)((uint8_t *)b->mem + ring_size);
	ret = rte_ring_init(b->req, "beside-req", BESIDE_RING_CELLS, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ret == 0)
		ret = rte_ring_init(
			b->resp,
			"beside-resp",
			BESIDE_RING_CELLS,
			RING_F_SP_ENQ | RING_F_SC_DEQ
		);
	if (ret < 0)
		fail("rte_ring_init: %s", strerror(-ret));
	frame_bytes = (size_t)b->cells * SHMCHAN_CELL_SIZE;
	b->tx = calloc(1, frame_bytes);
	b->rx = calloc(1, frame_bytes);
	b->stop = calloc(1, frame_bytes);
	if (b->tx == NULL || b->rx == NULL || b->stop == NULL)
		fail("%s", strerror(ENOMEM));
	// Length, a header's worth of zeros, a payload pattern, zero padding.
	memcpy(b->tx, &len32, sizeof(len32));
	memset(b->tx + SHMCHAN_FRAME_HDR + SHMCHAN_MSG_MIN, 0x5a, o->size);
}

static void rings_release(struct beside_rings *b) {
	free(b->tx);
	free(b->rx);
	free(b->stop);
	munmap(b->mem, b->mem_len);
}

// The follower: for each command byte, echo request frames until the stop
// frame; exit at the pipe's EOF.
static void __attribute__((noreturn)) follower_main(struct beside_rings *b, int cmd_fd) {
	char go;
	ssize_t n;

	for (;;) {
		n = read(cmd_fd, &go, 1);
		if (n == 0)
			_exit(EXIT_SUCCESS);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("follower: read: %s", strerror(errno));
		}
		for (;;) {
			bench_ring_get(b->req, b->rx, b->cells);
			if (bench_frame_len(b->rx) == BESIDE_STOP_LEN)
				break;
			bench_ring_put(b->resp, b->rx, b->cells);
		}
	}
}

static void ring_round_trip(struct beside_rings *b) {
	bench_ring_put(b->req, b->tx, b->cells);
	bench_ring_get(b->resp, b->rx, b->cells);
}

// One ring block: wake the follower, warm up, time calls round trips, stop
// the follower. Returns ns per round trip.
static double ring_block(struct beside_rings *b, int cmd_fd, uint64_t calls) {
	const char go = 'g';
	uint64_t start, t0, t1;

	if (write(cmd_fd, &go, 1) != 1)
		fail("write to the ring follower: %s", strerror(errno));
	start = now_ns();
	do {
		for (unsigned i = 0; i < BESIDE_WARMUP_CHECK; i++)
			ring_round_trip(b);
	} while (now_ns() - start < BESIDE_WARMUP_NS);
	t0 = now_ns();
	for (uint64_t i = 0; i < calls; i++)
		ring_round_trip(b);
	t1 = now_ns();
	if (bench_frame_len(b->rx) != bench_frame_len(b->tx))
		fail("ring follower: echoed a frame of %u bytes, sent %u",
		     bench_frame_len(b->rx),
		     bench_frame_len(b->tx));
	bench_ring_put(b->req, b->stop, b->cells);
	return (double)(t1 - t0) / (double)calls;
}

// One channel block: warm up, then time calls GR_PING2 calls (checked).
// Returns ns per call.
static double shm_block(struct client_state *s, uint64_t calls) {
	uint64_t t0, t1;

	run_calls(s, UINT64_MAX, now_ns() + BESIDE_WARMUP_NS, NULL, false);
	t0 = now_ns();
	if (run_calls(s, calls, 0, NULL, false) != calls)
		fail("a block of %" PRIu64 " calls ended short", calls);
	t1 = now_ns();
	return (double)(t1 - t0) / (double)calls;
}

static int compare_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

// The value at fraction q of n sorted values (nearest rank).
static double sorted_at(const double *v, unsigned n, double q) {
	unsigned i = (unsigned)(q * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

// Sort a copy of v's n values into scratch; the value at each fraction of
// qs (nearest rank) into out.
static void percentiles(
	const double *v,
	unsigned n,
	double *scratch,
	const double *qs,
	unsigned nq,
	double *out
) {
	memcpy(scratch, v, n * sizeof(*v));
	qsort(scratch, n, sizeof(*scratch), compare_double);
	for (unsigned i = 0; i < nq; i++)
		out[i] = sorted_at(scratch, n, qs[i]);
}

void run_beside_ring(struct options *o, struct beside_run *run) {
	static const double ratio_qs[] = {0.25, 0.50, 0.75}, side_qs[] = {0.0, 0.50, 1.0};
	static struct beside_rings b;
	struct client_state s;
	uint32_t backing;
	int cmd[2];
	pid_t parent = getpid(), follower;
	int status;
	uint64_t start, deadline;
	double *ratio, *ring_ns, *shm_ns, *scratch, q[3];
	unsigned n = 0;

	rings_init(o, &b);
	if (pipe(cmd) < 0)
		fail("pipe: %s", strerror(errno));
	// Forked before the connection: the follower holds no channel.
	follower = fork();
	if (follower < 0)
		fail("fork: %s", strerror(errno));
	if (follower == 0) {
		close(cmd[1]);
		die_with_parent(parent);
		follower_main(&b, cmd[0]);
	}
	close(cmd[0]);

	tsc_calibrate();
	client_state_init(&s, o, connect_measured(o, GR_API_TRANSPORT_SHM, &backing));
	run->backing = backing_name(backing);
	run_calls(&s, o->warmup, 0, NULL, false);

	ratio = calloc(BESIDE_MAX_PAIRS, sizeof(*ratio));
	ring_ns = calloc(BESIDE_MAX_PAIRS, sizeof(*ring_ns));
	shm_ns = calloc(BESIDE_MAX_PAIRS, sizeof(*shm_ns));
	scratch = calloc(BESIDE_MAX_PAIRS, sizeof(*scratch));
	if (ratio == NULL || ring_ns == NULL || shm_ns == NULL || scratch == NULL)
		fail("%s", strerror(ENOMEM));
	start = now_ns();
	deadline = start + (uint64_t)(o->beside_seconds * NSEC_PER_SEC);
	// The order alternates pair by pair: neither goes always first.
	while (n < BESIDE_MAX_PAIRS && (n < BESIDE_MIN_PAIRS || now_ns() < deadline)) {
		if (n % 2 == 0) {
			ring_ns[n] = ring_block(&b, cmd[1], BESIDE_BLOCK_CALLS);
			shm_ns[n] = shm_block(&s, BESIDE_BLOCK_CALLS);
		} else {
			shm_ns[n] = shm_block(&s, BESIDE_BLOCK_CALLS);
			ring_ns[n] = ring_block(&b, cmd[1], BESIDE_BLOCK_CALLS);
		}
		ratio[n] = shm_ns[n] / ring_ns[n];
		n++;
	}
	run->seconds = (double)(now_ns() - start) / NSEC_PER_SEC;

	close(cmd[1]);
	while (waitpid(follower, &status, 0) < 0)
		if (errno != EINTR)
			fail("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != EXIT_SUCCESS)
		fail("ring follower %d ended badly (status %#x)", (int)follower, status);
	if (gr_api_client_disconnect(s.client) < 0)
		fail("disconnect: %s", strerror(errno));
	client_state_release(&s);
	rings_release(&b);

	run->pairs = n;
	percentiles(ratio, n, scratch, ratio_qs, 3, q);
	run->ratio_p25 = q[0];
	run->ratio_p50 = q[1];
	run->ratio_p75 = q[2];
	percentiles(ring_ns, n, scratch, side_qs, 3, q);
	run->ring_min_ns = q[0];
	run->ring_p50_ns = q[1];
	run->ring_max_ns = q[2];
	percentiles(shm_ns, n, scratch, side_qs, 3, q);
	run->shm_min_ns = q[0];
	run->shm_p50_ns = q[1];
	run->shm_max_ns = q[2];
	// In pair order, for --cdf; the process ends after printing them.
	run->ring_ns = ring_ns;
	run->shm_ns = shm_ns;
	free(ratio);
	free(scratch);
}
