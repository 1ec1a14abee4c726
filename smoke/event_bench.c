// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// event_bench: event fan-out. One publisher sends GR_SHM_EVENT_PUBLISH
// requests (up to -d in flight) and N subscriber processes receive every
// GR_SHM_EVENT_TEST event with gr_api_client_event_recv(), all on one
// transport. Each event carries the CLOCK_MONOTONIC time of its publish
// (machine-wide), so a subscriber measures publish-to-receive latency.
// Prints events delivered per second (all subscribers together), latency
// percentiles over every delivery, and the events lost to full backlogs.
//
// usage: event_bench -s SOCK [-t shm|socket] [-n SUBSCRIBERS] [-z BYTES]
//                    [-c EVENTS] [-d DEPTH] [--spin US] [--json]

#include "bench_util.h"

#include <gr_api_client.h>
#include <gr_shm.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

const char *log_prefix = "event_bench";

#define MAX_SUBSCRIBERS 64
#define MAX_DEPTH 256
#define MAX_EVENTS 10000000
// The payload starts with the publish time (and a sequence number).
#define MIN_PAYLOAD 16
// Bound of --spin: a fixed spin budget of up to one second.
#define MAX_SPIN_US 1000000

struct options {
	const char *sock;
	enum gr_api_transport transport;
	unsigned subscribers;
	size_t payload;
	uint64_t events;
	unsigned depth;
	// The subscribers' client spin budget (gr_api_client_opts.spin_us):
	// GR_API_CLIENT_SPIN_ADAPTIVE, or a fixed budget (0 sleeps at once).
	int sub_spin_us;
	bool json;
};

// What a subscriber reports to the parent over its pipe, then its latency
// samples (received of them, in ns).
struct sub_report {
	uint64_t received;
	uint64_t lost;
	uint64_t last_ns; // when it took its last event
};

// Connect with the spin budget spin_us (gr_api_client_opts.spin_us).
static struct gr_api_client *bench_connect(const struct options *o, int spin_us) {
	struct gr_api_client_opts opts = {
		.transport = o->transport,
		.spin_us = spin_us,
		.version = "event_bench",
	};
	struct gr_api_client *c = gr_api_client_connect_opts(o->sock, &opts);

	if (c == NULL)
		fail("connect %s: %s", o->sock, strerror(errno));
	return c;
}

static void write_all(int fd, const void *buf, size_t len) {
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0)
			fail("pipe write: %s", strerror(errno));
		buf = (const uint8_t *)buf + n;
		len -= (size_t)n;
	}
}

static void read_all(int fd, void *buf, size_t len) {
	while (len > 0) {
		ssize_t n = read(fd, buf, len);
		if (n <= 0)
			fail("a subscriber died before reporting");
		buf = (uint8_t *)buf + n;
		len -= (size_t)n;
	}
}

// A subscriber process: subscribe, say ready, take events until the last
// sequence number (or everything but what was lost) arrived, report.
static void subscriber(const struct options *o, int ready_fd, int report_fd) {
	struct gr_event_subscribe_req req = {.ev_type = GR_SHM_EVENT_TEST};
	struct gr_api_client *c = bench_connect(o, o->sub_spin_us);
	uint64_t *lat = calloc(o->events, sizeof(*lat));
	struct sub_report r = {0};
	struct gr_api_event *ev;
	char byte = 1;

	if (lat == NULL)
		fail("no memory for %llu samples", (unsigned long long)o->events);
	if (gr_api_client_send_recv_len(c, GR_EVENT_SUBSCRIBE, sizeof(req), &req, NULL) < 0)
		fail("subscribe: %s", strerror(errno));
	write_all(ready_fd, &byte, 1);
	while (r.received + r.lost < o->events) {
		if (gr_api_client_event_recv(c, &ev) < 0)
			fail("event_recv: %s", strerror(errno));
		uint64_t now = now_ns();
		if (ev->ev_type == GR_SHM_EVENT_LOST) {
			struct gr_shm_event_lost lost;
			memcpy(&lost, ev + 1, sizeof(lost));
			r.lost += lost.count;
		} else if (ev->ev_type == GR_SHM_EVENT_TEST && ev->payload_len >= MIN_PAYLOAD) {
			uint64_t sent;
			memcpy(&sent, ev + 1, sizeof(sent));
			lat[r.received++] = now - sent;
			r.last_ns = now;
		}
		free(ev);
	}
	write_all(report_fd, &r, sizeof(r));
	write_all(report_fd, lat, r.received * sizeof(*lat));
	free(lat);
	gr_api_client_disconnect(c);
}

// Publish every event, up to depth in flight. Returns when all are answered.
static void publish(const struct options *o, struct gr_api_client *c) {
	uint8_t *payload = calloc(1, o->payload);
	uint32_t *ids = calloc(o->depth, sizeof(*ids));

	if (payload == NULL || ids == NULL)
		fail("no memory");
	payload_fill(payload, o->payload);
	for (uint64_t i = 0; i < o->events + o->depth; i++) {
		unsigned slot = (unsigned)(i % o->depth);
		if (i >= o->depth && gr_api_client_recv_len(c, ids[slot], NULL) < 0)
			fail("publish %llu: %s", (unsigned long long)(i - o->depth), strerror(errno)
			);
		if (i >= o->events)
			continue;
		uint64_t t = now_ns();
		memcpy(payload, &t, sizeof(t));
		memcpy(payload + sizeof(t), &i, sizeof(i));
		long id = gr_api_client_send(c, GR_SHM_EVENT_PUBLISH, o->payload, payload);
		if (id < 0)
			fail("publish: %s", strerror(errno));
		ids[slot] = (uint32_t)id;
	}
	free(ids);
	free(payload);
}

static int cmp_u64(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t percentile(const uint64_t *sorted, uint64_t n, double f) {
	return n == 0 ? 0 : sorted[(uint64_t)(f * (double)(n - 1))];
}

static void usage(void) {
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
}

static void parse(int argc, char **argv, struct options *o) {
	static const struct option longs[] = {
		{"json", no_argument, NULL, 'j'},
		{"spin", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	*o = (struct options){
		.transport = GR_API_TRANSPORT_SHM,
		.subscribers = 1,
		.payload = 64,
		.events = 100000,
		.depth = 16,
		.sub_spin_us = GR_API_CLIENT_SPIN_ADAPTIVE,
	};
	while ((opt = getopt_long(argc, argv, "s:t:n:z:c:d:h", longs, NULL)) != -1) {
		switch (opt) {
		case 's':
			o->sock = optarg;
			break;
		case 't':
			if (strcmp(optarg, "shm") == 0)
				o->transport = GR_API_TRANSPORT_SHM;
			else if (strcmp(optarg, "socket") == 0)
				o->transport = GR_API_TRANSPORT_SOCKET;
			else
				fail("-t: shm or socket, not '%s'", optarg);
			break;
		case 'n':
			o->subscribers = (unsigned)parse_number("-n", optarg, 1, MAX_SUBSCRIBERS);
			break;
		case 'z':
			o->payload = parse_number("-z", optarg, MIN_PAYLOAD, GR_API_MAX_MSG_LEN);
			break;
		case 'c':
			o->events = parse_number("-c", optarg, 1, MAX_EVENTS);
			break;
		case 'd':
			o->depth = (unsigned)parse_number("-d", optarg, 1, MAX_DEPTH);
			break;
		case 'S':
			o->sub_spin_us = (int)parse_number("--spin", optarg, 0, MAX_SPIN_US);
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage();
			exit(EXIT_SUCCESS);
		default:
			usage();
			exit(2);
		}
	}
	if (o->sock == NULL)
		fail("-s SOCK is required");
}

int main(int argc, char **argv) {
	pid_t pids[MAX_SUBSCRIBERS];
	int report[MAX_SUBSCRIBERS];
	struct options o;
	int ready[2];
	char byte;

	parse(argc, argv, &o);
	if (pipe(ready) < 0)
		fail("pipe: %s", strerror(errno));
	for (unsigned i = 0; i < o.subscribers; i++) {
		int rp[2];
		if (pipe(rp) < 0)
			fail("pipe: %s", strerror(errno));
		fflush(stdout);
		pids[i] = fork();
		if (pids[i] < 0)
			fail("fork: %s", strerror(errno));
		if (pids[i] == 0) {
			// Dies with the parent, however it ends.
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			log_prefix = "event_bench subscriber";
			close(rp[0]);
			subscriber(&o, ready[1], rp[1]);
			_exit(EXIT_SUCCESS);
		}
		close(rp[1]);
		report[i] = rp[0];
	}
	for (unsigned i = 0; i < o.subscribers; i++)
		read_all(ready[0], &byte, 1);

	struct gr_api_client *pub = bench_connect(&o, GR_API_CLIENT_SPIN_ADAPTIVE);
	uint64_t start = now_ns();
	publish(&o, pub);

	uint64_t *all = calloc(o.events * o.subscribers, sizeof(*all));
	uint64_t n = 0, lost = 0, end = start;
	if (all == NULL)
		fail("no memory");
	for (unsigned i = 0; i < o.subscribers; i++) {
		struct sub_report r;
		read_all(report[i], &r, sizeof(r));
		read_all(report[i], all + n, r.received * sizeof(*all));
		n += r.received;
		lost += r.lost;
		if (r.last_ns > end)
			end = r.last_ns;
		close(report[i]);
		waitpid(pids[i], NULL, 0);
	}
	gr_api_client_disconnect(pub);
	qsort(all, n, sizeof(*all), cmp_u64);
	double s = (double)(end - start) / 1e9;
	const char *t = o.transport == GR_API_TRANSPORT_SHM ? "shm" : "socket";
	char spin[32] = "adaptive";
	if (o.sub_spin_us >= 0)
		snprintf(spin, sizeof(spin), "%d us", o.sub_spin_us);
	if (o.json)
		printf("{\"transport\": \"%s\", \"subscribers\": %u, \"payload\": %zu, "
		       "\"depth\": %u, \"sub_spin_us\": %d, \"published\": %llu, "
		       "\"delivered\": %llu, \"lost\": %llu, "
		       "\"events_per_s\": %.0f, \"p50_ns\": %llu, \"p99_ns\": %llu, "
		       "\"max_ns\": %llu}\n",
		       t,
		       o.subscribers,
		       o.payload,
		       o.depth,
		       o.sub_spin_us,
		       (unsigned long long)o.events,
		       (unsigned long long)n,
		       (unsigned long long)lost,
		       (double)n / s,
		       (unsigned long long)percentile(all, n, 0.5),
		       (unsigned long long)percentile(all, n, 0.99),
		       (unsigned long long)(n > 0 ? all[n - 1] : 0));
	else
		printf("%-6s %2u subscribers %6zu B depth %3u spin %s: %llu delivered, %llu lost,"
		       " %.0f events/s, latency p50 %.1f us p99 %.1f us max %.1f us\n",
		       t,
		       o.subscribers,
		       o.payload,
		       o.depth,
		       spin,
		       (unsigned long long)n,
		       (unsigned long long)lost,
		       (double)n / s,
		       (double)percentile(all, n, 0.5) / 1e3,
		       (double)percentile(all, n, 0.99) / 1e3,
		       (double)(n > 0 ? all[n - 1] : 0) / 1e3);
	free(all);
	return EXIT_SUCCESS;
}
