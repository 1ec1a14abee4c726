// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// event_bench: event fan-out of GR_SHM_EVENT_PUBLISH, up to -d in flight, from one publisher to N
// forked subscriber processes on one transport; an event carries its CLOCK_MONOTONIC publish time.
// Prints events/s delivered to all subscribers, latency percentiles, events lost to full backlogs.

#include "bench_util.h"

#include <gr_api_client.h>
#include <gr_shm.h>

#include <sys/wait.h>

const char *log_prefix = "event_bench";

#define MAX_SUBSCRIBERS 64
#define MAX_DEPTH 256
#define MAX_EVENTS 10000000
// The payload starts with the publish time and a sequence number.
#define MIN_PAYLOAD 16
// Bound of --spin: a fixed spin budget of up to one second.
#define MAX_SPIN_US 1000000

struct options {
	const char *sock;
	enum gr_api_transport transport;
	unsigned subscribers, depth;
	size_t payload;
	uint64_t events;
	int sub_spin_us; // the subscribers' gr_api_client_opts.spin_us (publisher: adaptive)
	bool json;
};

// What a subscriber sends its parent over a pipe once done: counts, then latency samples (ns).
struct sub_report {
	uint64_t received, lost, last_ns; // last_ns: when it took its last event
	uint64_t lat[];
};

static struct gr_api_client *bench_connect(const struct options *o, int spin_us) {
	struct gr_api_client_opts opts = {
		.transport = o->transport,
		.spin_us = spin_us,
		.version = "event_bench"};
	struct gr_api_client *c = gr_api_client_connect_opts(o->sock, &opts);
	if (c == NULL)
		fail("connect %s: %s", o->sock, strerror(errno));
	return c;
}

static void pipe_all(int fd, void *buf, size_t len, bool out) {
	if (!fd_transfer(fd, buf, len, out))
		fail(out ? "pipe write: %s" : "a subscriber died before reporting",
		     strerror(errno));
}

// A subscriber process: subscribe, say ready (a byte on its pipe), take events until every
// one arrived or was counted lost, report.
static void __attribute__((noreturn)) subscriber(const struct options *o, int fd) {
	struct gr_event_subscribe_req req = {.ev_type = GR_SHM_EVENT_TEST};
	struct sub_report *r = calloc(1, sizeof(*r) + o->events * sizeof(r->lat[0]));
	struct gr_api_client *c;
	struct gr_api_event *ev;
	log_prefix = "event_bench subscriber";
	c = bench_connect(o, o->sub_spin_us);
	if (r == NULL)
		fail("no memory for %" PRIu64 " samples", o->events);
	if (gr_api_client_send_recv_len(c, GR_EVENT_SUBSCRIBE, sizeof(req), &req, NULL) < 0)
		fail("subscribe: %s", strerror(errno));
	pipe_all(fd, &(char){1}, 1, true);
	while (r->received + r->lost < o->events) {
		if (gr_api_client_event_recv(c, &ev) < 0)
			fail("event_recv: %s", strerror(errno));
		uint64_t now = now_ns(), head = 0; // LOST: the count; TEST: the publish time
		if (ev->payload_len >= sizeof(head))
			memcpy(&head, ev + 1, sizeof(head));
		if (ev->ev_type == GR_SHM_EVENT_LOST) {
			r->lost += head;
		} else if (ev->ev_type == GR_SHM_EVENT_TEST && ev->payload_len >= MIN_PAYLOAD) {
			r->lat[r->received++] = now - head;
			r->last_ns = now;
		}
		free(ev);
	}
	pipe_all(fd, r, sizeof(*r) + r->received * sizeof(r->lat[0]), true);
	free(r);
	gr_api_client_disconnect(c);
	_exit(EXIT_SUCCESS);
}

// Publish every event, up to depth in flight. Returns when all are answered.
static void publish(const struct options *o, struct gr_api_client *c) {
	static uint8_t payload[GR_API_MAX_MSG_LEN];
	uint32_t ids[MAX_DEPTH];
	payload_fill(payload, o->payload);
	for (uint64_t i = 0; i < o->events + o->depth; i++) {
		if (i >= o->depth && gr_api_client_recv_len(c, ids[i % o->depth], NULL) < 0)
			fail("publish %" PRIu64 ": %s", i - o->depth, strerror(errno));
		if (i >= o->events)
			continue;
		uint64_t head[2] = {now_ns(), i};
		memcpy(payload, head, sizeof(head));
		long id = gr_api_client_send(c, GR_SHM_EVENT_PUBLISH, o->payload, payload);
		if (id < 0)
			fail("publish: %s", strerror(errno));
		ids[i % o->depth] = (uint32_t)id;
	}
}

static double percentile(const uint64_t *sorted, uint64_t n, double f) {
	return n == 0 ? 0 : (double)sorted[(uint64_t)(f * (double)(n - 1))];
}

static void __attribute__((noreturn)) usage(bool error) {
	printf("usage: event_bench -s SOCK [-t shm|socket] [-n SUBSCRIBERS] [-z BYTES]\n"
	       "                   [-c EVENTS] [-d DEPTH] [--spin US] [--json]\n"
	       "  -t      transport of every client (default shm)\n"
	       "  -n      subscriber processes, 1..%d (default 1)\n"
	       "  -z      event payload, %d..%d bytes (default 64)\n"
	       "  -c      events published (default 100000)\n"
	       "  -d      publish requests in flight, 1..%d (default 16)\n"
	       "  --spin  microseconds a subscriber's receive spins before it sleeps,\n"
	       "          0..%d; 0 sleeps at once (default: the library's adaptive\n"
	       "          spin; the publisher always uses it)\n",
	       MAX_SUBSCRIBERS,
	       MIN_PAYLOAD,
	       GR_API_MAX_MSG_LEN,
	       MAX_DEPTH,
	       MAX_SPIN_US);
	exit(error ? 2 : EXIT_SUCCESS);
}

static void parse_transport(const struct option_def *d, const char *arg) {
	enum gr_api_transport *t = d->field;
	if (strcmp(arg, "shm") == 0)
		*t = GR_API_TRANSPORT_SHM;
	else if (strcmp(arg, "socket") == 0)
		*t = GR_API_TRANSPORT_SOCKET;
	else
		fail("-t: shm or socket, not '%s'", arg);
}

static void parse(int argc, char **argv, struct options *o) {
	const struct option_def defs[] = {
		{"-s", OPT_STRING, FIELD(&o->sock)},
		{"-t", OPT_CALL, FIELD(&o->transport), .parse = parse_transport},
		{"-n", OPT_NUMBER, FIELD(&o->subscribers), 1, MAX_SUBSCRIBERS},
		{"-z", OPT_NUMBER, FIELD(&o->payload), MIN_PAYLOAD, GR_API_MAX_MSG_LEN},
		{"-c", OPT_NUMBER, FIELD(&o->events), 1, MAX_EVENTS},
		{"-d", OPT_NUMBER, FIELD(&o->depth), 1, MAX_DEPTH},
		{"--spin", OPT_NUMBER, FIELD(&o->sub_spin_us), 0, MAX_SPIN_US},
		{"--json", OPT_TRUE, FIELD(&o->json)},
		{"-h", OPT_HELP, .field = NULL},
	};
	*o = (struct options){.transport = GR_API_TRANSPORT_SHM, .subscribers = 1, .depth = 16};
	o->payload = 64, o->events = 100000, o->sub_spin_us = GR_API_CLIENT_SPIN_ADAPTIVE;
	options_parse(argc, argv, defs, sizeof(defs) / sizeof(defs[0]), usage);
	if (o->sock == NULL)
		fail("-s SOCK is required");
}

int main(int argc, char **argv) {
	pid_t pids[MAX_SUBSCRIBERS];
	int report[MAX_SUBSCRIBERS], rp[2];
	struct options o;
	parse(argc, argv, &o);
	for (unsigned i = 0; i < o.subscribers; i++) {
		check(pipe(rp), "pipe");
		if ((pids[i] = fork_peer()) == 0)
			subscriber(&o, rp[1]);
		close(rp[1]);
		report[i] = rp[0];
		pipe_all(report[i], &(char){0}, 1, false); // its ready byte: subscribed
	}
	struct gr_api_client *pub = bench_connect(&o, GR_API_CLIENT_SPIN_ADAPTIVE);
	uint64_t start = now_ns(), end = start, n = 0, lost = 0;
	publish(&o, pub);
	uint64_t *all = calloc(o.events * o.subscribers, sizeof(*all));
	if (all == NULL)
		fail("no memory");
	for (unsigned i = 0; i < o.subscribers; i++) {
		struct sub_report r;
		pipe_all(report[i], &r, sizeof(r), false);
		pipe_all(report[i], all + n, r.received * sizeof(*all), false);
		n += r.received;
		lost += r.lost;
		end = r.last_ns > end ? r.last_ns : end;
		waitpid(pids[i], NULL, 0);
	}
	gr_api_client_disconnect(pub);
	qsort(all, n, sizeof(*all), compare_u64);
	// Latencies in ns as doubles: exact below 2^53 ns (104 days).
	double rate = (double)n / ((double)(end - start) / 1e9), p50 = percentile(all, n, 0.5);
	double p99 = percentile(all, n, 0.99), max = percentile(all, n, 1.0);
	const char *t = o.transport == GR_API_TRANSPORT_SHM ? "shm" : "socket";
	if (o.json) {
		printf("{\"transport\": \"%s\", \"subscribers\": %u", t, o.subscribers);
		printf(", \"payload\": %zu, \"depth\": %u", o.payload, o.depth);
		printf(", \"sub_spin_us\": %d, \"published\": %" PRIu64, o.sub_spin_us, o.events);
		printf(", \"delivered\": %" PRIu64 ", \"lost\": %" PRIu64, n, lost);
		printf(", \"events_per_s\": %.0f, \"p50_ns\": %.0f", rate, p50);
		printf(", \"p99_ns\": %.0f, \"max_ns\": %.0f}\n", p99, max);
	} else {
		printf("%-6s %2u subscribers %6zu B", t, o.subscribers, o.payload);
		printf(" depth %3u spin ", o.depth);
		printf(o.sub_spin_us < 0 ? "adaptive" : "%d us", o.sub_spin_us);
		printf(": %" PRIu64 " delivered, %" PRIu64 " lost, %.0f events/s", n, lost, rate);
		printf(", latency p50 %.1f us p99 %.1f us", p50 / 1e3, p99 / 1e3);
		printf(" max %.1f us\n", max / 1e3);
	}
	free(all);
	return EXIT_SUCCESS;
}
