// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A channel's turn is bounded by the work its requests cause, not by the
// requests it takes, and a poller gives every other channel with work a
// turn, parked ones included, before the busy one's next. Against
// test/embed_stream_app.c (one poller), whose handlers append each request's
// tag to an order of service that EMBED_STREAM_ORDER reads back.
//
// Each case: a busy channel pipelines EMBED_STREAM_HOLD then many requests
// of one kind; the hold keeps the poller inside the busy channel's turn
// while another channel, idle until then, sends one request; once released,
// the busy turn ends on its bound (server/channel.h), and the other channel
// must be served next. Counted: how many of the busy requests one turn
// serves (the hold produces one response):
//   streams of 10 responses   3 (11 responses each, 32 a turn)
//   responses of 48 KiB       2 (64 KiB a turn)
//   single responses          31
// A turn of 32 requests served all of them first. Then the same with 20
// parked channels beside the idle one: a turn cut by its bound makes the
// poller look at every parked one (it looked at 2 per pass, round robin).
// The order is read on a socket connection, which leaves the channels
// idle.
//
// usage: chan_turn_order SOCK (under test/with_daemon.sh, with
// embed_stream_app as the daemon)

#include "check.h"
#include "embed_stream.h"
#include "transport_arg.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Busy requests after the hold: more than one turn serves of any kind.
#define BUSY_REQUESTS 40
// Passes of the busy poller before the hold, each serving one request of
// the busy channel (WARMUP_RESPONSES of them end a turn): past
// CHANNEL_PARK_PASSES (64), the idle channels are parked.
#define PARK_WARMUP 80
#define WARMUP_RESPONSES 40
// Parked channels beside the idle one in the second round.
#define PARKED 20
#define HOLD_WAIT_MS 10000
#define POLL_US 1000

static char dir[PATH_MAX];

static void path_of(char *buf, size_t len, const char *file) {
	snprintf(buf, len, "%s/%s", dir, file);
}

static long tagged_more(struct gr_api_client *c, char tag, uint32_t responses, uint32_t len) {
	struct embed_stream_tagged_req req = {
		.tag = (uint8_t)tag,
		.responses = responses,
		.len = len};
	long id = gr_api_client_send_more(c, EMBED_STREAM_TAGGED, sizeof(req), &req);

	CHECK(id > 0, "send EMBED_STREAM_TAGGED: %s", strerror(errno));
	return id;
}

// Take the whole stream of request id: returns its data responses.
static unsigned stream_take(struct gr_api_client *c, long id) {
	unsigned n = 0;
	void *rx;
	size_t len;
	int ret;

	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, &rx, &len)) > 0) {
		free(rx);
		n++;
	}
	CHECK(ret == 0, "stream %ld: %s", id, strerror(errno));
	return n;
}

// The tags served since the last call, NUL-terminated, into order.
static void order_take(struct gr_api_client *c, char *order, size_t cap) {
	void *rx = NULL;
	long len = gr_api_client_send_recv_len(c, EMBED_STREAM_ORDER, 0, NULL, &rx);

	CHECK(len >= 0 && (size_t)len < cap, "EMBED_STREAM_ORDER: %ld: %s", len, strerror(errno));
	// None served: an empty payload, which comes as no buffer.
	if (len > 0)
		memcpy(order, rx, (size_t)len);
	order[len] = '\0';
	free(rx);
}

// One case: busy pipelines warmup requests that stream 40 responses each
// (one per turn: the idle channels are parked after CHANNEL_PARK_PASSES of
// them), a hold, then BUSY_REQUESTS of one kind (responses of len bytes
// each, tag 'a'); other sends one request while the poller is held. Returns
// how many busy requests came between the hold and other's.
static unsigned served_before_other(
	struct gr_api_client *ctl,
	struct gr_api_client *busy,
	struct gr_api_client *other,
	unsigned warmup,
	uint32_t responses,
	uint32_t len
) {
	struct embed_stream_hold_req hold = {.tag = 'h'};
	char held[PATH_MAX + 32], release[PATH_MAX + 32], order[EMBED_STREAM_ORDER_MAX + 1];
	long warm_ids[PARK_WARMUP], ids[BUSY_REQUESTS], hold_id, other_id;
	const char *h, *b;

	CHECK(warmup <= PARK_WARMUP, "warm-up of %u", warmup);
	order_take(ctl, order, sizeof(order));
	path_of(held, sizeof(held), EMBED_STREAM_HELD_FILE);
	path_of(release, sizeof(release), EMBED_STREAM_RELEASE_FILE);
	for (unsigned i = 0; i < warmup; i++)
		warm_ids[i] = tagged_more(busy, 'w', WARMUP_RESPONSES, 8);
	hold_id = gr_api_client_send_more(busy, EMBED_STREAM_HOLD, sizeof(hold), &hold);
	CHECK(hold_id > 0, "send EMBED_STREAM_HOLD: %s", strerror(errno));
	for (unsigned i = 0; i < BUSY_REQUESTS; i++)
		ids[i] = tagged_more(busy, 'a', responses, len);
	CHECK(gr_api_client_flush(busy) == 0, "flush: %s", strerror(errno));
	// The poller is in the busy channel's turn, its requests all in the
	// ring, when the other one's request comes.
	for (unsigned i = 0; access(held, F_OK) < 0; i++) {
		CHECK(i < HOLD_WAIT_MS * 1000 / POLL_US, "the hold never began");
		usleep(POLL_US);
	}
	other_id = tagged_more(other, 'b', 0, 0);
	CHECK(gr_api_client_flush(other) == 0, "flush: %s", strerror(errno));
	int fd = open(release, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0, "create %s: %s", release, strerror(errno));
	close(fd);

	for (unsigned i = 0; i < warmup; i++)
		CHECK(stream_take(busy, warm_ids[i]) == WARMUP_RESPONSES, "warm-up request %u", i);
	CHECK(gr_api_client_recv(busy, EMBED_STREAM_HOLD, (uint32_t)hold_id, NULL) == 0,
	      "EMBED_STREAM_HOLD: %s",
	      strerror(errno));
	for (unsigned i = 0; i < BUSY_REQUESTS; i++)
		CHECK(stream_take(busy, ids[i]) == responses,
		      "busy request %u: not %u responses",
		      i,
		      responses);
	CHECK(stream_take(other, other_id) == 0, "the other request streamed");
	order_take(ctl, order, sizeof(order));
	h = strchr(order, 'h');
	b = strchr(order, 'b');
	CHECK(h == order + warmup && b != NULL && b > h &&
		      strlen(order) == warmup + 2 + BUSY_REQUESTS,
	      "order of service '%s'",
	      order);
	return (unsigned)(b - h - 1);
}

static struct gr_api_client *shm_connect(const char *sock) {
	return connect_forced(sock, "shm", "chan_turn_order");
}

static void expect(unsigned got, unsigned want, const char *what) {
	CHECK(got == want,
	      "%s: %u busy requests served before the other channel's, expected %u",
	      what,
	      got,
	      want);
	printf("%-46s %u busy requests, then the other channel\n", what, got);
}

int main(int argc, char **argv) {
	struct gr_api_client *parked[PARKED];
	char sock_copy[PATH_MAX];

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	CHECK(strlen(argv[1]) < sizeof(sock_copy), "socket path too long");
	snprintf(sock_copy, sizeof(sock_copy), "%s", argv[1]);
	snprintf(dir, sizeof(dir), "%s", dirname(sock_copy));

	struct gr_api_client *ctl = connect_forced(argv[1], "socket", "chan_turn_order");
	struct gr_api_client *busy = shm_connect(argv[1]);
	struct gr_api_client *other = shm_connect(argv[1]);

	expect(served_before_other(ctl, busy, other, 0, 10, 8), 3, "streams of 10 responses:");
	expect(served_before_other(ctl, busy, other, 0, 1, 48 << 10), 2, "responses of 48 KiB:");
	expect(served_before_other(ctl, busy, other, 0, 0, 0), 31, "single responses:");

	for (unsigned i = 0; i < PARKED; i++)
		parked[i] = shm_connect(argv[1]);
	expect(served_before_other(ctl, busy, other, PARK_WARMUP, 10, 8),
	       3,
	       "streams of 10 responses, beside 20 parked:");
	for (unsigned i = 0; i < PARKED; i++)
		CHECK(gr_api_client_disconnect(parked[i]) == 0, "disconnect: %s", strerror(errno));
	CHECK(gr_api_client_disconnect(other) == 0, "disconnect: %s", strerror(errno));
	CHECK(gr_api_client_disconnect(busy) == 0, "disconnect: %s", strerror(errno));
	CHECK(gr_api_client_disconnect(ctl) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
