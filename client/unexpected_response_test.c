// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Responses nobody asked for, from a hostile daemon (fake_daemon.c's
// floods), on the socket and on a channel:
// - responses to an id the client never sent: a protocol error, nothing
//   kept; the call fails EPROTO at once, the connection is shut down (the
//   daemon sees EOF) and every later call fails EPROTO. Before, each was
//   kept in the stash until disconnect: 353 MB over the socket for one call
//   of 1 s, 849 MB over a channel.
// - responses to an id it sent that never end (a stream nobody reads) while
//   it waits for another: kept up to CLIENT_STASH_MAX_BYTES, then ENOBUFS
//   and the same shutdown. Before, without bound.

#include "fake_daemon.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// Timeout of the calls that meet the flood of an id never sent: the
// protocol error comes at the first response, long before.
#define CALL_TIMEOUT_MS 200
// Timeout of the call that meets a stream nobody reads: long enough for
// the stash to fill up first on a busy host.
#define STASH_CALL_TIMEOUT_MS 20000
// An id the client never sent (it sends a few).
#define NEVER_SENT_ID 1000
// Payload of each flooded response.
#define FLOOD_PAYLOAD 64
#define STREAM_PAYLOAD (64 * 1024)
// What a flood sends at most: a few times the stash's bound, so that a
// client without one fails the test rather than the host.
#define FLOOD_MAX_BYTES (4ull * CLIENT_STASH_MAX_BYTES)
// The daemon's end waits this long for the EOF of the shutdown.
#define EOF_WAIT_S 5

// The daemon's end of the socket reads to EOF: the client shut it down.
static void expect_eof(struct fake_daemon *d) {
	struct timeval wait = {.tv_sec = EOF_WAIT_S};
	uint8_t buf[4096];
	ssize_t n;

	assert_int_equal(setsockopt(d->sock, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)), 0);
	do
		n = read(d->sock, buf, sizeof(buf)); // the requests, then EOF
	while (n > 0);
	assert_int_equal(n, 0);
}

// The call failed with err after a protocol error, kept nothing past its
// bound, and every later call fails with err too.
static void expect_dropped(struct fake_daemon *d, long ret, int err) {
	struct gr_api_client *c = d->client;
	struct gr_api_event *ev;

	assert_int_equal(ret, -1);
	assert_int_equal(errno, err);
	assert_int_equal(c->protocol_errors, 1);
	assert_true(c->stash_bytes <= CLIENT_STASH_MAX_BYTES);
	assert_int_equal(gr_api_client_send(c, GR_PING, 0, NULL), -err);
	assert_int_equal(gr_api_client_recv_len(c, 1, NULL), -1);
	assert_int_equal(errno, err);
	assert_int_equal(gr_api_client_event_try_recv(c, &ev), -err);
	assert_int_equal(gr_api_client_poll_prepare(c), -1);
	assert_int_equal(errno, err);
	expect_eof(d);
}

static void never_sent_id(struct fake_daemon *d) {
	static uint8_t msg[FAKE_FLOOD_MSG_MAX];
	struct gr_api_client *c = d->client;
	struct fake_flood flood;

	c->timeout_ms = CALL_TIMEOUT_MS;
	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_true(id > 0 && id < NEVER_SENT_ID);
	size_t len = fake_flood_msg(msg, NEVER_SENT_ID, FLOOD_PAYLOAD, 0x55);
	fake_flood_start(&flood, d, msg, len, FLOOD_MAX_BYTES);
	uint64_t start = fake_daemon_now_ms();
	long ret = gr_api_client_recv_len(c, (uint32_t)id, NULL);
	uint64_t took = fake_daemon_now_ms() - start;
	int err = errno;
	uint64_t sent = fake_flood_stop(&flood);
	printf("never sent id: the call failed after %llu ms, %llu responses sent\n",
	       (unsigned long long)took,
	       (unsigned long long)sent);
	errno = err;
	// Nothing kept: the first such response ends it.
	assert_int_equal(c->stash_n, 0);
	expect_dropped(d, ret, EPROTO);
}

static void never_sent_id_socket(void **state) {
	never_sent_id(*state);
}

static void never_sent_id_shm(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_attach(d);
	never_sent_id(d);
}

static void stream_nobody_reads(struct fake_daemon *d) {
	static uint8_t msg[FAKE_FLOOD_MSG_MAX];
	struct gr_api_client *c = d->client;
	struct fake_flood flood;

	c->timeout_ms = STASH_CALL_TIMEOUT_MS;
	long stream_id = gr_api_client_send(c, GR_LOG_LEVEL_LIST, 0, NULL);
	long ping_id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_true(stream_id > 0 && ping_id > stream_id);
	size_t len = fake_flood_msg(msg, (uint32_t)stream_id, STREAM_PAYLOAD, 0x66);
	fake_flood_start(&flood, d, msg, len, FLOOD_MAX_BYTES);
	uint64_t start = fake_daemon_now_ms();
	long ret = gr_api_client_recv_len(c, (uint32_t)ping_id, NULL);
	uint64_t took = fake_daemon_now_ms() - start;
	int err = errno;
	uint64_t sent = fake_flood_stop(&flood);
	printf("endless stream nobody reads: the call failed after %llu ms, %llu responses "
	       "sent, %u kept (%zu bytes)\n",
	       (unsigned long long)took,
	       (unsigned long long)sent,
	       c->stash_n,
	       c->stash_bytes);
	errno = err;
	// Kept up to the bound: the stash was full when it failed.
	assert_true(
		c->stash_bytes + sizeof(struct client_stash_entry) + STREAM_PAYLOAD >
		CLIENT_STASH_MAX_BYTES
	);
	expect_dropped(d, ret, ENOBUFS);
}

static void stream_nobody_reads_socket(void **state) {
	stream_nobody_reads(*state);
}

static void stream_nobody_reads_shm(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_attach(d);
	stream_nobody_reads(d);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(never_sent_id_socket),
		FAKE_DAEMON_TEST(never_sent_id_shm),
		FAKE_DAEMON_TEST(stream_nobody_reads_socket),
		FAKE_DAEMON_TEST(stream_nobody_reads_shm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
