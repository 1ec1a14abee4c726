// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Deferred replies on one transport, against test/embed_deferred_app.c:
// - a request kept open holds nothing else back: the same client is served
//   meanwhile, and the reply, from the application's own thread, comes
//   later with its payload;
// - a client holds GR_API_SERVER_DEFERRED_PER_CLIENT requests open at most:
//   the next is answered at once (ENOSPC), and every one held is answered
//   once released, in order;
// - a stream sent before the deferral ends with the reply;
// - misuse: a second gr_api_defer() (EALREADY), gr_api_send() after it
//   (EPERM), a payload returned after it (not sent), a reply too long
//   (the client gets EMSGSIZE);
// - a client that leaves with requests open: their replies return
//   -ECONNRESET to the application, which goes on serving.
//
// usage: deferred_replies SOCK socket|shm (under test/with_daemon.sh)

#include "check.h"
#include "embed_deferred.h"
#include "transport_arg.h"

#include <gr_api_client.h>
#include <gr_api_server.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Requests a second client leaves open when it disconnects.
#define LEFT_OPEN 10
// Looks at the application's counters while its thread answers them, one
// per STATS_POLL_US: long enough for a loaded sanitized build.
#define STATS_POLLS 3000
#define STATS_POLL_US 10000

static long hold_send(struct gr_api_client *c, uint32_t value, enum embed_deferred_mode mode) {
	struct embed_deferred_hold_req req = {.value = value, .mode = mode};
	long id = gr_api_client_send(c, EMBED_DEFERRED_HOLD, sizeof(req), &req);

	CHECK(id > 0, "send EMBED_DEFERRED_HOLD: %s", strerror((int)-id));
	return id;
}

static void release(struct gr_api_client *c, uint32_t count, uint32_t reply_len) {
	struct embed_deferred_release_req req = {.count = count, .reply_len = reply_len};
	int ret = gr_api_client_send_recv(c, EMBED_DEFERRED_RELEASE, sizeof(req), &req, NULL);

	CHECK(ret == 0, "EMBED_DEFERRED_RELEASE: %s", strerror(-ret));
}

// The value of the reply to id.
static uint32_t reply_value(struct gr_api_client *c, long id) {
	void *rx = NULL;
	uint32_t value;
	int ret = gr_api_client_recv(c, EMBED_DEFERRED_HOLD, (uint32_t)id, &rx);

	CHECK(ret == 0, "reply to %ld: %s", id, strerror(-ret));
	CHECK(rx != NULL, "reply to %ld: no payload", id);
	memcpy(&value, rx, sizeof(value));
	free(rx);
	return value;
}

static struct embed_deferred_stats stats_get(struct gr_api_client *c) {
	struct embed_deferred_stats s;
	void *rx = NULL;
	int ret = gr_api_client_send_recv(c, EMBED_DEFERRED_STATS, 0, NULL, &rx);

	CHECK(ret == 0 && rx != NULL, "EMBED_DEFERRED_STATS: %s", strerror(-ret));
	memcpy(&s, rx, sizeof(s));
	free(rx);
	return s;
}

// The server's clients (socket connections) now.
static unsigned clients_count(struct gr_api_client *c) {
	long id = gr_api_client_send(c, GR_SHM_CLIENT_LIST, 0, NULL);
	unsigned n = 0;
	void *rx;
	size_t len;
	int ret;

	CHECK(id > 0, "send GR_SHM_CLIENT_LIST: %s", strerror((int)-id));
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, &rx, &len)) > 0) {
		free(rx);
		n++;
	}
	CHECK(ret == 0, "GR_SHM_CLIENT_LIST: %s", strerror(errno));
	return n;
}

static void open_one_meanwhile(struct gr_api_client *c) {
	long id = hold_send(c, 11, EMBED_DEFERRED_PLAIN);

	for (int i = 0; i < 3; i++)
		CHECK(gr_api_client_ping(c) == 0, "ping with a request open: %s", strerror(errno));
	release(c, 0, 0);
	CHECK(reply_value(c, id) == 11, "the reply carries the value held");
	printf("a request kept open held back no other; its reply came from the app's thread\n");
}

static void open_up_to_the_bound(struct gr_api_client *c) {
	static long ids[GR_API_SERVER_DEFERRED_PER_CLIENT];
	long over;
	int ret;

	for (uint32_t i = 0; i < GR_API_SERVER_DEFERRED_PER_CLIENT; i++)
		ids[i] = hold_send(c, 1000 + i, EMBED_DEFERRED_PLAIN);
	over = hold_send(c, 0, EMBED_DEFERRED_PLAIN);
	ret = gr_api_client_recv(c, EMBED_DEFERRED_HOLD, (uint32_t)over, NULL);
	CHECK(ret == -ENOSPC,
	      "request %u past the bound: %s, expected ENOSPC",
	      GR_API_SERVER_DEFERRED_PER_CLIENT + 1,
	      strerror(-ret));
	release(c, 0, 0);
	for (uint32_t i = 0; i < GR_API_SERVER_DEFERRED_PER_CLIENT; i++)
		CHECK(reply_value(c, ids[i]) == 1000 + i, "reply %u: wrong value", i);
	printf("%u requests open at most per client, the next got ENOSPC; all answered in order\n",
	       GR_API_SERVER_DEFERRED_PER_CLIENT);
}

static void stream_then_defer(struct gr_api_client *c) {
	long id = hold_send(c, 7, EMBED_DEFERRED_STREAM);
	unsigned n = 0;
	void *rx;
	size_t len;
	int ret;

	release(c, 0, 0);
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, &rx, &len)) > 0) {
		CHECK(len == sizeof(uint32_t), "stream response of %zu bytes", len);
		free(rx);
		n++;
	}
	CHECK(ret == 0, "stream end: %s", strerror(errno));
	CHECK(n == 3, "%u stream responses before the deferred end, expected 3", n);
	printf("a stream sent before the deferral ended with the reply\n");
}

static void misuse(struct gr_api_client *c) {
	long twice = hold_send(c, 1, EMBED_DEFERRED_TWICE);
	long send_after = hold_send(c, 2, EMBED_DEFERRED_SEND_AFTER);
	long returned = hold_send(c, 3, EMBED_DEFERRED_RETURN);
	long too_long;
	int ret;

	release(c, 0, 0);
	CHECK(reply_value(c, twice) == EALREADY, "a second gr_api_defer(): expected EALREADY");
	CHECK(reply_value(c, send_after) == EPERM,
	      "gr_api_send() after gr_api_defer(): expected EPERM");
	CHECK(reply_value(c, returned) == 3, "a payload returned after gr_api_defer() was sent");
	too_long = hold_send(c, 4, EMBED_DEFERRED_PLAIN);
	release(c, 0, GR_API_MAX_MSG_LEN + 1);
	ret = gr_api_client_recv(c, EMBED_DEFERRED_HOLD, (uint32_t)too_long, NULL);
	CHECK(ret == -EMSGSIZE, "a reply too long: %s, expected EMSGSIZE", strerror(-ret));
	printf("misuse refused: EALREADY, EPERM, a returned payload dropped, EMSGSIZE\n");
}

static void client_leaves(const char *sock, const char *transport, struct gr_api_client *c) {
	struct gr_api_client *leaving = connect_forced(sock, transport, "deferred_replies leaving");
	struct embed_deferred_stats before = stats_get(c), s;
	int i;

	for (i = 0; i < LEFT_OPEN; i++)
		hold_send(leaving, 100 + i, EMBED_DEFERRED_PLAIN);
	// Every request is held before it goes: the counters say so.
	for (i = 0; i < STATS_POLLS && stats_get(c).held < LEFT_OPEN; i++)
		usleep(STATS_POLL_US);
	CHECK(i < STATS_POLLS, "the leaving client's requests were never all held");
	CHECK(gr_api_client_disconnect(leaving) == 0, "disconnect: %s", strerror(errno));
	// Released once the server knows it left: its connection is gone.
	for (i = 0; i < STATS_POLLS && clients_count(c) > 1; i++)
		usleep(STATS_POLL_US);
	CHECK(i < STATS_POLLS, "the server never saw the client leave");
	release(c, 0, 0);
	for (i = 0; i < STATS_POLLS; i++) {
		s = stats_get(c);
		if (s.held == 0 && s.reset + s.replied >= before.reset + before.replied + LEFT_OPEN)
			break;
		usleep(STATS_POLL_US);
	}
	CHECK(i < STATS_POLLS, "the replies to a client gone were never all made");
	CHECK(s.reset == before.reset + LEFT_OPEN,
	      "%u replies to the client gone returned ECONNRESET, expected %d",
	      s.reset - before.reset,
	      LEFT_OPEN);
	CHECK(s.other == 0, "%u replies failed otherwise", s.other);
	CHECK(gr_api_client_ping(c) == 0, "ping after: %s", strerror(errno));
	printf("%d requests left open by a client gone: each reply returned ECONNRESET\n",
	       LEFT_OPEN);
}

int main(int argc, char **argv) {
	struct gr_api_client *c;
	struct embed_deferred_stats s;

	CHECK(argc == 3, "usage: deferred_replies SOCK socket|shm");
	c = connect_forced(argv[1], argv[2], "deferred_replies");
	open_one_meanwhile(c);
	open_up_to_the_bound(c);
	stream_then_defer(c);
	misuse(c);
	client_leaves(argv[1], argv[2], c);
	s = stats_get(c);
	CHECK(s.held == 0, "%u requests still held", s.held);
	CHECK(s.refused == 1, "%u replies refused, expected the one too long", s.refused);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return 0;
}
