// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf: measure request round trips to shmchand on either transport.
//
// Each client process connects on its own, runs WARMUP requests, waits until
// every client is ready, then runs its share of COUNT requests (or requests
// for SECONDS, -T) with DEPTH in flight, verifying every response. The
// parent aggregates latency histograms, CPU time and context switches
// through one pipe per client and samples the daemon around the measured
// phase: its CPU time and voluntary context switches from /proc (every
// thread), its system calls with one tracepoint counter per thread.
// docs/performance.md draws its plots from the --json output (--cdf adds the
// latency distribution).
//
// --idle SECONDS measures the cost of idle clients instead: every client
// attaches and warms up, then all stay idle while the parent samples the
// daemon for SECONDS; then client 0 times its first request, and a few more
// each after a short idle gap, while the others stay attached.
//
// --idle-channels N attaches N more channels from the parent once the clients
// are ready, keeps them idle during the measured phase, and closes them at
// the end: what idle channels on the clients' poller cost a busy one.
//
// With --secondary each client process initialises EAL as a DPDK secondary
// of the daemon after it is forked (EAL cannot be shared across a fork), so
// the client library gives it a memzone channel instead of a memfd one.

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "bench_util.h"
#include "idle_channels.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_COUNT 100000
#define DEFAULT_WARMUP 1000
// Bounds of the options: enough for any benchmark on one machine, small
// enough that the in-flight table and the client table stay tiny.
#define MAX_DEPTH 4096
#define MAX_CLIENTS 256
// Progress goes to stderr this often during the measured phase.
#define PROGRESS_INTERVAL_NS NSEC_PER_SEC
// The clock is read for progress once every PROGRESS_CHECK_MASK + 1 calls.
#define PROGRESS_CHECK_MASK 0xff
// --no-stamps: the clock is read once every NO_STAMPS_CLOCK_MASK + 1 calls,
// for the deadline and progress (ref_bench reads it as often in its loops).
#define NO_STAMPS_CLOCK_MASK 0x3f
// --idle: requests client 0 times after the first one, each after IDLE_GAP_MS
// of silence, far longer than any spin budget, so that both ends sleep.
#define DEFAULT_IDLE_ROUNDS 20
#define IDLE_GAP_MS 20
#define NSEC_PER_MSEC 1000000ull
// Threads of the daemon whose system calls are counted: its main thread,
// EAL's two, the pollers (at most 16) and liburcu's, with room to spare.
#define MAX_DAEMON_TASKS 64
// --secondary: how long the parent waits for the daemon to free the run's
// channel memzones (it does so after an RCU grace period), and how often it
// asks.
#define MEMZONE_FREE_WAIT_MS 5000
#define MEMZONE_POLL_NS (NSEC_PER_MSEC)
// Bytes of the per-request sequence number stamped at the start of a payload.
#define STAMP_LEN sizeof(uint64_t)
// Length of the transport reason carried from a client to the parent: the
// client library's longest reason names two EAL file prefixes.
#define REASON_LEN 256
// EAL arguments ping2_perf builds for a secondary, program name included.
#define EAL_OWN_ARGS 9
// Room for the --lcores value: "N@(" + a CPU list + ")".
#define LCORES_ARG_LEN 512

// Latency histogram, log-linear: values below HIST_SUB_BUCKETS ns are exact;
// above, each power of two is cut into HIST_SUB_BUCKETS buckets (6% wide).
// The last power of two starts at 2^HIST_MAX_POW2 ns (137 s); longer round
// trips land in the last bucket and still count in max.
#define HIST_SUB_BITS 4
#define HIST_SUB_BUCKETS (1u << HIST_SUB_BITS)
#define HIST_MAX_POW2 37
#define HIST_GROUPS (HIST_MAX_POW2 - HIST_SUB_BITS + 2)
#define HIST_BUCKETS (HIST_GROUPS * HIST_SUB_BUCKETS)

struct histogram {
	uint64_t count;
	uint64_t max_ns;
	uint64_t buckets[HIST_BUCKETS];
};

static unsigned hist_index(uint64_t ns) {
	if (ns < HIST_SUB_BUCKETS)
		return (unsigned)ns;
	unsigned pow2 = 63 - (unsigned)__builtin_clzll(ns);
	if (pow2 > HIST_MAX_POW2)
		return HIST_BUCKETS - 1;
	unsigned group = pow2 - HIST_SUB_BITS + 1;
	unsigned sub = (unsigned)(ns >> (pow2 - HIST_SUB_BITS)) & (HIST_SUB_BUCKETS - 1);
	return group * HIST_SUB_BUCKETS + sub;
}

// The value a bucket stands for: its exact value or its midpoint.
static uint64_t hist_value(unsigned index) {
	unsigned group = index / HIST_SUB_BUCKETS;
	uint64_t sub = index % HIST_SUB_BUCKETS;
	if (group == 0)
		return sub;
	uint64_t low = (HIST_SUB_BUCKETS + sub) << (group - 1);
	uint64_t width = 1ull << (group - 1);
	return low + width / 2;
}

static void hist_add(struct histogram *h, uint64_t ns) {
	h->buckets[hist_index(ns)]++;
	h->count++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

static void hist_merge(struct histogram *into, const struct histogram *from) {
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		into->buckets[i] += from->buckets[i];
	into->count += from->count;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

// The value at rank ceil(fraction * count) of the samples, never above max.
static uint64_t hist_percentile(const struct histogram *h, double fraction) {
	double exact_rank = fraction * (double)h->count;
	uint64_t rank = (uint64_t)exact_rank;
	uint64_t seen = 0;
	if ((double)rank < exact_rank || rank == 0)
		rank++;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			uint64_t v = hist_value(i);
			return v < h->max_ns ? v : h->max_ns;
		}
	}
	return h->max_ns;
}

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
	enum gr_api_transport transport;
	unsigned depth;
	size_t size;
	unsigned clients;
	unsigned idle_channels; // --idle-channels: attached and idle beside the clients
	int spin_us;
	bool json;
	bool quiet;
	// DPDK secondary clients (--secondary).
	bool secondary;
	char file_prefix[GR_SHM_PREFIX_LEN]; // --file-prefix, else the daemon's
	unsigned lcore; // --lcore N, 0: 1 + pid % (RTE_MAX_LCORE - 1)
	int eal_argc; // EAL arguments given after --, passed verbatim
	char **eal_argv;
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

// A pipe holds at least 64 KiB on Linux, so the child's single write of its
// result never blocks, even before the parent reads.
_Static_assert(sizeof(struct client_result) < 65536, "a result fits an empty pipe");

const char *log_prefix = "ping2_perf";

// The per-call stamps come from the TSC, scaled to CLOCK_MONOTONIC
// nanoseconds: clock_gettime() costs 25-35 ns through the vDSO here, and two
// per call would be a tenth of a pipelined call's client time. Calibrated
// once per client process, over TSC_CALIBRATE_NS.
#define TSC_CALIBRATE_NS (20 * NSEC_PER_MSEC)
static struct {
	uint64_t tsc0, ns0;
	double ns_per_tick;
} tsc_clock;

static void tsc_calibrate(void) {
	uint64_t ns0 = now_ns(), tsc0 = rte_rdtsc(), ns1, tsc1;

	do {
		ns1 = now_ns();
		tsc1 = rte_rdtsc();
	} while (ns1 - ns0 < TSC_CALIBRATE_NS);
	tsc_clock.tsc0 = tsc0;
	tsc_clock.ns0 = ns0;
	tsc_clock.ns_per_tick = (double)(ns1 - ns0) / (double)(tsc1 - tsc0);
}

// now_ns(), cheaper: after tsc_calibrate().
static uint64_t call_ns(void) {
	return tsc_clock.ns0 +
	       (uint64_t)((double)(rte_rdtsc() - tsc_clock.tsc0) * tsc_clock.ns_per_tick);
}

static const char *transport_name(enum gr_api_transport t) {
	switch (t) {
	case GR_API_TRANSPORT_SOCKET:
		return "socket";
	case GR_API_TRANSPORT_SHM:
		return "shm";
	case GR_API_TRANSPORT_AUTO:
		break;
	}
	return "auto";
}

// The request a payload size stands for: 0 is GR_PING, 64 is GR_PING2, any
// other size is GR_SHM_ECHO.
static uint32_t request_type(size_t size) {
	if (size == 0)
		return GR_PING;
	if (size == GR_PING2_LEN)
		return GR_PING2;
	return GR_SHM_ECHO;
}

static const char *request_name(size_t size) {
	if (size == 0)
		return "GR_PING";
	if (size == GR_PING2_LEN)
		return "GR_PING2";
	return "GR_SHM_ECHO";
}

// Counts the system calls of thread tid (0: this process) with the
// raw_syscalls:sys_enter tracepoint, disabled until PERF_EVENT_IOC_ENABLE.
// Needs tracefs mounted, and for another process's thread the right to
// trace it (root, or perf_event_paranoid allowing it); returns -1 when it
// cannot be had.
static int syscall_counter_open(pid_t tid) {
	static const char *const id_paths[] = {
		"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
		"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	unsigned long long id = 0;
	bool found = false;

	for (size_t i = 0; i < sizeof(id_paths) / sizeof(id_paths[0]) && !found; i++) {
		FILE *f = fopen(id_paths[i], "r");
		if (f == NULL)
			continue;
		found = fscanf(f, "%llu", &id) == 1;
		fclose(f);
	}
	if (!found)
		return -1;

	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = id,
		.disabled = 1,
		.inherit = 1,
	};
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

// One request in flight.
struct inflight {
	uint32_t id;
	uint64_t seq;
	uint64_t sent_ns;
};

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
};

static size_t stamp_len(size_t size) {
	return size < STAMP_LEN ? size : STAMP_LEN;
}

// Send the next request, stamped as sent at sent_ns: the clock read just
// before (a receive's, when the send follows it).
static void send_one(struct client_state *s, uint64_t sent_ns) {
	size_t size = s->opts->size;
	uint64_t seq = s->next_seq++;
	unsigned tail = s->head + s->used;
	struct inflight *slot = &s->fifo[tail < s->opts->depth ? tail : tail - s->opts->depth];

	memcpy(s->tx, &seq, stamp_len(size));
	slot->seq = seq;
	slot->sent_ns = sent_ns;
	// Pipelined, the requests go as a batch: the next receive that has to
	// wait flushes them (one fence, and one doorbell if the daemon sleeps).
	long id = s->opts->depth > 1 ? gr_api_client_send_more(s->client, s->type, size, s->tx)
				     : gr_api_client_send(s->client, s->type, size, s->tx);
	if (id <= 0 || id > UINT32_MAX)
		fail("send %s #%" PRIu64 ": %s", request_name(size), seq, strerror(errno));
	slot->id = (uint32_t)id;
	s->used++;
}

// Receive the oldest request's response into s->rx, stamp s->last_ns (with
// stamps; run_calls() keeps it without), and
// take its slot out of the window into *call. Returns the response's length;
// check_response() checks it.
static long recv_oldest(struct client_state *s, struct inflight *call) {
	*call = s->fifo[s->head];
	long len = gr_api_client_recv_into(s->client, call->id, s->rx, GR_API_MAX_MSG_LEN);
	if (s->opts->stamps)
		s->last_ns = call_ns();
	if (len < 0)
		fail("request %" PRIu32 " (%s #%" PRIu64 "): %s",
		     call->id,
		     request_name(s->opts->size),
		     call->seq,
		     strerror(errno));
	if (++s->head == s->opts->depth)
		s->head = 0;
	s->used--;
	return len;
}

// The response in s->rx, len bytes, must answer call: its length, its stamp
// and the rest of its payload. Runs after the next request left (s->rx and
// the payload beyond the stamp are untouched by a send).
static void check_response(const struct client_state *s, const struct inflight *call, long len) {
	size_t size = s->opts->size;

	if ((size_t)len != size)
		fail("request %" PRIu32 ": response of %ld bytes, expected %zu", call->id, len, size
		);
	if (memcmp(s->rx, &call->seq, stamp_len(size)) != 0)
		fail("request %" PRIu32 ": response carries another request's payload", call->id);
	if (size > STAMP_LEN && memcmp(s->rx + STAMP_LEN, s->tx + STAMP_LEN, size - STAMP_LEN) != 0)
		fail("request %" PRIu32 ": response payload differs from the request", call->id);
}

// Run calls requests with up to depth in flight: fill the window, then send
// one more for each response, until calls are sent or, with a deadline (not
// 0), until the clock passes it; then wait for those in flight. With hist
// NULL (warmup) nothing is recorded. Returns the calls done.
static uint64_t run_calls(
	struct client_state *s,
	uint64_t calls,
	uint64_t deadline_ns,
	struct histogram *hist,
	bool progress
) {
	uint64_t sent = 0, done = 0;
	uint64_t start = call_ns();
	uint64_t next_progress = start + PROGRESS_INTERVAL_NS;

	s->last_ns = start;
	while (sent < calls && s->used < s->opts->depth) {
		send_one(s, call_ns());
		sent++;
	}
	while (s->used > 0) {
		struct inflight call;
		long len = recv_oldest(s, &call);
		// The next request leaves first, stamped with the clock read that
		// ended this one; the checks and the bookkeeping of this one run
		// while it is in flight, not between a response and the next
		// request, where they would add to every round trip measured.
		if (sent < calls && (deadline_ns == 0 || s->last_ns < deadline_ns)) {
			send_one(s, s->last_ns);
			sent++;
		}
		check_response(s, &call, len);
		done++;
		if (!s->opts->stamps) {
			if ((done & NO_STAMPS_CLOCK_MASK) == 0)
				s->last_ns = call_ns();
		} else if (hist != NULL) {
			hist_add(hist, s->last_ns - call.sent_ns);
		}
		if (progress && (done & PROGRESS_CHECK_MASK) == 0 && s->last_ns >= next_progress) {
			uint64_t t = s->last_ns;
			fprintf(stderr, "%s: %" PRIu64, log_prefix, done);
			if (deadline_ns == 0)
				fprintf(stderr, "/%" PRIu64, calls);
			fprintf(stderr,
				" calls, %.0f calls/s\n",
				(double)done * NSEC_PER_SEC / (double)(t - start));
			next_progress = t + PROGRESS_INTERVAL_NS;
		}
	}
	return done;
}

static void write_all(int fd, const void *buf, size_t len) {
	const uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("write to parent: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
}

// Read len bytes; returns false on a short read (the writer exited).
static bool read_all(int fd, void *buf, size_t len) {
	uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static struct gr_api_client *connect_client(const struct options *o, enum gr_api_transport t) {
	struct gr_api_client_opts copts = {
		.transport = t,
		.spin_us = o->spin_us,
		.version = "ping2_perf",
	};
	return gr_api_client_connect_opts(o->sock_path, &copts);
}

// Say why a forced shm connect failed: an auto connect that stays on the
// socket carries the reason.
static void explain_no_shm(const struct options *o) {
	struct gr_api_client *c = connect_client(o, GR_API_TRANSPORT_AUTO);
	if (c == NULL)
		return;
	if (gr_api_client_transport(c) != GR_API_TRANSPORT_SHM)
		fprintf(stderr,
			"%s: shm not available: %s\n",
			log_prefix,
			gr_api_client_transport_reason(c));
	gr_api_client_disconnect(c);
}

// The CPUs this process may run on, as an EAL CPU set: "(0-3,6)".
static void cpu_set_arg(char *buf, size_t len) {
	cpu_set_t cpus;
	size_t used = 1;

	if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
		fail("sched_getaffinity: %s", strerror(errno));
	buf[0] = '(';
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &cpus))
			continue;
		int last = cpu;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &cpus))
			last++;
		char range[32];
		if (last > cpu)
			snprintf(range, sizeof(range), "%d-%d", cpu, last);
		else
			snprintf(range, sizeof(range), "%d", cpu);
		int n = snprintf(buf + used, len - used, "%s%s", used > 1 ? "," : "", range);
		if (n < 0 || (size_t)n >= len - used)
			fail("the CPU list of this process does not fit %zu bytes", len);
		used += (size_t)n;
		cpu = last;
	}
	if (used + 2 > len)
		fail("the CPU list of this process does not fit %zu bytes", len);
	buf[used++] = ')';
	buf[used] = '\0';
}

// The lcore id of client index. Each secondary needs an lcore id of its own
// (lcore ids index per-lcore state in the shared memory, such as mempool
// caches), and the daemon's main lcore is 0. By default 1 + pid %
// (RTE_MAX_LCORE - 1): never 0, and different for the clients, which are
// forked one after the other. With --lcore N client i takes N + i, wrapping
// from RTE_MAX_LCORE - 1 back to 1.
static unsigned client_lcore(const struct options *o, unsigned index) {
	if (o->lcore == 0)
		return 1 + (unsigned)getpid() % (RTE_MAX_LCORE - 1);
	return 1 + (o->lcore - 1 + index) % (RTE_MAX_LCORE - 1);
}

// Initialise EAL as a secondary of the daemon, in a freshly forked client.
// Exits with a reason in plain words when EAL refuses.
static void secondary_init(const struct options *o, unsigned index) {
	char lcores[LCORES_ARG_LEN], cpus[LCORES_ARG_LEN - 16];
	char *own[EAL_OWN_ARGS + 1];
	char **argv = own;
	int argc = 0;

	if (o->eal_argv != NULL) {
		// rte_eal_init() permutes its argv: give it a copy.
		argv = calloc((size_t)o->eal_argc + 2, sizeof(*argv));
		if (argv == NULL)
			fail("%s", strerror(ENOMEM));
		argv[argc++] = "ping2_perf";
		for (int i = 0; i < o->eal_argc; i++)
			argv[argc++] = o->eal_argv[i];
	} else {
		cpu_set_arg(cpus, sizeof(cpus));
		snprintf(lcores, sizeof(lcores), "%u@%s", client_lcore(o, index), cpus);
		argv[argc++] = "ping2_perf";
		argv[argc++] = "--proc-type=secondary";
		argv[argc++] = "--file-prefix";
		argv[argc++] = (char *)o->file_prefix;
		argv[argc++] = "--lcores";
		argv[argc++] = lcores;
		argv[argc++] = "--no-pci";
		argv[argc++] = "--no-telemetry";
		argv[argc++] = "--log-level=*:warning";
	}
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0)
		fail("EAL init as a DPDK secondary failed: %s. Either the daemon runs without"
		     " hugepages (--hugepages off, --no-huge or --in-memory): then no secondary can"
		     " attach, run without --secondary to get a memfd channel; or file prefix '%s'"
		     " is not the daemon's; or the lcore id is taken (--lcore)",
		     rte_errno != 0 ? rte_strerror(rte_errno) : "see the EAL messages above",
		     o->eal_argv != NULL ? "(given after --)" : o->file_prefix);
	if (rte_eal_process_type() != RTE_PROC_SECONDARY)
		fail("EAL did not start as a secondary (--proc-type=secondary missing after --?)");
	if (argv != own)
		free(argv);
}

// The backing of this process's channel, from the GR_SHM_CHANNEL_LIST
// entry whose client_pid is ours; 0 on the socket.
static uint32_t channel_backing(struct gr_api_client *c) {
	struct gr_shm_channel_info *info;
	uint32_t backing = 0;
	size_t len;
	int ret;

	if (gr_api_client_transport(c) != GR_API_TRANSPORT_SHM)
		return 0;
	long id = gr_api_client_send(c, GR_SHM_CHANNEL_LIST, 0, NULL);
	if (id <= 0)
		fail("send GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, (void **)&info, &len)) == 1) {
		if (len != sizeof(*info))
			fail("GR_SHM_CHANNEL_LIST: entry of %zu bytes, expected %zu",
			     len,
			     sizeof(*info));
		if (info->client_pid == getpid())
			backing = info->backing;
		free(info);
	}
	if (ret < 0)
		fail("GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	if (backing == 0)
		fail("GR_SHM_CHANNEL_LIST lists no channel of pid %d", (int)getpid());
	return backing;
}

// Time the calling thread spent runnable but waiting for a CPU (the second
// field of /proc/thread-self/schedstat), in ns; -1 if not shown.
static int64_t runq_wait_ns(void) {
	unsigned long long run_ns, wait_ns;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int n = 0;

	if (f != NULL) {
		n = fscanf(f, "%llu %llu", &run_ns, &wait_ns);
		fclose(f);
	}
	return n == 2 ? (int64_t)wait_ns : -1;
}

// Wait for the parent to close the other end of pipe fd: EOF is the signal.
static void wait_eof(int fd) {
	char byte;
	while (read(fd, &byte, sizeof(byte)) < 0 && errno == EINTR)
		;
	close(fd);
}

// One call with nothing else in flight, checked. Returns its round trip.
static uint64_t call_alone(struct client_state *s) {
	struct inflight call;

	send_one(s, call_ns());
	long len = recv_oldest(s, &call);
	check_response(s, &call, len);
	return s->last_ns - call.sent_ns;
}

// --idle, client 0: time the first request after the idle period, then
// idle_rounds more, each after IDLE_GAP_MS of silence.
static void idle_requests(struct client_state *s, struct client_result *res) {
	const struct timespec gap = {
		.tv_sec = IDLE_GAP_MS / 1000,
		.tv_nsec = (long)(IDLE_GAP_MS % 1000 * NSEC_PER_MSEC),
	};

	res->start_ns = now_ns();
	res->first_ns = call_alone(s);
	for (unsigned i = 0; i < s->opts->idle_rounds; i++) {
		while (nanosleep(&gap, NULL) < 0 && errno == EINTR)
			;
		hist_add(&res->hist, call_alone(s));
	}
	res->end_ns = now_ns();
	res->calls = 1 + s->opts->idle_rounds;
}

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

// Body of one client process. Never returns.
static void __attribute__((noreturn)) client_main(
	const struct options *o,
	unsigned index,
	uint64_t calls,
	const struct client_pipes *pipes
) {
	static char prefix[64];
	struct client_result *res = calloc(1, sizeof(*res));
	struct client_state s = {.opts = o, .type = request_type(o->size)};
	struct rusage ru_before, ru_after;
	uint64_t syscalls = 0;
	char ready = 1;

	snprintf(prefix, sizeof(prefix), "ping2_perf: client %u", index);
	log_prefix = prefix;

	s.tx = malloc(o->size > 0 ? o->size : 1);
	s.rx = malloc(GR_API_MAX_MSG_LEN);
	s.fifo = calloc(o->depth, sizeof(*s.fifo));
	if (res == NULL || s.tx == NULL || s.rx == NULL || s.fifo == NULL)
		fail("%s", strerror(ENOMEM));
	payload_fill(s.tx, o->size);
	tsc_calibrate();

	if (o->secondary)
		secondary_init(o, index);
	s.client = connect_client(o, o->transport);
	if (s.client == NULL) {
		int err = errno;
		if (err == ENOTSUP && o->transport == GR_API_TRANSPORT_SHM)
			explain_no_shm(o);
		fail("connect %s (transport %s): %s",
		     o->sock_path,
		     transport_name(o->transport),
		     strerror(err));
	}
	res->transport = (int32_t)gr_api_client_transport(s.client);
	res->backing = channel_backing(s.client);
	// A run that asked for secondaries measures memzone channels or nothing.
	if (o->secondary && res->backing != GR_SHM_BACKING_MEMZONE)
		fail("--secondary, but no memzone channel: %s",
		     gr_api_client_transport_reason(s.client));
	snprintf(res->reason, sizeof(res->reason), "%s", gr_api_client_transport_reason(s.client));

	run_calls(&s, o->warmup, 0, NULL, false);

	int counter = s.opts->count_syscalls ? syscall_counter_open(0) : -1;
	write_all(pipes->result, &ready, sizeof(ready));
	// The parent closes the go pipe once every client is ready: EOF is the start.
	wait_eof(pipes->go);

	int64_t wait_before = runq_wait_ns();
	getrusage(RUSAGE_SELF, &ru_before);
	if (counter >= 0)
		ioctl(counter, PERF_EVENT_IOC_ENABLE, 0);
	if (o->idle_seconds > 0) {
		// The others stay attached, idle, until client 0 is done.
		if (index == 0)
			idle_requests(&s, res);
		else
			wait_eof(pipes->done);
	} else {
		res->start_ns = now_ns();
		uint64_t deadline = 0;
		if (o->seconds > 0)
			deadline = res->start_ns + (uint64_t)(o->seconds * NSEC_PER_SEC);
		res->calls = run_calls(&s, calls, deadline, &res->hist, index == 0 && !o->quiet);
		res->end_ns = now_ns();
	}
	if (counter >= 0)
		ioctl(counter, PERF_EVENT_IOC_DISABLE, 0);
	getrusage(RUSAGE_SELF, &ru_after);
	int64_t wait_after = runq_wait_ns();
	res->runq_wait_ns = wait_before >= 0 && wait_after >= 0 ? wait_after - wait_before : -1;

	res->cpu_ns = rusage_cpu_ns(&ru_after) - rusage_cpu_ns(&ru_before);
	res->vcsw = (uint64_t)(ru_after.ru_nvcsw - ru_before.ru_nvcsw);
	res->syscalls = -1;
	if (counter >= 0 && read(counter, &syscalls, sizeof(syscalls)) == sizeof(syscalls))
		res->syscalls = (int64_t)syscalls;

	if (gr_api_client_disconnect(s.client) < 0)
		fail("disconnect: %s", strerror(errno));
	write_all(pipes->result, res, sizeof(*res));
	// DPDK 22.11 deadlocks when a secondary runs rte_eal_cleanup() while
	// the primary frees hugepage memory (here: the memzones of the other
	// clients' channels, freed as they detach; or memory another
	// secondary's cleanup gives back): the primary holds the memory
	// hotplug lock and waits for the hugepage directory's flock, which the
	// secondary holds (its IPC thread, cancelled by the cleanup in the
	// middle of a memory sync) while it spins on the hotplug lock. So the
	// parent lets the secondaries clean up one at a time, and only once
	// the daemon has freed the run's memzones.
	if (o->secondary) {
		wait_eof(pipes->cleanup);
		if (rte_eal_cleanup() < 0)
			fail("EAL cleanup: %s", rte_strerror(rte_errno));
	}
	exit(EXIT_SUCCESS);
}

// Ask the daemon who it is (GR_SHM_DAEMON_INFO) over a short connection of
// its own. Returns false if it does not tell.
static bool daemon_info(const struct options *o, struct gr_shm_daemon_info *info) {
	struct gr_api_client *c = connect_client(o, GR_API_TRANSPORT_SOCKET);
	bool told = false;

	if (c == NULL)
		fail("connect %s: %s", o->sock_path, strerror(errno));
	long id = gr_api_client_send(c, GR_SHM_DAEMON_INFO, 0, NULL);
	if (id <= 0)
		fail("send GR_SHM_DAEMON_INFO: %s", strerror(errno));
	long len = gr_api_client_recv_into(c, (uint32_t)id, info, sizeof(*info));
	if (len == (long)sizeof(*info))
		told = true;
	else if (len >= 0)
		fail("GR_SHM_DAEMON_INFO: response of %ld bytes, expected %zu", len, sizeof(*info));
	else if (errno == ENOTSUP)
		fprintf(stderr, "%s: daemon does not serve GR_SHM_DAEMON_INFO\n", log_prefix);
	else
		fail("GR_SHM_DAEMON_INFO: %s", strerror(errno));
	gr_api_client_disconnect(c);
	if (told)
		info->file_prefix[sizeof(info->file_prefix) - 1] = '\0';
	return told;
}

// The daemon's channel counters in total and its channel memzones reserved
// now (GR_SHM_STATS), over a short socket connection of its own. Either
// pointer may be NULL. Returns false if it does not tell.
static bool
daemon_stats(const struct options *o, struct gr_shm_counters *total, uint32_t *memzones) {
	struct gr_api_client *c = connect_client(o, GR_API_TRANSPORT_SOCKET);
	struct gr_shm_stats_resp resp;
	long len = -1;

	if (c == NULL)
		return false;
	long id = gr_api_client_send(c, GR_SHM_STATS, 0, NULL);
	if (id > 0)
		len = gr_api_client_recv_into(c, (uint32_t)id, &resp, sizeof(resp));
	gr_api_client_disconnect(c);
	if (len != (long)sizeof(resp))
		return false;
	if (total != NULL)
		*total = resp.total;
	if (memzones != NULL)
		*memzones = resp.memzones;
	return true;
}

// --secondary: wait until the daemon holds no more channel memzones than
// before the run (see client_main: EAL cleanup must not race their frees).
// Bounded; says so on stderr when the bound passes.
static void wait_memzones_freed(const struct options *o, uint32_t before) {
	const struct timespec poll = {.tv_nsec = (long)MEMZONE_POLL_NS};
	uint64_t deadline = now_ns() + MEMZONE_FREE_WAIT_MS * NSEC_PER_MSEC;
	uint32_t now = 0;

	while (daemon_stats(o, NULL, &now) && now > before) {
		if (now_ns() >= deadline) {
			fprintf(stderr,
				"%s: the daemon still holds %" PRIu32 " channel memzones (%" PRIu32
				" before the run) after %d ms; cleaning up EAL anyway\n",
				log_prefix,
				now,
				before,
				MEMZONE_FREE_WAIT_MS);
			return;
		}
		nanosleep(&poll, NULL);
	}
}

// With --secondary: the file prefix to attach to, and a plain reason to stop
// before any EAL init that cannot work.
static void secondary_prepare(struct options *o, const struct gr_shm_daemon_info *info) {
	if (o->eal_argv != NULL)
		return; // the user's EAL arguments, verbatim
	if (o->file_prefix[0] == '\0') {
		if (info == NULL)
			fail("--secondary: the daemon does not tell its file prefix (--file-prefix)"
			);
		// Bounded by the field: more of the response follows it.
		snprintf(
			o->file_prefix,
			sizeof(o->file_prefix),
			"%.*s",
			(int)sizeof(info->file_prefix) - 1,
			info->file_prefix
		);
	}
	if (info != NULL && info->backings != 0 && !(info->backings & GR_SHM_BACKING_MEMZONE))
		fail("--secondary: the daemon runs without hugepages (--hugepages off, --no-huge or"
		     " --in-memory): no DPDK secondary can attach to it; run without --secondary"
		     " to get a memfd channel");
}

// utime + stime of a process in ns, or -1 if /proc does not show it.
static int64_t process_cpu_ns(pid_t pid) {
	char path[64], buf[1024];
	unsigned long long utime, stime;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	// The command name may hold spaces and parentheses: fields start after
	// the last ')'. utime and stime are fields 14 and 15; 3 is the state.
	char *p = strrchr(buf, ')');
	if (p == NULL ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime
	    ) != 2)
		return -1;
	long hz = sysconf(_SC_CLK_TCK);
	return (int64_t)((utime + stime) * (NSEC_PER_SEC / (unsigned long long)hz));
}

// CPU time, time waiting for a CPU (runnable, not running) and voluntary
// context switches of a process, summed over its threads: the first two from
// /proc/PID/task/TID/schedstat (nanoseconds; /proc/PID/stat
// counts in clock ticks of 10 ms, too coarse for a run of a second), with
// /proc/PID/stat as the fallback. A thread that exits between two samples
// takes its share with it: the daemon's threads live as long as it does.
// Returns false if /proc does not show the process.
static bool process_sample(pid_t pid, int64_t *cpu_ns, int64_t *wait_ns, int64_t *vcsw) {
	char path[PATH_MAX], line[256];
	struct dirent *de;
	bool schedstat = true;
	DIR *dir;

	*cpu_ns = 0;
	*wait_ns = 0;
	*vcsw = 0;
	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (dir == NULL)
		return false;
	while ((de = readdir(dir)) != NULL) {
		unsigned long long v, w;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, de->d_name);
		f = fopen(path, "r");
		if (f != NULL && fscanf(f, "%llu %llu", &v, &w) == 2) {
			*cpu_ns += (int64_t)v;
			*wait_ns += (int64_t)w;
		} else {
			schedstat = false;
		}
		if (f != NULL)
			fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, de->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
				*vcsw += (int64_t)v;
		}
		fclose(f);
	}
	closedir(dir);
	if (!schedstat) {
		*cpu_ns = process_cpu_ns(pid);
		*wait_ns = -1;
	}
	return *cpu_ns >= 0;
}

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

static void daemon_probe_start(const struct options *o, struct daemon_probe *p, pid_t pid) {
	char path[64];
	struct dirent *de;
	DIR *dir;

	*p = (struct daemon_probe){
		.pid = pid,
		.cpu_ns = -1,
		.runq_wait_ns = -1,
		.vcsw = -1,
		.syscalls = -1,
	};
	// Asked first: serving GR_SHM_STATS is not part of the phase.
	p->have_chan = daemon_stats(o, &p->chan, NULL);
	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	while (dir != NULL && (de = readdir(dir)) != NULL && p->n_syscall_fds >= 0) {
		if (de->d_name[0] == '.')
			continue;
		int fd = -1;
		if (p->n_syscall_fds < MAX_DAEMON_TASKS && o->count_syscalls)
			fd = syscall_counter_open((pid_t)atoi(de->d_name));
		if (fd < 0) {
			for (int i = 0; i < p->n_syscall_fds; i++)
				close(p->syscall_fds[i]);
			p->n_syscall_fds = -1;
			break;
		}
		p->syscall_fds[p->n_syscall_fds++] = fd;
	}
	if (dir != NULL)
		closedir(dir);
	for (int i = 0; i < p->n_syscall_fds; i++)
		ioctl(p->syscall_fds[i], PERF_EVENT_IOC_ENABLE, 0);
	p->sampled = process_sample(pid, &p->cpu_ns, &p->runq_wait_ns, &p->vcsw);
}

static void daemon_probe_stop(const struct options *o, struct daemon_probe *p) {
	struct gr_shm_counters after;
	int64_t cpu_ns, wait_ns, vcsw;
	uint64_t total = 0;

	for (int i = 0; i < p->n_syscall_fds; i++)
		ioctl(p->syscall_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (p->sampled && process_sample(p->pid, &cpu_ns, &wait_ns, &vcsw)) {
		p->cpu_ns = cpu_ns - p->cpu_ns;
		p->runq_wait_ns =
			wait_ns >= 0 && p->runq_wait_ns >= 0 ? wait_ns - p->runq_wait_ns : -1;
		p->vcsw = vcsw - p->vcsw;
	} else {
		p->cpu_ns = -1;
		p->runq_wait_ns = -1;
		p->vcsw = -1;
	}
	// Asked last: serving GR_SHM_STATS is not part of the phase.
	if (p->have_chan && daemon_stats(o, &after, NULL)) {
		p->chan.doorbells_rung = after.doorbells_rung - p->chan.doorbells_rung;
		p->chan.sleeps = after.sleeps - p->chan.sleeps;
		p->chan.overflows = after.overflows - p->chan.overflows;
	} else {
		p->have_chan = false;
	}
	if (p->n_syscall_fds <= 0)
		return;
	for (int i = 0; i < p->n_syscall_fds; i++) {
		uint64_t count;
		if (read(p->syscall_fds[i], &count, sizeof(count)) != sizeof(count))
			p->n_syscall_fds = -1;
		else
			total += count;
		close(p->syscall_fds[i]);
	}
	if (p->n_syscall_fds > 0)
		p->syscalls = (int64_t)total;
}

static void print_json_string(const char *s) {
	putchar('"');
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void format_ns(char *buf, size_t len, uint64_t ns) {
	if (ns < 10000)
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	else if (ns < 10 * NSEC_PER_SEC / 1000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
}

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

// Print ", \"name\": value / calls" with the given format, or null when
// value is -1 (not measurable).
static void print_json_per_call(const char *name, int64_t value, double calls) {
	if (value >= 0)
		printf(", \"%s\": %.4f", name, (double)value / calls);
	else
		printf(", \"%s\": null", name);
}

static void print_json_head(const struct options *o, const struct summary *sum, const char *mode) {
	printf("{\"mode\": \"%s\", \"transport\": ", mode);
	print_json_string(sum->transport);
	printf(", \"transport_reason\": ");
	print_json_string(sum->reason);
	printf(", \"backing\": ");
	if (sum->backing != NULL)
		print_json_string(sum->backing);
	else
		printf("null");
	printf(", \"request\": \"%s\", \"clients\": %u, \"idle_channels\": %u, \"depth\": %u"
	       ", \"size\": %zu",
	       request_name(o->size),
	       o->clients,
	       o->idle_channels,
	       o->depth,
	       o->size);
}

// The latency distribution: one [ns, fraction of calls at or below] point
// per non-empty histogram bucket (its midpoint, as the percentiles).
static void print_json_cdf(const struct histogram *h) {
	uint64_t seen = 0;
	bool first = true;

	printf(", \"latency_cdf\": [");
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		if (h->buckets[i] == 0)
			continue;
		seen += h->buckets[i];
		uint64_t v = hist_value(i);
		printf("%s[%" PRIu64 ", %.6f]",
		       first ? "" : ", ",
		       v < h->max_ns ? v : h->max_ns,
		       (double)seen / (double)h->count);
		first = false;
	}
	printf("]");
}

// The clients' rates as list_name, and the fastest's over the slowest's as
// ratio_name (0 when a client made no call).
static void
print_json_spread(const char *list_name, const char *ratio_name, const double *rates, unsigned n) {
	double fastest = 0, slowest = 0;

	printf(", \"%s\": [", list_name);
	for (unsigned i = 0; i < n; i++) {
		printf("%s%.1f", i > 0 ? ", " : "", rates[i]);
		if (i == 0 || rates[i] > fastest)
			fastest = rates[i];
		if (i == 0 || rates[i] < slowest)
			slowest = rates[i];
	}
	printf("], \"%s\": %.3f", ratio_name, slowest > 0 ? fastest / slowest : 0.0);
}

static void print_json(const struct options *o, const struct summary *sum) {
	double calls = (double)sum->calls;

	print_json_head(o, sum, "calls");
	printf(", \"count\": %" PRIu64 ", \"seconds\": %.6f, \"calls_per_s\": %.1f",
	       sum->calls,
	       sum->seconds,
	       calls / sum->seconds);
	if (o->stamps)
		printf(", \"latency_ns\": {\"p50\": %" PRIu64 ", \"p99\": %" PRIu64
		       ", \"p999\": %" PRIu64 ", \"max\": %" PRIu64 "}",
		       hist_percentile(&sum->hist, 0.50),
		       hist_percentile(&sum->hist, 0.99),
		       hist_percentile(&sum->hist, 0.999),
		       sum->hist.max_ns);
	else
		printf(", \"latency_ns\": null");
	printf(", \"client_cpu_ns_per_call\": %.1f", (double)sum->client_cpu_ns / calls);
	if (sum->daemon.cpu_ns >= 0)
		printf(", \"daemon_cpu_ns_per_call\": %.1f", (double)sum->daemon.cpu_ns / calls);
	else
		printf(", \"daemon_cpu_ns_per_call\": null");
	printf(", \"client_vcsw_per_call\": %.4f", (double)sum->vcsw / calls);
	print_json_per_call("client_syscalls_per_call", sum->syscalls, calls);
	print_json_per_call("daemon_vcsw_per_call", sum->daemon.vcsw, calls);
	print_json_per_call("daemon_syscalls_per_call", sum->daemon.syscalls, calls);
	print_json_per_call("client_runq_wait_ns_per_call", sum->runq_wait_ns, calls);
	print_json_per_call("daemon_runq_wait_ns_per_call", sum->daemon.runq_wait_ns, calls);
	// The channel counters are the daemon's, all channels together: the
	// calls of this run only while nobody else uses the daemon.
	const struct gr_shm_counters *k = &sum->daemon.chan;
	bool chan = sum->daemon.have_chan;
	print_json_per_call("daemon_sleeps_per_call", chan ? (int64_t)k->sleeps : -1, calls);
	print_json_per_call(
		"daemon_doorbells_per_call",
		chan ? (int64_t)k->doorbells_rung : -1,
		calls
	);
	print_json_per_call("resp_ring_full_per_call", chan ? (int64_t)k->overflows : -1, calls);
	print_json_spread(
		"per_client_calls_per_s",
		"fastest_over_slowest",
		sum->client_rates,
		o->clients
	);
	print_json_spread(
		"per_client_calls_per_cpu_s",
		"fastest_over_slowest_per_cpu",
		sum->client_cpu_rates,
		o->clients
	);
	if (o->cdf)
		print_json_cdf(&sum->hist);
	printf("}\n");
}

static void print_json_idle(const struct options *o, const struct summary *sum) {
	double idle_ns = o->idle_seconds * NSEC_PER_SEC;

	print_json_head(o, sum, "idle");
	printf(", \"idle_seconds\": %.3f", o->idle_seconds);
	if (sum->daemon.cpu_ns >= 0)
		printf(", \"daemon_cpu_ns\": %" PRId64 ", \"daemon_cpu_core_fraction\": %.6f",
		       sum->daemon.cpu_ns,
		       (double)sum->daemon.cpu_ns / idle_ns);
	else
		printf(", \"daemon_cpu_ns\": null, \"daemon_cpu_core_fraction\": null");
	if (sum->daemon.vcsw >= 0)
		printf(", \"daemon_vcsw\": %" PRId64, sum->daemon.vcsw);
	else
		printf(", \"daemon_vcsw\": null");
	if (sum->daemon.syscalls >= 0)
		printf(", \"daemon_syscalls\": %" PRId64, sum->daemon.syscalls);
	else
		printf(", \"daemon_syscalls\": null");
	printf(", \"first_request_ns\": %" PRIu64, sum->first_ns);
	// Each round sleeps IDLE_GAP_MS (one voluntary context switch and a
	// system call or two); the rest is the client sleeping for its answer.
	printf(", \"client0_vcsw\": %" PRIu64, sum->client0_vcsw);
	if (sum->client0_syscalls >= 0)
		printf(", \"client0_syscalls\": %" PRId64, sum->client0_syscalls);
	else
		printf(", \"client0_syscalls\": null");
	printf(", \"after_idle_ns\": {\"rounds\": %u, \"gap_ms\": %d, \"p50\": %" PRIu64
	       ", \"p99\": %" PRIu64 ", \"max\": %" PRIu64 "}}\n",
	       o->idle_rounds,
	       IDLE_GAP_MS,
	       hist_percentile(&sum->hist, 0.50),
	       hist_percentile(&sum->hist, 0.99),
	       sum->hist.max_ns);
}

static void print_head(const struct options *o, const struct summary *sum) {
	printf("transport %s%s%s%s, %u client%s, depth %u, %s of %zu bytes\n",
	       sum->transport,
	       sum->backing != NULL ? " (" : "",
	       sum->backing != NULL ? sum->backing : "",
	       sum->backing != NULL ? ")" : "",
	       o->clients,
	       o->clients > 1 ? "s" : "",
	       o->depth,
	       request_name(o->size),
	       o->size);
	if (sum->reason[0] != '\0')
		printf("%s: %s\n",
		       sum->backing != NULL ? "memfd channel" : "not on shm",
		       sum->reason);
}

static void print_human(const struct options *o, const struct summary *sum) {
	char p50[32], p99[32], p999[32], max[32];
	double calls = (double)sum->calls;

	format_ns(p50, sizeof(p50), hist_percentile(&sum->hist, 0.50));
	format_ns(p99, sizeof(p99), hist_percentile(&sum->hist, 0.99));
	format_ns(p999, sizeof(p999), hist_percentile(&sum->hist, 0.999));
	format_ns(max, sizeof(max), sum->hist.max_ns);

	print_head(o, sum);
	printf("%" PRIu64 " calls in %.3f s: %.0f calls/s\n",
	       sum->calls,
	       sum->seconds,
	       calls / sum->seconds);
	if (o->stamps)
		printf("latency p50 %s, p99 %s, p99.9 %s, max %s\n", p50, p99, p999, max);
	else
		printf("latency: not stamped (--no-stamps)\n");
	printf("per call: client cpu %.0f ns", (double)sum->client_cpu_ns / calls);
	if (sum->daemon.cpu_ns >= 0)
		printf(", daemon cpu %.0f ns", (double)sum->daemon.cpu_ns / calls);
	printf(", client vcsw %.3f", (double)sum->vcsw / calls);
	if (sum->daemon.vcsw >= 0)
		printf(", daemon vcsw %.3f", (double)sum->daemon.vcsw / calls);
	if (sum->syscalls >= 0)
		printf(", client syscalls %.3f", (double)sum->syscalls / calls);
	if (sum->daemon.syscalls >= 0)
		printf(", daemon syscalls %.3f", (double)sum->daemon.syscalls / calls);
	if (sum->runq_wait_ns >= 0)
		printf(", client wait for a CPU %.0f ns", (double)sum->runq_wait_ns / calls);
	if (sum->daemon.runq_wait_ns >= 0)
		printf(", daemon wait for a CPU %.0f ns", (double)sum->daemon.runq_wait_ns / calls);
	printf("\n");
}

static void print_human_idle(const struct options *o, const struct summary *sum) {
	char first[32], p50[32], max[32];

	format_ns(first, sizeof(first), sum->first_ns);
	format_ns(p50, sizeof(p50), hist_percentile(&sum->hist, 0.50));
	format_ns(max, sizeof(max), sum->hist.max_ns);
	print_head(o, sum);
	printf("%u idle client%s for %.1f s: daemon",
	       o->clients,
	       o->clients > 1 ? "s" : "",
	       o->idle_seconds);
	if (sum->daemon.cpu_ns >= 0)
		printf(" cpu %.3f ms (%.4f%% of a core)",
		       (double)sum->daemon.cpu_ns / 1e6,
		       100.0 * (double)sum->daemon.cpu_ns / (o->idle_seconds * NSEC_PER_SEC));
	if (sum->daemon.vcsw >= 0)
		printf(", %" PRId64 " voluntary context switches", sum->daemon.vcsw);
	if (sum->daemon.syscalls >= 0)
		printf(", %" PRId64 " system calls", sum->daemon.syscalls);
	printf("\nfirst request after idling: %s; after %d ms idle gaps (%u rounds): p50 %s, max "
	       "%s\n",
	       first,
	       IDLE_GAP_MS,
	       o->idle_rounds,
	       p50,
	       max);
}

static void usage(FILE *out) {
	fprintf(out,
		"usage: ping2_perf [-s SOCK] [-n COUNT | -T SECONDS | --idle SECONDS]\n"
		"                  [-t auto|shm|socket] [-d DEPTH] [-z SIZE] [-c CLIENTS] [-w "
		"WARMUP]\n"
		"                  [--spin US] [--json [--cdf]] [--no-stamps] [-q]\n"
		"                  [--idle-channels N]\n"
		"                  [--secondary [--file-prefix PREFIX] [--lcore N] [-- EAL_ARGS]]\n"
		"  -s SOCK     daemon socket (default %s)\n"
		"  -n COUNT    measured calls, all clients together (default %d)\n"
		"  -T SECONDS  instead of -n: every client calls for SECONDS (a fraction is "
		"fine);\n"
		"              all clients then share one window, which makes their\n"
		"              per-client rates comparable\n"
		"  --idle SECONDS  instead of calls: attach the clients, leave them idle for\n"
		"              SECONDS and measure the daemon meanwhile (CPU, context switches,\n"
		"              system calls); then client 0 times its first request, and\n"
		"              --idle-rounds more, each after %d ms of silence\n"
		"  --idle-rounds N  (default %d)\n"
		"  -t MODE     transport: auto (default; GR_API_TRANSPORT decides), shm, socket\n"
		"  -d DEPTH    requests in flight per client (default 1, at most %d); above 1\n"
		"              they are sent with gr_api_client_send_more(), flushed by the\n"
		"              receive that has to wait\n"
		"  -z SIZE     payload: 0 = GR_PING, 64 = GR_PING2 (default), other sizes up to\n"
		"              %d = GR_SHM_ECHO\n"
		"  -c CLIENTS  client processes, one connection each (default 1, at most %d)\n"
		"  -w WARMUP   calls per client before measuring (default %d)\n"
		"  --idle-channels N  attach N more shm channels (memfd) from this process\n"
		"              once the clients are ready, and leave them idle while the\n"
		"              clients call (at most %d; the daemon's --max-conn-per-pid\n"
		"              must allow them)\n"
		"  --spin US   a fixed client spin budget in microseconds (default: the\n"
		"              library's adaptive spin)\n"
		"  --json      print one JSON object on stdout\n"
		"  --cdf       with --json: add the latency distribution, latency_cdf:\n"
		"              [[ns, fraction of calls at or below], ...]\n"
		"  --no-stamps no clock read per call: no latency distribution, only calls/s\n"
		"              (the mean round trip, depth / calls/s per client), measured as\n"
		"              ref_bench measures its references: the clock read every %d\n"
		"              calls, for the deadline\n"
		"  --no-syscall-count  no system call counts (reported as null): while\n"
		"              they are counted, a tracepoint puts every system call of the\n"
		"              machine on the kernel's slower traced path, which a socket\n"
		"              round trip (5 system calls) feels; strace counts them instead\n"
		"  -q          no progress on stderr\n"
		"  --secondary each client initialises EAL as a DPDK secondary of the daemon\n"
		"              (after it is forked) and so gets a memzone channel (or fails,\n"
		"              saying why). EAL gets\n"
		"              --proc-type=secondary --file-prefix PREFIX --lcores N@(CPUS)\n"
		"              --no-pci --no-telemetry --log-level=*:warning, where CPUS are\n"
		"              the CPUs ping2_perf may run on. Needs a daemon with hugepages.\n"
		"  --file-prefix PREFIX  the daemon's EAL file prefix (default: asked from\n"
		"              the daemon with GR_SHM_DAEMON_INFO)\n"
		"  --lcore N   lcore id of the first client, N + i for client i (1..%d).\n"
		"              Each secondary needs an lcore id of its own, and 0 is the\n"
		"              daemon's; default 1 + pid %% %d, distinct for the clients\n"
		"  -- EAL_ARGS with --secondary: the EAL arguments of every client, verbatim,\n"
		"              instead of the ones above\n",
		GR_API_DEFAULT_SOCK_PATH,
		DEFAULT_COUNT,
		IDLE_GAP_MS,
		DEFAULT_IDLE_ROUNDS,
		MAX_DEPTH,
		GR_API_MAX_MSG_LEN,
		MAX_CLIENTS,
		DEFAULT_WARMUP,
		IDLE_CHANNELS_MAX,
		NO_STAMPS_CLOCK_MASK + 1,
		RTE_MAX_LCORE - 1,
		RTE_MAX_LCORE - 1);
}

// The seconds of option opt, a fraction allowed, from 0 (excluded) to max.
// Exits with a reason when arg is not such a number.
static double parse_seconds(const char *opt, const char *arg, double max) {
	double v;

	if (seconds_from_string(arg, max, &v) < 0)
		fail("%s: '%s' is not a number of seconds above 0, at most %.0f", opt, arg, max);
	return v;
}

enum long_only_option {
	OPT_SPIN = 256,
	OPT_JSON,
	OPT_CDF,
	OPT_NO_STAMPS,
	OPT_NO_SYSCALL_COUNT,
	OPT_IDLE,
	OPT_IDLE_ROUNDS,
	OPT_SECONDARY,
	OPT_FILE_PREFIX,
	OPT_LCORE,
	OPT_IDLE_CHANNELS,
};

static void parse_options(int argc, char **argv, struct options *o) {
	static const struct option long_options[] = {
		{"spin", required_argument, NULL, OPT_SPIN},
		{"json", no_argument, NULL, OPT_JSON},
		{"cdf", no_argument, NULL, OPT_CDF},
		{"no-stamps", no_argument, NULL, OPT_NO_STAMPS},
		{"no-syscall-count", no_argument, NULL, OPT_NO_SYSCALL_COUNT},
		{"idle", required_argument, NULL, OPT_IDLE},
		{"idle-rounds", required_argument, NULL, OPT_IDLE_ROUNDS},
		{"secondary", no_argument, NULL, OPT_SECONDARY},
		{"file-prefix", required_argument, NULL, OPT_FILE_PREFIX},
		{"lcore", required_argument, NULL, OPT_LCORE},
		{"idle-channels", required_argument, NULL, OPT_IDLE_CHANNELS},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool count_given = false;
	int own_argc = argc;
	int ch;

	// Everything after -- is EAL's.
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			own_argc = i;
			break;
		}
	}
	*o = (struct options){
		.sock_path = GR_API_DEFAULT_SOCK_PATH,
		.count = DEFAULT_COUNT,
		.warmup = DEFAULT_WARMUP,
		.transport = GR_API_TRANSPORT_AUTO,
		.depth = 1,
		.size = GR_PING2_LEN,
		.clients = 1,
		.spin_us = -1,
		.idle_rounds = DEFAULT_IDLE_ROUNDS,
		.stamps = true,
		.count_syscalls = true,
	};
	while ((ch = getopt_long(own_argc, argv, "s:n:T:t:d:z:c:w:qh", long_options, NULL)) != -1) {
		switch (ch) {
		case 's':
			o->sock_path = optarg;
			break;
		case 'n':
			o->count = parse_number("-n", optarg, 1, UINT64_MAX);
			count_given = true;
			break;
		case 'T':
			o->seconds = parse_seconds("-T", optarg, MAX_SECONDS);
			break;
		case OPT_IDLE:
			o->idle_seconds = parse_seconds("--idle", optarg, MAX_SECONDS);
			break;
		case OPT_IDLE_ROUNDS:
			o->idle_rounds =
				(unsigned)parse_number("--idle-rounds", optarg, 0, UINT32_MAX);
			break;
		case OPT_CDF:
			o->cdf = true;
			break;
		case OPT_NO_STAMPS:
			o->stamps = false;
			break;
		case OPT_NO_SYSCALL_COUNT:
			o->count_syscalls = false;
			break;
		case 't':
			if (strcmp(optarg, "auto") == 0)
				o->transport = GR_API_TRANSPORT_AUTO;
			else if (strcmp(optarg, "shm") == 0)
				o->transport = GR_API_TRANSPORT_SHM;
			else if (strcmp(optarg, "socket") == 0)
				o->transport = GR_API_TRANSPORT_SOCKET;
			else
				fail("-t: '%s' is not auto, shm or socket", optarg);
			break;
		case 'd':
			o->depth = (unsigned)parse_number("-d", optarg, 1, MAX_DEPTH);
			break;
		case 'z':
			o->size = (size_t)parse_number("-z", optarg, 0, GR_API_MAX_MSG_LEN);
			break;
		case 'c':
			o->clients = (unsigned)parse_number("-c", optarg, 1, MAX_CLIENTS);
			break;
		case 'w':
			o->warmup = parse_number("-w", optarg, 0, UINT64_MAX);
			break;
		case OPT_SPIN:
			o->spin_us = (int)parse_number("--spin", optarg, 0, INT_MAX);
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_SECONDARY:
			o->secondary = true;
			break;
		case OPT_FILE_PREFIX:
			if (strlen(optarg) >= sizeof(o->file_prefix))
				fail("--file-prefix: longer than %zu bytes",
				     sizeof(o->file_prefix) - 1);
			strcpy(o->file_prefix, optarg);
			break;
		case OPT_IDLE_CHANNELS:
			o->idle_channels = (unsigned
			)parse_number("--idle-channels", optarg, 0, IDLE_CHANNELS_MAX);
			break;
		case OPT_LCORE:
			o->lcore = (unsigned)parse_number("--lcore", optarg, 1, RTE_MAX_LCORE - 1);
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			usage(stderr);
			exit(EXIT_FAILURE);
		}
	}
	if (optind != own_argc)
		fail("unexpected argument '%s' (see --help)", argv[optind]);
	if (own_argc < argc) {
		if (!o->secondary)
			fail("EAL arguments after -- need --secondary");
		if (o->file_prefix[0] != '\0' || o->lcore != 0)
			fail("--file-prefix and --lcore are EAL arguments: give them after -- too");
		o->eal_argc = argc - own_argc - 1;
		o->eal_argv = argv + own_argc + 1;
	} else if (!o->secondary && (o->file_prefix[0] != '\0' || o->lcore != 0)) {
		fail("--file-prefix and --lcore need --secondary");
	}
	if (o->secondary && o->transport == GR_API_TRANSPORT_SOCKET)
		fail("--secondary measures memzone channels: not with -t socket");
	if ((count_given ? 1 : 0) + (o->seconds > 0 ? 1 : 0) + (o->idle_seconds > 0 ? 1 : 0) > 1)
		fail("-n, -T and --idle exclude each other");
	if (o->cdf && !o->json)
		fail("--cdf needs --json");
	if (o->cdf && !o->stamps)
		fail("--cdf needs the stamps --no-stamps leaves out");
	if (o->idle_seconds > 0 && !o->stamps)
		fail("--idle times its requests: no --no-stamps");
	if (o->seconds > 0 || o->idle_seconds > 0)
		o->count = UINT64_MAX;
	else if (o->count < o->clients)
		fail("-n %" PRIu64 " is fewer calls than -c %u clients", o->count, o->clients);
}

static void stop_clients(const pid_t *pids, unsigned n) {
	for (unsigned i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	for (unsigned i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
}

// Read every client's result and add it to sum. Exits on a client failure.
// With --idle, the others wait until client 0 is done: done_fd (the write
// end of their pipe) is closed once its result is in.
static void collect_results(
	const struct options *o,
	const pid_t *pids,
	const int *result_fds,
	int done_fd,
	struct summary *sum
) {
	static struct client_result res;
	static char reason[REASON_LEN];
	uint64_t first_start = UINT64_MAX, last_end = 0;
	uint32_t backing = 0;

	sum->transport = NULL;
	for (unsigned i = 0; i < o->clients; i++) {
		if (!read_all(result_fds[i], &res, sizeof(res))) {
			stop_clients(pids, o->clients);
			fail("client %u failed during the measured phase", i);
		}
		if (i == 0 && done_fd >= 0)
			close(done_fd);
		// In --idle mode only client 0 calls.
		if (res.calls > 0) {
			if (res.start_ns < first_start)
				first_start = res.start_ns;
			if (res.end_ns > last_end)
				last_end = res.end_ns;
			sum->client_rates[i] = (double)res.calls * NSEC_PER_SEC /
					       (double)(res.end_ns - res.start_ns);
			if (res.cpu_ns > 0)
				sum->client_cpu_rates[i] =
					(double)res.calls * NSEC_PER_SEC / (double)res.cpu_ns;
		}
		if (i == 0) {
			sum->first_ns = res.first_ns;
			sum->client0_vcsw = res.vcsw;
			sum->client0_syscalls = res.syscalls;
		}
		hist_merge(&sum->hist, &res.hist);
		sum->calls += res.calls;
		sum->client_cpu_ns += res.cpu_ns;
		sum->vcsw += res.vcsw;
		if (res.runq_wait_ns < 0 || sum->runq_wait_ns < 0)
			sum->runq_wait_ns = -1;
		else
			sum->runq_wait_ns += res.runq_wait_ns;
		if (res.syscalls < 0 || sum->syscalls < 0)
			sum->syscalls = -1;
		else
			sum->syscalls += res.syscalls;
		const char *name = transport_name((enum gr_api_transport)res.transport);
		if (sum->transport != NULL && strcmp(sum->transport, name) != 0)
			name = "mixed";
		sum->transport = name;
		if (i == 0)
			backing = res.backing;
		else if (res.backing != backing)
			backing = UINT32_MAX;
		if (res.reason[0] != '\0') {
			memcpy(reason, res.reason, sizeof(reason));
			reason[sizeof(reason) - 1] = '\0';
		}
	}
	switch (backing) {
	case 0:
		sum->backing = NULL;
		break;
	case GR_SHM_BACKING_MEMZONE:
		sum->backing = "memzone";
		break;
	case GR_SHM_BACKING_MEMFD:
		sum->backing = "memfd";
		break;
	default:
		sum->backing = "mixed";
		break;
	}
	sum->reason = reason;
	if (last_end > first_start)
		sum->seconds = (double)(last_end - first_start) / NSEC_PER_SEC;
}

// --idle: leave every client attached and idle for idle_seconds.
static void idle_wait(const struct options *o) {
	struct timespec ts = {
		.tv_sec = (time_t)o->idle_seconds,
		.tv_nsec =
			(long)((o->idle_seconds - (double)(time_t)o->idle_seconds) * NSEC_PER_SEC),
	};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv) {
	struct options o;
	pid_t pids[MAX_CLIENTS];
	int result_fds[MAX_CLIENTS];
	int cleanup_fds[MAX_CLIENTS]; // --secondary: write ends, one per client
	int go_pipe[2], done_pipe[2] = {-1, -1};
	static struct summary sum;
	struct gr_shm_daemon_info info;
	uint32_t memzones_before = 0;

	parse_options(argc, argv, &o);
	bool told = daemon_info(&o, &info);
	pid_t dpid = told ? info.pid : -1;
	if (o.secondary) {
		secondary_prepare(&o, told ? &info : NULL);
		if (!daemon_stats(&o, NULL, &memzones_before))
			fail("--secondary: the daemon does not tell its memzones (GR_SHM_STATS)");
	}

	if (pipe2(go_pipe, O_CLOEXEC) < 0 ||
	    (o.idle_seconds > 0 && pipe2(done_pipe, O_CLOEXEC) < 0))
		fail("pipe: %s", strerror(errno));
	pid_t parent = getpid();
	fflush(NULL);
	for (unsigned i = 0; i < o.clients; i++) {
		int result_pipe[2], cleanup_pipe[2] = {-1, -1};
		// Split the calls evenly; the first clients take the remainder.
		uint64_t calls = o.count / o.clients + (i < o.count % o.clients ? 1 : 0);

		if (pipe2(result_pipe, O_CLOEXEC) < 0 ||
		    (o.secondary && pipe2(cleanup_pipe, O_CLOEXEC) < 0)) {
			stop_clients(pids, i);
			fail("pipe: %s", strerror(errno));
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			stop_clients(pids, i);
			fail("fork: %s", strerror(errno));
		}
		if (pids[i] == 0) {
			// A client spins on, loading the daemon, if nothing stops
			// it: it dies with this process, a SIGKILL included.
			die_with_parent(parent);
			const struct client_pipes pipes = {
				.result = result_pipe[1],
				.go = go_pipe[0],
				.done = done_pipe[0],
				.cleanup = cleanup_pipe[0],
			};
			for (unsigned j = 0; j < i; j++) {
				close(result_fds[j]);
				if (o.secondary)
					close(cleanup_fds[j]);
			}
			close(result_pipe[0]);
			close(go_pipe[1]);
			if (done_pipe[1] >= 0)
				close(done_pipe[1]);
			if (cleanup_pipe[1] >= 0)
				close(cleanup_pipe[1]);
			client_main(&o, i, calls, &pipes);
		}
		close(result_pipe[1]);
		result_fds[i] = result_pipe[0];
		if (o.secondary) {
			close(cleanup_pipe[0]);
			cleanup_fds[i] = cleanup_pipe[1];
		}
	}
	close(go_pipe[0]);
	if (done_pipe[0] >= 0)
		close(done_pipe[0]);

	for (unsigned i = 0; i < o.clients; i++) {
		char ready;
		if (!read_all(result_fds[i], &ready, sizeof(ready))) {
			stop_clients(pids, o.clients);
			fail("client %u failed before the measured phase", i);
		}
	}
	struct idle_channels *idle = NULL;
	if (o.idle_channels > 0)
		idle = idle_channels_open(o.sock_path, o.idle_channels);
	daemon_probe_start(&o, &sum.daemon, dpid);
	if (o.idle_seconds > 0) {
		idle_wait(&o);
		daemon_probe_stop(&o, &sum.daemon);
	}
	// Closing the go pipe starts every client at once.
	close(go_pipe[1]);
	collect_results(&o, pids, result_fds, done_pipe[1], &sum);
	if (o.idle_seconds == 0)
		daemon_probe_stop(&o, &sum.daemon);
	idle_channels_close(idle);
	if (o.secondary)
		wait_memzones_freed(&o, memzones_before);

	int rc = EXIT_SUCCESS;
	for (unsigned i = 0; i < o.clients; i++) {
		int status;
		close(result_fds[i]);
		// One secondary at a time cleans up EAL (see client_main).
		if (o.secondary)
			close(cleanup_fds[i]);
		if (waitpid(pids[i], &status, 0) < 0)
			fail("waitpid client %u: %s", i, strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr,
				"%s: client %u exited with status 0x%x\n",
				log_prefix,
				i,
				status);
			rc = EXIT_FAILURE;
		}
	}
	if (rc != EXIT_SUCCESS)
		return rc;
	if (o.idle_seconds > 0 && o.json)
		print_json_idle(&o, &sum);
	else if (o.idle_seconds > 0)
		print_human_idle(&o, &sum);
	else if (o.json)
		print_json(&o, &sum);
	else
		print_human(&o, &sum);
	return EXIT_SUCCESS;
}
