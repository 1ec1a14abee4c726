// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A response the transports cannot carry is never handed to one: a handler
// that returns a payload above GR_API_MAX_MSG_LEN, a length with no
// payload, or descriptors (an application's handler) has its client
// answered EMSGSIZE, EINVAL or ENOTSUP instead, and the next request is
// served as usual. gr_api_send() refuses the same responses with -EMSGSIZE
// and -EINVAL, sending nothing, and the stream then ends with that status
// (unless the handler ends it with an error of its own); it refuses a NULL
// client (-EINVAL) and any call but the handler's serving that client
// (-EPERM). Each refusal is logged naming the handler, at a bounded rate.
// A fake transport records what it is given, and fails the test on a
// response it could not carry.

#include "api.h"
#include "dispatch_test.h"
#include "log_capture_test.h"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define TEST_MODULE 0x7e59
#define TEST_BIG GR_MSG_TYPE(TEST_MODULE, 1) // returns GR_API_MAX_MSG_LEN + 1 bytes
#define TEST_NO_PAYLOAD GR_MSG_TYPE(TEST_MODULE, 2) // returns 8 bytes of NULL
#define TEST_FDS GR_MSG_TYPE(TEST_MODULE, 3) // returns a descriptor
#define TEST_STREAM_BIG GR_MSG_TYPE(TEST_MODULE, 4) // sends 1, too long, 2; ends 0
#define TEST_STREAM_NULL GR_MSG_TYPE(TEST_MODULE, 5) // sends 8 bytes of NULL; ends 0
#define TEST_STREAM_OWN GR_MSG_TYPE(TEST_MODULE, 6) // sends too long; ends ENOSPC
#define TEST_SEND_MISUSE GR_MSG_TYPE(TEST_MODULE, 7) // sends with no client, another's

// Responses the fake client keeps.
#define MAX_RECORDED 8
// Oversized responses of the flood, and the log lines they may cost: the
// first, and a summary per interval of the flood (a loaded host may stretch
// it over a few).
#define FLOOD 10000
#define FLOOD_LINES_MAX 8

struct recorded {
	uint32_t for_id;
	uint32_t status;
	uint32_t len;
	int32_t value; // the first 4 bytes of the payload, if any
};

struct fake_client {
	struct gr_api_ctx ctx;
	struct recorded resp[MAX_RECORDED];
	unsigned n_resp;
};

// Another client, which TEST_SEND_MISUSE tries to answer.
static struct fake_client other;
// What gr_api_send() returned in the last handler, in order.
static int sent[3];
// TEST_FDS's descriptor: the handler's, never closed by the server.
static int handler_fd = -1;

static int fake_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	struct fake_client *client = ctx->priv;
	struct recorded *r;

	// What the socket and the channel cannot carry never gets here.
	assert_true(out->len <= GR_API_MAX_MSG_LEN);
	assert_true(out->len == 0 || out->payload != NULL);
	assert_int_equal(out->n_fds, 0);
	if (client->n_resp == MAX_RECORDED)
		client->n_resp = 0; // the flood: only the statuses matter
	r = &client->resp[client->n_resp++];
	*r = (struct recorded){.for_id = for_id, .status = out->status, .len = out->len};
	if (out->len >= sizeof(r->value))
		memcpy(&r->value, out->payload, sizeof(r->value));
	return 0;
}

static const struct api_transport fake_transport = {.name = "fake", .send = fake_send};

static void client_init(struct fake_client *client, pid_t pid) {
	memset(client, 0, sizeof(*client));
	client->ctx.transport = &fake_transport;
	client->ctx.priv = client;
	client->ctx.sock_fd = -1;
	client->ctx.peer_pid = pid;
	client->ctx.hello_done = true;
}

static int dispatch(struct fake_client *client, uint32_t id, uint32_t type) {
	struct gr_api_request req = {.id = id, .type = type};
	return api_dispatch(&client->ctx, &req, NULL);
}

static struct gr_api_out big(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	// Freed by the server all the same (ASan says if not).
	return gr_api_out(0, GR_API_MAX_MSG_LEN + 1, calloc(1, GR_API_MAX_MSG_LEN + 1));
}

static struct gr_api_out no_payload(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(0, 8, NULL);
}

static struct gr_api_out fds(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_api_out out = gr_api_out(0, 0, NULL);

	(void)request;
	(void)len;
	(void)ctx;
	out.fds = &handler_fd;
	out.n_fds = 1;
	return out;
}

static struct gr_api_out stream_big(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	static const uint8_t huge[GR_API_MAX_MSG_LEN + 1];
	int32_t one = 1, two = 2;

	(void)request;
	(void)len;
	sent[0] = gr_api_send(ctx, sizeof(one), &one);
	sent[1] = gr_api_send(ctx, sizeof(huge), huge);
	sent[2] = gr_api_send(ctx, sizeof(two), &two);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out stream_null(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	sent[0] = gr_api_send(ctx, 8, NULL);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out stream_own(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	static const uint8_t huge[GR_API_MAX_MSG_LEN + 1];

	(void)request;
	(void)len;
	sent[0] = gr_api_send(ctx, sizeof(huge), huge);
	return gr_api_out(ENOSPC, 0, NULL);
}

static struct gr_api_out send_misuse(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	int32_t value = 7;

	(void)request;
	(void)len;
	(void)ctx;
	sent[0] = gr_api_send(NULL, 0, NULL);
	sent[1] = gr_api_send(&other.ctx, sizeof(value), &value);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler handlers[] = {
	{.name = "TEST_BIG", .request_type = TEST_BIG, .callback = big},
	{.name = "TEST_NO_PAYLOAD", .request_type = TEST_NO_PAYLOAD, .callback = no_payload},
	{.name = "TEST_FDS", .request_type = TEST_FDS, .callback = fds},
	{.name = "TEST_STREAM_BIG", .request_type = TEST_STREAM_BIG, .callback = stream_big},
	{.name = "TEST_STREAM_NULL", .request_type = TEST_STREAM_NULL, .callback = stream_null},
	{.name = "TEST_STREAM_OWN", .request_type = TEST_STREAM_OWN, .callback = stream_own},
	{.name = "TEST_SEND_MISUSE", .request_type = TEST_SEND_MISUSE, .callback = send_misuse},
};

// The status a request of type got, alone and then followed by a GR_PING
// that is answered 0: the client is served on.
static uint32_t answer_then_ping(uint32_t type) {
	struct fake_client client;

	client_init(&client, 4242);
	assert_int_equal(dispatch(&client, 2, type), 0);
	assert_int_equal(dispatch(&client, 3, GR_PING), 0);
	assert_int_equal(client.n_resp, 2);
	assert_int_equal(client.resp[0].for_id, 2);
	assert_int_equal(client.resp[0].len, 0);
	assert_int_equal(client.resp[1].for_id, 3);
	assert_int_equal(client.resp[1].status, 0);
	return client.resp[0].status;
}

static void returned_responses_refused(void **state) {
	(void)state;
	assert_int_equal(answer_then_ping(TEST_BIG), EMSGSIZE);
	assert_int_equal(
		log_lines(
			"handler TEST_BIG returned a response of 131073 bytes, above",
			"EMSGSIZE"
		),
		1
	);
	assert_int_equal(answer_then_ping(TEST_NO_PAYLOAD), EINVAL);
	assert_int_equal(
		log_lines(
			"handler TEST_NO_PAYLOAD returned a response of 8 bytes with no payload",
			NULL
		),
		1
	);
	handler_fd = dup(STDIN_FILENO);
	assert_true(handler_fd >= 0);
	assert_int_equal(answer_then_ping(TEST_FDS), ENOTSUP);
	assert_int_equal(log_lines("handler TEST_FDS returned a response with 1 file", NULL), 1);
	// Still the handler's: the server closes no descriptor of a handler.
	assert_true(fcntl(handler_fd, F_GETFD) >= 0);
	close(handler_fd);
}

static void stream_refusals(void **state) {
	struct fake_client client;
	int32_t value;

	(void)state;
	client_init(&client, 4343);
	assert_int_equal(dispatch(&client, 2, TEST_STREAM_BIG), 0);
	assert_int_equal(sent[0], 0);
	assert_int_equal(sent[1], -EMSGSIZE);
	assert_int_equal(sent[2], 0);
	// What could be sent was, and the end says what was not.
	assert_int_equal(client.n_resp, 3);
	assert_int_equal(client.resp[0].status, 0);
	assert_int_equal(client.resp[1].status, 0);
	value = client.resp[1].value;
	assert_int_equal(value, 2);
	assert_int_equal(client.resp[2].for_id, 2);
	assert_int_equal(client.resp[2].status, EMSGSIZE);
	assert_int_equal(client.resp[2].len, 0);

	// A stream refused once does not taint the next request.
	assert_int_equal(dispatch(&client, 3, GR_PING), 0);
	assert_int_equal(client.resp[3].status, 0);

	assert_int_equal(dispatch(&client, 4, TEST_STREAM_NULL), 0);
	assert_int_equal(sent[0], -EINVAL);
	assert_int_equal(client.n_resp, 5);
	assert_int_equal(client.resp[4].for_id, 4);
	assert_int_equal(client.resp[4].status, EINVAL);

	// The handler's own error ends the stream as it says.
	assert_int_equal(dispatch(&client, 5, TEST_STREAM_OWN), 0);
	assert_int_equal(sent[0], -EMSGSIZE);
	assert_int_equal(client.n_resp, 6);
	assert_int_equal(client.resp[5].status, ENOSPC);
}

static void send_misuse_refused(void **state) {
	struct fake_client client;
	int32_t value = 1;

	(void)state;
	client_init(&client, 4444);
	client_init(&other, 4545);
	assert_int_equal(dispatch(&client, 2, TEST_SEND_MISUSE), 0);
	assert_int_equal(sent[0], -EINVAL);
	assert_int_equal(sent[1], -EPERM);
	assert_int_equal(other.n_resp, 0);
	// Not a refused response of this stream: it ends as the handler says.
	assert_int_equal(client.n_resp, 1);
	assert_int_equal(client.resp[0].status, 0);
	// Outside any handler.
	assert_int_equal(gr_api_send(&client.ctx, sizeof(value), &value), -EPERM);
	assert_int_equal(gr_api_send(NULL, sizeof(value), &value), -EINVAL);
	assert_int_equal(client.n_resp, 1);
	assert_int_equal(
		log_lines("gr_api_send() with no client (ctx NULL): refused (EINVAL)", NULL),
		1
	);
	assert_int_equal(
		log_lines(
			"gr_api_send() outside the handler serving that client: refused (EPERM)",
			NULL
		),
		1
	);
	// The accessors answer "unknown" for no client.
	assert_int_equal(gr_api_ctx_pid(NULL), 0);
	assert_int_equal(gr_api_ctx_uid(NULL), (uid_t)-1);
	assert_int_equal(gr_api_ctx_gid(NULL), (gid_t)-1);
}

// A handler that keeps returning what cannot be sent costs a line per
// interval, not a line per request, and every request is answered.
static void refusals_logged_at_a_bounded_rate(void **state) {
	struct fake_client client;
	unsigned answered = 0;
	unsigned lines;

	(void)state;
	client_init(&client, 4646);
	for (uint32_t i = 0; i < FLOOD; i++) {
		assert_int_equal(dispatch(&client, 2 + i, TEST_BIG), 0);
		answered += client.resp[client.n_resp - 1].status == EMSGSIZE;
	}
	assert_int_equal(answered, FLOOD);
	lines = log_lines("handler TEST_BIG returned a response of 131073 bytes", NULL);
	assert_true(lines >= 1 && lines <= 1 + FLOOD_LINES_MAX);
}

// A handler that no request could reach is refused.
static void request_len_above_maximum_refused(void **state) {
	static struct gr_api_handler unreachable = {
		.name = "TEST_UNREACHABLE",
		.request_type = GR_MSG_TYPE(TEST_MODULE, 0x100),
		.request_len = GR_API_MAX_MSG_LEN + 1,
		.callback = big,
	};

	(void)state;
	assert_int_equal(gr_api_server_handler_register(&unreachable), -EINVAL);
	assert_null(api_handler_lookup(unreachable.request_type));
}

static int setup(void **state) {
	assert_int_equal(log_capture_setup(state), 0);
	assert_int_equal(dispatch_test_handlers(), 0);
	for (unsigned i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		assert_int_equal(gr_api_server_handler_register(&handlers[i]), 0);
	return 0;
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(returned_responses_refused),
		cmocka_unit_test(stream_refusals),
		cmocka_unit_test(send_misuse_refused),
		cmocka_unit_test(refusals_logged_at_a_bounded_rate),
		cmocka_unit_test(request_len_above_maximum_refused),
	};

	return cmocka_run_group_tests(tests, setup, log_capture_teardown);
}
