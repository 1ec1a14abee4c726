// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's pieces, one concern per file, tied together by ping2_perf.c's
// main(): the options (ping2_perf_options.c), the calls and their checks
// (ping2_perf_calls.c), a client process (ping2_perf_client.c), DPDK
// secondaries (ping2_perf_secondary.c), the runner that forks the clients
// and adds their results up (ping2_perf_runner.c), the daemon asked and
// sampled around a run (ping2_perf_daemon.c) with the CPU and system-call
// accounting of processes (ping2_perf_accounting.c), the occasional calls
// of --gap (ping2_perf_gap.c), the busy round trip beside the raw ring of
// --beside-ring (ping2_perf_beside.c), and the output as JSON (ping2_perf_json.c)
// or text (ping2_perf_text.c). The latency histogram is ping2_perf_hist.h.
// Every piece runs in one thread of its process; none is thread-safe.

#pragma once

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include "bench_util.h"
#include "ping2_perf_hist.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define DEFAULT_COUNT 100000
#define DEFAULT_WARMUP 1000
// Bounds of the options: enough for any benchmark on one machine, small
// enough that the in-flight table and the client table stay tiny.
#define MAX_DEPTH 4096
#define MAX_CLIENTS 256
// --no-stamps: the clock is read once every NO_STAMPS_CLOCK_MASK + 1 calls,
// for the deadline and progress (ref_bench reads it as often in its loops).
#define NO_STAMPS_CLOCK_MASK 0x3f
// --idle: requests client 0 times after the first one, each after IDLE_GAP_MS
// of silence, far longer than any spin budget, so that both ends sleep.
#define DEFAULT_IDLE_ROUNDS 20
#define IDLE_GAP_MS 20
#define NSEC_PER_MSEC 1000000ull
// --gap: at most MAX_GAPS gaps, each from 1 ms to MAX_GAP_MS (a minute: far
// past any spin budget or idle state of a CPU).
#define MAX_GAPS 8
#define MAX_GAP_MS 60000
// --gap-rounds, when not given: as many rounds as fill GAP_ROUNDS_BUDGET_MS
// of silence (a round is two gaps, one before each transport's call), no
// fewer than GAP_ROUNDS_MIN and no more than GAP_ROUNDS_MAX. 1 ms, 20 ms,
// 300 ms and 1 s gaps take 200, 100, 8 and 8 rounds: 25 s in all, most of
// it the 1 s gaps'.
#define GAP_ROUNDS_BUDGET_MS 4000
#define GAP_ROUNDS_MIN 8
#define GAP_ROUNDS_MAX 200
// Most --gap-rounds: a day of 1 s gaps is already past any use.
#define MAX_GAP_ROUNDS 100000
// --beside-ring: calls in each timed block (about a millisecond of busy round
// trips), the untimed warm-up that starts every block (well past a spinning
// daemon's budget, so that the other pair's spinner has gone to sleep), and
// the bounds of the pairs of blocks (the fewest, whatever the seconds, and
// the most, whatever the time left).
#define BESIDE_BLOCK_CALLS 2000
#define BESIDE_WARMUP_NS (500 * 1000ull)
#define BESIDE_MIN_PAIRS 8
#define BESIDE_MAX_PAIRS 100000
// Length of the transport reason carried from a client to the parent: the
// client library's longest reason names two EAL file prefixes.
#define REASON_LEN 256

struct options {
	const char *sock_path;
	uint64_t count; // measured calls, all clients together
	double seconds; // -T: measure for this long instead of count calls (0: count)
	uint64_t warmup; // calls per client before measuring
	bool cdf; // --cdf: the latency distribution in the JSON
	bool stamps; // a clock read per call, for the latency histogram (not --no-stamps)
	// System calls counted with a tracepoint (not --no-syscall-count): while
	// it is enabled, every system call of the machine takes the kernel's
	// slower traced path.
	bool count_syscalls;
	double idle_seconds; // --idle: measure idle cost instead (0: off)
	unsigned idle_rounds; // --idle-rounds
	// --gap: the occasional calls instead (n_gaps 0: off), gaps_ms in the
	// order given, gap_rounds calls per transport after each (0: as
	// gap_rounds() says).
	unsigned n_gaps;
	unsigned gaps_ms[MAX_GAPS];
	unsigned gap_rounds;
	// --beside-ring: the busy round trip and the raw ring ping-pong
	// alternated block by block for this long instead (0: off).
	double beside_seconds;
	enum gr_api_transport transport;
	unsigned depth;
	size_t size;
	unsigned clients;
	unsigned idle_channels; // --idle-channels: attached and idle beside the clients
	int spin_us;
	// --event-loop: each response waited for as an event-loop controller
	// does (try_recv, poll_prepare, epoll_wait, poll_done), not by a
	// blocking receive.
	bool event_loop;
	bool json;
	bool quiet;
	// DPDK secondary clients (--secondary).
	bool secondary;
	char file_prefix[GR_SHM_PREFIX_LEN]; // --file-prefix, else the daemon's
	unsigned lcore; // --lcore N, 0: 1 + pid % (RTE_MAX_LCORE - 1)
	int eal_argc; // EAL arguments given after --, passed verbatim
	char **eal_argv;
};

// ---- ping2_perf_options.c ----

// Parse argv into *o, defaults filled in. Prints the usage and exits on
// --help (0) and on an unknown option (1); fail()s on a bad value or
// options that contradict each other.
void parse_options(int argc, char **argv, struct options *o);

// The calls --gap makes per transport after a gap of gap_ms: --gap-rounds,
// else as GAP_ROUNDS_BUDGET_MS says.
unsigned gap_rounds(const struct options *o, unsigned gap_ms);

// ---- ping2_perf_calls.c ----

// One connection's calls: the request pattern, the window of requests in
// flight and the clock of the last response.
struct client_state {
	const struct options *opts;
	struct gr_api_client *client;
	uint32_t type;
	uint8_t *tx; // pattern, with the sequence number stamped at the start
	uint8_t *rx;
	uint64_t next_seq;
	struct inflight *fifo; // opts->depth slots, oldest at head
	unsigned head;
	unsigned used;
	uint64_t last_ns; // the clock when the last response arrived
	int epoll_fd; // --event-loop: the loop's epoll, made on the first wait; else -1
};

// Calibrate this process's TSC clock (call_ns()) against CLOCK_MONOTONIC:
// once per process, before any call is timed. Takes 20 ms.
void tsc_calibrate(void);

// Set up s for o's requests on client c (NULL: connect later). fail()s
// without memory.
void client_state_init(struct client_state *s, const struct options *o, struct gr_api_client *c);

// Free what client_state_init() allocated (not the connection).
void client_state_release(struct client_state *s);

// Run calls requests with up to depth in flight: fill the window, then send
// one more for each response, until calls are sent or, with a deadline (not
// 0), until the clock passes it; then wait for those in flight. With hist
// NULL (warmup) nothing is recorded; progress prints the rate on stderr
// every second. Returns the calls done. fail()s on any error or wrong echo.
uint64_t run_calls(
	struct client_state *s,
	uint64_t calls,
	uint64_t deadline_ns,
	struct histogram *hist,
	bool progress
);

// One call with nothing else in flight, checked. Returns its round trip in
// ns. fail()s on any error or wrong echo.
uint64_t call_alone(struct client_state *s);

// A connection on transport t with o's spin budget; NULL with errno set.
struct gr_api_client *connect_client(const struct options *o, enum gr_api_transport t);

// connect_client(), or fail() with the reason (for shm: why the daemon
// offers no channel, when an auto connect says); the backing of its channel
// (channel_backing()) into *backing. With --secondary, a connection not
// forced on the socket must be on a memzone channel, or it fail()s saying why not.
struct gr_api_client *
connect_measured(const struct options *o, enum gr_api_transport t, uint32_t *backing);

const char *transport_name(enum gr_api_transport t);

// The request a payload size stands for ("GR_PING2", ...).
const char *request_name(size_t size);

// The backing of this process's channel on c (GR_SHM_BACKING_*), from the
// daemon's GR_SHM_CHANNEL_LIST; 0 on the socket. fail()s if the daemon does
// not list it.
uint32_t channel_backing(struct gr_api_client *c);

// The name of a GR_SHM_BACKING_* value: "memzone", "memfd"; NULL for 0 (the
// socket), "mixed" for anything else.
const char *backing_name(uint32_t backing);

// ---- ping2_perf_client.c ----

// The pipes of a client process: it writes its result to result; the
// parent closes the other ends of the rest to say go (all clients start
// at once), done (--idle: client 0 has finished) and cleanup (--secondary:
// the daemon has freed the run's memzones and no other client is cleaning
// up, EAL may clean up); -1 when unused.
struct client_pipes {
	int result;
	int go;
	int done;
	int cleanup;
};

// What one client process sends to the parent when it is done.
struct client_result {
	int32_t transport; // enum gr_api_transport
	uint32_t backing; // GR_SHM_BACKING_* of its channel, 0 on the socket
	char reason[REASON_LEN];
	uint64_t calls;
	uint64_t start_ns; // CLOCK_MONOTONIC, shared by all processes
	uint64_t end_ns;
	uint64_t first_ns; // --idle, client 0: the first request after the idle period
	uint64_t cpu_ns; // user + system during the measured phase
	uint64_t vcsw; // voluntary context switches during the measured phase
	int64_t runq_wait_ns; // time runnable but waiting for a CPU, -1 if unknown
	int64_t syscalls; // -1 when not measurable
	struct histogram hist;
};

// The body of client process index, which makes calls calls: writes a byte
// to pipes->result once warmed up, waits for go, measures, writes its
// struct client_result. Never returns; fail()s on any error.
void __attribute__((noreturn)) client_main(
	const struct options *o,
	unsigned index,
	uint64_t calls,
	const struct client_pipes *pipes
);

// Wait for the other end of pipe fd to close (EOF is the signal); closes fd.
void wait_eof(int fd);

// ---- ping2_perf_secondary.c ----

// With --secondary: the file prefix to attach to (the daemon's, from info,
// unless given), and a plain reason to stop before any EAL init that cannot
// work. info is NULL when the daemon did not tell.
void secondary_prepare(struct options *o, const struct gr_shm_daemon_info *info);

// Initialise EAL as a secondary of the daemon with the lcore id of client
// index. In a client process after the fork (EAL cannot be shared across
// one). fail()s with a reason in plain words when EAL refuses.
void secondary_init(const struct options *o, unsigned index);

// Wait until the daemon holds no more channel memzones than before (EAL
// cleanup must not race their frees, see client_main()). Bounded; says so
// on stderr when the bound passes.
void wait_memzones_freed(const struct options *o, uint32_t before);

// ---- ping2_perf_accounting.c ----

// A tracepoint counter of the system calls of thread tid (0: this process),
// disabled until PERF_EVENT_IOC_ENABLE; -1 when it cannot be had (no
// tracefs, or no right to trace tid).
int syscall_counter_open(pid_t tid);

// Time the calling thread spent runnable but waiting for a CPU, in ns; -1
// if /proc does not show it.
int64_t runq_wait_ns(void);

// CPU time, time waiting for a CPU (-1 if unknown) and voluntary context
// switches of process pid, summed over its threads. Returns false if /proc
// does not show the process.
bool process_sample(pid_t pid, int64_t *cpu_ns, int64_t *wait_ns, int64_t *vcsw);

// ---- ping2_perf_daemon.c ----

// Threads of the daemon whose system calls are counted: its main thread,
// EAL's two, the pollers (at most 16) and liburcu's, with room to spare.
#define MAX_DAEMON_TASKS 64

// The daemon around a measured phase: CPU time, time waiting for a CPU,
// voluntary context switches and system calls (one tracepoint counter per
// thread), -1 when unknown.
struct daemon_probe {
	pid_t pid;
	bool sampled;
	int n_syscall_fds; // -1: a thread's system call counter could not be opened
	int syscall_fds[MAX_DAEMON_TASKS];
	int64_t cpu_ns;
	int64_t runq_wait_ns;
	int64_t vcsw;
	int64_t syscalls;
	// Channel counters (GR_SHM_STATS) over the phase, if the daemon told.
	bool have_chan;
	struct gr_shm_counters chan;
};

// Ask the daemon who it is (GR_SHM_DAEMON_INFO) over a short connection of
// its own. Returns false if it does not tell; fail()s if it cannot be
// reached or answers wrong.
bool daemon_info(const struct options *o, struct gr_shm_daemon_info *info);

// The daemon's channel counters in total and its channel memzones reserved
// now (GR_SHM_STATS), over a short socket connection of its own. Either
// pointer may be NULL. Returns false if it does not tell.
bool daemon_stats(const struct options *o, struct gr_shm_counters *total, uint32_t *memzones);

// Start and stop sampling daemon pid (-1: unknown, only its channel
// counters) around a measured phase; p holds the differences after stop.
void daemon_probe_start(const struct options *o, struct daemon_probe *p, pid_t pid);
void daemon_probe_stop(const struct options *o, struct daemon_probe *p);

// ---- ping2_perf_runner.c ----

// A run's clients added up.
struct summary {
	const char *transport;
	const char *backing; // "memzone", "memfd", "mixed", NULL on the socket
	const char *reason;
	uint64_t calls;
	double seconds;
	struct histogram hist;
	uint64_t client_cpu_ns;
	uint64_t vcsw;
	int64_t runq_wait_ns; // -1: not measurable
	int64_t syscalls; // -1: not measurable
	double client_rates[MAX_CLIENTS]; // calls/s of each client over its own run
	// Calls per second of CPU time each client got: its share of the
	// daemon's service, whatever share of a CPU the scheduler gave it.
	double client_cpu_rates[MAX_CLIENTS];
	uint64_t first_ns; // --idle: client 0's first request after the idle period
	uint64_t client0_vcsw; // --idle: client 0's sleeps, its IDLE_GAP_MS ones included
	int64_t client0_syscalls; // --idle: client 0's system calls, -1: not measurable
	struct daemon_probe daemon;
};

// Fork o->clients client processes, run them (the measured calls, or the
// idle period of --idle) while sampling the daemon, and add their results
// up into *sum. Returns EXIT_SUCCESS, or EXIT_FAILURE when a client exited
// badly (said on stderr); fail()s on any other error.
int run_clients(struct options *o, struct summary *sum);

// ---- ping2_perf_gap.c ----

// The round trips after one gap, on one transport.
struct gap_samples {
	uint64_t count;
	uint64_t p50_ns;
	uint64_t p99_ns;
	uint64_t max_ns;
};

// --gap: per gap, both transports.
struct gap_result {
	unsigned gap_ms;
	unsigned rounds;
	struct gap_samples shm, socket;
};

// The whole --gap run.
struct gap_run {
	const char *backing; // of the shm connection
	char reason[REASON_LEN]; // why the shm connection is on that backing
	double seconds; // the measured phase, gaps included
	struct gap_result gaps[MAX_GAPS];
};

// --gap: one shm and one socket connection in this process, warmed up, then
// for each gap its rounds of: gap, shm call, gap, socket call. fail()s on
// any error (no shm channel included).
void run_gaps(struct options *o, struct gap_run *run);

// ---- ping2_perf_beside.c ----

// --beside-ring: pairs of blocks, one of GR_PING2 calls over the channel and
// one of raw rte_ring round trips, each BESIDE_BLOCK_CALLS long: the ratio of
// each pair (channel ns / ring ns), and each side's ns per round trip, as
// percentiles over the pairs.
struct beside_run {
	const char *backing; // of the shm connection
	double seconds; // the measured phase
	unsigned pairs;
	double ratio_p25, ratio_p50, ratio_p75;
	double ring_p50_ns, ring_min_ns, ring_max_ns;
	double shm_p50_ns, shm_min_ns, shm_max_ns;
	// Each pair's ns per round trip, ring and shm, in the order measured.
	double *ring_ns, *shm_ns;
};

// --beside-ring: fork the ring's follower, connect on the channel, warm up,
// then alternate the blocks (which goes first alternates too) until
// o->beside_seconds have passed and at least BESIDE_MIN_PAIRS were made.
// fail()s on any error (no shm channel included).
void run_beside_ring(struct options *o, struct beside_run *run);

// ---- ping2_perf_json.c, ping2_perf_text.c ----

// One JSON object on stdout: a run of calls, of --idle, of --gap, of
// --beside-ring.
void print_json(const struct options *o, const struct summary *sum);
void print_json_idle(const struct options *o, const struct summary *sum);
void print_json_gaps(const struct options *o, const struct gap_run *run);
void print_json_beside(const struct options *o, const struct beside_run *run);

// The same as text, for a reader.
void print_human(const struct options *o, const struct summary *sum);
void print_human_idle(const struct options *o, const struct summary *sum);
void print_human_gaps(const struct options *o, const struct gap_run *run);
void print_human_beside(const struct options *o, const struct beside_run *run);
