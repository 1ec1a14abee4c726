// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench's options: the usage, the parsing, the test by name, and the
// CPUs to pin to (ref_bench.h).

#include "ref_bench.h"

#include <gr_api.h>

#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum long_only_option {
	OPT_CPUS = 256,
	OPT_NO_PIN,
	OPT_GAP_US,
	OPT_DEPTH,
	OPT_JSON,
};

void parse_options(int argc, char **argv, struct options *o) {
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
		case OPT_DEPTH:
			// The bound of the message size is checked in setup().
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
	for (size_t i = 0; i < n_benches; i++) {
		if (strcmp(argv[optind], benches[i].name) == 0)
			o->bench = &benches[i];
	}
	if (o->bench == NULL)
		fail("unknown test '%s' (see --help)", argv[optind]);
	if (o->gap_us > 0 && !o->bench->sleeps)
		fail("--gap-us: only eventfd and unix, whose follower sleeps");
	if (o->depth > 0 && !o->bench->pipelined)
		fail("--depth: only ring-echo and chan-echo, whose leader pipelines");
	if (o->bench->pipelined && o->depth == 0)
		o->depth = DEFAULT_DEPTH;
	if (cpus_given && !o->pin)
		fail("--cpus and --no-pin contradict each other");
	if (o->pin && !cpus_given && !default_cpus(o->cpus)) {
		fprintf(stderr,
			"ref_bench: one CPU only: not pinning; the spinning tests then measure the"
			" scheduler\n");
		o->pin = false;
	}
	if (!o->bench->two_processes)
		o->pin = false;
}
