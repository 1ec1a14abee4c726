// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl ping: the round trip of GR_PING (or GR_PING2, 64 bytes echoed)
// call by call, and a summary, the way ping(8) shows them.

#include "cli.h"
#include "escape.h"
#include "format.h"
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_S 1000000000ull
#define NS_PER_MS 1000000ull
// ping(8)'s default interval between two calls, in seconds.
#define PING_INTERVAL_DEFAULT_S 1.0
// Longest interval accepted, in seconds: a day.
#define PING_INTERVAL_MAX_S 86400.0
#define PERCENT 100
// Round trips -j keeps room for at first, then doubled.
#define PING_INITIAL_TIMES 64

// Set by SIGINT: stop after the call in progress and print the summary.
static volatile sig_atomic_t ping_stop;

static void on_sigint(int sig) {
	(void)sig;
	ping_stop = 1;
}

struct ping_opts {
	unsigned long count; // 0: until SIGINT
	double interval_s;
	bool ping2;
	enum gr_api_transport transport;
};

struct ping_stats {
	unsigned long sent, received;
	double min_ns, max_ns, sum_ns, sum_sq_ns;
	uint64_t *times_ns; // each reply's (JSON only)
	size_t times_cap;
	uint64_t start_ns;
	int err; // of the call that failed, 0 if none did
};

static uint64_t now_ns(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

// Sleep interval_s, or less if SIGINT comes.
static void ping_wait(double interval_s) {
	struct timespec ts = {
		.tv_sec = (time_t)interval_s,
		.tv_nsec = (long)((interval_s - (double)(time_t)interval_s) * NS_PER_S),
	};

	while (!ping_stop && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

// One call; returns its round trip in ns, or -1 with errno.
static int64_t ping_once(struct gr_api_client *c, bool ping2, unsigned long seq) {
	struct gr_ping2 req, resp;
	uint64_t start;
	long len;

	if (!ping2) {
		start = now_ns();
		if (gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL) < 0)
			return -1;
		return (int64_t)(now_ns() - start);
	}
	// A payload of its own per call, so that a stale echo is caught.
	for (size_t i = 0; i < sizeof(req.payload); i++)
		req.payload[i] = (char)(seq + i);
	start = now_ns();
	len = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
	if (len > 0)
		len = gr_api_client_recv_into(c, (uint32_t)len, &resp, sizeof(resp));
	if (len < 0)
		return -1;
	if (len != sizeof(resp) || memcmp(&req, &resp, sizeof(req)) != 0) {
		errno = EBADMSG;
		return -1;
	}
	return (int64_t)(now_ns() - start);
}

// Count one reply; keep its time too for -j. Returns 0 or -ENOMEM.
static int ping_record(struct ping_stats *s, uint64_t ns, bool keep) {
	double t = (double)ns;

	if (keep && s->received == s->times_cap) {
		size_t cap = s->times_cap > 0 ? 2 * s->times_cap : PING_INITIAL_TIMES;
		uint64_t *times = realloc(s->times_ns, cap * sizeof(*times));

		if (times == NULL)
			return -ENOMEM;
		s->times_ns = times;
		s->times_cap = cap;
	}
	if (keep)
		s->times_ns[s->received] = ns;
	if (s->received == 0 || t < s->min_ns)
		s->min_ns = t;
	if (t > s->max_ns)
		s->max_ns = t;
	s->sum_ns += t;
	s->sum_sq_ns += t * t;
	s->received++;
	return 0;
}

// ping(8)'s mdev: the standard deviation of the round trips.
static double ping_mdev(const struct ping_stats *s) {
	double avg = s->sum_ns / (double)s->received;
	double var = s->sum_sq_ns / (double)s->received - avg * avg;

	return var > 0 ? sqrt(var) : 0;
}

static void ping_summary(
	const struct cli_opts *opts,
	const struct ping_opts *po,
	const struct ping_stats *s,
	const char *path,
	const char *transport
) {
	uint64_t elapsed_ms = (now_ns() - s->start_ns) / NS_PER_MS;
	unsigned long lost = s->sent - s->received;
	char a[FORMAT_LEN], b[FORMAT_LEN], c[FORMAT_LEN], d[FORMAT_LEN];
	struct json j;

	if (opts->json) {
		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		json_string(&j, "socket", path);
		json_string(&j, "transport", transport);
		json_string(&j, "request", po->ping2 ? "GR_PING2" : "GR_PING");
		json_u64(&j, "sent", s->sent);
		json_u64(&j, "received", s->received);
		json_u64(&j, "time_ms", elapsed_ms);
		json_array_begin(&j, "rtt_ns");
		for (unsigned long i = 0; i < s->received; i++)
			json_u64(&j, NULL, s->times_ns[i]);
		json_array_end(&j);
		if (s->received > 0) {
			json_u64(&j, "min_ns", (uint64_t)s->min_ns);
			json_u64(&j, "avg_ns", (uint64_t)(s->sum_ns / (double)s->received));
			json_u64(&j, "max_ns", (uint64_t)s->max_ns);
			json_u64(&j, "mdev_ns", (uint64_t)ping_mdev(s));
		}
		if (s->err != 0)
			json_string(&j, "error", strerror(s->err));
		json_object_end(&j);
		json_end(&j);
		return;
	}
	printf("\n--- %s ping statistics ---\n", path);
	printf("%lu requests sent, %lu replies, %lu%% lost, time %" PRIu64 "ms\n",
	       s->sent,
	       s->received,
	       s->sent > 0 ? lost * PERCENT / s->sent : 0,
	       elapsed_ms);
	if (s->received > 0)
		printf("rtt min/avg/max/mdev = %s/%s/%s/%s us\n",
		       format_us(a, s->min_ns),
		       format_us(b, s->sum_ns / (double)s->received),
		       format_us(c, s->max_ns),
		       format_us(d, ping_mdev(s)));
}

static int ping_run(struct cli_opts *opts, int argc, char **argv);

static void ping_help(FILE *f) {
	fprintf(f,
		"  -c COUNT    stop after COUNT calls (default: at SIGINT)\n"
		"  -i SECONDS  wait SECONDS between calls, 0 to %.0f (default %.0f)\n"
		"  -2          GR_PING2: 64 bytes echoed and checked, instead of GR_PING\n"
		"  -t MODE     transport: auto (default; GR_API_TRANSPORT decides), shm or "
		"socket\n",
		PING_INTERVAL_MAX_S,
		PING_INTERVAL_DEFAULT_S);
}

static struct cli_command ping_cmd = {
	.name = "ping",
	.args = "[-c COUNT] [-i SECONDS] [-2] [-t auto|shm|socket]",
	.summary = "time GR_PING (-2: GR_PING2) round trips, as ping(8) does",
	.help = ping_help,
	.run = ping_run,
};
CLI_COMMAND(ping_cmd)

static int ping_parse(struct cli_opts *opts, int argc, char **argv, struct ping_opts *po) {
	int opt, status = EXIT_SUCCESS;
	char *end;

	po->interval_s = PING_INTERVAL_DEFAULT_S;
	while ((opt = cli_getopt(opts, &ping_cmd, argc, argv, "c:i:2t:", &status)) != -1) {
		switch (opt) {
		case 'c':
			errno = 0;
			po->count = strtoul(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || optarg[0] == '-' || po->count == 0) {
				fprintf(stderr,
					"shmchanctl ping: -c takes a count > 0, not '%s'\n",
					optarg);
				return EX_USAGE;
			}
			break;
		case 'i':
			errno = 0;
			po->interval_s = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || !(po->interval_s >= 0) ||
			    po->interval_s > PING_INTERVAL_MAX_S) {
				fprintf(stderr,
					"shmchanctl ping: -i takes 0 to %.0f seconds, not '%s'\n",
					PING_INTERVAL_MAX_S,
					optarg);
				return EX_USAGE;
			}
			break;
		case '2':
			po->ping2 = true;
			break;
		case 't':
			if (strcmp(optarg, "auto") == 0) {
				po->transport = GR_API_TRANSPORT_AUTO;
			} else if (strcmp(optarg, "shm") == 0) {
				po->transport = GR_API_TRANSPORT_SHM;
			} else if (strcmp(optarg, "socket") == 0) {
				po->transport = GR_API_TRANSPORT_SOCKET;
			} else {
				fprintf(stderr,
					"shmchanctl ping: -t takes auto, shm or socket, not '%s'\n",
					optarg);
				return EX_USAGE;
			}
			break;
		default:
			return status;
		}
	}
	if (optind < argc) {
		cli_usage(&ping_cmd, stderr);
		return EX_USAGE;
	}
	return -1;
}

static int ping_run(struct cli_opts *opts, int argc, char **argv) {
	const char *path = opts->sock_path != NULL ? opts->sock_path : GR_API_DEFAULT_SOCK_PATH;
	struct sigaction sa = {.sa_handler = on_sigint};
	struct ping_opts po = {.transport = GR_API_TRANSPORT_AUTO};
	struct ping_stats s = {0};
	char time_us[FORMAT_LEN];
	struct gr_api_client *c;
	const char *transport;
	int status;
	int64_t ns;

	status = ping_parse(opts, argc, argv, &po);
	if (status >= 0)
		return status;
	c = cli_connect(opts, po.transport, &status);
	if (c == NULL)
		return status;
	transport = gr_api_client_transport(c) == GR_API_TRANSPORT_SHM ? "shm" : "socket";
	// No SA_RESTART: SIGINT cuts the wait between two calls short.
	sigaction(SIGINT, &sa, NULL);
	if (!opts->json) {
		// The reason may quote the daemon (a memzone's name, a file
		// prefix): escaped.
		printf("PING %s: %s over %s%s",
		       path,
		       po.ping2 ? "GR_PING2, 64 bytes echoed" : "GR_PING",
		       transport,
		       gr_api_client_transport_reason(c)[0] != '\0' ? ": " : "");
		escape_fputs(gr_api_client_transport_reason(c), stdout);
		putchar('\n');
	}
	s.start_ns = now_ns();
	while (!ping_stop && (po.count == 0 || s.sent < po.count)) {
		if (s.sent > 0)
			ping_wait(po.interval_s);
		if (ping_stop)
			break;
		s.sent++;
		ns = ping_once(c, po.ping2, s.sent);
		if (ns < 0) {
			s.err = errno;
			break;
		}
		s.err = -ping_record(&s, (uint64_t)ns, opts->json);
		if (s.err != 0)
			break;
		if (!opts->json)
			printf("%zu bytes from %s: seq=%lu time=%s us\n",
			       po.ping2 ? sizeof(struct gr_ping2) : 0,
			       path,
			       s.sent,
			       format_us(time_us, (double)ns));
		fflush(stdout);
	}
	gr_api_client_disconnect(c);
	ping_summary(opts, &po, &s, path, transport);
	free(s.times_ns);
	if (s.err != 0)
		return cli_fail(opts, po.ping2 ? "GR_PING2 on" : "GR_PING on", s.err);
	return EXIT_SUCCESS;
}
