// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A client that goes in the middle of a stream produced in turns
// (gr_api_stream_start(), test/embed_stream_app.c) has its producer's state
// released, once, and the server serves on: one client reads a few
// responses of a long stream and disconnects, another disconnects before
// reading any, a third stays connected and stops reading (the server
// closes or detaches it past its slow-reader limit: 5 s on the socket, 2 s
// on a channel). The application's counts show every state released (the
// server frees a channel after a grace period: polled, never timed). Under
// the sanitizers, a state left unreleased is also a leak at the
// application's exit.
//
// usage: stream_release SOCK socket|shm (under test/with_daemon.sh)

#include "check.h"
#include "embed_stream.h"
#include "embed_stream_client.h"
#include "transport_arg.h"

#include <gr_api_client.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// A stream far longer than either transport holds: it is never done when
// its client goes.
#define STREAM_RESPONSES 20000u
#define STREAM_LEN 1000u
// Responses the first client reads before it goes.
#define READ_BEFORE_GOING 10
// Streams abandoned: two by clients that go, one by a client that stops
// reading.
#define ABANDONED 3
// How long the release may take to show, at most, and how often to look:
// a grace period, on a busy host; below with_daemon.sh's bound of a test.
#define RELEASE_WAIT_S 15
#define RELEASE_POLL_US 10000

// Start a long stream on a new client of sock, read reads responses of it,
// and return the client.
static struct gr_api_client *stream_begin(const char *sock, const char *transport, int reads) {
	struct gr_api_client *c = connect_forced(sock, transport, "stream_release");

	embed_stream_lazy_begin(c, STREAM_RESPONSES, STREAM_LEN, reads);
	return c;
}

// The same, and go.
static void stream_abandon(const char *sock, const char *transport, int reads) {
	struct gr_api_client *c = stream_begin(sock, transport, reads);

	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
}

int main(int argc, char **argv) {
	struct embed_stream_lazy_stats_resp before, now;
	struct gr_api_client *watcher, *stalled;
	unsigned polls = 0;

	CHECK(argc == 3, "usage: stream_release SOCK socket|shm");
	watcher = connect_forced(argv[1], argv[2], "stream_release watcher");
	before = embed_stream_stats_get(watcher);
	stream_abandon(argv[1], argv[2], READ_BEFORE_GOING);
	stream_abandon(argv[1], argv[2], 0);
	stalled = stream_begin(argv[1], argv[2], READ_BEFORE_GOING);
	do {
		now = embed_stream_stats_get(watcher);
		if (now.released == before.released + ABANDONED)
			break;
		usleep(RELEASE_POLL_US);
	} while (++polls < RELEASE_WAIT_S * (1000000 / RELEASE_POLL_US));
	CHECK(now.started == before.started + ABANDONED,
	      "%u streams started, expected %d",
	      now.started - before.started,
	      ABANDONED);
	CHECK(now.released == before.released + ABANDONED,
	      "%s: %u of %d abandoned streams released after %d s",
	      argv[2],
	      now.released - before.released,
	      ABANDONED,
	      RELEASE_WAIT_S);
	CHECK(now.produced - before.produced < ABANDONED * STREAM_RESPONSES,
	      "the abandoned streams were produced whole");
	printf("%s: %d streams abandoned mid-way, one by a client that stopped reading (%llu of %u"
	       " responses made), every state released\n",
	       argv[2],
	       ABANDONED,
	       (unsigned long long)(now.produced - before.produced),
	       ABANDONED * STREAM_RESPONSES);
	gr_api_client_disconnect(stalled);
	// The server serves on.
	CHECK(gr_api_client_ping(watcher) == 0, "ping: %s", strerror(errno));
	CHECK(gr_api_client_disconnect(watcher) == 0, "disconnect: %s", strerror(errno));
	return 0;
}
