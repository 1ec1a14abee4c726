// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench: the reference microbenchmarks every channel result is compared
// with (make bench, docs/benchmark-method.md), each described beside its code.
// Most run between two processes (fork) that share a memfd; one leads (times
// and stops the run), the other follows. By default the two are pinned to the
// first two CPUs this process may use: two spinning processes on one CPU
// would measure the scheduler, not the mechanism. --no-pin leaves them to the
// scheduler, as the daemon and its clients are; for the sleeping tests on a
// virtual machine that can be much faster (both often on one CPU, no halted
// virtual CPU to wake). This file: the options, the output and main().

#include "ref_bench.h"

#include <getopt.h>
#include <inttypes.h>
#include <sched.h>

#define DEFAULT_SECONDS 0.5
#define DEFAULT_WARMUP 1000
// Longest --gap-us: one second.
#define MAX_GAP_US 1000000
// *-echo: requests in flight unless --depth says otherwise, as the depth-32
// cells of make bench and the depth-32 goal of docs/benchmark-method.md.
#define DEFAULT_DEPTH 32
// Most --depth: as many of the shortest messages (one cell) as fit a ring.
#define MAX_DEPTH (SHMCHAN_RING_CELLS - 1)

const char *log_prefix = "ref_bench";

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

enum long_only_option { OPT_CPUS = 256, OPT_NO_PIN, OPT_GAP_US, OPT_DEPTH, OPT_JSON };

// Parse argv into *o, defaults filled in. Prints the usage and exits on
// --help (0) and on bad usage (1); fail()s on a bad value or options that
// contradict each other.
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
		case OPT_DEPTH: // whether DEPTH messages of -z fit a ring: setup()
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

// ", "KEY": V" of the JSON object, or null where the test has no such value.
static void json_uint(const char *key, bool known, uint64_t v) {
	if (known)
		printf(", \"%s\": %" PRIu64, key, v);
	else
		printf(", \"%s\": null", key);
}

static void json_real(const char *key, bool known, int decimals, double v) {
	if (known)
		printf(", \"%s\": %.*f", key, decimals, v);
	else
		printf(", \"%s\": null", key);
}

// One line of text, or one JSON object with --json (make bench reads it).
static void print_result(const struct ctx *c) {
	const struct options *o = c->o;
	const struct bench *b = o->bench;
	bool sized = b->flags & SIZED, pipelined = b->flags & PIPELINED, gap = o->gap_us > 0;
	double ops = (double)c->ops, seconds = (double)c->elapsed_ns / NSEC_PER_SEC;
	double ns_per_op = (double)c->elapsed_ns / ops;
	double ops_per_s = ops * NSEC_PER_SEC / (double)c->elapsed_ns;
	// The follower's totals cover its warmup operations too.
	double follower_ops = (double)(c->sh->follower_ops > 0 ? c->sh->follower_ops : 1);
	if (!o->json) {
		printf("%s", b->name);
		if (sized)
			printf(", %zu bytes (%u cells)", o->size, c->cells);
		if (pipelined)
			printf(", %u in flight", o->depth);
		if (o->pin)
			printf(", CPUs %d,%d", o->cpus[0], o->cpus[1]);
		if (gap)
			printf(", %" PRIu64 " us idle before each (slowest %.1f us)",
			       o->gap_us,
			       (double)c->gap_max_ns / 1e3);
		printf(": %" PRIu64 " in %.3f s: %.1f ns per %s, %.0f/s\n",
		       c->ops,
		       seconds,
		       ns_per_op,
		       b->unit,
		       ops_per_s);
		return;
	}
	printf("{\"test\": \"%s\", \"unit\": \"%s\"", b->name, b->unit);
	json_uint("size", sized, o->size);
	json_uint("cells", sized, c->cells);
	json_uint("depth", pipelined, o->depth);
	if (o->pin)
		printf(", \"cpus\": [%d, %d]", o->cpus[0], o->cpus[1]);
	else
		printf(", \"cpus\": null");
	json_uint("gap_us", gap, o->gap_us);
	json_uint("max_ns", gap, c->gap_max_ns);
	json_uint("count", true, c->ops);
	json_real("seconds", true, 6, seconds);
	json_real("ns_per_op", true, 2, ns_per_op);
	json_real("ops_per_s", true, 1, ops_per_s);
	json_real("leader_cpu_ns_per_op", true, 2, (double)c->leader_cpu_ns / ops);
	json_real("leader_vcsw_per_op", true, 4, (double)c->leader_vcsw / ops);
	bool two = b->follower != NULL;
	json_real("follower_cpu_ns_per_op", two, 2, (double)c->sh->follower_cpu_ns / follower_ops);
	json_real("follower_vcsw_per_op", two, 4, (double)c->sh->follower_vcsw / follower_ops);
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
