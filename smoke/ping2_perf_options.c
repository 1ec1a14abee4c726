// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's options: the usage, the parsing and the checks of what goes
// with what (ping2_perf.h).

#include "ping2_perf.h"

#include "idle_channels.h"

#include <rte_lcore.h>

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
	fprintf(out,
		"usage: ping2_perf [-s SOCK] [-n COUNT | -T SECONDS | --idle SECONDS |\n"
		"                   --gap MS[,MS...] [--gap-rounds N] | --beside-ring SECONDS]\n"
		"                  [-t auto|shm|socket] [-d DEPTH] [-z SIZE] [-c CLIENTS] [-w "
		"WARMUP]\n"
		"                  [--spin US | --event-loop] [--json [--cdf]] [--no-stamps]\n"
		"                  [--no-syscall-count] [-q]\n"
		"                  [--idle-channels N]\n"
		"                  [--secondary [--file-prefix PREFIX] [--lcore N] [-- EAL_ARGS]]\n"
		"       ping2_perf --help\n"
		"\n"
		"Options:\n"
		"  -s SOCK     daemon socket (default $GROUT_SOCK_PATH if set, else %s)\n"
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
		"  --gap MS[,MS...]  instead of calls: the occasional call. One shm and one\n"
		"              socket connection in this process, alternated call by call\n"
		"              after MS ms of silence each (gap, shm call, gap, socket call,\n"
		"              ...), for each gap in turn (at most %d gaps, 1 to %d ms each):\n"
		"              p50, p99 and max on each transport, and shm p50 / socket p50\n"
		"  --gap-rounds N  calls on each transport after each gap (default: enough\n"
		"              to fill %d ms of silence, from %d to %d)\n"
		"  --beside-ring SECONDS  instead of calls: the busy round trip beside the\n"
		"              raw rte_ring ping-pong. Pairs of blocks of %d round trips, one\n"
		"              of GR_PING2 calls on a shm connection and one through two\n"
		"              rte_rings with a forked echo process, each after %llu us of\n"
		"              untimed warm-up, alternated for SECONDS: shm / ring per pair\n"
		"              (p25, p50, p75) and each side's ns per round trip. One\n"
		"              connection, depth 1, no per-call stamps; with --json --cdf,\n"
		"              every pair's ns too\n"
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
		"  --event-loop  wait for each response as an event-loop controller does:\n"
		"              gr_api_client_try_recv_into(), and when nothing is there\n"
		"              gr_api_client_poll_prepare(), epoll_wait() on gr_api_client_fd()\n"
		"              when it returns 0, gr_api_client_poll_done(), and again (the\n"
		"              calls, -n or -T, and --idle; any transport and depth)\n"
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
		"              instead of the ones above\n"
		"  -h, --help  show this help and exit\n"
		"\n"
		"Exit status: 0 when every call was answered and every echo matched, 1 otherwise\n"
		"(the reason on stderr).\n"
		"See ping2_perf(1).\n",
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
	OPT_GAP,
	OPT_GAP_ROUNDS,
	OPT_BESIDE_RING,
	OPT_EVENT_LOOP,
};

// --gap's list: MS[,MS...], each from 1 to MAX_GAP_MS, at most MAX_GAPS.
static void parse_gaps(const char *arg, struct options *o) {
	char list[64], *rest = list, *ms;

	if (strlen(arg) >= sizeof(list))
		fail("--gap: '%s' is longer than %zu characters", arg, sizeof(list) - 1);
	strcpy(list, arg);
	o->n_gaps = 0;
	while ((ms = strsep(&rest, ",")) != NULL) {
		if (o->n_gaps == MAX_GAPS)
			fail("--gap: more than %d gaps in '%s'", MAX_GAPS, arg);
		o->gaps_ms[o->n_gaps++] = (unsigned)parse_number("--gap", ms, 1, MAX_GAP_MS);
	}
}

unsigned gap_rounds(const struct options *o, unsigned gap_ms) {
	unsigned rounds = GAP_ROUNDS_BUDGET_MS / (2 * gap_ms);

	if (o->gap_rounds > 0)
		return o->gap_rounds;
	if (rounds < GAP_ROUNDS_MIN)
		return GAP_ROUNDS_MIN;
	return rounds > GAP_ROUNDS_MAX ? GAP_ROUNDS_MAX : rounds;
}

// --gap measures one connection of each transport, one call at a time, in
// this process: refuse what would measure something else.
static void check_gap_options(const struct options *o, bool transport_given) {
	if (o->n_gaps == 0) {
		if (o->gap_rounds > 0)
			fail("--gap-rounds needs --gap");
		return;
	}
	if (transport_given)
		fail("--gap measures both transports: no -t");
	if (o->depth != 1 || o->clients != 1)
		fail("--gap makes one call at a time from one process: no -d or -c");
	if (o->idle_channels > 0 || o->cdf || !o->stamps)
		fail("--gap: no --idle-channels, --cdf or --no-stamps");
}

// --beside-ring times one shm connection at depth 1 by blocks, beside a ring
// pair of this process: refuse what would measure something else.
static void check_beside_options(struct options *o, bool transport_given) {
	if (o->beside_seconds == 0)
		return;
	if (transport_given && o->transport != GR_API_TRANSPORT_SHM)
		fail("--beside-ring measures the channel: -t shm or no -t");
	if (o->depth != 1 || o->clients != 1)
		fail("--beside-ring makes one call at a time from one process: no -d or -c");
	if (o->idle_channels > 0 || o->secondary)
		fail("--beside-ring: no --idle-channels or --secondary");
	// Timed by block: a clock read per call would be part of every one.
	o->stamps = false;
}

void parse_options(int argc, char **argv, struct options *o) {
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
		{"gap", required_argument, NULL, OPT_GAP},
		{"gap-rounds", required_argument, NULL, OPT_GAP_ROUNDS},
		{"beside-ring", required_argument, NULL, OPT_BESIDE_RING},
		{"event-loop", no_argument, NULL, OPT_EVENT_LOOP},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool count_given = false, transport_given = false;
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
	// As Grout's own tools: the environment names the socket, -s overrides it.
	const char *env_sock = getenv("GROUT_SOCK_PATH");
	if (env_sock != NULL && env_sock[0] != '\0')
		o->sock_path = env_sock;
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
		case OPT_GAP:
			parse_gaps(optarg, o);
			break;
		case OPT_BESIDE_RING:
			o->beside_seconds = parse_seconds("--beside-ring", optarg, MAX_SECONDS);
			break;
		case OPT_GAP_ROUNDS:
			o->gap_rounds =
				(unsigned)parse_number("--gap-rounds", optarg, 1, MAX_GAP_ROUNDS);
			break;
		case 't':
			transport_given = true;
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
		case OPT_EVENT_LOOP:
			o->event_loop = true;
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
	if ((count_given ? 1 : 0) + (o->seconds > 0 ? 1 : 0) + (o->idle_seconds > 0 ? 1 : 0) +
		    (o->n_gaps > 0 ? 1 : 0) + (o->beside_seconds > 0 ? 1 : 0) >
	    1)
		fail("-n, -T, --idle, --gap and --beside-ring exclude each other");
	// --gap and --beside-ring time blocking receives of their own; the
	// library spins only in a blocking receive, never in the try calls.
	if (o->event_loop && (o->n_gaps > 0 || o->beside_seconds > 0))
		fail("--event-loop measures the calls (-n, -T) or --idle: not --gap or "
		     "--beside-ring");
	if (o->event_loop && o->spin_us >= 0)
		fail("--spin is the blocking receive's spin budget: not with --event-loop");
	check_gap_options(o, transport_given);
	check_beside_options(o, transport_given);
	if (o->cdf && !o->json)
		fail("--cdf needs --json");
	if (o->cdf && !o->stamps && o->beside_seconds == 0)
		fail("--cdf needs the stamps --no-stamps leaves out");
	if (o->idle_seconds > 0 && !o->stamps)
		fail("--idle times its requests: no --no-stamps");
	if (o->seconds > 0 || o->idle_seconds > 0)
		o->count = UINT64_MAX;
	else if (o->count < o->clients)
		fail("-n %" PRIu64 " is fewer calls than -c %u clients", o->count, o->clients);
}
