// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench: the reference microbenchmarks every channel result is compared
// with (make bench, docs/benchmark-method.md), most in two processes sharing a
// memfd: one leads (times and stops the run), one follows, by default pinned
// to the first two CPUs this process may use (two spinners on one CPU would
// measure the scheduler). --no-pin leaves them to it, as the daemon and its
// clients are: on a virtual machine the sleeping tests may then be much faster
// (no halted virtual CPU to wake). This file: options, output and main().

#include "ref_bench.h"

#include <sched.h>

#define DEFAULT_SECONDS 0.5
#define DEFAULT_WARMUP 1000
#define MAX_GAP_US 1000000 // one second
#define DEFAULT_DEPTH 32 // *-echo: as make bench's depth-32 cells and goal
#define MAX_DEPTH (SHMCHAN_RING_CELLS - 1) // one-cell messages: as many as fit a ring

const char *log_prefix = "ref_bench";

// The first two CPUs this process may run on, or false if it has only one.
static bool default_cpus(int cpus[2]) {
	cpu_set_t set;
	int found = 0;
	check(sched_getaffinity(0, sizeof(set), &set), "sched_getaffinity");
	for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++) {
		if (CPU_ISSET(cpu, &set))
			cpus[found++] = cpu;
	}
	return found == 2;
}

static void __attribute__((noreturn)) usage(bool error) {
	fprintf(error ? stderr : stdout,
		"usage: ref_bench [-T SECONDS | -n COUNT] [-w WARMUP] [-z SIZE]\n"
		"                 [--cpus A,B | --no-pin] [--gap-us US] [--depth N] TEST\n"
		"One JSON object on stdout. TEST (docs/benchmark-running.md):\n"
		"  cacheline      one cache line bounced: the hardware's round-trip floor\n"
		"  ring-pingpong  a channel frame each way through two SPSC rte_rings\n"
		"  ring-stream    ring-pingpong's frames one way, at the consumer's pace\n"
		"  ring-echo      ring-pingpong, --depth in flight: a pipelining client's ceiling\n"
		"  chan-pingpong  ring-pingpong through the channel library alone\n"
		"  chan-stream    ring-stream through the channel library alone\n"
		"  chan-echo      ring-echo through the channel library alone\n"
		"  lines-apart    the cache lines of the rte_ring layout, no code: its floor\n"
		"  lines-inline   lines-apart with the index inside the frame\n"
		"  ring-local     ring-pingpong in one process: the instructions alone\n"
		"  chan-local     chan-pingpong in one process\n"
		"  eventfd        a wake-up each way through two blocking eventfds\n"
		"  unix           a message each way over a Unix stream socketpair, blocking\n"
		"  clock          one clock_gettime(CLOCK_MONOTONIC), 2 per ping2_perf call\n"
		"  syscall        one getppid(): the least any eventfd or socket call pays\n"
		"  -T SECONDS     measure for this long (default %.1f)\n"
		"  -n COUNT       measure exactly COUNT operations instead\n"
		"  -w WARMUP      operations before measuring (default %d)\n"
		"  -z SIZE        payload bytes after a 12-byte header (default %d, max %d)\n"
		"  --cpus A,B     leader on CPU A, follower on B (default: the first two allowed)\n"
		"  --no-pin       let the scheduler place both processes\n"
		"  --gap-us US    eventfd, unix: sleep US before each round trip, timed alone\n"
		"  --depth N      *-echo: N requests in flight (default %d), all in one ring\n",
		DEFAULT_SECONDS,
		DEFAULT_WARMUP,
		GR_PING2_LEN,
		GR_API_MAX_MSG_LEN,
		DEFAULT_DEPTH);
	exit(error ? EXIT_FAILURE : EXIT_SUCCESS);
}

static const struct bench *find_bench(const char *name) {
	static const struct bench *const families[] = {shm_benches, kernel_benches};
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		for (const struct bench *b = families[i]; b->name != NULL; b++) {
			if (strcmp(name, b->name) == 0)
				return b;
		}
	}
	fail("unknown test '%s' (see --help)", name);
}

static void parse_cpus(const struct option_def *d, const char *arg) {
	int *cpus = d->field;
	if (sscanf(arg, "%d,%d", &cpus[0], &cpus[1]) != 2 || cpus[0] < 0 || cpus[1] < 0 ||
	    cpus[0] >= CPU_SETSIZE || cpus[1] >= CPU_SETSIZE)
		fail("--cpus: '%s' is not two CPU numbers A,B", arg);
}

// Prints the usage and exits on --help (0) and on bad usage (1); fail()s on a
// bad value or options that contradict each other.
static void parse_options(int argc, char **argv, struct options *o) {
	bool cpus_given = false;
	const struct option_def defs[] = {
		{"-T", OPT_SECONDS, FIELD(&o->seconds), .seconds_range = "from 0 to"},
		{"-n", OPT_NUMBER, FIELD(&o->count), 1, UINT64_MAX},
		{"-w", OPT_NUMBER, FIELD(&o->warmup), 0, UINT64_MAX},
		{"-z", OPT_NUMBER, FIELD(&o->size), 0, GR_API_MAX_MSG_LEN},
		{"--cpus", OPT_CALL, .field = o->cpus, .parse = parse_cpus, .given = &cpus_given},
		{"--no-pin", OPT_FALSE, FIELD(&o->pin)},
		{"--gap-us", OPT_NUMBER, FIELD(&o->gap_us), 1, MAX_GAP_US},
		// Whether DEPTH messages of -z fit a ring: setup().
		{"--depth", OPT_NUMBER, FIELD(&o->depth), 1, MAX_DEPTH},
		{"-h", OPT_HELP, .field = NULL},
	};
	*o = (struct options){
		.seconds = DEFAULT_SECONDS,
		.warmup = DEFAULT_WARMUP,
		.size = GR_PING2_LEN,
		.pin = true,
	};
	if (options_parse(argc, argv, defs, sizeof(defs) / sizeof(defs[0]), usage) != argc - 1)
		usage(true);
	o->bench = find_bench(argv[optind]);
	if (o->gap_us > 0 && !(o->bench->flags & SLEEPS))
		fail("--gap-us: only eventfd and unix, whose follower sleeps");
	if (o->depth > 0 && !(o->bench->flags & PIPELINED))
		fail("--depth: only ring-echo and chan-echo, whose leader pipelines");
	if ((o->bench->flags & PIPELINED) && o->depth == 0)
		o->depth = DEFAULT_DEPTH;
	if (cpus_given && !o->pin)
		fail("--cpus and --no-pin contradict each other");
	if (o->pin && !cpus_given && !default_cpus(o->cpus)) {
		fprintf(stderr,
			"ref_bench: one CPU only: not pinning; the spinning tests then measure the"
			" scheduler\n");
		o->pin = false;
	}
	if (o->bench->follower == NULL)
		o->pin = false;
}

// One JSON object, which make bench reads.
static void print_result(const struct ctx *c) {
	const struct options *o = c->o;
	const struct bench *b = o->bench;
	bool sized = b->flags & SIZED, pipelined = b->flags & PIPELINED, gap = o->gap_us > 0;
	bool two = b->follower != NULL;
	double ops = (double)c->ops, seconds = (double)c->elapsed_ns / NSEC_PER_SEC;
	double ns_per_op = (double)c->elapsed_ns / ops;
	double ops_per_s = ops * NSEC_PER_SEC / (double)c->elapsed_ns;
	// The follower's totals cover its warmup operations too.
	double follower_ops = (double)(c->sh->follower_ops > 0 ? c->sh->follower_ops : 1);
	printf("{\"test\": \"%s\", \"unit\": \"%s\"", b->name, b->unit);
	json_field("size", sized, "%zu", o->size);
	json_field("cells", sized, "%u", c->cells);
	json_field("depth", pipelined, "%u", o->depth);
	json_field("cpus", o->pin, "[%d, %d]", o->cpus[0], o->cpus[1]);
	json_field("gap_us", gap, "%" PRIu64, o->gap_us);
	json_field("max_ns", gap, "%" PRIu64, c->gap_max_ns);
	json_field("count", true, "%" PRIu64, c->ops);
	json_field("seconds", true, "%.6f", seconds);
	json_field("ns_per_op", true, "%.2f", ns_per_op);
	json_field("ops_per_s", true, "%.1f", ops_per_s);
	json_field("leader_cpu_ns_per_op", true, "%.2f", (double)c->leader_cpu_ns / ops);
	json_field("leader_vcsw_per_op", true, "%.4f", (double)c->leader_vcsw / ops);
	json_field("follower_cpu_ns_per_op", two, "%.2f", c->sh->follower_cpu_ns / follower_ops);
	json_field("follower_vcsw_per_op", two, "%.4f", c->sh->follower_vcsw / follower_ops);
	printf("}\n");
}

int main(int argc, char **argv) {
	struct options o;
	struct ctx c;
	parse_options(argc, argv, &o);
	setup(&c, &o);
	run(&c);
	print_result(&c);
	return EXIT_SUCCESS;
}
