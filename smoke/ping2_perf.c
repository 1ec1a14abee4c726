// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf, round trips to shmchand on either transport (ping2_perf.h): main() and the options.

#include "ping2_perf.h"
#include <getopt.h>
#include <rte_lcore.h>
#include <limits.h>

const char *log_prefix = "ping2_perf";

static void __attribute__((noreturn)) usage(FILE *out, int status) {
	fprintf(out,
		"usage: ping2_perf [-n COUNT | -T SECONDS | --idle SECONDS | --gap MS[,MS...] |\n"
		"                   --beside-ring SECONDS] [OPTION...] [-- EAL_ARGS]\n"
		"\n"
		"Options:\n"
		"  -s SOCK     daemon socket (default $GROUT_SOCK_PATH if set, else %s)\n"
		"  -n COUNT    measured calls, all clients together (default %d)\n"
		"  -T SECONDS  instead of -n: every client calls for SECONDS, in one window\n"
		"  --idle SECONDS  instead of calls: the daemon's cost while the clients idle\n"
		"  --idle-rounds N  with --idle: requests timed after the first (default %d)\n"
		"  --gap MS[,MS...]  instead of calls: shm and socket calls, each after MS ms\n"
		"  --gap-rounds N  with --gap: calls on each transport after each gap\n"
		"  --beside-ring SECONDS  instead of calls: shm beside a raw rte_ring ping-pong\n"
		"  -t MODE     transport: auto (default; GR_API_TRANSPORT decides), shm, socket\n"
		"  -d DEPTH    requests in flight per client (default 1)\n"
		"  -z SIZE     payload: 0 GR_PING, 64 GR_PING2 (default), other sizes GR_SHM_ECHO\n"
		"  -c CLIENTS  client processes, one connection each (default 1)\n"
		"  -w WARMUP   calls per client before measuring (default %d)\n"
		"  --idle-channels N  attach N more idle shm channels from this process\n"
		"  --spin US   a fixed client spin budget in microseconds (default: adaptive)\n"
		"  --event-loop  wait for each response as an event-loop controller does\n"
		"  --json      print one JSON object on stdout\n"
		"  --cdf       with --json: the latency distribution, latency_cdf\n"
		"  --no-stamps no clock read per call: calls/s, no latency\n"
		"  --no-syscall-count  no system call counts: their tracepoint slows every one\n"
		"  -q          no progress on stderr\n"
		"  --secondary DPDK secondary clients on memzone channels (EAL_ARGS after --)\n"
		"  --file-prefix PREFIX  with --secondary: the daemon's EAL file prefix\n"
		"  --lcore N   with --secondary: lcore id of the first client, N + i for client i\n"
		"  -h, --help  show this help and exit\n"
		"\n"
		"Exit status: 0 if every call was answered and every echo matched, else 1.\n",
		GR_API_DEFAULT_SOCK_PATH,
		DEFAULT_COUNT,
		DEFAULT_IDLE_ROUNDS,
		DEFAULT_WARMUP);
	exit(status);
}

enum option_kind { SET_TRUE, SET_FALSE, HELP, NUMBER, SECONDS, STRING, TRANSPORT, GAPS, PREFIX };
struct option_def {
	const char *name; // as messages name it: "-n", "--idle-rounds"
	enum option_kind kind;
	void *field;
	size_t width; // of an integer field
	uint64_t min, max;
};

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
		usage(stdout, EXIT_SUCCESS);
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

static void check_options(struct options *o, bool count_given, bool transport_given) {
	bool gap = o->n_gaps > 0, beside = o->beside_seconds > 0;
	const char *mode = gap ? "--gap" : "--beside-ring";
	if (o->secondary && o->transport == GR_API_TRANSPORT_SOCKET)
		fail("--secondary measures memzone channels: not with -t socket");
	if (count_given + (o->seconds > 0) + (o->idle_seconds > 0) + gap + beside > 1)
		fail("-n, -T, --idle, --gap and --beside-ring exclude each other");
	if (o->event_loop && (gap || beside)) // both time blocking receives, which alone spin
		fail("--event-loop measures the calls (-n, -T) or --idle: not --gap or "
		     "--beside-ring");
	if (o->event_loop && o->spin_us >= 0)
		fail("--spin is the blocking receive's spin budget: not with --event-loop");
	FAIL_IF(!gap && o->gap_rounds > 0, "--gap-rounds needs --gap");
	FAIL_IF(gap && transport_given, "--gap measures both transports: no -t");
	if (beside && transport_given && o->transport != GR_API_TRANSPORT_SHM)
		fail("--beside-ring measures the channel: -t shm or no -t");
	if ((gap || beside) && (o->depth != 1 || o->clients != 1))
		fail("%s makes one call at a time from one process: no -d or -c", mode);
	if (gap && (o->idle_channels > 0 || o->cdf || !o->stamps))
		fail("--gap: no --idle-channels, --cdf or --no-stamps");
	if (beside && (o->idle_channels > 0 || o->secondary))
		fail("--beside-ring: no --idle-channels or --secondary");
	FAIL_IF(o->cdf && !o->json, "--cdf needs --json");
	FAIL_IF(o->cdf && !o->stamps && !beside, "--cdf needs the stamps --no-stamps leaves out");
	FAIL_IF(o->idle_seconds > 0 && !o->stamps, "--idle times its requests: no --no-stamps");
	if (o->seconds == 0 && o->idle_seconds == 0 && o->count < o->clients)
		fail("-n %" PRIu64 " is fewer calls than -c %u clients", o->count, o->clients);
	if (o->seconds > 0 || o->idle_seconds > 0)
		o->count = UINT64_MAX;
	o->stamps = o->stamps && !beside; // --beside-ring times blocks: no clock read per call
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
	struct option long_options[N_DEFS + 2] = {{"help", no_argument, NULL, 'h'}};
	char short_options[2 * N_DEFS + 1] = "", *env = getenv("GROUT_SOCK_PATH");
	bool count_given = false, transport_given = false;
	int own_argc = argc, n_long = 1, ch, i, arg;
	for (i = 0; i < N_DEFS; i++) { // getopt key: a short option's letter, a long one's 256 + i
		arg = defs[i].kind >= NUMBER ? required_argument : no_argument;
		if (defs[i].name[1] == '-')
			long_options[n_long++] =
				(struct option){defs[i].name + 2, arg, NULL, 256 + i};
		else
			strcat(strncat(short_options, defs[i].name + 1, 1), arg ? ":" : "");
	}
	*o = (struct options){
		.sock_path = env != NULL && env[0] != '\0' ? env : GR_API_DEFAULT_SOCK_PATH,
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
	for (i = 1; i < argc && own_argc == argc; i++) // everything after -- is EAL's
		if (strcmp(argv[i], "--") == 0)
			own_argc = i;
	while ((ch = getopt_long(own_argc, argv, short_options, long_options, NULL)) != -1) {
		for (i = 0; i < N_DEFS; i++)
			if ((defs[i].name[1] == '-' ? 256 + i : defs[i].name[1]) == ch)
				break;
		if (i == N_DEFS)
			usage(stderr, EXIT_FAILURE);
		parse_one(&defs[i], optarg, o);
		count_given |= ch == 'n';
		transport_given |= ch == 't';
	}
	FAIL_IF(optind != own_argc, "unexpected argument '%s' (see --help)", argv[optind]);
	bool eal = own_argc < argc, eal_own = o->file_prefix[0] != '\0' || o->lcore != 0;
	FAIL_IF(eal && !o->secondary, "EAL arguments after -- need --secondary");
	FAIL_IF(eal && eal_own,
		"--file-prefix and --lcore are EAL arguments: give them after -- too");
	FAIL_IF(!o->secondary && eal_own, "--file-prefix and --lcore need --secondary");
	if (eal) {
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
