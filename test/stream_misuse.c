// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The stream API refuses its misuse with a status, on either transport
// (test/embed_stream_app.c's EMBED_STREAM_MISUSE): a start with no client,
// no producer, another client's context, twice, or from the producer; a
// deferral or a send of the handler after the start; and a producer that
// returns what no producer may ends the stream with EINVAL. The client gets
// the one response the producer sent, then that end, and is served on.
//
// usage: stream_misuse SOCK socket|shm (under test/with_daemon.sh)

#include "check.h"
#include "embed_stream.h"
#include "transport_arg.h"

#include <gr_api_client.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPECT(field, value)                                                                       \
	CHECK(m.field == (value), #field ": %d, expected %d (%s)", m.field, value, #value)

int main(int argc, char **argv) {
	struct embed_stream_misuse_resp m;
	struct gr_api_client *c;
	void *rx;
	size_t len;
	long id;
	int ret;

	CHECK(argc == 3, "usage: stream_misuse SOCK socket|shm");
	c = connect_forced(argv[1], argv[2], "stream_misuse");
	id = gr_api_client_send(c, EMBED_STREAM_MISUSE, 0, NULL);
	CHECK(id > 0, "send EMBED_STREAM_MISUSE: %s", strerror(errno));
	ret = gr_api_client_stream_next(c, (uint32_t)id, &rx, &len);
	CHECK(ret == 1, "the producer's response: %d (%s)", ret, strerror(errno));
	CHECK(len == sizeof(m), "a response of %zu bytes, expected %zu", len, sizeof(m));
	memcpy(&m, rx, sizeof(m));
	free(rx);
	EXPECT(ctx_null, -EINVAL);
	EXPECT(produce_null, -EINVAL);
	EXPECT(other_ctx, -EPERM);
	EXPECT(started, 0);
	EXPECT(twice, -EALREADY);
	EXPECT(defer_errno, EALREADY);
	EXPECT(handler_send, -EPERM);
	EXPECT(producer_start, -EALREADY);
	EXPECT(producer_defer_errno, EALREADY);
	// The handler's own payload was not sent: the end comes next, with
	// the status of the producer's wrong return.
	ret = gr_api_client_stream_next(c, (uint32_t)id, &rx, &len);
	CHECK(ret < 0 && errno == EINVAL,
	      "the stream's end: %d (%s), expected EINVAL",
	      ret,
	      ret < 0 ? strerror(errno) : "a response");
	CHECK(gr_api_client_ping(c) == 0, "ping after the misuse: %s", strerror(errno));
	printf("%s: each misuse of the stream API refused with its status, the client served on\n",
	       argv[2]);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return 0;
}
