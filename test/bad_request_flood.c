// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A client that floods the daemon with requests, DEPTH in flight, every
// answer checked: "bad" ones (GR_PING2 with a 10-byte payload, each
// answered EMSGSIZE) or, to compare with, "good" ones (GR_PING2 with its
// 64 bytes, each echoed). COUNT requests, or with COUNT 0 until SIGTERM.
// Prints "ready" once connected, then at the end one line of key=value:
// its pid, the requests answered and the time they took.
// test/bad_request_log_bounded.sh runs it.
//
// usage: bad_request_flood SOCK socket|shm bad|good COUNT

#include "check.h"
#include "transport_arg.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Requests in flight: enough to keep the daemon busy with this client.
#define FLOOD_DEPTH 32
// Payload of a bad request: shorter than GR_PING2's 64 bytes.
#define SHORT_PAYLOAD_LEN 10

static volatile sig_atomic_t stop;

static void on_term(int sig) {
	(void)sig;
	stop = 1;
}

// Wait for the answer to id: EMSGSIZE for a bad request, the echo of tx for
// a good one.
static void check_answer(struct gr_api_client *c, long id, bool bad, const struct gr_ping2 *tx) {
	struct gr_ping2 rx;

	long len = gr_api_client_recv_into(c, (uint32_t)id, &rx, sizeof(rx));
	if (bad) {
		CHECK(len < 0 && errno == EMSGSIZE,
		      "request %ld: %ld (%s), expected EMSGSIZE",
		      id,
		      len,
		      len < 0 ? strerror(errno) : "served");
	} else {
		CHECK(len == (long)sizeof(rx), "request %ld: %ld: %s", id, len, strerror(errno));
		CHECK(memcmp(&rx, tx, sizeof(rx)) == 0, "request %ld: echo differs", id);
	}
}

int main(int argc, char **argv) {
	struct gr_api_client_opts opts = {.spin_us = -1, .version = "bad_request_flood"};
	struct sigaction sa = {.sa_handler = on_term};
	long ids[FLOOD_DEPTH];
	struct gr_ping2 tx;
	uint64_t sent = 0, answered = 0;

	CHECK(argc == 5, "usage: %s SOCK socket|shm bad|good COUNT", argv[0]);
	opts.transport = transport_arg(argv[2]);
	CHECK(strcmp(argv[3], "bad") == 0 || strcmp(argv[3], "good") == 0,
	      "'%s' is not bad or good",
	      argv[3]);
	bool bad = strcmp(argv[3], "bad") == 0;
	char *end;
	uint64_t count = strtoull(argv[4], &end, 10);
	CHECK(*end == '\0' && end != argv[4], "COUNT '%s' is not a number", argv[4]);
	CHECK(sigaction(SIGTERM, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
	// A bounded run ends well before the caller's bound; an endless one is
	// stopped by SIGTERM.
	if (count > 0)
		watchdog_start(TEST_WATCHDOG_S);

	struct gr_api_client *c = gr_api_client_connect_opts(argv[1], &opts);
	CHECK(c != NULL, "connect %s (%s): %s", argv[1], argv[2], strerror(errno));
	printf("ready\n");
	fflush(stdout);
	memset(&tx, 0x5a, sizeof(tx));
	size_t len = bad ? SHORT_PAYLOAD_LEN : sizeof(tx);

	uint64_t start = monotonic_ns();
	while (!stop && (count == 0 || answered < count)) {
		// Keep FLOOD_DEPTH in flight; the oldest is answered first.
		while (sent - answered < FLOOD_DEPTH && (count == 0 || sent < count)) {
			long id = gr_api_client_send_more(c, GR_PING2, len, &tx);
			CHECK(id > 0, "send: %s", strerror(errno));
			ids[sent % FLOOD_DEPTH] = id;
			sent++;
		}
		check_answer(c, ids[answered % FLOOD_DEPTH], bad, &tx);
		answered++;
	}
	while (answered < sent) {
		check_answer(c, ids[answered % FLOOD_DEPTH], bad, &tx);
		answered++;
	}
	uint64_t elapsed = monotonic_ns() - start;
	printf("pid=%d transport=%s kind=%s answered=%" PRIu64 " elapsed_ms=%" PRIu64 "\n",
	       (int)getpid(),
	       argv[2],
	       argv[3],
	       answered,
	       elapsed / 1000000);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
