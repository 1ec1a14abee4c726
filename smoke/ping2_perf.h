// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's pieces, one concern per file: main() and the options
// (ping2_perf.c), the calls on one connection and their latency histogram
// (_calls.c), the client processes (_clients.c), the CPU and system-call
// accounting (_accounting.c), --gap and --beside-ring (_modes.c), the JSON or
// text output (_output.c). Each process runs them in one thread.

#pragma once

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include "bench_util.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

// fail() when cond holds: every error ends the run, saying why.
#define FAIL_IF(cond, ...)                                                                         \
	do {                                                                                       \
		if (cond)                                                                          \
			fail(__VA_ARGS__);                                                         \
	} while (0)

#define DEFAULT_COUNT 100000
#define DEFAULT_WARMUP 1000
// Enough for any benchmark on one machine, small enough to keep the tables tiny.
#define MAX_DEPTH 4096
#define MAX_CLIENTS 256
#define IDLE_CHANNELS_MAX 1000 // the daemon serves 1024 connections
// --no-stamps reads the clock every NO_STAMPS_CLOCK_MASK + 1 calls, for the
// deadline and progress, as often as ref_bench reads it in its loops.
#define NO_STAMPS_CLOCK_MASK 0x3f
// --idle: each timed request after IDLE_GAP_MS of silence, far past any spin
// budget, so that both ends sleep.
#define DEFAULT_IDLE_ROUNDS 20
#define IDLE_GAP_MS 20
#define NSEC_PER_MSEC 1000000ull
// --gap: gaps up to a minute, far past any spin budget or idle state of a CPU.
#define MAX_GAPS 8
#define MAX_GAP_MS 60000
// --gap-rounds by default: as many rounds (two gaps each) as fill the budget,
// within the bounds: 200, 100, 8 and 8 after 1 ms, 20 ms, 300 ms and 1 s.
#define GAP_ROUNDS_BUDGET_MS 4000
#define GAP_ROUNDS_MIN 8
#define GAP_ROUNDS_MAX 200
#define MAX_GAP_ROUNDS 100000 // a day of 1 s gaps: past any use
// --beside-ring: a millisecond of round trips per timed block, after a warm-up
// past a spinning daemon's budget (so that the other pair's spinner sleeps).
#define BESIDE_BLOCK_CALLS 2000
#define BESIDE_WARMUP_NS (500 * 1000ull)
#define BESIDE_MIN_PAIRS 8
#define BESIDE_MAX_PAIRS 100000
#define REASON_LEN 256 // the library's longest reason names two EAL file prefixes

struct options {
	const char *sock_path;
	uint64_t count, warmup; // calls of all clients; calls of each before measuring
	double seconds, idle_seconds, beside_seconds; // -T, --idle, --beside-ring; 0: not given
	bool cdf, stamps, count_syscalls, event_loop, json, quiet, secondary;
	enum gr_api_transport transport;
	unsigned depth, clients, idle_channels, idle_rounds;
	size_t size;
	int spin_us; // -1: the library's adaptive spin
	unsigned n_gaps, gaps_ms[MAX_GAPS], gap_rounds; // gap_rounds 0: as gap_rounds() says
	char file_prefix[GR_SHM_PREFIX_LEN]; // --file-prefix, else the daemon's
	unsigned lcore; // 0: 1 + pid % (RTE_MAX_LCORE - 1)
	int eal_argc; // the EAL arguments after --, verbatim
	char **eal_argv;
};

// Log-linear: exact below HIST_SUB_BUCKETS ns, then each power of two cut into
// HIST_SUB_BUCKETS buckets (6% wide) up to 2^HIST_MAX_POW2 ns (137 s); longer
// round trips land in the last bucket and still count in max_ns.
#define HIST_SUB_BITS 4
#define HIST_SUB_BUCKETS (1u << HIST_SUB_BITS)
#define HIST_MAX_POW2 37
#define HIST_BUCKETS ((HIST_MAX_POW2 - HIST_SUB_BITS + 2) * HIST_SUB_BUCKETS)

struct histogram {
	uint64_t count, max_ns, buckets[HIST_BUCKETS];
};

// Inline: it runs once per measured call.
static inline void hist_add(struct histogram *h, uint64_t ns) {
	unsigned pow2 = ns < HIST_SUB_BUCKETS ? 0 : 63 - (unsigned)__builtin_clzll(ns);
	unsigned index = (unsigned)ns, sub;

	if (pow2 > HIST_MAX_POW2) {
		index = HIST_BUCKETS - 1;
	} else if (pow2 > 0) {
		sub = (unsigned)(ns >> (pow2 - HIST_SUB_BITS)) & (HIST_SUB_BUCKETS - 1);
		index = (pow2 - HIST_SUB_BITS + 1) * HIST_SUB_BUCKETS + sub;
	}
	h->buckets[index]++;
	h->count++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

// One connection's calls: the window of requests in flight (opts->depth
// slots, oldest at head) and the clock of the last response.
struct client_state {
	const struct options *opts;
	struct gr_api_client *client;
	uint32_t type;
	uint8_t *tx, *rx; // tx: the pattern, the sequence number stamped at its start
	struct inflight *fifo;
	unsigned head, used;
	uint64_t next_seq, last_ns;
	bool progress; // the rate on stderr every second
	int epoll_fd; // --event-loop's, made on the first wait; else -1
};

// The daemon over a measured phase, -1 when unknown; chan: its channel counters.
struct daemon_probe {
	pid_t pid;
	bool sampled, have_chan;
	int n_syscall_fds, syscall_fds[64]; // of its threads (about 20); n -1: one failed
	int64_t cpu_ns, runq_wait_ns, vcsw, syscalls;
	struct gr_shm_counters chan;
};

struct summary {
	const char *transport, *backing, *reason; // backing NULL on the socket
	uint64_t calls, client_cpu_ns, vcsw;
	double seconds;
	int64_t runq_wait_ns, syscalls; // -1: not measurable
	struct histogram hist;
	// calls/s of each client over its own run, and per second of its CPU time:
	// its share of the daemon's service, whatever share of a CPU it got.
	double client_rates[MAX_CLIENTS], client_cpu_rates[MAX_CLIENTS];
	uint64_t first_ns, client0_vcsw; // --idle: client 0's
	int64_t client0_syscalls;
	struct daemon_probe daemon;
};

struct gap_samples {
	uint64_t count, p50_ns, p99_ns, max_ns;
};

struct gap_run {
	const char *backing; // of the shm connection
	char reason[REASON_LEN];
	double seconds;
	struct {
		unsigned gap_ms, rounds;
		struct gap_samples shm, socket;
	} gaps[MAX_GAPS];
};

// shm / ring of each pair at p25, p50, p75; each side's ns per round trip at
// min, p50, max, and of each pair in the order measured.
struct beside_run {
	const char *backing;
	double seconds, ratio[3], ring[3], shm[3];
	unsigned pairs;
	double *ring_ns, *shm_ns;
};

// ping2_perf_calls.c
uint64_t hist_value(const struct histogram *h, unsigned index); // midpoint, at most max_ns
void hist_merge(struct histogram *into, const struct histogram *from);
// The value at rank ceil(fraction * count), of a histogram or of sorted samples.
uint64_t hist_percentile(const struct histogram *h, double fraction);
uint64_t samples_percentile(const uint64_t *sorted, size_t n, double fraction);
void tsc_calibrate(void); // once per process, before any call is timed (20 ms)
void client_state_init(struct client_state *s, const struct options *o, struct gr_api_client *c);
void client_state_release(struct client_state *s); // not the connection
// Send calls requests, up to depth in flight, until sent or the clock passes
// deadline (0: none), then wait for those in flight; h NULL: nothing recorded.
// Returns the calls done; fail()s on any error or wrong echo.
uint64_t run_calls(struct client_state *s, uint64_t calls, uint64_t deadline, struct histogram *h);
uint64_t call_alone(struct client_state *s); // one checked call: its round trip in ns
struct gr_api_client *connect_client(const struct options *o, enum gr_api_transport t);
// connect_client() or fail() saying why; *b: the GR_SHM_BACKING_* of its
// channel, 0 on the socket. --secondary: a channel must be a memzone.
struct gr_api_client *
connect_measured(const struct options *o, enum gr_api_transport t, uint32_t *b);
const char *transport_name(enum gr_api_transport t);
const char *request_name(size_t size); // GR_PING, GR_PING2 or GR_SHM_ECHO
const char *backing_name(uint32_t backing); // NULL on the socket, "mixed" for two kinds

// ping2_perf_accounting.c
int syscall_counter_open(pid_t tid); // disabled, of tid (0: this process); -1 if not had
int64_t runq_wait_ns(void); // of this thread, -1 if unknown
bool daemon_info(const struct options *o, struct gr_shm_daemon_info *info); // false: not told
bool daemon_stats(const struct options *o, struct gr_shm_counters *total, uint32_t *memzones);
// pid -1: unknown, only the channel counters. After stop, p holds the differences.
void daemon_probe_start(const struct options *o, struct daemon_probe *p, pid_t pid);
void daemon_probe_stop(const struct options *o, struct daemon_probe *p);

// ping2_perf_clients.c
int run_clients(struct options *o, struct summary *sum); // EXIT_FAILURE: a client failed
// --secondary: the daemon's file prefix unless given (info NULL: not told), or
// fail() before an EAL init that cannot work. Returns its memzones now.
uint32_t secondary_prepare(struct options *o, const struct gr_shm_daemon_info *info);
void secondary_init(const struct options *o, unsigned index); // after the fork
void wait_memzones_freed(const struct options *o, uint32_t before); // bounded

// ping2_perf_modes.c
unsigned gap_rounds(const struct options *o, unsigned gap_ms);
void run_gaps(struct options *o, struct gap_run *run);
void run_beside_ring(struct options *o, struct beside_run *run);

// ping2_perf_output.c
void print_summary(const struct options *o, const struct summary *sum); // calls or --idle
void print_gaps(const struct options *o, const struct gap_run *run);
void print_beside(const struct options *o, const struct beside_run *run);
