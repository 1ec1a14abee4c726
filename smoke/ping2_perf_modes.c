// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's modes other than the calls. --gap: the occasional call, after silence (both ends
// may have stopped spinning), the transports alternated call by call to meet the same machine.
// --beside-ring: the busy round trip beside the raw rte_ring ping-pong of a follower process,
// a block of each per pair, the pair's ratio free of the vCPUs' placement (benchmark-method.md).
// --events: event fan-out from a publisher in ping2_perf's process to forked subscribers.

#include "ping2_perf.h"
#include "bench_ring.h"
#include <rte_eal.h>
#include <rte_errno.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define RING_CELLS 16384 // room for a frame of any -z
#define STOP_FRAME_LEN 0 // ends the follower's block: a real frame is longer
#define WARMUP_CHECK 64 // untimed round trips between two clock reads

// What an --events subscriber sends its parent once done: counts, then latency samples (ns).
struct sub_report {
	uint64_t received, lost, last_ns; // last_ns: when it took its last event
	uint64_t lat[];
};

struct rings {
	struct rte_ring *req, *resp;
	unsigned cells;
	uint8_t *tx, *rx, *stop;
	size_t mem_len;
};

static unsigned gap_rounds(const struct options *o, unsigned gap_ms) {
	unsigned rounds = GAP_ROUNDS_BUDGET_MS / (2 * gap_ms);
	if (o->gap_rounds > 0)
		return o->gap_rounds;
	rounds = rounds < GAP_ROUNDS_MIN ? GAP_ROUNDS_MIN : rounds;
	return rounds > GAP_ROUNDS_MAX ? GAP_ROUNDS_MAX : rounds;
}

static int compare_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct latency_samples latency_summary(uint64_t *ns, uint64_t n) {
	struct latency_samples l = {n, 0, 0, 0};
	qsort(ns, n, sizeof(*ns), compare_u64);
	l.p50_ns = samples_percentile(ns, n, 0.5);
	l.p99_ns = samples_percentile(ns, n, 0.99);
	l.max_ns = samples_percentile(ns, n, 1.0);
	return l;
}

void run_gaps(struct options *o, struct gap_run *run) {
	struct client_state s[2]; // shm, then socket: the order of a round
	struct gr_shm_daemon_info info;
	uint32_t memzones_before = 0, backing;
	if (o->secondary) {
		memzones_before = secondary_prepare(o, daemon_info(o, &info) ? &info : NULL);
		secondary_init(o, 0);
	}
	tsc_calibrate();
	client_state_init(&s[0], o, connect_measured(o, GR_API_TRANSPORT_SHM, &backing));
	run->backing = backing_name(backing);
	snprintf(run->reason, REASON_LEN, "%s", gr_api_client_transport_reason(s[0].client));
	client_state_init(&s[1], o, connect_measured(o, GR_API_TRANSPORT_SOCKET, &backing));
	for (int t = 0; t < 2; t++)
		run_calls(&s[t], o->warmup, 0, NULL);
	uint64_t start = now_ns();
	for (unsigned g = 0; g < o->n_gaps; g++) {
		unsigned gap_ms = o->gaps_ms[g], rounds = gap_rounds(o, gap_ms);
		uint64_t *ns = calloc_or_fail(2 * rounds, sizeof(uint64_t)); // shm's, then socket's
		for (unsigned r = 0; r < rounds; r++) {
			for (unsigned t = 0; t < 2; t++) {
				sleep_ns(gap_ms * NSEC_PER_MSEC);
				ns[t * rounds + r] = call_alone(&s[t]);
			}
		}
		run->gaps[g].gap_ms = gap_ms;
		run->gaps[g].rounds = rounds;
		run->gaps[g].shm = latency_summary(ns, rounds);
		run->gaps[g].socket = latency_summary(ns + rounds, rounds);
		free(ns);
		if (o->quiet)
			continue;
		fprintf(stderr, "%s: after %u ms gaps, %u rounds: ", log_prefix, gap_ms, rounds);
		fprintf(stderr, "p50 shm %.1f us", (double)run->gaps[g].shm.p50_ns / 1e3);
		fprintf(stderr, ", socket %.1f us\n", (double)run->gaps[g].socket.p50_ns / 1e3);
	}
	run->seconds = (double)(now_ns() - start) / NSEC_PER_SEC;
	client_state_close(&s[0]);
	client_state_close(&s[1]);
	if (o->secondary) // as in client_main(): EAL cleans up once the memzone is freed
		wait_memzones_freed(o, memzones_before);
	FAIL_IF(o->secondary && rte_eal_cleanup() < 0, "EAL cleanup: %s", rte_strerror(rte_errno));
}

// Two SPSC rings in a shared mapping; frames as the channel's: length, zero header, pattern.
static void rings_init(const struct options *o, struct rings *b) {
	ssize_t ring_size = rte_ring_get_memsize_elem(SHMCHAN_CELL_SIZE, RING_CELLS);
	uint32_t len = (uint32_t)(SHMCHAN_MSG_MIN + o->size);
	int ret, flags = RING_F_SP_ENQ | RING_F_SC_DEQ;
	FAIL_IF(ring_size < 0, "rte_ring_get_memsize_elem: %s", strerror((int)-ring_size));
	b->cells = SHMCHAN_MSG_CELLS(len);
	if (b->cells > RING_CELLS - 1)
		fail("-z %zu: a frame of %u cells does not fit the ring", o->size, b->cells);
	b->mem_len = 2 * (size_t)ring_size;
	b->req = mmap(NULL, b->mem_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	FAIL_IF(b->req == MAP_FAILED, "mmap: %s", strerror(errno));
	b->resp = (struct rte_ring *)((uint8_t *)b->req + ring_size);
	if ((ret = rte_ring_init(b->req, "beside-req", RING_CELLS, flags)) == 0)
		ret = rte_ring_init(b->resp, "beside-resp", RING_CELLS, flags);
	FAIL_IF(ret < 0, "rte_ring_init: %s", strerror(-ret));
	b->tx = calloc_or_fail(b->cells, SHMCHAN_CELL_SIZE);
	b->rx = calloc_or_fail(b->cells, SHMCHAN_CELL_SIZE);
	b->stop = calloc_or_fail(b->cells, SHMCHAN_CELL_SIZE);
	memcpy(b->tx, &len, sizeof(len));
	memset(b->tx + SHMCHAN_FRAME_HDR + SHMCHAN_MSG_MIN, 0x5a, o->size);
}

// Asleep in a read() between blocks; echoes a block's frames until the stop frame.
static void __attribute__((noreturn)) follower_main(struct rings *b, int cmd_fd) {
	char go;
	for (;;) {
		ssize_t n = read(cmd_fd, &go, 1);
		if (n == 0)
			_exit(EXIT_SUCCESS);
		FAIL_IF(n < 0 && errno != EINTR, "follower: read: %s", strerror(errno));
		while (n > 0) {
			bench_ring_get(b->req, b->rx, b->cells);
			if (bench_frame_len(b->rx) == STOP_FRAME_LEN)
				break;
			bench_ring_put(b->resp, b->rx, b->cells);
		}
	}
}

static void ring_round_trip(struct rings *b) {
	bench_ring_put(b->req, b->tx, b->cells);
	bench_ring_get(b->resp, b->rx, b->cells);
}

static double ring_block(struct rings *b, int cmd_fd, uint64_t calls) {
	uint64_t start = now_ns(), t0;
	FAIL_IF(write(cmd_fd, "g", 1) != 1, "write to the ring follower: %s", strerror(errno));
	do {
		for (unsigned i = 0; i < WARMUP_CHECK; i++)
			ring_round_trip(b);
	} while (now_ns() - start < BESIDE_WARMUP_NS);
	t0 = now_ns();
	for (uint64_t i = 0; i < calls; i++)
		ring_round_trip(b);
	double ns = (double)(now_ns() - t0) / (double)calls;
	uint32_t sent = bench_frame_len(b->tx), echoed = bench_frame_len(b->rx);
	FAIL_IF(echoed != sent, "ring follower: echoed a frame of %u bytes, sent %u", echoed, sent);
	bench_ring_put(b->req, b->stop, b->cells);
	return ns;
}

static double shm_block(struct client_state *s, uint64_t calls) {
	uint64_t t0;
	run_calls(s, UINT64_MAX, now_ns() + BESIDE_WARMUP_NS, NULL);
	t0 = now_ns();
	if (run_calls(s, calls, 0, NULL) != calls)
		fail("a block of %" PRIu64 " calls ended short", calls);
	return (double)(now_ns() - t0) / (double)calls;
}

// The values at fractions qs[0..2] (percentile_rank()) of n > 0 values,
// sorted in scratch.
static void
percentiles(const double *v, unsigned n, double *scratch, const double *qs, double *out) {
	memcpy(scratch, v, n * sizeof(*v));
	qsort(scratch, n, sizeof(*scratch), compare_double);
	for (unsigned i = 0; i < 3; i++) {
		uint64_t rank = percentile_rank(n, qs[i]);
		out[i] = scratch[rank <= n ? rank - 1 : n - 1];
	}
}

void run_beside_ring(struct options *o, struct beside_run *run) {
	static const double ratio_qs[] = {0.25, 0.50, 0.75}, side_qs[] = {0.50, 0.0, 1.0};
	static struct rings b;
	struct client_state s;
	int cmd[2], status;
	uint32_t backing;
	unsigned n;
	rings_init(o, &b);
	check(pipe(cmd), "pipe");
	pid_t follower = fork_peer(); // before the connection: the follower holds no channel
	if (follower == 0) {
		close(cmd[1]);
		follower_main(&b, cmd[0]);
	}
	close(cmd[0]);
	tsc_calibrate();
	client_state_init(&s, o, connect_measured(o, GR_API_TRANSPORT_SHM, &backing));
	run->backing = backing_name(backing);
	run_calls(&s, o->warmup, 0, NULL);
	double *ratio = calloc_or_fail(BESIDE_MAX_PAIRS, sizeof(double));
	double *scratch = calloc_or_fail(BESIDE_MAX_PAIRS, sizeof(double));
	run->ring_ns = calloc_or_fail(BESIDE_MAX_PAIRS, sizeof(double));
	run->shm_ns = calloc_or_fail(BESIDE_MAX_PAIRS, sizeof(double));
	uint64_t start = now_ns(), deadline = start + (uint64_t)(o->beside_seconds * NSEC_PER_SEC);
	// The order alternates pair by pair: neither goes always first.
	for (n = 0; n < BESIDE_MAX_PAIRS && (n < BESIDE_MIN_PAIRS || now_ns() < deadline); n++) {
		if (n % 2 == 0)
			run->ring_ns[n] = ring_block(&b, cmd[1], BESIDE_BLOCK_CALLS);
		run->shm_ns[n] = shm_block(&s, BESIDE_BLOCK_CALLS);
		if (n % 2 == 1)
			run->ring_ns[n] = ring_block(&b, cmd[1], BESIDE_BLOCK_CALLS);
		ratio[n] = run->shm_ns[n] / run->ring_ns[n];
	}
	run->seconds = (double)(now_ns() - start) / NSEC_PER_SEC;
	close(cmd[1]);
	FAIL_IF((status = peer_wait(follower)) < 0, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != EXIT_SUCCESS)
		fail("ring follower %d ended badly (status %#x)", (int)follower, status);
	client_state_close(&s);
	free(b.tx);
	free(b.rx);
	free(b.stop);
	munmap(b.req, b.mem_len);
	run->pairs = n;
	percentiles(ratio, n, scratch, ratio_qs, run->ratio);
	percentiles(run->ring_ns, n, scratch, side_qs, run->ring);
	percentiles(run->shm_ns, n, scratch, side_qs, run->shm);
	free(ratio);
	free(scratch);
}

// A subscriber process: subscribe, say ready (a byte on fd), take events until every one arrived
// or was counted lost, report on fd.
static void __attribute__((noreturn)) subscriber_main(const struct options *o, int fd) {
	struct gr_event_subscribe_req req = {.ev_type = GR_SHM_EVENT_TEST};
	struct sub_report *r = calloc_or_fail(1, sizeof(*r) + o->count * sizeof(r->lat[0]));
	struct gr_api_client *c = connect_client(o, o->transport);
	struct gr_api_event *ev;
	log_prefix = "ping2_perf: subscriber";
	FAIL_IF(c == NULL, "connect %s: %s", o->sock_path, strerror(errno));
	if (gr_api_client_send_recv_len(c, GR_EVENT_SUBSCRIBE, sizeof(req), &req, NULL) < 0)
		fail("subscribe: %s", strerror(errno));
	FAIL_IF(!fd_transfer(fd, &(char){1}, 1, true), "write to parent: %s", strerror(errno));
	while (r->received + r->lost < o->count) {
		FAIL_IF(gr_api_client_event_recv(c, &ev) < 0, "event_recv: %s", strerror(errno));
		uint64_t now = now_ns(), head = 0; // LOST: the count; TEST: the publish time
		if (ev->payload_len >= sizeof(head))
			memcpy(&head, ev + 1, sizeof(head));
		if (ev->ev_type == GR_SHM_EVENT_LOST) {
			r->lost += head;
		} else if (ev->ev_type == GR_SHM_EVENT_TEST && ev->payload_len >= EVENTS_MIN_SIZE) {
			r->lat[r->received++] = now - head;
			r->last_ns = now;
		}
		free(ev);
	}
	size_t len = sizeof(*r) + r->received * sizeof(r->lat[0]);
	FAIL_IF(!fd_transfer(fd, r, len, true), "write to parent: %s", strerror(errno));
	FAIL_IF(gr_api_client_disconnect(c) < 0, "disconnect: %s", strerror(errno));
	_exit(EXIT_SUCCESS);
}

// Publish every event, up to depth in flight. Returns when all are answered.
static void publish(const struct options *o, struct gr_api_client *c) {
	static uint8_t payload[GR_API_MAX_MSG_LEN];
	static uint32_t ids[MAX_DEPTH];
	payload_fill(payload, o->size);
	for (uint64_t i = 0; i < o->count + o->depth; i++) {
		if (i >= o->depth && gr_api_client_recv_len(c, ids[i % o->depth], NULL) < 0)
			fail("publish %" PRIu64 ": %s", i - o->depth, strerror(errno));
		if (i >= o->count)
			continue;
		uint64_t head[2] = {now_ns(), i};
		memcpy(payload, head, sizeof(head));
		long id = gr_api_client_send(c, GR_SHM_EVENT_PUBLISH, o->size, payload);
		FAIL_IF(id < 0, "publish: %s", strerror(errno));
		ids[i % o->depth] = (uint32_t)id;
	}
}

void run_events(const struct options *o, struct events_run *run) {
	struct options adaptive = *o; // the publisher always spins adaptively, whatever --spin
	pid_t pids[MAX_SUBSCRIBERS];
	int report[MAX_SUBSCRIBERS][2]; // a pipe from each subscriber
	for (unsigned i = 0; i < o->clients; i++) {
		check(pipe(report[i]), "pipe");
		if ((pids[i] = fork_peer()) == 0)
			subscriber_main(o, report[i][1]);
		close(report[i][1]);
		if (!fd_transfer(report[i][0], &(char){0}, 1, false))
			fail("subscriber %u did not subscribe", i);
	}
	adaptive.spin_us = GR_API_CLIENT_SPIN_ADAPTIVE;
	struct gr_api_client *pub = connect_client(&adaptive, o->transport);
	FAIL_IF(pub == NULL, "connect %s: %s", o->sock_path, strerror(errno));
	uint64_t start = now_ns(), end = start, *all;
	publish(o, pub);
	all = calloc_or_fail(o->count * o->clients, sizeof(*all));
	for (unsigned i = 0; i < o->clients; i++) {
		struct sub_report r;
		int fd = report[i][0];
		if (!fd_transfer(fd, &r, sizeof(r), false) ||
		    !fd_transfer(fd, all + run->delivered, r.received * sizeof(*all), false))
			fail("subscriber %u died before reporting", i);
		run->delivered += r.received;
		run->lost += r.lost;
		end = r.last_ns > end ? r.last_ns : end;
		FAIL_IF(peer_wait(pids[i]) != 0, "subscriber %u ended badly", i);
	}
	FAIL_IF(gr_api_client_disconnect(pub) < 0, "disconnect: %s", strerror(errno));
	run->events_per_s = (double)run->delivered * NSEC_PER_SEC / (double)(end - start);
	run->latency = latency_summary(all, run->delivered);
	free(all);
}
