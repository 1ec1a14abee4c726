// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "ping2_load.h"
#include "check.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The payload of request number seq: seq itself, then bytes that depend on
// it, so an echo of another request (or of stale memory) never matches.
static void ping2_fill(struct gr_ping2 *p, uint64_t seq) {
	memcpy(p->payload, &seq, sizeof(seq));
	for (size_t i = sizeof(seq); i < sizeof(p->payload); i++)
		p->payload[i] = (uint8_t)(seq * 31 + i * 7);
}

struct in_flight {
	uint32_t id;
	uint64_t seq;
};

static void ping2_send(struct gr_api_client *c, struct in_flight *f, uint64_t seq) {
	struct gr_ping2 req;

	ping2_fill(&req, seq);
	long id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
	CHECK(id > 0, "send GR_PING2 #%llu: %s", (unsigned long long)seq, strerror(errno));
	f->id = (uint32_t)id;
	f->seq = seq;
}

static void ping2_check(struct gr_api_client *c, const struct in_flight *f) {
	struct gr_ping2 want, got;

	long len = gr_api_client_recv_into(c, f->id, &got, sizeof(got));
	CHECK(len == (long)sizeof(got),
	      "GR_PING2 #%llu (id %u): returned %ld: %s",
	      (unsigned long long)f->seq,
	      f->id,
	      len,
	      strerror(errno));
	ping2_fill(&want, f->seq);
	CHECK(memcmp(&got, &want, sizeof(want)) == 0,
	      "GR_PING2 #%llu (id %u): echo differs from the request",
	      (unsigned long long)f->seq,
	      f->id);
}

void ping2_load(
	struct gr_api_client *c,
	unsigned depth,
	const volatile sig_atomic_t *stop,
	_Atomic uint64_t *done
) {
	struct in_flight flight[PING2_LOAD_DEPTH_MAX];
	uint64_t seq = 0;

	CHECK(depth >= 1 && depth <= PING2_LOAD_DEPTH_MAX, "depth %u", depth);
	for (unsigned i = 0; i < depth; i++)
		ping2_send(c, &flight[i], seq++);
	// Oldest first: the slot of the request received takes the next one.
	for (unsigned i = 0; !*stop; i = (i + 1) % depth) {
		ping2_check(c, &flight[i]);
		atomic_fetch_add_explicit(done, 1, memory_order_relaxed);
		ping2_send(c, &flight[i], seq++);
	}
	for (unsigned k = 0; k < depth; k++) {
		// The slots hold seq - depth .. seq - 1; receive them in order.
		struct in_flight *f = &flight[(seq - depth + k) % depth];
		ping2_check(c, f);
		atomic_fetch_add_explicit(done, 1, memory_order_relaxed);
	}
}

// Period of the stall watch of ping2_load_until_term().
#define STALL_CHECK_MS 50

// State of ping2_load_until_term(), one load per process: term_stop is set
// by the SIGTERM handler; term_done is counted by the load and read by the
// stall watch; term_finished is set by the load's thread once the load
// returned, and ends the watch.
static volatile sig_atomic_t term_stop;
static _Atomic uint64_t term_done;
static _Atomic bool term_finished;

// The stall bound of the watch, and the name its message gives the client.
struct stall_watch_arg {
	unsigned stall_ms;
	const char *who;
};

static void on_term(int sig) {
	(void)sig;
	term_stop = 1;
}

void ping2_load_stop_on_term(void) {
	struct sigaction sa = {.sa_handler = on_term};

	CHECK(sigaction(SIGTERM, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
}

// Fail the process if no echo is checked for arg->stall_ms.
static void *stall_watch(void *arg) {
	const struct stall_watch_arg *w = arg;
	uint64_t last = 0, last_ns = monotonic_ns();

	while (!atomic_load(&term_finished)) {
		usleep(STALL_CHECK_MS * 1000);
		uint64_t now = atomic_load_explicit(&term_done, memory_order_relaxed);
		uint64_t now_ns = monotonic_ns();
		if (now != last) {
			last = now;
			last_ns = now_ns;
		} else if (now_ns - last_ns > w->stall_ms * 1000000ull) {
			fprintf(stderr,
				"%s: no echo for %u ms after %" PRIu64 ": stalled\n",
				w->who,
				w->stall_ms,
				now);
			_exit(EXIT_FAILURE);
		}
	}
	return NULL;
}

uint64_t
ping2_load_until_term(struct gr_api_client *c, unsigned depth, unsigned stall_ms, const char *who) {
	struct stall_watch_arg w = {.stall_ms = stall_ms, .who = who};
	pthread_t watch;

	CHECK(pthread_create(&watch, NULL, stall_watch, &w) == 0, "pthread_create");
	ping2_load(c, depth, &term_stop, &term_done);
	atomic_store(&term_finished, true);
	pthread_join(watch, NULL);
	return atomic_load(&term_done);
}

void ping2_load_until_killed(struct gr_api_client *c, unsigned depth, _Atomic uint64_t *done) {
	static const volatile sig_atomic_t never;

	ping2_load(c, depth, &never, done);
	CHECK(false, "the load returned");
	_exit(EXIT_FAILURE);
}
