// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Event types a client chooses cannot slow the subscription table down, and
// dropping many subscriptions never stalls a publisher. CONNS connections
// each subscribe to SUBS event types (the daemon runs with
// --event-subscriptions SUBS), pipelined, in two runs: types spread over a
// hash table, then types that a multiplicative hash of 256 buckets (the
// table's old design) sends to the bucket of GR_SHM_EVENT_TEST. The time the
// last connection's subscriptions take (the best of a few times, after
// unsubscribing) is compared between the runs: the
// ratio, not a time, must hold, so a loaded machine slows both alike (with
// chained buckets the colliding run is several times slower). After each
// run the connections close at once while a publisher publishes
// GR_SHM_EVENT_TEST in a loop, and its longest round trip is printed beside
// its longest with nothing else going on (docs/reliability.md), failing only
// as a stall (2 s). Both runs are made with a publisher on the socket, then
// again with one on a channel; the best times count.
//
// usage: event_subscription_chains SOCK (under test/with_daemon.sh,
//        --event-subscriptions 4096)

#include "check.h"
#include "event_util.h"
#include "raw_sock.h"

#include <gr_api.h>
#include <gr_shm.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONNS 8
#define SUBS 4096
// Times the last connection subscribes, the best one counting.
#define REPEATS 3
// The old table: 256 buckets chosen by the top 8 bits of ev_type * HASH_MUL.
#define HASH_MUL 2654435761u
#define HASH_BUCKET_SHIFT 24
// Colliding time over spread time, at most: about 1 for a tree, about 10 for
// chained buckets.
#define RATIO_MAX 3.0
// A publish round trip this long is a stall, whatever the load.
#define STALL_MS 2000
// How long the daemon may take to drop every subscription of the closed
// connections, and how long the publishers go on after that: the removal
// from the table comes after (milliseconds).
#define DROP_WAIT_MS 10000
#define DRAIN_MS 300
#define NSEC_PER_MSEC 1000000ull

static const char *sock_path;

// The inverse of HASH_MUL modulo 2^32 (Newton's iteration: each step doubles
// the bits that are right).
static uint32_t mul_inverse(uint32_t a) {
	uint32_t x = a;

	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

// Event type i (from 1) of run colliding or spread.
static uint32_t ev_type_of(bool colliding, uint32_t i) {
	static uint32_t bucket, inverse;

	if (!colliding)
		return GR_MSG_TYPE(0x7200 + i / 0x10000, i % 0x10000);
	if (inverse == 0) {
		inverse = mul_inverse(HASH_MUL);
		bucket = (GR_SHM_EVENT_TEST * HASH_MUL) >> HASH_BUCKET_SHIFT;
	}
	// Every product with the top bits of bucket: x * inverse * HASH_MUL = x.
	return ((bucket << HASH_BUCKET_SHIFT) | i) * inverse;
}

// Subscribe fd to SUBS types from first, pipelined: every request sent, then
// every response read. Returns the nanoseconds it took.
static uint64_t subscribe_all(int fd, bool colliding, uint32_t first) {
	size_t msg = sizeof(struct gr_api_request) + WIRE_SUBSCRIBE_LEN;
	uint8_t *buf = calloc(SUBS, msg);
	struct gr_api_response resp;

	CHECK(buf != NULL, "malloc");
	for (uint32_t i = 0; i < SUBS; i++) {
		struct gr_api_request hdr = {
			.id = i + 10,
			.type = GR_SHM_EVENT_SUBSCRIBE,
			.payload_len = WIRE_SUBSCRIBE_LEN,
		};
		uint32_t type = ev_type_of(colliding, first + i);
		memcpy(buf + i * msg, &hdr, sizeof(hdr));
		memcpy(buf + i * msg + sizeof(hdr) + 4, &type, sizeof(type));
	}
	uint64_t start = monotonic_ns();
	CHECK(raw_send_bytes(fd, buf, SUBS * msg) == 0, "subscribe: connection closed");
	for (uint32_t i = 0; i < SUBS; i++) {
		CHECK(raw_recv_response(fd, &resp, NULL, 0) == 1, "subscribe %u: no response", i);
		CHECK(resp.for_id == i + 10 && resp.status == 0,
		      "subscribe %u: status %u",
		      i,
		      resp.status);
	}
	uint64_t took = monotonic_ns() - start;
	free(buf);
	return took;
}

struct publisher {
	enum gr_api_transport transport;
	atomic_bool stop;
	uint64_t max_ns; // the longest round trip
	pthread_t thread;
};

static const char *transport_name(enum gr_api_transport t) {
	return t == GR_API_TRANSPORT_SHM ? "shm" : "socket";
}

static void *publisher_run(void *arg) {
	struct publisher *p = arg;
	struct gr_api_client *c = event_client(sock_path, p->transport);

	while (!atomic_load(&p->stop)) {
		uint64_t start = monotonic_ns();
		event_publish(c, "p", 1);
		uint64_t took = monotonic_ns() - start;
		CHECK(took < STALL_MS * NSEC_PER_MSEC,
		      "a publish took %.1f ms",
		      (double)took / NSEC_PER_MSEC);
		if (took > p->max_ns)
			p->max_ns = took;
	}
	gr_api_client_disconnect(c);
	return NULL;
}

// A publisher on transport, from now until publisher_stop().
static void publisher_start(struct publisher *p, enum gr_api_transport transport) {
	*p = (struct publisher){.transport = transport};
	CHECK(pthread_create(&p->thread, NULL, publisher_run, p) == 0, "pthread_create");
}

// Stop it and print its longest round trip while what happened.
static void publisher_stop(struct publisher *p, const char *what) {
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	printf("%s: longest publish %s: %.2f ms\n",
	       transport_name(p->transport),
	       what,
	       (double)p->max_ns / NSEC_PER_MSEC);
}

// One run: CONNS connections subscribe, then close at once while a
// publisher on transport publishes. Returns how long the last connection's
// subscriptions took.
static uint64_t run(bool colliding, enum gr_api_transport transport, struct gr_api_client *mon) {
	const char *name = colliding ? "colliding" : "spread";
	struct publisher pub;
	char what[128];
	int fds[CONNS];
	uint64_t took = 0;

	for (unsigned c = 0; c < CONNS; c++) {
		fds[c] = raw_connect(sock_path);
		raw_hello(fds[c], 1);
		took = subscribe_all(fds[c], colliding, 1 + c * SUBS);
	}
	// The last connection again, the best of REPEATS: one time is a few
	// milliseconds, which a descheduled thread can double.
	for (unsigned r = 1; r < REPEATS; r++) {
		CHECK(raw_send_request(fds[CONNS - 1], 2, WIRE_GR_EVENT_UNSUBSCRIBE, 0, NULL, 0) ==
			      0,
		      "unsubscribe");
		raw_expect_status(fds[CONNS - 1], 2, 0, "unsubscribe");
		uint64_t again = subscribe_all(fds[CONNS - 1], colliding, 1 + (CONNS - 1) * SUBS);
		took = again < took ? again : took;
	}
	printf("%s types: %d subscriptions of the %dth connection in %.1f ms\n",
	       name,
	       SUBS,
	       CONNS,
	       (double)took / NSEC_PER_MSEC);
	publisher_start(&pub, transport);
	usleep(DRAIN_MS * 1000);
	for (unsigned c = 0; c < CONNS; c++)
		close(fds[c]);
	CHECK(event_wait_subscriptions(mon, 0, DROP_WAIT_MS) == 0,
	      "subscriptions left after the close");
	// The daemon removes them from its table after they stopped counting.
	usleep(DRAIN_MS * 1000);
	snprintf(
		what,
		sizeof(what),
		"while %d x %d %s subscriptions were dropped",
		CONNS,
		SUBS,
		name
	);
	publisher_stop(&pub, what);
	return took;
}

int main(int argc, char **argv) {
	static const enum gr_api_transport transports[] = {
		GR_API_TRANSPORT_SOCKET,
		GR_API_TRANSPORT_SHM,
	};
	uint64_t spread = UINT64_MAX, colliding = UINT64_MAX;
	struct publisher pub;

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	sock_path = argv[1];
	struct gr_api_client *mon = event_client(sock_path, GR_API_TRANSPORT_SOCKET);
	// One publisher at a time: two would share the 2 cores with the
	// daemon and measure each other.
	for (unsigned t = 0; t < sizeof(transports) / sizeof(transports[0]); t++) {
		// The same measure with nothing else going on, to compare.
		publisher_start(&pub, transports[t]);
		usleep(2 * DRAIN_MS * 1000);
		publisher_stop(&pub, "with nothing else going on");
		uint64_t s = run(false, transports[t], mon);
		uint64_t c = run(true, transports[t], mon);
		spread = s < spread ? s : spread;
		colliding = c < colliding ? c : colliding;
	}
	double ratio = (double)colliding / (double)spread;
	printf("colliding / spread: %.2f (at most %.1f)\n", ratio, RATIO_MAX);
	CHECK(ratio <= RATIO_MAX,
	      "subscribing to colliding types took %.1f times as long: chosen types slow the"
	      " table",
	      ratio);
	printf("chosen event types cost no more than others: ok\n");
	gr_api_client_disconnect(mon);
	return 0;
}
