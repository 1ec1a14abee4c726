// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Dispatch rules of api_dispatch(): hello first, version check, unknown
// type, short payload, oversized header, echo, streams, and the handler lock
// that keeps two handlers from ever running at once. A fake transport
// records every response.

#include "api.h"
#include "dispatch_test.h"
#include "config.h"

#include <gr_shm.h>

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

// Request types of handlers registered by this test only.
#define TEST_MODULE 0x7e57
#define TEST_COUNT GR_MSG_TYPE(TEST_MODULE, 1)
#define TEST_STREAM GR_MSG_TYPE(TEST_MODULE, 2)
#define TEST_EXCLUSIVE GR_MSG_TYPE(TEST_MODULE, 3)

#define STREAM_RESPONSES 3
#define MAX_RECORDED 8
#define RECORDED_PAYLOAD_MAX 256

struct recorded {
	uint32_t for_id;
	uint32_t status;
	uint32_t len;
	uint8_t payload[RECORDED_PAYLOAD_MAX];
};

// The fake transport's client: every response it was asked to send.
struct fake_client {
	struct gr_api_ctx ctx;
	struct recorded resp[MAX_RECORDED];
	unsigned n_resp;
	int send_error; // returned by send when not 0
	// Keep a copy of the last payload, of any length (malloc'ed).
	bool keep_last;
	uint8_t *last_payload;
};

// Set while a TEST_EXCLUSIVE handler or any response send runs; both must
// happen under the handler lock.
static int inside_lock;
static int overlaps;
static int count_calls;

// Mark a section that the handler lock must make exclusive, and stay in it a
// little so that an unlocked concurrent caller would overlap.
static void exclusive_section(void) {
	if (__atomic_exchange_n(&inside_lock, 1, __ATOMIC_ACQ_REL) != 0)
		__atomic_fetch_add(&overlaps, 1, __ATOMIC_RELAXED);
	usleep(100);
	__atomic_store_n(&inside_lock, 0, __ATOMIC_RELEASE);
}

static int fake_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	struct fake_client *client = ctx->priv;
	struct recorded *r;

	if (client->send_error != 0)
		return client->send_error;
	exclusive_section();
	assert_true(client->n_resp < MAX_RECORDED);
	r = &client->resp[client->n_resp++];
	r->for_id = for_id;
	r->status = out->status;
	r->len = out->len;
	assert_true(out->len <= RECORDED_PAYLOAD_MAX || client->keep_last);
	if (out->len > 0 && out->len <= RECORDED_PAYLOAD_MAX)
		memcpy(r->payload, out->payload, out->len);
	if (client->keep_last) {
		free(client->last_payload);
		client->last_payload = malloc(out->len + 1);
		assert_non_null(client->last_payload);
		if (out->len > 0)
			memcpy(client->last_payload, out->payload, out->len);
	}
	return 0;
}

static const struct api_transport fake_transport = {.name = "fake", .send = fake_send};

static void client_init(struct fake_client *client) {
	memset(client, 0, sizeof(*client));
	client->ctx.transport = &fake_transport;
	client->ctx.priv = client;
	client->ctx.sock_fd = -1;
}

static int dispatch(
	struct fake_client *client,
	uint32_t id,
	uint32_t type,
	uint32_t len,
	const void *payload
) {
	struct gr_api_request req = {.id = id, .type = type, .payload_len = len};
	return api_dispatch(&client->ctx, &req, payload);
}

static void say_hello(struct fake_client *client, uint32_t api_version) {
	struct gr_hello_req hello = {.api_version = api_version};

	strcpy(hello.version, "api_test");
	assert_int_equal(dispatch(client, 1, GR_HELLO, sizeof(hello), &hello), 0);
}

static struct gr_api_out count_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	count_calls++;
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out stream_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	for (uint32_t i = 0; i < STREAM_RESPONSES; i++)
		assert_int_equal(gr_api_send(ctx, sizeof(i), &i), 0);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out
exclusive_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	exclusive_section();
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler count_h = {
	.name = "TEST_COUNT",
	.request_type = TEST_COUNT,
	.callback = count_handler,
};
static struct gr_api_handler stream_h = {
	.name = "TEST_STREAM",
	.request_type = TEST_STREAM,
	.callback = stream_handler,
};
static struct gr_api_handler exclusive_h = {
	.name = "TEST_EXCLUSIVE",
	.request_type = TEST_EXCLUSIVE,
	.callback = exclusive_handler,
};

// The server's own handlers this test links (as gr_api_server_start()
// registers them), and the test's.
static int register_test_handlers(void **state) {
	(void)state;
	assert_int_equal(dispatch_test_handlers(), 0);
	assert_int_equal(gr_api_server_handler_register(&count_h), 0);
	assert_int_equal(gr_api_server_handler_register(&stream_h), 0);
	assert_int_equal(gr_api_server_handler_register(&exclusive_h), 0);
	return 0;
}

static void request_before_hello_is_eperm(void **state) {
	struct fake_client client;

	(void)state;
	client_init(&client);
	count_calls = 0;
	assert_int_equal(dispatch(&client, 7, TEST_COUNT, 0, NULL), 0);
	assert_int_equal(dispatch(&client, 8, GR_PING, 0, NULL), 0);
	assert_int_equal(count_calls, 0);
	assert_int_equal(client.n_resp, 2);
	assert_int_equal(client.resp[0].for_id, 7);
	assert_int_equal(client.resp[0].status, EPERM);
	assert_int_equal(client.resp[1].for_id, 8);
	assert_int_equal(client.resp[1].status, EPERM);
	assert_false(client.ctx.hello_done);
}

static void hello_wrong_version_is_ebadmsg(void **state) {
	struct fake_client client;

	(void)state;
	client_init(&client);
	say_hello(&client, GR_API_VERSION + 1);
	assert_int_equal(client.n_resp, 1);
	assert_int_equal(client.resp[0].status, EBADMSG);
	assert_false(client.ctx.hello_done);
	// Still no hello: the next request is refused.
	assert_int_equal(dispatch(&client, 2, GR_PING, 0, NULL), 0);
	assert_int_equal(client.resp[1].status, EPERM);
}

static void hello_unterminated_version_is_einval(void **state) {
	struct fake_client client;
	struct gr_hello_req hello = {.api_version = GR_API_VERSION};

	(void)state;
	client_init(&client);
	memset(hello.version, 'x', sizeof(hello.version));
	assert_int_equal(dispatch(&client, 1, GR_HELLO, sizeof(hello), &hello), 0);
	assert_int_equal(client.resp[0].status, EINVAL);
	assert_false(client.ctx.hello_done);
}

static void hello_then_ping(void **state) {
	struct fake_client client;

	(void)state;
	client_init(&client);
	say_hello(&client, GR_API_VERSION);
	assert_int_equal(client.resp[0].for_id, 1);
	assert_int_equal(client.resp[0].status, 0);
	assert_int_equal(client.resp[0].len, 0);
	assert_true(client.ctx.hello_done);

	assert_int_equal(dispatch(&client, 2, GR_PING, 0, NULL), 0);
	assert_int_equal(client.n_resp, 2);
	assert_int_equal(client.resp[1].for_id, 2);
	assert_int_equal(client.resp[1].status, 0);
	assert_int_equal(client.resp[1].len, 0);
}

static void second_hello_needs_same_version(void **state) {
	struct fake_client client;

	(void)state;
	client_init(&client);
	say_hello(&client, GR_API_VERSION);
	say_hello(&client, GR_API_VERSION);
	say_hello(&client, GR_API_VERSION + 1);
	assert_int_equal(client.n_resp, 3);
	assert_int_equal(client.resp[1].status, 0);
	assert_int_equal(client.resp[2].status, EBADMSG);
	assert_true(client.ctx.hello_done);
}

// Each version's hello response: empty for ours and Grout v0.17.0 (9), a
// 2-byte gr_hello_resp with max_ifaces 0 for Grout's main branch (10); the
// version is kept for the client.
static void hello_answers_in_the_version_layout(void **state) {
	static const struct {
		uint32_t version;
		uint32_t resp_len;
	} cases[] = {
		{GR_API_VERSION, 0},
		{GR_API_VERSION_GROUT_0_17, 0},
		{GR_API_VERSION_GROUT_MAIN, sizeof(struct gr_hello_resp)},
	};
	struct fake_client client;
	struct gr_hello_resp resp;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		client_init(&client);
		say_hello(&client, cases[i].version);
		assert_int_equal(client.n_resp, 1);
		assert_int_equal(client.resp[0].status, 0);
		assert_int_equal(client.resp[0].len, cases[i].resp_len);
		assert_int_equal(client.ctx.api_version, cases[i].version);
		if (cases[i].resp_len > 0) {
			memcpy(&resp, client.resp[0].payload, sizeof(resp));
			assert_int_equal(resp.max_ifaces, 0);
		}
	}
}

static void unknown_type_is_enotsup(void **state) {
	struct fake_client client;

	(void)state;
	client_init(&client);
	say_hello(&client, GR_API_VERSION);
	assert_int_equal(dispatch(&client, 2, GR_MSG_TYPE(TEST_MODULE, 0xffff), 0, NULL), 0);
	// A main-module type past Grout's and ours, not served.
	assert_int_equal(dispatch(&client, 3, GR_MSG_TYPE(GR_MAIN_MODULE, 0x19ff), 0, NULL), 0);
	assert_int_equal(client.resp[1].for_id, 2);
	assert_int_equal(client.resp[1].status, ENOTSUP);
	assert_int_equal(client.resp[2].for_id, 3);
	assert_int_equal(client.resp[2].status, ENOTSUP);
}

static void short_payload_is_emsgsize(void **state) {
	struct gr_hello_req hello = {.api_version = GR_API_VERSION};
	uint8_t ten[10] = {0};
	struct fake_client client;

	(void)state;
	client_init(&client);
	// A short hello is refused before any version check.
	assert_int_equal(dispatch(&client, 1, GR_HELLO, 100, &hello), 0);
	assert_int_equal(client.resp[0].status, EMSGSIZE);
	assert_false(client.ctx.hello_done);

	say_hello(&client, GR_API_VERSION);
	assert_int_equal(dispatch(&client, 3, GR_PING2, sizeof(ten), ten), 0);
	assert_int_equal(client.resp[2].for_id, 3);
	assert_int_equal(client.resp[2].status, EMSGSIZE);
	assert_int_equal(client.resp[2].len, 0);
}

static void check_header_bounds_payload(void **state) {
	struct gr_api_request req = {.id = 1, .type = GR_SHM_ECHO};

	(void)state;
	req.payload_len = GR_API_MAX_MSG_LEN + 1;
	assert_int_equal(api_check_header(&req), -EMSGSIZE);
	req.payload_len = UINT32_MAX;
	assert_int_equal(api_check_header(&req), -EMSGSIZE);
	req.payload_len = GR_API_MAX_MSG_LEN;
	assert_int_equal(api_check_header(&req), 0);
	req.payload_len = 0;
	assert_int_equal(api_check_header(&req), 0);
}

static void ping2_echoes_64_bytes(void **state) {
	uint8_t request[GR_PING2_LEN + 36];
	struct fake_client client;

	(void)state;
	for (unsigned i = 0; i < sizeof(request); i++)
		request[i] = (uint8_t)(i * 7 + 3);
	client_init(&client);
	say_hello(&client, GR_API_VERSION);
	assert_int_equal(dispatch(&client, 5, GR_PING2, GR_PING2_LEN, request), 0);
	assert_int_equal(client.resp[1].for_id, 5);
	assert_int_equal(client.resp[1].status, 0);
	assert_int_equal(client.resp[1].len, GR_PING2_LEN);
	assert_memory_equal(client.resp[1].payload, request, GR_PING2_LEN);
	// A longer request still gets exactly 64 bytes back.
	assert_int_equal(dispatch(&client, 6, GR_PING2, sizeof(request), request), 0);
	assert_int_equal(client.resp[2].len, GR_PING2_LEN);
	assert_memory_equal(client.resp[2].payload, request, GR_PING2_LEN);
}

static void stream_sends_responses_then_end(void **state) {
	struct fake_client client;
	uint32_t value;

	(void)state;
	client_init(&client);
	say_hello(&client, GR_API_VERSION);
	assert_int_equal(dispatch(&client, 42, TEST_STREAM, 0, NULL), 0);
	assert_int_equal(client.n_resp, 1 + STREAM_RESPONSES + 1);
	for (uint32_t i = 0; i < STREAM_RESPONSES; i++) {
		const struct recorded *r = &client.resp[1 + i];
		assert_int_equal(r->for_id, 42);
		assert_int_equal(r->status, 0);
		assert_int_equal(r->len, sizeof(value));
		memcpy(&value, r->payload, sizeof(value));
		assert_int_equal(value, i);
	}
	assert_int_equal(client.resp[1 + STREAM_RESPONSES].for_id, 42);
	assert_int_equal(client.resp[1 + STREAM_RESPONSES].status, 0);
	assert_int_equal(client.resp[1 + STREAM_RESPONSES].len, 0);
}

static void send_error_is_returned(void **state) {
	uint8_t request[GR_PING2_LEN] = {1, 2, 3};
	struct fake_client client;

	(void)state;
	client_init(&client);
	say_hello(&client, GR_API_VERSION);
	client.send_error = -EPIPE;
	// The handler's payload is freed even though sending failed (ASan).
	assert_int_equal(dispatch(&client, 2, GR_PING2, sizeof(request), request), -EPIPE);
	assert_int_equal(api_reject(&client.ctx, 3, EINVAL), -EPIPE);
}

// A second handler for a type is refused, and the first one still serves
// it: never an overwrite, never an abort.
static void duplicate_type_refused(void **state) {
	static struct gr_api_handler again = {
		.name = "TEST_COUNT again",
		.request_type = TEST_COUNT,
		.callback = count_handler,
	};
	static struct gr_api_handler nameless = {.request_type = GR_MSG_TYPE(TEST_MODULE, 9)};

	(void)state;
	assert_int_equal(gr_api_server_handler_register(&again), -EEXIST);
	assert_ptr_equal(api_handler_lookup(TEST_COUNT), &count_h);
	assert_int_equal(gr_api_server_handler_register(&nameless), -EINVAL);
	assert_null(api_handler_lookup(nameless.request_type));
	assert_int_equal(gr_api_server_handler_register(NULL), -EINVAL);
}

#define EXCLUSIVE_THREADS 2
#define EXCLUSIVE_ROUNDS 200

static void *exclusive_dispatcher(void *arg) {
	struct fake_client *client = arg;

	for (uint32_t i = 0; i < EXCLUSIVE_ROUNDS; i++) {
		client->n_resp = 0;
		if (dispatch(client, i + 1, TEST_EXCLUSIVE, 0, NULL) != 0)
			return (void *)1;
	}
	return NULL;
}

static void handlers_never_run_concurrently(void **state) {
	struct fake_client clients[EXCLUSIVE_THREADS];
	pthread_t threads[EXCLUSIVE_THREADS];
	void *ret;

	(void)state;
	overlaps = 0;
	for (unsigned i = 0; i < EXCLUSIVE_THREADS; i++) {
		client_init(&clients[i]);
		clients[i].ctx.hello_done = true;
		assert_int_equal(
			pthread_create(&threads[i], NULL, exclusive_dispatcher, &clients[i]),
			0
		);
	}
	for (unsigned i = 0; i < EXCLUSIVE_THREADS; i++) {
		assert_int_equal(pthread_join(threads[i], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(overlaps, 0);
}

// GR_SHM_ECHO: any payload from 0 to GR_API_MAX_MSG_LEN bytes, back as it
// came.
static void echo_any_length(void **state) {
	static const uint32_t lengths[] = {0, 1, 64, 4097, GR_API_MAX_MSG_LEN};
	uint8_t *payload = malloc(GR_API_MAX_MSG_LEN);
	struct fake_client client;

	(void)state;
	assert_non_null(payload);
	for (uint32_t i = 0; i < GR_API_MAX_MSG_LEN; i++)
		payload[i] = (uint8_t)(i ^ (i >> 8));
	client_init(&client);
	client.keep_last = true;
	say_hello(&client, GR_API_VERSION);
	for (unsigned i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		client.n_resp = 0;
		assert_int_equal(
			dispatch(
				&client,
				i + 2,
				GR_SHM_ECHO,
				lengths[i],
				lengths[i] > 0 ? payload : NULL
			),
			0
		);
		assert_int_equal(client.resp[0].status, 0);
		assert_int_equal(client.resp[0].len, lengths[i]);
		assert_memory_equal(client.last_payload, payload, lengths[i]);
	}
	free(client.last_payload);
	free(payload);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_before_hello_is_eperm),
		cmocka_unit_test(hello_wrong_version_is_ebadmsg),
		cmocka_unit_test(hello_unterminated_version_is_einval),
		cmocka_unit_test(hello_then_ping),
		cmocka_unit_test(second_hello_needs_same_version),
		cmocka_unit_test(hello_answers_in_the_version_layout),
		cmocka_unit_test(unknown_type_is_enotsup),
		cmocka_unit_test(short_payload_is_emsgsize),
		cmocka_unit_test(check_header_bounds_payload),
		cmocka_unit_test(ping2_echoes_64_bytes),
		cmocka_unit_test(echo_any_length),
		cmocka_unit_test(stream_sends_responses_then_end),
		cmocka_unit_test(send_error_is_returned),
		cmocka_unit_test(duplicate_type_refused),
		cmocka_unit_test(handlers_never_run_concurrently),
	};

	return cmocka_run_group_tests(tests, register_test_handlers, NULL);
}
