// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's pieces, one thread per process: main() and options (ping2_perf.c), calls on a
// connection and their histogram (_calls.c), client processes (_clients.c), CPU and system-call
// accounting (_accounting.c), the other modes (_modes.c), JSON or text output (_output.c).

#pragma once

#include "bench_util.h"
#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#define DEFAULT_COUNT 100000
#define DEFAULT_WARMUP 1000
#define MAX_DEPTH 4096 // enough for any benchmark on one machine, and tables stay tiny
#define MAX_CLIENTS 256 // as MAX_DEPTH
#define IDLE_CHANNELS_MAX 1000 // the daemon serves 1024 connections
#define NO_STAMPS_CLOCK_MASK 0x3f // --no-stamps' clock read, as often as ref_bench's loops
#define DEFAULT_IDLE_ROUNDS 20
#define IDLE_GAP_MS 20 // --idle's silence: far past any spin budget, both ends sleep
#define NSEC_PER_MSEC 1000000ull
#define MAX_GAPS 8
#define MAX_GAP_MS 60000 // a minute: past any spin budget or idle state of a CPU
#define GAP_ROUNDS_BUDGET_MS 4000 // --gap-rounds to fill: 200, 100, 8, 8 after 1, 20, 300, 1000 ms
#define GAP_ROUNDS_MIN 8
#define GAP_ROUNDS_MAX 200
#define MAX_GAP_ROUNDS 100000 // a day of 1 s gaps: past any use
#define BESIDE_BLOCK_CALLS 2000 // --beside-ring: about 1 ms of round trips a block
#define BESIDE_WARMUP_NS (500 * 1000ull) // past the other pair's spin budget: its spinner sleeps
#define BESIDE_MIN_PAIRS 8
#define BESIDE_MAX_PAIRS 100000
#define MAX_SUBSCRIBERS 64 // --events' -c
#define EVENTS_MAX_COUNT 10000000 // every latency is kept: 80 MB a subscriber
#define EVENTS_MIN_SIZE 16 // the payload starts with the publish time and a sequence number
#define EVENTS_DEFAULT_DEPTH 16 // without -d: publishes in flight enough to measure events/s
#define DAEMON_THREADS_MAX 64 // it runs about 20
#define REASON_LEN 256 // the library's longest reason names two EAL file prefixes

struct options {
	const char *sock_path;
	uint64_t count, warmup; // calls of all clients; calls of each before measuring
	double seconds, idle_seconds, beside_seconds; // -T, --idle, --beside-ring; 0: not given
	bool cdf, stamps, count_syscalls, event_loop, events, json, quiet, secondary;
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

// Log-linear: exact below 16 ns, then 16 buckets (6% wide) per power of two up to 2^37 ns.
#define HIST_SUB_BITS 4
#define HIST_SUB_BUCKETS (1u << HIST_SUB_BITS)
#define HIST_MAX_POW2 37
#define HIST_BUCKETS ((HIST_MAX_POW2 - HIST_SUB_BITS + 2) * HIST_SUB_BUCKETS)

struct histogram {
	uint64_t count, max_ns, buckets[HIST_BUCKETS];
};

static inline void hist_add(struct histogram *h, uint64_t ns) { // inline: once a measured call
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

struct client_state {
	const struct options *opts;
	struct gr_api_client *client;
	uint32_t type;
	uint8_t *tx, *rx; // tx: the pattern, the sequence number stamped at its start
	struct inflight *fifo; // the requests in flight: depth slots, the oldest at head
	unsigned head, used;
	uint64_t next_seq, last_ns;
	bool progress; // the rate on stderr every second
	int epoll_fd; // --event-loop's, made on the first wait; else -1
};

struct daemon_probe { // the daemon over a measured phase, -1 when unknown
	pid_t pid;
	bool sampled, have_chan;
	int n_syscall_fds, syscall_fds[DAEMON_THREADS_MAX]; // n -1: one failed
	int64_t cpu_ns, runq_wait_ns, vcsw, syscalls;
	struct gr_shm_stats_resp chan;
};

struct summary {
	const char *transport, *backing, *reason; // backing NULL on the socket
	uint64_t calls, client_cpu_ns, vcsw, first_ns, client0_vcsw; // first, client0: --idle's
	int64_t runq_wait_ns, syscalls, client0_syscalls; // -1: not measurable
	struct histogram hist;
	// Rates: calls per second of each client's run and CPU, its share whatever CPU it got.
	double seconds, client_rates[MAX_CLIENTS], client_cpu_rates[MAX_CLIENTS];
	struct daemon_probe daemon;
};

struct latency_samples {
	uint64_t count, p50_ns, p99_ns, max_ns;
};

struct gap_run {
	const char *backing; // of the shm connection
	char reason[REASON_LEN];
	double seconds;
	struct {
		unsigned gap_ms, rounds;
		struct latency_samples shm, socket;
	} gaps[MAX_GAPS];
};

struct beside_run {
	const char *backing;
	double seconds;
	double ratio[3], ring[3], shm[3]; // shm / ring at p25, p50, p75; ns at p50, min, max
	unsigned pairs;
	double *ring_ns, *shm_ns; // of each pair, in the order measured
};

struct events_run {
	uint64_t delivered, lost; // all subscribers' events, lost: to full backlogs
	double events_per_s; // delivered, from the first publish to the last event received
	struct latency_samples latency; // publish to receive, over every delivered event
};

// ping2_perf_calls.c
void *calloc_or_fail(size_t n, size_t size);
uint64_t hist_value(const struct histogram *h, unsigned index); // midpoint, at most max_ns
void hist_merge(struct histogram *into, const struct histogram *from);
// Every percentile of the tool is by nearest rank: the value of rank
// ceil(fraction * n), at least 1, of n sorted values.
uint64_t percentile_rank(uint64_t count, double fraction);
uint64_t hist_percentile(const struct histogram *h, double fraction); // by that rank
uint64_t samples_percentile(const uint64_t *sorted, size_t n, double fraction); // the same, 0: none
void tsc_calibrate(void); // once per process, before any call is timed (20 ms)
void client_state_init(struct client_state *s, const struct options *o, struct gr_api_client *c);
void client_state_close(struct client_state *s); // disconnect; fail()s if that fails
// Up to calls calls, depth in flight, until deadline (0: none), into h (NULL: none): calls done.
uint64_t run_calls(struct client_state *s, uint64_t calls, uint64_t deadline, struct histogram *h);
uint64_t call_alone(struct client_state *s); // one checked call: its round trip in ns
struct gr_api_client *connect_client(const struct options *o, enum gr_api_transport t);
// connect_client() or fail(); *b: its GR_SHM_BACKING_* (0: socket), a memzone if --secondary.
struct gr_api_client *
connect_measured(const struct options *o, enum gr_api_transport t, uint32_t *b);
const char *transport_name(enum gr_api_transport t);
const char *request_name(size_t size); // GR_PING, GR_PING2 or GR_SHM_ECHO
const char *backing_name(uint32_t backing); // NULL on the socket, "mixed" for two kinds
// ping2_perf_accounting.c
int syscall_counter_open(pid_t tid); // disabled, of tid (0: this process); -1 if not had
int64_t runq_wait_ns(void); // of this thread, -1 if unknown
bool daemon_info(const struct options *o, struct gr_shm_daemon_info *info); // false: not told
bool daemon_stats(const struct options *o, struct gr_shm_stats_resp *resp);
// pid -1: unknown, only the channel counters. After stop, p holds the differences.
void daemon_probe_start(const struct options *o, struct daemon_probe *p, pid_t pid);
void daemon_probe_stop(const struct options *o, struct daemon_probe *p);
// ping2_perf_clients.c
int run_clients(struct options *o, struct summary *sum); // EXIT_FAILURE: a client failed
// Takes the daemon's file prefix (info NULL: not told) or fail()s if EAL cannot attach: memzones.
uint32_t secondary_prepare(struct options *o, const struct gr_shm_daemon_info *info);
void secondary_init(const struct options *o, unsigned index); // after the fork
void wait_memzones_freed(const struct options *o, uint32_t before); // bounded
// ping2_perf_modes.c
void run_gaps(struct options *o, struct gap_run *run);
void run_beside_ring(struct options *o, struct beside_run *run);
void run_events(const struct options *o, struct events_run *run);
// ping2_perf_output.c
void print_summary(const struct options *o, const struct summary *sum); // calls or --idle
void print_gaps(const struct options *o, const struct gap_run *run);
void print_beside(const struct options *o, const struct beside_run *run);
void print_events(const struct options *o, const struct events_run *run);
