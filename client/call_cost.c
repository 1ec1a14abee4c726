// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// client_call_cost: busy GR_PING2 calls of the client library against the
// fake daemon of its unit tests, in one thread, for counting the client's
// instructions per call with callgrind (docs/benchmark-method.md): the same
// instructions on every run. Not a test: it checks every echo, but it
// times nothing and asserts no count.
//
//   client_call_cost MODE N
//
// MODE:
//   spin        gr_api_client_send_recv_into() (as gr_api_client_ping2()),
//               the answer published while the receive spins: a busy
//               round trip, where the receive's first look comes before
//               the answer
//   spin_grout  the same with Grout's gr_api_client_send_recv() (a
//               malloc'ed copy)
//   into        gr_api_client_send(), the fake daemon answers, then
//               gr_api_client_recv_into(): the answer is in the ring at
//               the receive's first look (a pipeline's receives)
//   grout       the same with Grout's gr_api_client_recv()
//
// The daemon answers "while the receive spins" from a wrapper of the
// spin's poll of the ring (the link's --wrap=shmchan_client_spin): the
// first poll then finds the answer, as when a spinning daemon's answer
// lands during the client's first pause.

#include "fake_daemon.h"

#include <stdarg.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cost_daemon {
	struct fake_daemon d;
	uint8_t *req;
};

// Answer the request in cd->req (len bytes) with its echo.
static void cost_answer(void *arg, int len) {
	struct cost_daemon *cd = arg;
	struct gr_api_request req;

	FAKE_DAEMON_CHECK(len == (int)(sizeof(req) + GR_PING2_LEN));
	memcpy(&req, cd->req, sizeof(req));
	FAKE_DAEMON_CHECK(req.type == GR_PING2 && req.payload_len == GR_PING2_LEN);
	struct gr_api_response resp = {.for_id = req.id, .payload_len = GR_PING2_LEN};
	FAKE_DAEMON_CHECK(
		shmchan_server_enqueue(
			cd->d.server,
			&resp,
			sizeof(resp),
			cd->req + sizeof(req),
			GR_PING2_LEN
		) == 0
	);
}

// The daemon's turn of one call: take the request, answer, flush. Out of
// line: its instructions are the daemon's, left out of the client's count
// (callgrind's inclusive cost of the call, less this function's).
static __attribute__((noinline)) void cost_serve_one(struct cost_daemon *cd) {
	int n = shmchan_server_recv(cd->d.server, cd->req, SHMCHAN_MSG_MAX);
	cost_answer(cd, n);
	shmchan_server_flush(cd->d.server);
}

// The fake daemon of the run, and whether a request waits for its answer
// (set by the spin modes before each call), for the wrapper below.
static struct cost_daemon *cost_daemon;
static bool cost_pending;

unsigned __real_shmchan_client_spin(const struct shmchan_client *, unsigned polls);

// The spin of a receive: the daemon answers the request sent, then the
// spin polls as it does.
unsigned __wrap_shmchan_client_spin(const struct shmchan_client *c, unsigned polls) {
	if (cost_pending) {
		cost_pending = false;
		cost_serve_one(cost_daemon);
	}
	return __real_shmchan_client_spin(c, polls);
}

static void fill(struct gr_ping2 *p, unsigned i) {
	memset(p->payload, (int)(i & 0x7f), sizeof(p->payload));
	memcpy(p->payload, &i, sizeof(i));
}

static void run(struct cost_daemon *cd, const char *mode, unsigned n) {
	struct gr_api_client *c = cd->d.client;
	struct gr_ping2 req, echo;

	for (unsigned i = 0; i < n; i++) {
		fill(&req, i);
		cost_pending = strncmp(mode, "spin", 4) == 0;
		if (strcmp(mode, "spin") == 0) {
			long len = gr_api_client_send_recv_into(
				c,
				GR_PING2,
				sizeof(req),
				&req,
				&echo,
				sizeof(echo)
			);
			assert_int_equal(len, sizeof(echo));
			assert_memory_equal(&req, &echo, sizeof(echo));
			assert_false(cost_pending);
			continue;
		}
		if (strcmp(mode, "spin_grout") == 0) {
			void *rx = NULL;
			assert_int_equal(
				gr_api_client_send_recv(c, GR_PING2, sizeof(req), &req, &rx),
				0
			);
			assert_memory_equal(&req, rx, sizeof(req));
			free(rx);
			assert_false(cost_pending);
			continue;
		}
		long id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
		assert_true(id > 0);
		cost_serve_one(cd);
		if (strcmp(mode, "into") == 0) {
			long len = gr_api_client_recv_into(c, (uint32_t)id, &echo, sizeof(echo));
			assert_int_equal(len, sizeof(echo));
			assert_memory_equal(&req, &echo, sizeof(echo));
		} else {
			void *rx = NULL;
			assert_int_equal(gr_api_client_recv(c, GR_PING2, (uint32_t)id, &rx), 0);
			assert_memory_equal(&req, rx, sizeof(req));
			free(rx);
		}
	}
}

int main(int argc, char **argv) {
	static const char *const modes[] = {"spin", "spin_grout", "into", "grout"};
	struct cost_daemon cd;
	bool known = false;

	if (argc == 3)
		for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
			known = known || strcmp(argv[1], modes[m]) == 0;
	if (!known) {
		fprintf(stderr, "usage: %s spin|spin_grout|into|grout N\n", argv[0]);
		return 2;
	}
	unsigned n = (unsigned)strtoul(argv[2], NULL, 10);
	cd.req = malloc(SHMCHAN_MSG_MAX);
	assert_true(cd.req != NULL);
	cost_daemon = &cd;
	// The default spin budget (adaptive), as a program's handle has.
	fake_daemon_init(&cd.d, GR_API_CLIENT_SPIN_ADAPTIVE);
	fake_daemon_attach(&cd.d);
	// A busy daemon's poller is awake: the client's flushes ring nothing.
	shmchan_server_doorbell_disarm(cd.d.server);
	run(&cd, argv[1], n);
	fake_daemon_fini(&cd.d);
	free(cd.req);
	printf("%s: %u calls\n", argv[1], n);
	return 0;
}
