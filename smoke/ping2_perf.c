// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf: round trips and event fan-out through shmchand (ping2_perf.h): main() and options.

#include "ping2_perf.h"
#include <rte_lcore.h>
#include <limits.h>

const char *log_prefix = "ping2_perf";

static void __attribute__((noreturn)) usage(bool error) {
	fprintf(error ? stderr : stdout,
		"usage: ping2_perf [-n COUNT | -T SECONDS | --idle SECONDS | --gap MS[,MS...] |\n"
		"                   --beside-ring SECONDS | --events] [OPTION...] [-- EAL_ARGS]\n"
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
		"  --events    instead of calls: -n events, -c subscribers, default -d 16 -t shm\n"
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
		"Exit status: 0 if every call was answered and every echo matched (--events:\n"
		"every publish answered, every event delivered or counted lost), else 1.\n",
		GR_API_DEFAULT_SOCK_PATH,
		DEFAULT_COUNT,
		DEFAULT_IDLE_ROUNDS,
		DEFAULT_WARMUP);
	exit(error ? EXIT_FAILURE : EXIT_SUCCESS);
}

static void parse_gaps(const struct option_def *d, const char *arg) {
	struct options *o = d->field;
	char list[64], *rest = list, *ms;
	if (strlen(arg) >= sizeof(list))
		fail("--gap: '%s' is longer than %zu characters", arg, sizeof(list) - 1);
	strcpy(list, arg);
	for (o->n_gaps = 0; (ms = strsep(&rest, ",")) != NULL;) {
		FAIL_IF(o->n_gaps == MAX_GAPS, "--gap: more than %d gaps in '%s'", MAX_GAPS, arg);
		o->gaps_ms[o->n_gaps++] = (unsigned)parse_number("--gap", ms, 1, MAX_GAP_MS);
	}
}

static void parse_transport(const struct option_def *d, const char *arg) {
	unsigned t = 0;
	while (t < 3 && strcmp(arg, transport_name((enum gr_api_transport)t)) != 0)
		t++; // transport_name() knows the enum's 3 values
	FAIL_IF(t == 3, "-t: '%s' is not auto, shm or socket", arg);
	*(enum gr_api_transport *)d->field = (enum gr_api_transport)t;
}

static void parse_prefix(const struct option_def *d, const char *arg) {
	if (strlen(arg) >= d->width)
		fail("--file-prefix: longer than %zu bytes", d->width - 1);
	strcpy(d->field, arg);
}

struct given { // which of -n, -t, -d and -w came: the checks need to know
	bool n, t, d, w;
};

// --events: its own ranges (every latency is kept), and none of the calls' ways of calling.
static void check_events(struct options *o, const struct given *given) {
	FAIL_IF(o->cdf || !o->stamps || given->w, "--events: no --cdf, --no-stamps or -w");
	if (o->secondary || o->idle_channels > 0 || o->event_loop)
		fail("--events: no --secondary, --idle-channels or --event-loop");
	FAIL_IF(given->t && o->transport == GR_API_TRANSPORT_AUTO, "--events: -t shm or socket");
	FAIL_IF(o->clients > MAX_SUBSCRIBERS, "--events: -c at most %d", MAX_SUBSCRIBERS);
	FAIL_IF(o->count > EVENTS_MAX_COUNT, "--events: -n at most %d", EVENTS_MAX_COUNT);
	FAIL_IF(o->size < EVENTS_MIN_SIZE, "--events: -z at least %d bytes", EVENTS_MIN_SIZE);
	o->transport = given->t ? o->transport : GR_API_TRANSPORT_SHM;
	o->depth = given->d ? o->depth : EVENTS_DEFAULT_DEPTH;
}

static void check_options(struct options *o, const struct given *given) {
	bool gap = o->n_gaps > 0, beside = o->beside_seconds > 0;
	const char *mode = gap ? "--gap" : "--beside-ring";
	if (o->secondary && o->transport == GR_API_TRANSPORT_SOCKET)
		fail("--secondary measures memzone channels: not with -t socket");
	if (given->n + (o->seconds > 0) + (o->idle_seconds > 0) + gap + beside > 1)
		fail("-n, -T, --idle, --gap and --beside-ring exclude each other");
	if (o->events && (o->seconds > 0 || o->idle_seconds > 0 || gap || beside))
		fail("--events publishes -n events: no -T, --idle, --gap or --beside-ring");
	if (o->event_loop && (gap || beside)) // both time blocking receives, which alone spin
		fail("--event-loop measures the calls (-n, -T) or --idle: not --gap or "
		     "--beside-ring");
	if (o->event_loop && o->spin_us >= 0)
		fail("--spin is the blocking receive's spin budget: not with --event-loop");
	FAIL_IF(!gap && o->gap_rounds > 0, "--gap-rounds needs --gap");
	FAIL_IF(gap && given->t, "--gap measures both transports: no -t");
	if (beside && given->t && o->transport != GR_API_TRANSPORT_SHM)
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
	if (o->events) // every subscriber takes all -n events
		check_events(o, given);
	else if (o->seconds == 0 && o->idle_seconds == 0 && o->count < o->clients)
		fail("-n %" PRIu64 " is fewer calls than -c %u clients", o->count, o->clients);
	if (o->seconds > 0 || o->idle_seconds > 0)
		o->count = UINT64_MAX;
	o->stamps = o->stamps && !beside; // --beside-ring times blocks: no clock read per call
}

static void parse_options(int argc, char **argv, struct options *o) {
	struct given given = {0};
	const struct option_def defs[] = {
		{"-s", OPT_STRING, FIELD(&o->sock_path)},
		{"-n", OPT_NUMBER, FIELD(&o->count), 1, UINT64_MAX, .given = &given.n},
		{"-T", OPT_SECONDS, FIELD(&o->seconds)},
		{"--idle", OPT_SECONDS, FIELD(&o->idle_seconds)},
		{"--idle-rounds", OPT_NUMBER, FIELD(&o->idle_rounds), 0, UINT32_MAX},
		{"--gap", OPT_CALL, .field = o, .parse = parse_gaps},
		{"--gap-rounds", OPT_NUMBER, FIELD(&o->gap_rounds), 1, MAX_GAP_ROUNDS},
		{"--beside-ring", OPT_SECONDS, FIELD(&o->beside_seconds)},
		{"--events", OPT_TRUE, FIELD(&o->events)},
		{"-t", OPT_CALL, FIELD(&o->transport), .parse = parse_transport, .given = &given.t},
		{"-d", OPT_NUMBER, FIELD(&o->depth), 1, MAX_DEPTH, .given = &given.d},
		{"-z", OPT_NUMBER, FIELD(&o->size), 0, GR_API_MAX_MSG_LEN},
		{"-c", OPT_NUMBER, FIELD(&o->clients), 1, MAX_CLIENTS},
		{"-w", OPT_NUMBER, FIELD(&o->warmup), 0, UINT64_MAX, .given = &given.w},
		{"--idle-channels", OPT_NUMBER, FIELD(&o->idle_channels), 0, IDLE_CHANNELS_MAX},
		{"--spin", OPT_NUMBER, FIELD(&o->spin_us), 0, INT_MAX},
		{"--event-loop", OPT_TRUE, FIELD(&o->event_loop)},
		{"--json", OPT_TRUE, FIELD(&o->json)},
		{"--cdf", OPT_TRUE, FIELD(&o->cdf)},
		{"--no-stamps", OPT_FALSE, FIELD(&o->stamps)},
		{"--no-syscall-count", OPT_FALSE, FIELD(&o->count_syscalls)},
		{"-q", OPT_TRUE, FIELD(&o->quiet)},
		{"--secondary", OPT_TRUE, FIELD(&o->secondary)},
		{"--file-prefix", OPT_CALL, FIELD(&o->file_prefix), .parse = parse_prefix},
		{"--lcore", OPT_NUMBER, FIELD(&o->lcore), 1, RTE_MAX_LCORE - 1},
		{"-h", OPT_HELP, .field = NULL},
	};
	char *env = getenv("GROUT_SOCK_PATH");
	int own_argc = argc, i;
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
	i = options_parse(own_argc, argv, defs, sizeof(defs) / sizeof(defs[0]), usage);
	FAIL_IF(i != own_argc, "unexpected argument '%s' (see --help)", argv[i]);
	bool eal = own_argc < argc, eal_own = o->file_prefix[0] != '\0' || o->lcore != 0;
	FAIL_IF(eal && !o->secondary, "EAL arguments after -- need --secondary");
	FAIL_IF(eal && eal_own,
		"--file-prefix and --lcore are EAL arguments: give them after -- too");
	FAIL_IF(!o->secondary && eal_own, "--file-prefix and --lcore need --secondary");
	if (eal) {
		o->eal_argc = argc - own_argc - 1;
		o->eal_argv = argv + own_argc + 1;
	}
	check_options(o, &given);
}

int main(int argc, char **argv) {
	static struct options o;
	static struct gap_run gaps;
	static struct beside_run beside;
	static struct events_run events;
	static struct summary sum;
	parse_options(argc, argv, &o);
	if (o.n_gaps > 0) {
		run_gaps(&o, &gaps);
		print_gaps(&o, &gaps);
	} else if (o.beside_seconds > 0) {
		run_beside_ring(&o, &beside);
		print_beside(&o, &beside);
	} else if (o.events) {
		run_events(&o, &events);
		print_events(&o, &events);
	} else if (run_clients(&o, &sum) == EXIT_SUCCESS) {
		print_summary(&o, &sum);
	} else {
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
