// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A stream produced in turns (gr_api_stream_start(), test/embed_stream_app.c)
// pauses while its client reads nothing, and the server answers another
// client meanwhile: a client asks for a stream of STREAM_BYTES, far more
// than its response ring or its socket holds, and reads none of it; another
// client's requests are served; the producer has made no more than what the
// transport holds for the first client (the server's own backlog holds no
// more than a response of it). Then the first client reads the whole stream,
// in order, whose producer went on after the other client's requests
// (the order of service shows it), and the state is released at the end.
//
// usage: stream_paused SOCK socket|shm (under test/with_daemon.sh)

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

// The stream: 20 000 responses of 1000 bytes, 20 MB, against a response
// ring of 256 KiB and a socket's few hundred KiB.
#define STREAM_RESPONSES 20000u
#define STREAM_LEN 1000u
// What the producer may have made while its client read nothing: a quarter
// of the stream (5 MB), many times what either transport holds, far below
// the whole that a handler producing its stream at once makes.
#define PAUSED_MAX (STREAM_RESPONSES / 4)
// Requests of the other client while the stream waits.
#define OTHER_CALLS 50
// How long the stream's start may take to show, at most (below
// with_daemon.sh's bound of a test), and how often to look.
#define START_POLL_US 10000
#define START_POLLS 1500

// The order of service since the last call, NUL-terminated, malloc'ed.
static char *order_get(struct gr_api_client *c) {
	void *rx = NULL;
	long len = gr_api_client_send_recv_len(c, EMBED_STREAM_ORDER, 0, NULL, &rx);
	char *order;

	CHECK(len >= 0, "EMBED_STREAM_ORDER: %s", strerror(errno));
	order = calloc(1, (size_t)len + 1);
	CHECK(order != NULL, "no memory");
	// None served: an empty payload, which comes as no buffer.
	if (len > 0)
		memcpy(order, rx, (size_t)len);
	free(rx);
	return order;
}

int main(int argc, char **argv) {
	struct embed_stream_lazy_req req = {.responses = STREAM_RESPONSES, .len = STREAM_LEN};
	struct embed_stream_tagged_req tagged = {.tag = 'o'};
	struct embed_stream_lazy_stats_resp before, paused, after;
	struct gr_api_client *streamer, *other;
	uint32_t n = 0, number;
	char *order, *last_other;
	void *rx;
	size_t len;
	long id;
	int ret;

	CHECK(argc == 3, "usage: stream_paused SOCK socket|shm");
	streamer = connect_forced(argv[1], argv[2], "stream_paused streamer");
	other = connect_forced(argv[1], argv[2], "stream_paused other");
	before = embed_stream_stats_get(other);
	free(order_get(other));

	id = gr_api_client_send(streamer, EMBED_STREAM_LAZY, sizeof(req), &req);
	CHECK(id > 0, "send EMBED_STREAM_LAZY: %s", strerror(errno));
	// Started (the other client's requests go on another channel or
	// connection, which may be served first): polled, never timed.
	for (unsigned polls = 0; embed_stream_stats_get(other).started == before.started; polls++) {
		CHECK(polls < START_POLLS, "the stream did not start");
		usleep(START_POLL_US);
	}
	// Answered while the stream waits for its reader.
	for (int i = 0; i < OTHER_CALLS; i++) {
		void *resp = NULL;
		CHECK(gr_api_client_send_recv(
			      other,
			      EMBED_STREAM_TAGGED,
			      sizeof(tagged),
			      &tagged,
			      &resp
		      ) == 0,
		      "other client, call %d: %s",
		      i,
		      strerror(errno));
		free(resp);
	}
	paused = embed_stream_stats_get(other);
	CHECK(paused.started == before.started + 1, "the stream did not start");
	CHECK(paused.produced - before.produced <= PAUSED_MAX,
	      "%s: %llu of %u responses made while the client read none (at most %u): the"
	      " stream did not pause",
	      argv[2],
	      (unsigned long long)(paused.produced - before.produced),
	      STREAM_RESPONSES,
	      PAUSED_MAX);
	CHECK(paused.released == before.released, "the stream's state was released early");
	printf("%s: %llu of %u responses made while the client read none; %d requests of another"
	       " client answered meanwhile\n",
	       argv[2],
	       (unsigned long long)(paused.produced - before.produced),
	       STREAM_RESPONSES,
	       OTHER_CALLS);

	while ((ret = gr_api_client_stream_next(streamer, (uint32_t)id, &rx, &len)) > 0) {
		CHECK(len == STREAM_LEN, "response %u: %zu bytes", n, len);
		memcpy(&number, rx, sizeof(number));
		free(rx);
		CHECK(number == n, "response %u came as number %u: out of order", n, number);
		n++;
	}
	CHECK(ret == 0, "stream after %u responses: %s", n, strerror(errno));
	CHECK(n == STREAM_RESPONSES, "%u of %u responses", n, STREAM_RESPONSES);
	after = embed_stream_stats_get(other);
	CHECK(after.produced - before.produced == STREAM_RESPONSES,
	      "%llu responses produced",
	      (unsigned long long)(after.produced - before.produced));
	CHECK(after.released == before.released + 1,
	      "the stream's state was not released at its end");

	// 'L' the start, then the producer's turns ('l' a run of them) and
	// the other client's requests ('o'): the stream went on after them.
	order = order_get(other);
	last_other = strrchr(order, 'o');
	CHECK(order[0] == 'L', "order of service '%.40s...': the stream's start first", order);
	CHECK(last_other != NULL,
	      "order of service '%.40s...': no request of the other client",
	      order);
	CHECK(strchr(last_other, 'l') != NULL,
	      "order of service '%.40s...': no turn of the producer after the other client's"
	      " requests",
	      last_other - 8 > order ? last_other - 8 : order);
	printf("%s: the whole stream in order, its producer's turns on after the other client's"
	       " requests, its state released\n",
	       argv[2]);
	free(order);

	// The same connection is served on.
	CHECK(gr_api_client_ping(streamer) == 0, "ping after the stream: %s", strerror(errno));
	CHECK(gr_api_client_disconnect(streamer) == 0, "disconnect: %s", strerror(errno));
	CHECK(gr_api_client_disconnect(other) == 0, "disconnect: %s", strerror(errno));
	return 0;
}
