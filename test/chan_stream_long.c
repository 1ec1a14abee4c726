// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A long stream arrives whole and in order on either transport: one request
// of test/embed_stream_app.c that streams STREAM_RESPONSES numbered
// responses, far more than a channel's response ring and the server's
// backlog limit hold (a route table's list is such a stream). Before, the
// channel's server detached its client for it ("response backlog over its
// limit") and the client got none.
//
// Then, on the channel: a client that asks for such a stream and takes
// nothing holds only its own channel back. Another client is served
// meanwhile, and the stalled one, once it reads, finds either its whole
// stream or its channel detached as slow (ECONNRESET), never a hang.
//
// usage: chan_stream_long SOCK socket|shm (under test/with_daemon.sh)

#include "check.h"
#include "embed_stream.h"
#include "transport_arg.h"

#include <gr_api_client.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Responses of the stream: 100 000 of STREAM_LEN bytes, 7.6 MB with their
// headers: past the server's 4 MiB backlog limit and its ring many times.
#define STREAM_RESPONSES 100000u
#define STREAM_LEN 64u
// Calls of the other client while the stalled one holds its stream back.
#define OTHER_CALLS 200
// The stalled client sleeps this long before it reads: longer than the
// server's slow-client limit (2 s), so that the limit may have struck.
#define STALL_S 3

// Take the whole stream of request id, checking each response's length and
// number: returns how many came, or -errno of the receive that failed.
static long stream_check(struct gr_api_client *c, long id) {
	uint32_t n = 0, number;
	void *rx;
	size_t len;
	int ret;

	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, &rx, &len)) > 0) {
		CHECK(len == STREAM_LEN, "response %u: %zu bytes, expected %u", n, len, STREAM_LEN);
		memcpy(&number, rx, sizeof(number));
		free(rx);
		CHECK(number == n, "response %u came as number %u: out of order", n, number);
		n++;
	}
	if (ret < 0)
		return -errno;
	return n;
}

static long stream_send(struct gr_api_client *c) {
	struct embed_stream_tagged_req req = {
		.tag = 's',
		.responses = STREAM_RESPONSES,
		.len = STREAM_LEN,
	};
	long id = gr_api_client_send(c, EMBED_STREAM_TAGGED, sizeof(req), &req);

	CHECK(id > 0, "send EMBED_STREAM_TAGGED: %s", strerror(errno));
	return id;
}

int main(int argc, char **argv) {
	struct gr_api_client *c, *stalled, *other;
	long n;

	CHECK(argc == 3, "usage: chan_stream_long SOCK socket|shm");
	c = connect_forced(argv[1], argv[2], "chan_stream_long");
	n = stream_check(c, stream_send(c));
	CHECK(n == STREAM_RESPONSES,
	      "%s: %ld of %u responses (%s)",
	      argv[2],
	      n,
	      STREAM_RESPONSES,
	      n < 0 ? strerror((int)-n) : "the stream ended early");
	printf("%s: %u responses of %u bytes, whole and in order\n",
	       argv[2],
	       STREAM_RESPONSES,
	       STREAM_LEN);
	// The same connection is served on.
	CHECK(gr_api_client_ping(c) == 0, "%s: ping after the stream: %s", argv[2], strerror(errno)
	);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	if (transport_arg(argv[2]) != GR_API_TRANSPORT_SHM)
		return 0;

	stalled = connect_forced(argv[1], "shm", "chan_stream_long stalled");
	other = connect_forced(argv[1], "shm", "chan_stream_long other");
	long id = stream_send(stalled);
	for (int i = 0; i < OTHER_CALLS; i++)
		CHECK(gr_api_client_ping(other) == 0,
		      "other client, call %d: %s",
		      i,
		      strerror(errno));
	sleep(STALL_S);
	for (int i = 0; i < OTHER_CALLS; i++)
		CHECK(gr_api_client_ping(other) == 0,
		      "other client after the stall, call %d: %s",
		      i,
		      strerror(errno));
	n = stream_check(stalled, id);
	CHECK(n == STREAM_RESPONSES || n == -ECONNRESET,
	      "stalled client: %ld (%s), expected its %u responses or ECONNRESET",
	      n,
	      n < 0 ? strerror((int)-n) : "responses",
	      STREAM_RESPONSES);
	printf("shm: a client that stalled on its stream held no one else back; it then found %s\n",
	       n == -ECONNRESET ? "its channel detached as slow" : "its whole stream");
	gr_api_client_disconnect(stalled);
	CHECK(gr_api_client_disconnect(other) == 0, "disconnect: %s", strerror(errno));
	return 0;
}
