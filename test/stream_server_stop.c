// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The client of test/stream_server_stop.sh: it starts a stream produced in
// turns (EMBED_STREAM_LAZY, test/embed_stream_app.c) far longer than its
// transport holds, reads a few responses, stops reading and prints "ready";
// the script stops the server meanwhile. At SIGTERM it reads the stream on:
// what was already on its way may come, then a call must fail with
// ECONNRESET or EPIPE (the server went), never end the stream as if it were
// whole, nor wait for its timeout (ETIMEDOUT: a hang).
//
// usage: stream_server_stop SOCK socket|shm

#include "check.h"
#include "embed_stream.h"
#include "embed_stream_client.h"
#include "transport_arg.h"

#include <gr_api_client.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A stream far longer than either transport holds (20 MB against a
// response ring of 256 KiB or a socket's few hundred KiB): still open when
// the server stops.
#define STREAM_RESPONSES 20000u
#define STREAM_LEN 1000u
// Responses read before the client stops reading.
#define READ_BEFORE_STOP 10
// The client's timeout: below the script's bound on the client's exit
// (SHMT_STOP_WAIT_S, 10 s), so that a call that hangs fails with
// ETIMEDOUT and says so, rather than being killed.
#define CLIENT_TIMEOUT_MS 5000

int main(int argc, char **argv) {
	unsigned after = 0;
	sigset_t term;
	size_t len;
	void *rx;
	int ret, sig;

	CHECK(argc == 3, "usage: stream_server_stop SOCK socket|shm");
	// Taken with sigwait() only: the script's SIGTERM says the server is
	// gone.
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	CHECK(sigprocmask(SIG_BLOCK, &term, NULL) == 0, "block SIGTERM: %s", strerror(errno));

	struct gr_api_client_opts opts = GR_API_CLIENT_OPTS_INIT;
	opts.transport = transport_arg(argv[2]);
	opts.version = "stream_server_stop";
	opts.timeout_ms = CLIENT_TIMEOUT_MS;
	struct gr_api_client *c = gr_api_client_connect_opts(argv[1], &opts);
	CHECK(c != NULL, "connect %s: %s", argv[1], gr_api_client_last_error());
	CHECK(gr_api_client_transport(c) == opts.transport, "%s transport was forced", argv[2]);
	uint32_t id = embed_stream_lazy_begin(c, STREAM_RESPONSES, STREAM_LEN, READ_BEFORE_STOP);
	printf("ready\n");
	fflush(stdout);
	while (sigwait(&term, &sig) != 0)
		;

	// The server stopped: what its transport held may still come, then
	// the error.
	while ((ret = gr_api_client_stream_next(c, id, &rx, &len)) == 1) {
		free(rx);
		after++;
		CHECK(READ_BEFORE_STOP + after < STREAM_RESPONSES,
		      "the whole stream came from a stopped server");
	}
	CHECK(ret != 0, "the stream ended as if whole after %u responses", READ_BEFORE_STOP + after
	);
	CHECK(errno == ECONNRESET || errno == EPIPE,
	      "stream_next after the server stopped: %s, expected ECONNRESET or EPIPE",
	      strerror(errno));
	printf("%s: the server stopped mid-stream; %u responses on their way came, then %s\n",
	       argv[2],
	       after,
	       strerror(errno));
	gr_api_client_disconnect(c);
	return 0;
}
