// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// gr_api_client_try_recv() on the socket never waits for the rest of a
// message: with only part of a response on the socket (a header, part of a
// payload, part of a payload larger than the read-ahead buffer) it fails
// with EAGAIN, keeps the bytes, and returns the whole response once the rest
// came. poll_prepare() says 0 meanwhile (the socket becomes readable when
// the rest comes). The test writes the daemon's bytes on a socketpair; a
// call that blocked would hang it until its alarm.

#include "fake_daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// A try call that blocks hangs the test: SIGALRM ends it.
#define TEST_ALARM_S 10
// Larger than the read-ahead buffer (64 KiB): read into msg_buf in parts.
#define BIG_LEN (100 * 1024)

static void fill(uint8_t *buf, size_t len) {
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
}

static void write_all(int fd, const void *buf, size_t len) {
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		assert_true(n > 0);
		buf = (const uint8_t *)buf + n;
		len -= (size_t)n;
	}
}

// A response of len payload bytes for id, written in pieces cut at cuts
// (offsets into header + payload, increasing); try_recv gets EAGAIN after
// each piece but the last.
static void
in_pieces(struct fake_daemon *d, uint32_t id, size_t len, const size_t *cuts, size_t n) {
	size_t total = sizeof(struct gr_api_response) + len;
	uint8_t *wire = malloc(total);
	uint8_t *got = malloc(len > 0 ? len : 1);
	assert_non_null(wire);
	assert_non_null(got);
	struct gr_api_response hdr = {.for_id = id, .payload_len = (uint32_t)len};
	memcpy(wire, &hdr, sizeof(hdr));
	fill(wire + sizeof(hdr), len);

	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		write_all(d->sock, wire + off, cuts[i] - off);
		off = cuts[i];
		errno = 0;
		assert_int_equal(gr_api_client_try_recv_into(d->client, id, got, len), -1);
		assert_int_equal(errno, EAGAIN);
		assert_int_equal(gr_api_client_poll_prepare(d->client), 0);
		assert_int_equal(gr_api_client_poll_done(d->client), 0);
	}
	write_all(d->sock, wire + off, total - off);
	assert_int_equal(gr_api_client_try_recv_into(d->client, id, got, len), (long)len);
	assert_memory_equal(got, wire + sizeof(hdr), len);
	free(wire);
	free(got);
}

static void small_in_pieces(void **state) {
	const size_t cuts[] = {5, 12, 40};
	in_pieces(*state, 1, GR_PING2_LEN, cuts, sizeof(cuts) / sizeof(cuts[0]));
}

static void big_in_pieces(void **state) {
	// Inside the header, past the read-ahead buffer, and near the end.
	const size_t cuts[] = {8, 1000, 70 * 1024, BIG_LEN};
	in_pieces(*state, 2, BIG_LEN, cuts, sizeof(cuts) / sizeof(cuts[0]));
}

static void nothing_at_all(void **state) {
	struct fake_daemon *d = *state;
	errno = 0;
	assert_int_equal(gr_api_client_try_recv(d->client, 3, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	// EOF: the daemon is gone.
	fake_daemon_close_sock(d);
	errno = 0;
	assert_int_equal(gr_api_client_try_recv(d->client, 3, NULL), -1);
	assert_int_equal(errno, ECONNRESET);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(small_in_pieces),
		FAKE_DAEMON_TEST(big_in_pieces),
		FAKE_DAEMON_TEST(nothing_at_all),
	};
	alarm(TEST_ALARM_S);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
