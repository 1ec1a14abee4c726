// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The socket transport through the client library: hello (in connect), ping,
// ping2 and echo payloads up to the largest, 64 requests in flight answered
// out of order, a stream, and the daemon's pid.
//
// usage: sock_hello_ping SOCK (under test/with_daemon.sh)

#include "check.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Requests in flight in the pipelining check.
#define PIPELINE_DEPTH 64
// Echo payload of the odd requests in flight: 1 + i * ECHO_STEP bytes.
#define ECHO_STEP 97
// A daemon has at most a handful of channels in this test; a stream longer
// than this never ends.
#define STREAM_MAX_RESPONSES 1024

static struct gr_api_client *connect_with(const char *sock, enum gr_api_transport transport) {
	struct gr_api_client_opts opts = {
		.transport = transport,
		.spin_us = -1,
		.version = "sock_hello_ping",
	};
	return gr_api_client_connect_opts(sock, &opts);
}

static void fill_pattern(uint8_t *buf, size_t len, unsigned salt) {
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 13 + salt);
}

// Hello is part of connect: a request the daemon answers proves it passed.
static void check_ping(struct gr_api_client *c) {
	void *rx = NULL;
	long len = gr_api_client_send_recv_len(c, GR_PING, 0, NULL, &rx);
	CHECK(len == 0, "GR_PING: returned %ld: %s", len, strerror(errno));
	CHECK(rx == NULL, "GR_PING: an empty response came with a payload");
}

static void check_ping2(struct gr_api_client *c) {
	struct gr_ping2 req;
	void *rx = NULL;

	fill_pattern((uint8_t *)req.payload, sizeof(req.payload), 1);
	long len = gr_api_client_send_recv_len(c, GR_PING2, sizeof(req), &req, &rx);
	CHECK(len == GR_PING2_LEN, "GR_PING2: returned %ld: %s", len, strerror(errno));
	CHECK(memcmp(rx, &req, sizeof(req)) == 0, "GR_PING2: echo differs from the request");
	free(rx);
}

static void check_echo(struct gr_api_client *c, size_t size) {
	uint8_t *tx = calloc(1, size > 0 ? size : 1);
	void *rx = NULL;

	CHECK(tx != NULL, "calloc %zu", size);
	fill_pattern(tx, size, (unsigned)size);
	long len = gr_api_client_send_recv_len(c, GR_SHM_ECHO, size, tx, &rx);
	CHECK(len == (long)size,
	      "GR_SHM_ECHO of %zu bytes: returned %ld: %s",
	      size,
	      len,
	      strerror(errno));
	if (size == 0)
		CHECK(rx == NULL, "GR_SHM_ECHO of 0 bytes came with a payload");
	else
		CHECK(memcmp(rx, tx, size) == 0, "GR_SHM_ECHO of %zu bytes: echo differs", size);
	free(rx);
	free(tx);
}

struct pipelined {
	long id;
	uint32_t type;
	size_t len;
	uint8_t *payload;
};

static int by_id_descending(const void *a, const void *b) {
	const struct pipelined *x = a, *y = b;
	return (x->id < y->id) - (x->id > y->id);
}

// Send 64 requests of mixed types and sizes, then receive them newest first:
// every answer but the last must be kept aside by the client and matched by
// id.
static void check_pipelining(struct gr_api_client *c) {
	struct pipelined reqs[PIPELINE_DEPTH];

	for (unsigned i = 0; i < PIPELINE_DEPTH; i++) {
		bool ping2 = i % 2 == 0;
		reqs[i].type = ping2 ? GR_PING2 : GR_SHM_ECHO;
		reqs[i].len = ping2 ? GR_PING2_LEN : 1 + i * ECHO_STEP;
		reqs[i].payload = malloc(reqs[i].len);
		CHECK(reqs[i].payload != NULL, "malloc");
		fill_pattern((uint8_t *)reqs[i].payload, reqs[i].len, i);
		reqs[i].id = gr_api_client_send(c, reqs[i].type, reqs[i].len, reqs[i].payload);
		CHECK(reqs[i].id > 0,
		      "send request %u of %d: %s",
		      i,
		      PIPELINE_DEPTH,
		      strerror(errno));
	}
	qsort(reqs, PIPELINE_DEPTH, sizeof(reqs[0]), by_id_descending);
	for (unsigned i = 0; i < PIPELINE_DEPTH; i++) {
		void *rx = NULL;
		long len = gr_api_client_recv_len(c, (uint32_t)reqs[i].id, &rx);
		CHECK(len == (long)reqs[i].len,
		      "request id %ld: response of %ld bytes, expected %zu: %s",
		      reqs[i].id,
		      len,
		      reqs[i].len,
		      strerror(errno));
		CHECK(memcmp(rx, reqs[i].payload, reqs[i].len) == 0,
		      "request id %ld: payload is not its own",
		      reqs[i].id);
		free(rx);
		free(reqs[i].payload);
	}
}

// GR_SHM_CHANNEL_LIST ends with an empty response. A second client on the
// channel, when the daemon offers one, must be listed with our pid.
static void check_stream(struct gr_api_client *c, const char *sock) {
	struct gr_api_client *shm_client = connect_with(sock, GR_API_TRANSPORT_AUTO);
	bool expect_self = false, found_self = false;
	unsigned responses = 0;
	int ret;

	CHECK(shm_client != NULL, "second client: connect: %s", strerror(errno));
	expect_self = gr_api_client_transport(shm_client) == GR_API_TRANSPORT_SHM;

	long id = gr_api_client_send(c, GR_SHM_CHANNEL_LIST, 0, NULL);
	CHECK(id > 0, "send GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	for (;;) {
		void *rx = NULL;
		size_t len = 0;
		ret = gr_api_client_stream_next(c, (uint32_t)id, &rx, &len);
		CHECK(ret >= 0, "GR_SHM_CHANNEL_LIST response %u: %s", responses, strerror(errno));
		if (ret == 0) {
			CHECK(rx == NULL && len == 0, "the stream's end came with a payload");
			break;
		}
		CHECK(len == sizeof(struct gr_shm_channel_info),
		      "channel info of %zu bytes, expected %zu",
		      len,
		      sizeof(struct gr_shm_channel_info));
		const struct gr_shm_channel_info *info = rx;
		if (info->client_pid == getpid())
			found_self = true;
		free(rx);
		responses++;
		CHECK(responses < STREAM_MAX_RESPONSES, "the stream does not end");
	}
	CHECK(!expect_self || found_self, "our shm channel is missing from the %u listed", responses
	);
	CHECK(gr_api_client_disconnect(shm_client) == 0, "disconnect: %s", strerror(errno));
	// The connection still serves after a stream.
	check_ping(c);
}

static void check_daemon_info(struct gr_api_client *c) {
	void *rx = NULL;
	long len = gr_api_client_send_recv_len(c, GR_SHM_DAEMON_INFO, 0, NULL, &rx);
	CHECK(len == (long)sizeof(struct gr_shm_daemon_info),
	      "GR_SHM_DAEMON_INFO: returned %ld: %s",
	      len,
	      strerror(errno));
	const struct gr_shm_daemon_info *info = rx;
	pid_t expected = daemon_pid_from_env();
	CHECK(info->pid == expected, "daemon pid %d, expected %d", (int)info->pid, (int)expected);
	free(rx);
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);

	struct gr_api_client *c = connect_with(argv[1], GR_API_TRANSPORT_SOCKET);
	CHECK(c != NULL, "connect %s: %s", argv[1], strerror(errno));
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SOCKET, "socket transport was forced");

	check_ping(c);
	printf("ping: ok\n");
	check_ping2(c);
	printf("ping2: ok\n");
	check_echo(c, 0);
	check_echo(c, 1);
	check_echo(c, 4096);
	check_echo(c, GR_API_MAX_MSG_LEN);
	printf("echo 0, 1, 4096, %d bytes: ok\n", GR_API_MAX_MSG_LEN);
	check_pipelining(c);
	printf("%d requests in flight, received in reverse: ok\n", PIPELINE_DEPTH);
	check_stream(c, argv[1]);
	printf("stream: ok\n");
	check_daemon_info(c);
	printf("daemon info: ok\n");

	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
