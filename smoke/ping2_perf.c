// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf: measure request round trips to shmchand on either transport.
//
// Each client process connects, warms up, waits until every client is ready,
// then makes its share of the calls (-n) or calls for a while (-T), DEPTH in
// flight, every echo checked. The parent adds up their latency histograms and
// CPU time, and samples the daemon around the measured phase. --idle measures
// what idle clients cost instead, --gap the occasional call and --beside-ring
// the busy round trip beside the raw rte_ring ping-pong (ping2_perf.h).

#include "ping2_perf.h"

#include <rte_lcore.h>

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *log_prefix = "ping2_perf";

static void usage(FILE *out) {
	fprintf(out,
		"usage: ping2_perf [-s SOCK] [-n COUNT | -T SECONDS | --idle SECONDS |\n"
		"                   --gap MS[,MS...] [--gap-rounds N] | --beside-ring SECONDS]\n"
		"                  [-t auto|shm|socket] [-d DEPTH] [-z SIZE] [-c CLIENTS] [-w "
		"WARMUP]\n"
		"                  [--spin US | --event-loop] [--json [--cdf]] [--no-stamps]\n"
		"                  [--no-syscall-count] [-q] [--idle-channels N]\n"
		"                  [--secondary [--file-prefix PREFIX] [--lcore N] [-- EAL_ARGS]]\n"
		"       ping2_perf --help\n"
		"\n"
		"Options:\n"
		"  -s SOCK     daemon socket (default $GROUT_SOCK_PATH if set, else %s)\n"
		"  -n COUNT    measured calls, all clients together (default %d)\n"
		"  -T SECONDS  instead of -n: every client calls for SECONDS, in one window\n"
		"  --idle SECONDS  instead of calls: the daemon's cost while the clients idle\n"
		"              for SECONDS; then client 0 times its first request, and\n"
		"              --idle-rounds more, each after %d ms of silence\n"
		"  --idle-rounds N  (default %d)\n"
		"  --gap MS[,MS...]  instead of calls: one shm and one socket connection in\n"
		"              this process, alternated call by call, each call after MS ms\n"
		"              of silence (at most %d gaps, 1 to %d ms each)\n"
		"  --gap-rounds N  calls on each transport after each gap (default: enough\n"
		"              to fill %d ms of silence, from %d to %d)\n"
		"  --beside-ring SECONDS  instead of calls: pairs of blocks of %d round trips,\n"
		"              GR_PING2 calls on a shm connection and a raw rte_ring\n"
		"              ping-pong, each after %llu us of warm-up, alternated for\n"
		"              SECONDS: shm / ring pair by pair (--json --cdf: every pair)\n"
		"  -t MODE     transport: auto (default; GR_API_TRANSPORT decides), shm, socket\n"
		"  -d DEPTH    requests in flight per client (default 1, at most %d)\n"
		"  -z SIZE     payload: 0 = GR_PING, 64 = GR_PING2 (default), other sizes up to\n"
		"              %d = GR_SHM_ECHO\n"
		"  -c CLIENTS  client processes, one connection each (default 1, at most %d)\n"
		"  -w WARMUP   calls per client before measuring (default %d)\n"
		"  --idle-channels N  attach N more idle shm channels from this process (at\n"
		"              most %d; the daemon's --max-conn-per-pid must allow them)\n"
		"  --spin US   a fixed client spin budget in microseconds (default: adaptive)\n"
		"  --event-loop  wait for each response as an event-loop controller does\n"
		"              (try_recv, poll_prepare, epoll_wait, poll_done)\n"
		"  --json      print one JSON object on stdout\n"
		"  --cdf       with --json: the latency distribution, latency_cdf\n"
		"  --no-stamps no clock read per call (only every %d): calls/s, no latency\n"
		"  --no-syscall-count  no system call counts (null): their tracepoint slows\n"
		"              every system call of the machine\n"
		"  -q          no progress on stderr\n"
		"  --secondary each client a DPDK secondary of the daemon, on a memzone channel\n"
		"  --file-prefix PREFIX  the daemon's EAL file prefix (default: asked)\n"
		"  --lcore N   lcore id of the first client, N + i for client i (1..%d;\n"
		"              default 1 + pid %% %d)\n"
		"  -- EAL_ARGS with --secondary: the clients' EAL arguments, verbatim\n"
		"  -h, --help  show this help and exit\n"
		"\n"
		"Exit status: 0 when every call was answered and every echo matched, 1 otherwise\n"
		"(the reason on stderr). See ping2_perf(1).\n",
		GR_API_DEFAULT_SOCK_PATH,
		DEFAULT_COUNT,
		IDLE_GAP_MS,
		DEFAULT_IDLE_ROUNDS,
		MAX_GAPS,
		MAX_GAP_MS,
		GAP_ROUNDS_BUDGET_MS,
		GAP_ROUNDS_MIN,
		GAP_ROUNDS_MAX,
		BESIDE_BLOCK_CALLS,
		BESIDE_WARMUP_NS / 1000,
		MAX_DEPTH,
		GR_API_MAX_MSG_LEN,
		MAX_CLIENTS,
		DEFAULT_WARMUP,
		IDLE_CHANNELS_MAX,
		NO_STAMPS_CLOCK_MASK + 1,
		RTE_MAX_LCORE - 1,
		RTE_MAX_LCORE - 1);
}

enum option_kind { SET_TRUE, SET_FALSE, HELP, NUMBER, SECONDS, STRING, TRANSPORT, GAPS, PREFIX };

// An option: how its argument is parsed, and into which field of the options.
struct option_def {
	const char *name; // as messages name it: "-n", "--idle-rounds"
	enum option_kind kind;
	void *field;
	size_t width; // of an integer field
	uint64_t min, max;
};

// --gap's list: MS[,MS...], each from 1 to MAX_GAP_MS, at most MAX_GAPS.
static void parse_gaps(const char *arg, struct options *o) {
	char list[64], *rest = list, *ms;
	if (strlen(arg) >= sizeof(list))
		fail("--gap: '%s' is longer than %zu characters", arg, sizeof(list) - 1);
	strcpy(list, arg);
	for (o->n_gaps = 0; (ms = strsep(&rest, ",")) != NULL;) {
		FAIL_IF(o->n_gaps == MAX_GAPS, "--gap: more than %d gaps in '%s'", MAX_GAPS, arg);
		o->gaps_ms[o->n_gaps++] = (unsigned)parse_number("--gap", ms, 1, MAX_GAP_MS);
	}
}

static void parse_one(const struct option_def *d, const char *arg, struct options *o) {
	unsigned t = 0;
	uint64_t v;

	switch (d->kind) {
	case SET_TRUE:
	case SET_FALSE:
		*(bool *)d->field = d->kind == SET_TRUE;
		break;
	case HELP:
		usage(stdout);
		exit(EXIT_SUCCESS);
	case NUMBER:
		v = parse_number(d->name, arg, d->min, d->max);
		if (d->width == sizeof(uint64_t))
			*(uint64_t *)d->field = v;
		else
			*(uint32_t *)d->field = (uint32_t)v; // unsigned or int
		break;
	case SECONDS:
		if (seconds_from_string(arg, MAX_SECONDS, d->field) < 0)
			fail("%s: '%s' is not a number of seconds above 0, at most %d",
			     d->name,
			     arg,
			     MAX_SECONDS);
		break;
	case STRING:
		*(const char **)d->field = arg;
		break;
	case TRANSPORT: // transport_name() knows the enum's 3 values
		while (t < 3 && strcmp(arg, transport_name((enum gr_api_transport)t)) != 0)
			t++;
		FAIL_IF(t == 3, "-t: '%s' is not auto, shm or socket", arg);
		o->transport = (enum gr_api_transport)t;
		break;
	case GAPS:
		parse_gaps(arg, o);
		break;
	case PREFIX:
		if (strlen(arg) >= sizeof(o->file_prefix))
			fail("--file-prefix: longer than %zu bytes", sizeof(o->file_prefix) - 1);
		strcpy(o->file_prefix, arg);
		break;
	}
}

// Refuse what would measure something else than asked.
static void check_options(struct options *o, bool count_given, bool transport_given) {
	bool gap = o->n_gaps > 0, beside = o->beside_seconds > 0;

	if (o->secondary && o->transport == GR_API_TRANSPORT_SOCKET)
		fail("--secondary measures memzone channels: not with -t socket");
	if (count_given + (o->seconds > 0) + (o->idle_seconds > 0) + gap + beside > 1)
		fail("-n, -T, --idle, --gap and --beside-ring exclude each other");
	// --gap and --beside-ring time blocking receives of their own; the
	// library spins only in a blocking receive, never in the try calls.
	if (o->event_loop && (gap || beside))
		fail("--event-loop measures the calls (-n, -T) or --idle: not --gap or "
		     "--beside-ring");
	if (o->event_loop && o->spin_us >= 0)
		fail("--spin is the blocking receive's spin budget: not with --event-loop");
	FAIL_IF(!gap && o->gap_rounds > 0, "--gap-rounds needs --gap");
	FAIL_IF(gap && transport_given, "--gap measures both transports: no -t");
	if (gap && (o->depth != 1 || o->clients != 1))
		fail("--gap makes one call at a time from one process: no -d or -c");
	if (gap && (o->idle_channels > 0 || o->cdf || !o->stamps))
		fail("--gap: no --idle-channels, --cdf or --no-stamps");
	if (beside && transport_given && o->transport != GR_API_TRANSPORT_SHM)
		fail("--beside-ring measures the channel: -t shm or no -t");
	if (beside && (o->depth != 1 || o->clients != 1))
		fail("--beside-ring makes one call at a time from one process: no -d or -c");
	if (beside && (o->idle_channels > 0 || o->secondary))
		fail("--beside-ring: no --idle-channels or --secondary");
	FAIL_IF(o->cdf && !o->json, "--cdf needs --json");
	FAIL_IF(o->cdf && !o->stamps && !beside, "--cdf needs the stamps --no-stamps leaves out");
	FAIL_IF(o->idle_seconds > 0 && !o->stamps, "--idle times its requests: no --no-stamps");
	if (o->seconds == 0 && o->idle_seconds == 0 && o->count < o->clients)
		fail("-n %" PRIu64 " is fewer calls than -c %u clients", o->count, o->clients);
	if (o->seconds > 0 || o->idle_seconds > 0)
		o->count = UINT64_MAX;
	// --beside-ring times blocks: a clock read per call would be part of every one.
	o->stamps = o->stamps && !beside;
}

static void parse_options(int argc, char **argv, struct options *o) {
#define FIELD(f) &o->f, sizeof(o->f)
	const struct option_def defs[] = {
		{"-s", STRING, FIELD(sock_path), 0, 0},
		{"-n", NUMBER, FIELD(count), 1, UINT64_MAX},
		{"-T", SECONDS, FIELD(seconds), 0, 0},
		{"--idle", SECONDS, FIELD(idle_seconds), 0, 0},
		{"--idle-rounds", NUMBER, FIELD(idle_rounds), 0, UINT32_MAX},
		{"--gap", GAPS, NULL, 0, 0, 0},
		{"--gap-rounds", NUMBER, FIELD(gap_rounds), 1, MAX_GAP_ROUNDS},
		{"--beside-ring", SECONDS, FIELD(beside_seconds), 0, 0},
		{"-t", TRANSPORT, NULL, 0, 0, 0},
		{"-d", NUMBER, FIELD(depth), 1, MAX_DEPTH},
		{"-z", NUMBER, FIELD(size), 0, GR_API_MAX_MSG_LEN},
		{"-c", NUMBER, FIELD(clients), 1, MAX_CLIENTS},
		{"-w", NUMBER, FIELD(warmup), 0, UINT64_MAX},
		{"--idle-channels", NUMBER, FIELD(idle_channels), 0, IDLE_CHANNELS_MAX},
		{"--spin", NUMBER, FIELD(spin_us), 0, INT_MAX},
		{"--event-loop", SET_TRUE, FIELD(event_loop), 0, 0},
		{"--json", SET_TRUE, FIELD(json), 0, 0},
		{"--cdf", SET_TRUE, FIELD(cdf), 0, 0},
		{"--no-stamps", SET_FALSE, FIELD(stamps), 0, 0},
		{"--no-syscall-count", SET_FALSE, FIELD(count_syscalls), 0, 0},
		{"-q", SET_TRUE, FIELD(quiet), 0, 0},
		{"--secondary", SET_TRUE, FIELD(secondary), 0, 0},
		{"--file-prefix", PREFIX, NULL, 0, 0, 0},
		{"--lcore", NUMBER, FIELD(lcore), 1, RTE_MAX_LCORE - 1},
		{"-h", HELP, NULL, 0, 0, 0},
	};
#undef FIELD
	enum { N_DEFS = sizeof(defs) / sizeof(defs[0]) };
	// getopt's key of an option: a short one's letter, a long one's 256 + index.
	struct option long_options[N_DEFS + 2] = {{"help", no_argument, NULL, 'h'}};
	char short_options[2 * N_DEFS + 1] = "", *env_sock = getenv("GROUT_SOCK_PATH");
	bool count_given = false, transport_given = false;
	int own_argc = argc, n_long = 1, ch, i, arg;

	for (i = 0; i < N_DEFS; i++) {
		arg = defs[i].kind >= NUMBER ? required_argument : no_argument;
		if (defs[i].name[1] == '-')
			long_options[n_long++] =
				(struct option){defs[i].name + 2, arg, NULL, 256 + i};
		else
			strcat(strncat(short_options, defs[i].name + 1, 1), arg ? ":" : "");
	}
	*o = (struct options){
		.sock_path = GR_API_DEFAULT_SOCK_PATH,
		.count = DEFAULT_COUNT,
		.warmup = DEFAULT_WARMUP,
		.stamps = true,
		.count_syscalls = true,
		.transport = GR_API_TRANSPORT_AUTO,
		.depth = 1,
		.clients = 1,
		.idle_rounds = DEFAULT_IDLE_ROUNDS,
		.size = GR_PING2_LEN,
		.spin_us = -1,
	};
	// As Grout's own tools: the environment names the socket, -s overrides it.
	if (env_sock != NULL && env_sock[0] != '\0')
		o->sock_path = env_sock;
	// Everything after -- is EAL's.
	for (i = 1; i < argc && own_argc == argc; i++)
		if (strcmp(argv[i], "--") == 0)
			own_argc = i;
	while ((ch = getopt_long(own_argc, argv, short_options, long_options, NULL)) != -1) {
		for (i = 0; i < N_DEFS; i++)
			if ((defs[i].name[1] == '-' ? 256 + i : defs[i].name[1]) == ch)
				break;
		if (i == N_DEFS) {
			usage(stderr);
			exit(EXIT_FAILURE);
		}
		parse_one(&defs[i], optarg, o);
		count_given |= ch == 'n';
		transport_given |= ch == 't';
	}
	FAIL_IF(optind != own_argc, "unexpected argument '%s' (see --help)", argv[optind]);
	FAIL_IF(own_argc < argc && !o->secondary, "EAL arguments after -- need --secondary");
	if (own_argc < argc && (o->file_prefix[0] != '\0' || o->lcore != 0))
		fail("--file-prefix and --lcore are EAL arguments: give them after -- too");
	if (!o->secondary && (o->file_prefix[0] != '\0' || o->lcore != 0))
		fail("--file-prefix and --lcore need --secondary");
	if (own_argc < argc) {
		o->eal_argc = argc - own_argc - 1;
		o->eal_argv = argv + own_argc + 1;
	}
	check_options(o, count_given, transport_given);
}

int main(int argc, char **argv) {
	static struct options o;
	static struct gap_run gaps;
	static struct beside_run beside;
	static struct summary sum;
	parse_options(argc, argv, &o);
	if (o.n_gaps > 0) {
		run_gaps(&o, &gaps);
		print_gaps(&o, &gaps);
	} else if (o.beside_seconds > 0) {
		run_beside_ring(&o, &beside);
		print_beside(&o, &beside);
	} else if (run_clients(&o, &sum) == EXIT_SUCCESS) {
		print_summary(&o, &sum);
	} else {
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
