// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "ping2_load.h"
#include "check.h"

#include <errno.h>
#include <string.h>

// The payload of request number seq: seq itself, then bytes that depend on
// it, so an echo of another request (or of stale memory) never matches.
static void ping2_fill(struct gr_ping2 *p, uint64_t seq) {
	memcpy(p->data, &seq, sizeof(seq));
	for (size_t i = sizeof(seq); i < sizeof(p->data); i++)
		p->data[i] = (uint8_t)(seq * 31 + i * 7);
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
