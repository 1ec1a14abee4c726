// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// gr_api_client_send_batch(): many requests, one doorbell. On a channel
// whose daemon sleeps, a batch of BATCH_N requests rings its doorbell once
// where BATCH_N gr_api_client_send() calls ring it BATCH_N times; the
// requests arrive in order with the ids the call returned, and their
// answers are received. A bad request anywhere in the batch sends none. On
// the socket, the same requests arrive, framed one after the other.

#include "fake_daemon.h"

#include <errno.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define TEST_ECHO GR_MSG_TYPE(0x7e57, 1)
#define BATCH_N 8
#define PAYLOAD_LEN 24

static void fill_reqs(struct gr_api_client_req *reqs, uint8_t (*payloads)[PAYLOAD_LEN]) {
	for (unsigned i = 0; i < BATCH_N; i++) {
		memset(payloads[i], (int)i + 1, PAYLOAD_LEN);
		reqs[i] = (struct gr_api_client_req){
			.req_type = TEST_ECHO,
			.tx_len = i % 2 ? PAYLOAD_LEN : 0, // empty and not, mixed
			.tx_data = i % 2 ? payloads[i] : NULL,
		};
	}
}

// The daemon reads the BATCH_N requests in order, checks them and echoes
// each (one flush for all).
static void
serve_batch(struct fake_daemon *d, const struct gr_api_client_req *reqs, const long *ids) {
	uint8_t buf[sizeof(struct gr_api_request) + PAYLOAD_LEN];
	for (unsigned i = 0; i < BATCH_N; i++) {
		int n = shmchan_server_recv(d->server, buf, sizeof(buf));
		assert_int_equal(n, sizeof(struct gr_api_request) + reqs[i].tx_len);
		struct gr_api_request hdr;
		memcpy(&hdr, buf, sizeof(hdr));
		assert_int_equal(hdr.id, ids[i]);
		assert_int_equal(hdr.type, reqs[i].req_type);
		assert_int_equal(hdr.payload_len, reqs[i].tx_len);
		if (reqs[i].tx_len > 0)
			assert_memory_equal(buf + sizeof(hdr), reqs[i].tx_data, reqs[i].tx_len);
		struct gr_api_response resp = {.for_id = hdr.id, .payload_len = hdr.payload_len};
		assert_int_equal(
			shmchan_server_enqueue(
				d->server,
				&resp,
				sizeof(resp),
				buf + sizeof(hdr),
				hdr.payload_len
			),
			0
		);
	}
	assert_int_equal(shmchan_server_recv(d->server, buf, sizeof(buf)), 0);
	shmchan_server_flush(d->server);
}

static void recv_batch(struct gr_api_client *c, const struct gr_api_client_req *reqs, long *ids) {
	for (unsigned i = 0; i < BATCH_N; i++) {
		uint8_t got[PAYLOAD_LEN];
		long len = gr_api_client_recv_into(c, (uint32_t)ids[i], got, sizeof(got));
		assert_int_equal(len, reqs[i].tx_len);
		if (len > 0)
			assert_memory_equal(got, reqs[i].tx_data, len);
	}
}

static void batch_rings_once(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client_req reqs[BATCH_N];
	uint8_t payloads[BATCH_N][PAYLOAD_LEN];
	long ids[BATCH_N];
	fake_daemon_attach(d);
	fill_reqs(reqs, payloads);
	struct gr_api_client *c = d->client;

	// The daemon sleeps: its need-wakeup flag is set.
	shmchan_server_doorbell_arm(d->server);
	assert_int_equal(gr_api_client_send_batch(c, BATCH_N, reqs, ids), BATCH_N);
	assert_int_equal(fake_daemon_doorbell_rings(d), 1);
	serve_batch(d, reqs, ids);
	recv_batch(c, reqs, ids);

	// The same requests one send at a time: one ring each.
	for (unsigned i = 0; i < BATCH_N; i++) {
		ids[i] = gr_api_client_send(c, reqs[i].req_type, reqs[i].tx_len, reqs[i].tx_data);
		assert_true(ids[i] > 0);
	}
	assert_int_equal(fake_daemon_doorbell_rings(d), BATCH_N);
	serve_batch(d, reqs, ids);
	recv_batch(c, reqs, ids);

	// A spinning daemon (flag clear) is not rung at all.
	shmchan_server_doorbell_disarm(d->server);
	assert_int_equal(gr_api_client_send_batch(c, BATCH_N, reqs, ids), BATCH_N);
	assert_int_equal(fake_daemon_doorbell_rings(d), 0);
	serve_batch(d, reqs, ids);
	recv_batch(c, reqs, ids);
}

static void bad_request_sends_none(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client_req reqs[BATCH_N];
	uint8_t payloads[BATCH_N][PAYLOAD_LEN];
	long ids[BATCH_N];
	fake_daemon_attach(d);
	fill_reqs(reqs, payloads);
	struct gr_api_client *c = d->client;
	uint8_t buf[sizeof(struct gr_api_request) + PAYLOAD_LEN];

	reqs[BATCH_N - 1].tx_len = GR_API_MAX_MSG_LEN + 1;
	errno = 0;
	assert_int_equal(gr_api_client_send_batch(c, BATCH_N, reqs, ids), -1);
	assert_int_equal(errno, EINVAL);
	reqs[BATCH_N - 1].tx_len = 1;
	reqs[BATCH_N - 1].tx_data = NULL;
	errno = 0;
	assert_int_equal(gr_api_client_send_batch(c, BATCH_N, reqs, ids), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(shmchan_server_recv(d->server, buf, sizeof(buf)), 0);

	errno = 0;
	assert_int_equal(gr_api_client_send_batch(NULL, BATCH_N, reqs, ids), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(gr_api_client_send_batch(c, BATCH_N, NULL, ids), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(gr_api_client_send_batch(c, BATCH_N, reqs, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(gr_api_client_send_batch(c, 0, NULL, NULL), 0);
	assert_int_equal(shmchan_server_recv(d->server, buf, sizeof(buf)), 0);

	// The handle is still good: the next request gets the next id.
	long id = gr_api_client_send(c, TEST_ECHO, 0, NULL);
	assert_int_equal(id, 2); // 1 was the attach
	assert_int_equal(
		shmchan_server_recv(d->server, buf, sizeof(buf)),
		sizeof(struct gr_api_request)
	);
}

static void batch_on_socket(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_client_req reqs[BATCH_N];
	uint8_t payloads[BATCH_N][PAYLOAD_LEN];
	long ids[BATCH_N];
	fill_reqs(reqs, payloads);

	assert_int_equal(gr_api_client_send_batch(d->client, BATCH_N, reqs, ids), BATCH_N);
	for (unsigned i = 0; i < BATCH_N; i++) {
		struct gr_api_request hdr;
		uint8_t payload[PAYLOAD_LEN];
		fake_daemon_read_all(d->sock, &hdr, sizeof(hdr));
		assert_int_equal(hdr.id, ids[i]);
		assert_int_equal(hdr.id, i + 1);
		assert_int_equal(hdr.type, TEST_ECHO);
		assert_int_equal(hdr.payload_len, reqs[i].tx_len);
		if (hdr.payload_len > 0) {
			fake_daemon_read_all(d->sock, payload, hdr.payload_len);
			assert_memory_equal(payload, reqs[i].tx_data, hdr.payload_len);
		}
	}
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(batch_rings_once),
		FAKE_DAEMON_TEST(bad_request_sends_none),
		FAKE_DAEMON_TEST(batch_on_socket),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
