// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Timeouts against a stopped daemon (SIGSTOP): a connect fails with
// ETIMEDOUT within its timeout (from the options, and from
// GR_API_TIMEOUT_MS); so do a receive, a stream's next response and, on
// the channel, a send that finds the request ring full. After SIGCONT the
// handle works on: the late responses of the abandoned ids are dropped when
// they arrive (nothing is left waiting, and a receive of such an id fails
// ECANCELED), never returned for another id, and every request the full
// ring held is answered.
//
// usage: client_timeout SOCK socket|shm (under test/with_daemon.sh)

#include "check.h"
#include "daemon_stop.h"
#include "transport_arg.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The timeout the test sets, and how much later than it a timed-out call
// may return on a loaded machine (it must not return before it).
#define TIMEOUT_MS 400
#define ENV_TIMEOUT_MS 300
#define LATE_MAX_MS 4000
// Most requests the full-ring check sends: far more than a request ring
// holds (16383 cells of 16 bytes; a GR_PING2 takes 5).
#define FLOOD_MAX 8192

#define NS_PER_MS 1000000ull

static void fill(struct gr_ping2 *p, uint32_t salt) {
	for (size_t i = 0; i < sizeof(p->payload); i += sizeof(salt))
		memcpy(p->payload + i, &salt, sizeof(salt));
}

// Run call, which must fail with ETIMEDOUT after timeout_ms, not sooner,
// and not much later.
#define CHECK_TIMES_OUT(call, timeout_ms, what)                                                    \
	do {                                                                                       \
		uint64_t start_ = monotonic_ns();                                                  \
		bool failed_ = (call);                                                             \
		int err_ = errno;                                                                  \
		uint64_t ms_ = (monotonic_ns() - start_) / NS_PER_MS;                              \
		CHECK(failed_, "%s did not fail", what);                                           \
		CHECK(err_ == ETIMEDOUT, "%s: %s, expected ETIMEDOUT", what, strerror(err_));      \
		CHECK(ms_ + 1 >= (uint64_t)(timeout_ms),                                           \
		      "%s: timed out after %llu ms only",                                          \
		      what,                                                                        \
		      (unsigned long long)ms_);                                                    \
		CHECK(ms_ <= (uint64_t)(timeout_ms) + LATE_MAX_MS,                                 \
		      "%s: took %llu ms",                                                          \
		      what,                                                                        \
		      (unsigned long long)ms_);                                                    \
		printf("%s: ETIMEDOUT after %llu ms: ok\n", what, (unsigned long long)ms_);        \
	} while (0)

static struct gr_api_client *connect_with(const char *sock, enum gr_api_transport t, int ms) {
	struct gr_api_client_opts opts = {
		.transport = t,
		.spin_us = -1,
		.version = "client_timeout",
		.timeout_ms = ms,
	};
	return gr_api_client_connect_opts(sock, &opts);
}

// Fill the request ring of a stopped daemon: the send that finds it full
// times out, having sent nothing. Returns how many were sent, their ids in
// ids.
static unsigned flood(struct gr_api_client *c, uint32_t *ids) {
	struct gr_ping2 req;
	unsigned n = 0;
	for (;;) {
		CHECK(n < FLOOD_MAX, "%u requests fit in the request ring", n);
		fill(&req, n);
		uint64_t start = monotonic_ns();
		long id = gr_api_client_send_more(c, GR_PING2, sizeof(req), &req);
		if (id < 0) {
			uint64_t ms = (monotonic_ns() - start) / NS_PER_MS;
			CHECK(errno == ETIMEDOUT, "send %u: %s", n, strerror(errno));
			CHECK(ms + 1 >= TIMEOUT_MS && ms <= TIMEOUT_MS + LATE_MAX_MS,
			      "send on a full ring timed out after %llu ms",
			      (unsigned long long)ms);
			printf("send on a full ring (after %u): ETIMEDOUT after %llu ms: ok\n",
			       n,
			       (unsigned long long)ms);
			return n;
		}
		ids[n++] = (uint32_t)id;
	}
}

int main(int argc, char **argv) {
	CHECK(argc == 3, "usage: %s SOCK socket|shm", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	const char *sock = argv[1];
	enum gr_api_transport t = transport_arg(argv[2]);
	pid_t daemon = daemon_pid_from_env();
	struct gr_api_client *c;

	// Connect: the socket connects (the kernel queues it), hello waits.
	daemon_stop(daemon);
	CHECK_TIMES_OUT(connect_with(sock, t, TIMEOUT_MS) == NULL, TIMEOUT_MS, "connect");
	CHECK(setenv("GR_API_TIMEOUT_MS", "300", 1) == 0, "setenv");
	CHECK_TIMES_OUT(connect_with(sock, t, 0) == NULL, ENV_TIMEOUT_MS, "connect, env timeout");
	CHECK(setenv("GR_API_TIMEOUT_MS", "soon", 1) == 0, "setenv");
	CHECK(connect_with(sock, t, 0) == NULL && errno == EINVAL, "GR_API_TIMEOUT_MS=soon");
	CHECK(unsetenv("GR_API_TIMEOUT_MS") == 0, "unsetenv");
	daemon_cont(daemon);

	c = connect_with(sock, t, TIMEOUT_MS);
	CHECK(c != NULL, "connect %s: %s", sock, strerror(errno));
	CHECK(gr_api_client_transport(c) == t, "%s transport was forced", argv[2]);

	// A receive, and a stream's next response.
	daemon_stop(daemon);
	struct gr_ping2 req, rx;
	fill(&req, 0xa);
	long late = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
	CHECK(late > 0, "send: %s", strerror(errno));
	CHECK_TIMES_OUT(
		gr_api_client_recv_into(c, (uint32_t)late, &rx, sizeof(rx)) < 0,
		TIMEOUT_MS,
		"recv"
	);
	CHECK(gr_api_client_try_recv(c, (uint32_t)late, NULL) < 0 && errno == ECANCELED,
	      "try_recv of the abandoned id: %s, expected ECANCELED",
	      strerror(errno));
	long stream = gr_api_client_send(c, GR_SHM_CHANNEL_LIST, 0, NULL);
	CHECK(stream > 0, "send stream: %s", strerror(errno));
	CHECK_TIMES_OUT(
		gr_api_client_stream_next(c, (uint32_t)stream, NULL, NULL) < 0,
		TIMEOUT_MS,
		"stream_next"
	);

	// A send that finds the request ring full (the channel only: on the
	// socket, a send that times out half-way breaks the framing).
	static uint32_t flood_ids[FLOOD_MAX];
	unsigned n_flood = 0;
	if (t == GR_API_TRANSPORT_SHM)
		n_flood = flood(c, flood_ids);
	daemon_cont(daemon);

	// The handle works on; the late responses are not taken for others.
	fill(&req, 0xb);
	long id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
	CHECK(id > 0, "send after SIGCONT: %s", strerror(errno));
	long len = gr_api_client_recv_into(c, (uint32_t)id, &rx, sizeof(rx));
	CHECK(len == GR_PING2_LEN, "recv after SIGCONT: %ld: %s", len, strerror(errno));
	CHECK(memcmp(&rx, &req, sizeof(rx)) == 0, "recv after SIGCONT: another id's echo");
	for (unsigned i = 0; i < n_flood; i++) {
		struct gr_ping2 want;
		fill(&want, i);
		len = gr_api_client_recv_into(c, flood_ids[i], &rx, sizeof(rx));
		CHECK(len == GR_PING2_LEN, "flood %u: %ld: %s", i, len, strerror(errno));
		CHECK(memcmp(&rx, &want, sizeof(rx)) == 0, "flood %u: another echo", i);
	}
	// The daemon answered in order: the abandoned ids' responses came
	// before the last one, and were dropped, not stashed.
	CHECK(gr_api_client_poll_prepare(c) == 0, "a late response was kept");
	CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));
	CHECK(gr_api_client_recv_len(c, (uint32_t)late, NULL) < 0 && errno == ECANCELED,
	      "recv of the abandoned id: %s, expected ECANCELED",
	      strerror(errno));
	printf("%s: the handle works after SIGCONT, %u flooded requests answered, late "
	       "responses dropped: ok\n",
	       argv[2],
	       n_flood);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
