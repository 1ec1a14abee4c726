// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// gr_api_client_send_recv_into() sends a request and receives its answer
// into the caller's buffer in one call: a ping2 echoes its payload; an
// answer longer than the buffer fails EMSGSIZE and the handle goes on; a
// daemon's error status (an unknown type) is the call's errno; a request
// whose payload is too long, or a NULL handle, fails EINVAL without a send;
// the answers of requests sent before it stay for their own receives.
//
// usage: client_send_recv_into SOCK socket|shm (under test/with_daemon.sh)

#include "check.h"
#include "transport_arg.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A type no module of the daemon serves.
#define UNKNOWN_TYPE GR_MSG_TYPE(0x7777, 0x0001)
// Longer than a ping2 answer: an echo that does not fit a struct gr_ping2.
#define ECHO_LEN 100

static void fill(uint8_t *buf, size_t len, uint8_t salt) {
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + salt);
}

static void check_ping2(struct gr_api_client *c, uint8_t salt) {
	struct gr_ping2 req, resp;
	fill((uint8_t *)req.payload, sizeof(req.payload), salt);
	memset(&resp, 0, sizeof(resp));
	long len =
		gr_api_client_send_recv_into(c, GR_PING2, sizeof(req), &req, &resp, sizeof(resp));
	CHECK(len == GR_PING2_LEN, "ping2 %u: %ld (%s)", salt, len, strerror(errno));
	CHECK(memcmp(&req, &resp, sizeof(req)) == 0, "ping2 %u: not echoed", salt);
}

int main(int argc, char **argv) {
	CHECK(argc == 3, "usage: %s SOCK socket|shm", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	struct gr_api_client *c = connect_forced(argv[1], argv[2], NULL);

	for (unsigned i = 0; i < 1000; i++)
		check_ping2(c, (uint8_t)i);

	uint8_t echo[ECHO_LEN];
	struct gr_ping2 small;
	fill(echo, sizeof(echo), 3);
	errno = 0;
	long len = gr_api_client_send_recv_into(
		c,
		GR_SHM_ECHO,
		sizeof(echo),
		echo,
		&small,
		sizeof(small)
	);
	CHECK(len == -1 && errno == EMSGSIZE,
	      "echo into a short buffer: %ld (%s)",
	      len,
	      strerror(errno));
	check_ping2(c, 200);

	errno = 0;
	len = gr_api_client_send_recv_into(c, UNKNOWN_TYPE, 0, NULL, &small, sizeof(small));
	CHECK(len == -1 && errno == ENOTSUP, "unknown type: %ld (%s)", len, strerror(errno));
	errno = 0;
	len = gr_api_client_send_recv_into(c, GR_PING2, 10, echo, &small, sizeof(small));
	CHECK(len == -1 && errno == EMSGSIZE, "short ping2: %ld (%s)", len, strerror(errno));

	errno = 0;
	len = gr_api_client_send_recv_into(c, GR_SHM_ECHO, GR_API_MAX_MSG_LEN + 1, echo, NULL, 0);
	CHECK(len == -1 && errno == EINVAL, "too long: %ld (%s)", len, strerror(errno));
	errno = 0;
	len = gr_api_client_send_recv_into(NULL, GR_PING, 0, NULL, NULL, 0);
	CHECK(len == -1 && errno == EINVAL, "NULL handle: %ld (%s)", len, strerror(errno));

	// A request in flight before it keeps its answer.
	struct gr_ping2 early_req, early_resp;
	fill((uint8_t *)early_req.payload, sizeof(early_req.payload), 42);
	long early = gr_api_client_send(c, GR_PING2, sizeof(early_req), &early_req);
	CHECK(early > 0, "send: %s", strerror(errno));
	check_ping2(c, 43);
	len = gr_api_client_recv_into(c, (uint32_t)early, &early_resp, sizeof(early_resp));
	CHECK(len == GR_PING2_LEN, "early ping2: %ld (%s)", len, strerror(errno));
	CHECK(memcmp(&early_req, &early_resp, sizeof(early_req)) == 0, "early ping2: not echoed");

	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	printf("send_recv_into (%s): ping2, short buffer, daemon errors, bad arguments, stash: "
	       "ok\n",
	       argv[2]);
	return 0;
}
