// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// gr_api_client_try_recv() fails with EAGAIN exactly when no response to
// its id has arrived: while the daemon is stopped (SIGSTOP) for two
// requests in flight; then, once the later one's response is taken, the
// earlier one's (which the daemon sent first, so it was read on the way
// and stashed) comes at once; a response taken already is not waiting any
// more. poll_prepare() agrees: 0 when nothing waits, 1 when a response
// waits in the library: stashed, or (socket) received in the read-ahead
// buffer with the one taken before it, while the socket itself is no longer
// readable.
//
// usage: client_try_recv SOCK socket|shm (under test/with_daemon.sh)

#include "check.h"
#include "daemon_stop.h"
#include "transport_arg.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A live daemon answers within a scheduling delay; this bounds the wait
// for the responses once it is continued.
#define ANSWER_WAIT_NS (5 * 1000000000ull)

static void fill(struct gr_ping2 *p, uint8_t salt) {
	for (size_t i = 0; i < sizeof(p->payload); i++)
		p->payload[i] = (uint8_t)(i + salt);
}

static uint32_t send_ping2(struct gr_api_client *c, uint8_t salt) {
	struct gr_ping2 req;
	fill(&req, salt);
	long id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
	CHECK(id > 0, "send: %s", strerror(errno));
	return (uint32_t)id;
}

static void check_eagain(struct gr_api_client *c, uint32_t id, const char *when) {
	struct gr_ping2 rx;
	long len = gr_api_client_try_recv_into(c, id, &rx, sizeof(rx));
	CHECK(len < 0 && errno == EAGAIN,
	      "try_recv %u %s: %ld, %s (expected EAGAIN)",
	      id,
	      when,
	      len,
	      len < 0 ? strerror(errno) : "a response");
}

static void check_echo(const struct gr_ping2 *rx, long len, uint8_t salt, const char *what) {
	struct gr_ping2 want;
	fill(&want, salt);
	CHECK(len == GR_PING2_LEN, "%s: %ld bytes", what, len);
	CHECK(memcmp(rx, &want, sizeof(want)) == 0, "%s: not its echo", what);
}

int main(int argc, char **argv) {
	CHECK(argc == 3, "usage: %s SOCK socket|shm", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	pid_t daemon = daemon_pid_from_env();
	struct gr_api_client *c = connect_forced(argv[1], argv[2], "client_try_recv");
	int fd = gr_api_client_fd(c);
	CHECK(fd >= 0, "gr_api_client_fd: %s", strerror(errno));

	CHECK(gr_api_client_try_recv(c, 0, NULL) < 0 && errno == EINVAL, "try_recv id 0");

	daemon_stop(daemon);
	uint32_t a = send_ping2(c, 'a');
	uint32_t b = send_ping2(c, 'b');
	check_eagain(c, a, "while the daemon is stopped");
	check_eagain(c, b, "while the daemon is stopped");
	CHECK(gr_api_client_poll_prepare(c) == 0, "poll_prepare: something waits");
	CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));
	daemon_cont(daemon);

	// Wait for b's response through the fd, taking nothing else.
	struct gr_ping2 rx;
	long len;
	uint64_t deadline = monotonic_ns() + ANSWER_WAIT_NS;
	unsigned wakes = 0;
	for (;;) {
		len = gr_api_client_try_recv_into(c, b, &rx, sizeof(rx));
		if (len >= 0)
			break;
		CHECK(errno == EAGAIN, "try_recv %u: %s", b, strerror(errno));
		CHECK(monotonic_ns() < deadline, "no response to %u after the daemon went on", b);
		int r = gr_api_client_poll_prepare(c);
		CHECK(r >= 0, "poll_prepare: %s", strerror(errno));
		if (r == 0) {
			struct pollfd pfd = {.fd = fd, .events = POLLIN};
			CHECK(poll(&pfd, 1, (int)(ANSWER_WAIT_NS / 1000000)) >= 0,
			      "poll: %s",
			      strerror(errno));
			wakes++;
		}
		CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));
	}
	check_echo(&rx, len, 'b', "the later request");

	// a's response came first: it was read on the way to b's, and waits.
	CHECK(gr_api_client_poll_prepare(c) == 1,
	      "poll_prepare: the stashed response does not count");
	len = gr_api_client_try_recv_into(c, a, &rx, sizeof(rx));
	CHECK(len >= 0, "try_recv %u after %u: %s (it arrived first)", a, b, strerror(errno));
	check_echo(&rx, len, 'a', "the earlier request");

	check_eagain(c, a, "once taken");
	check_eagain(c, b, "once taken");
	CHECK(gr_api_client_poll_prepare(c) == 0, "poll_prepare: something waits after all taken");
	CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));

	// Socket: two responses read by one recvmsg(); the second stays in the
	// read-ahead buffer, which the socket's readability does not show.
	if (gr_api_client_transport(c) == GR_API_TRANSPORT_SOCKET) {
		daemon_stop(daemon);
		uint32_t e = send_ping2(c, 'e');
		uint32_t f = send_ping2(c, 'f');
		daemon_cont(daemon);
		const int both = 2 * (int)(sizeof(struct gr_api_response) + GR_PING2_LEN);
		int queued = 0;
		deadline = monotonic_ns() + ANSWER_WAIT_NS;
		while (queued < both) {
			CHECK(ioctl(fd, FIONREAD, &queued) == 0, "FIONREAD: %s", strerror(errno));
			CHECK(monotonic_ns() < deadline,
			      "%d of %d bytes after %llu s",
			      queued,
			      both,
			      (unsigned long long)(ANSWER_WAIT_NS / 1000000000ull));
		}
		len = gr_api_client_try_recv_into(c, e, &rx, sizeof(rx));
		CHECK(len >= 0, "try_recv %u: %s", e, strerror(errno));
		check_echo(&rx, len, 'e', "the first of two read at once");
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		CHECK(poll(&pfd, 1, 0) == 0, "the socket is still readable");
		CHECK(gr_api_client_poll_prepare(c) == 1,
		      "poll_prepare: the read-ahead buffer does not count");
		len = gr_api_client_try_recv_into(c, f, &rx, sizeof(rx));
		CHECK(len >= 0, "try_recv %u from the read-ahead buffer: %s", f, strerror(errno));
		check_echo(&rx, len, 'f', "the second of two read at once");
	}

	// try_recv (malloc'ed payload) the same way, on one request.
	uint32_t d = send_ping2(c, 'd');
	void *data = NULL;
	deadline = monotonic_ns() + ANSWER_WAIT_NS;
	while ((len = gr_api_client_try_recv(c, d, &data)) < 0) {
		CHECK(errno == EAGAIN, "try_recv %u: %s", d, strerror(errno));
		CHECK(data == NULL, "try_recv set a payload on failure");
		CHECK(monotonic_ns() < deadline, "no response to %u", d);
	}
	check_echo(data, len, 'd', "try_recv");
	free(data);
	printf("%s: EAGAIN exactly while nothing waits (%u sleeps): ok\n", argv[2], wakes);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
