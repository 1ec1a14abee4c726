// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// test/embed_misuse_app's handlers misuse libgr_api_server, and its client
// is answered at once, the same way on the transport asked for, with its
// connection kept: a response above GR_API_MAX_MSG_LEN is EMSGSIZE, one
// with a descriptor ENOTSUP, one with a length and no payload EINVAL; a
// stream keeps what could be sent, sees gr_api_send() return -EMSGSIZE and
// -EINVAL for the rest, and ends with EMSGSIZE; a handler's lock, unlock,
// registration, start and stop refuse at once (-EDEADLK, -EPERM) instead
// of waiting for it. A ping after each is answered. Before, on the channel
// the descriptor left the client waiting until its timeout and the long
// response detached it (ECONNRESET); on the socket the long response broke
// the framing (EBADMSG, and a dead handle); the lock hung the server.
//
// usage: embed_handler_misuse SOCK TRANSPORT (under with_daemon.sh, with
// embed_misuse_app for the daemon)

#include "check.h"
#include "embed_misuse.h"
#include "transport_arg.h"

#include <gr_api_client.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

// The client's wait for each answer: the answers come at once, and a
// refusal that would not come (the descriptor on a channel, before) shows
// as ETIMEDOUT well before the watchdog.
#define ANSWER_TIMEOUT_MS 5000

// The status of a request of type with no payload: 0 or an errno value.
static int status_of(struct gr_api_client *c, uint32_t type) {
	void *rx = NULL;
	long ret = gr_api_client_send_recv_len(c, type, 0, NULL, &rx);

	free(rx);
	return ret < 0 ? errno : 0;
}

static void ping_answered(struct gr_api_client *c, const char *after) {
	CHECK(gr_api_client_ping(c) == 0, "ping after %s: %s", after, strerror(errno));
}

static void refused(struct gr_api_client *c, uint32_t type, const char *what, int want) {
	int got = status_of(c, type);

	CHECK(got == want, "%s: %s, expected %s", what, strerror(got), strerror(want));
	ping_answered(c, what);
	printf("%s: %s, connection kept: ok\n", what, strerror(want));
}

static void stream_refusals(struct gr_api_client *c) {
	static const int32_t want[] = {1, -EMSGSIZE, -EINVAL};
	struct embed_misuse_item item;
	unsigned n = 0;
	size_t len;
	void *rx;
	int ret;

	long id = gr_api_client_send(c, EMBED_MISUSE_STREAM, 0, NULL);
	CHECK(id > 0, "stream: %s", strerror(errno));
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, &rx, &len)) == 1) {
		CHECK(len == sizeof(item), "stream response %u: %zu bytes", n, len);
		CHECK(n < sizeof(want) / sizeof(want[0]), "stream: more than %u responses", n);
		memcpy(&item, rx, sizeof(item));
		free(rx);
		CHECK(item.value == want[n],
		      "stream response %u: %d, expected %d",
		      n,
		      item.value,
		      want[n]);
		n++;
	}
	CHECK(n == sizeof(want) / sizeof(want[0]), "stream: %u responses", n);
	CHECK(ret < 0 && errno == EMSGSIZE,
	      "stream end: %d (%s), expected EMSGSIZE",
	      ret,
	      strerror(errno));
	ping_answered(c, "the stream");
	printf("stream: what fits sent, -EMSGSIZE and -EINVAL to the handler, ends EMSGSIZE:"
	       " ok\n");
}

static void lock_refusals(struct gr_api_client *c) {
	struct embed_misuse_lock_resp r;

	CHECK(gr_api_client_send_recv_into(c, EMBED_MISUSE_LOCK, 0, NULL, &r, sizeof(r)) ==
		      (long)sizeof(r),
	      "lock: %s",
	      strerror(errno));
	CHECK(r.lock == -EDEADLK, "lock in a handler: %d", r.lock);
	CHECK(r.unlock == -EPERM, "unlock in a handler: %d", r.unlock);
	CHECK(r.register_ == -EDEADLK, "register in a handler: %d", r.register_);
	CHECK(r.start == -EDEADLK, "start in a handler: %d", r.start);
	CHECK(r.stop == -EDEADLK, "stop in a handler: %d", r.stop);
	ping_answered(c, "the lock");
	printf("lock, register, start, stop in a handler: EDEADLK, unlock: EPERM: ok\n");
}

int main(int argc, char **argv) {
	struct gr_api_client_opts opts = {.spin_us = GR_API_CLIENT_SPIN_ADAPTIVE};
	struct gr_api_client *c;

	CHECK(argc == 3, "usage: %s SOCK TRANSPORT", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	opts.transport = transport_arg(argv[2]);
	opts.timeout_ms = ANSWER_TIMEOUT_MS;
	c = gr_api_client_connect_opts(argv[1], &opts);
	CHECK(c != NULL, "connect %s: %s", argv[1], gr_api_client_last_error());
	CHECK(gr_api_client_transport(c) == opts.transport, "%s transport was forced", argv[2]);

	refused(c, EMBED_MISUSE_BIG, "a response above GR_API_MAX_MSG_LEN", EMSGSIZE);
	refused(c, EMBED_MISUSE_FDS, "a response with a descriptor", ENOTSUP);
	refused(c, EMBED_MISUSE_NULL, "a response with no payload", EINVAL);
	stream_refusals(c);
	lock_refusals(c);
	gr_api_client_disconnect(c);
	return 0;
}
