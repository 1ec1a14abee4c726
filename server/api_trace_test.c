// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The API trace through api_dispatch() with a fake transport: a known
// sequence dumped as sent, a full trace keeping the newest entries, no
// payload byte without capture and the first bytes with it, deferred
// requests and their replies, the trace's own requests left out, off
// records nothing, and a client neither root nor the server's uid refused
// with EPERM, and logged.

#include "api.h"
#include "config.h"
#include "deferred.h"
#include "dispatch_test.h"
#include "fake_transport_test.h"
#include "log_capture_test.h"
#include "type_stats.h"

#include <gr_shm.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define TEST_MODULE 0x7e57
// Answers with the status its payload's first 4 bytes hold.
#define TEST_STATUS GR_MSG_TYPE(TEST_MODULE, 0x21)
#define TEST_DEFER GR_MSG_TYPE(TEST_MODULE, 0x22)

// The trace's size in this test: small, to wrap.
#define TRACE_SIZE 4
#define ENTRIES_MAX 16
#define CLIENT_PID 4242
// A uid neither root's nor, unless the test runs as it, the server's.
#define OTHER_UID 54321

struct fake_client {
	struct gr_api_ctx ctx;
	uint32_t last_status;
	struct gr_shm_trace_entry entries[ENTRIES_MAX]; // GR_SHM_TRACE_DUMP's
	unsigned n_entries;
	struct gr_shm_trace_info info; // GR_SHM_TRACE_INFO's
};

static struct gr_api_deferred *deferred;

static int fake_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	struct fake_client *client = ctx->priv;

	(void)for_id;
	client->last_status = out->status;
	if (out->len == sizeof(struct gr_shm_trace_entry)) {
		assert_true(client->n_entries < ENTRIES_MAX);
		memcpy(&client->entries[client->n_entries++], out->payload, out->len);
	} else if (out->len == sizeof(struct gr_shm_trace_info)) {
		memcpy(&client->info, out->payload, out->len);
	}
	return 0;
}

static const struct api_transport fake_transport = FAKE_TRANSPORT(fake_send);

static struct gr_api_out defer_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	deferred = gr_api_defer(ctx);
	assert_non_null(deferred);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler status_h = FAKE_STATUS_HANDLER(TEST_STATUS);
static struct gr_api_handler defer_h = {
	.name = "TEST_DEFER",
	.request_type = TEST_DEFER,
	.callback = defer_handler,
};

static void dispatch(
	struct fake_client *client,
	uint32_t id,
	uint32_t type,
	uint32_t len,
	const void *payload
) {
	struct gr_api_request req = {.id = id, .type = type, .payload_len = len};

	assert_int_equal(api_dispatch(&client->ctx, &req, payload), 0);
}

// A client of uid said hello, on a channel (sock_fd -1) or the socket.
static void client_init(struct fake_client *client, uid_t uid, bool channel) {
	struct gr_hello_req hello = {.api_version = GR_API_VERSION};

	memset(client, 0, sizeof(*client));
	client->ctx.transport = &fake_transport;
	client->ctx.priv = client;
	client->ctx.sock_fd = channel ? -1 : 99;
	client->ctx.peer_pid = CLIENT_PID;
	client->ctx.peer_uid = uid;
	strcpy(hello.version, "api_trace_test");
	dispatch(client, 1, GR_HELLO, sizeof(hello), &hello);
	assert_int_equal(client->last_status, 0);
}

static uint32_t trace_set(struct fake_client *client, uint32_t flags) {
	struct gr_shm_trace_set_req req = {.flags = flags};

	dispatch(client, 2, GR_SHM_TRACE_SET, sizeof(req), &req);
	return client->last_status;
}

static void trace_dump(struct fake_client *client) {
	client->n_entries = 0;
	dispatch(client, 3, GR_SHM_TRACE_DUMP, 0, NULL);
	assert_int_equal(client->last_status, 0);
}

static void status_request(struct fake_client *client, uint32_t id, uint32_t status) {
	uint8_t payload[8] = {0};

	memcpy(payload, &status, sizeof(status));
	memset(payload + 4, 0xa5, 4); // what capture must not leak when off
	dispatch(client, id, TEST_STATUS, sizeof(payload), payload);
}

static bool all_zero(const uint8_t *bytes, size_t n) {
	for (size_t i = 0; i < n; i++)
		if (bytes[i] != 0)
			return false;
	return true;
}

static int setup(void **state) {
	assert_int_equal(log_capture_setup(state), 0);
	tsc_clock_init();
	server_conf.trace_size = TRACE_SIZE;
	assert_int_equal(dispatch_test_handlers(), 0);
	assert_int_equal(api_table_register(&handlers_trace), 0);
	assert_int_equal(gr_api_server_handler_register(&status_h), 0);
	assert_int_equal(gr_api_server_handler_register(&defer_h), 0);
	return 0;
}

static void dump_shows_a_known_sequence(void **state) {
	struct fake_client client;
	const struct gr_shm_trace_entry *e;

	(void)state;
	client_init(&client, geteuid(), true);
	assert_int_equal(trace_set(&client, GR_SHM_TRACE_ON | GR_SHM_TRACE_CLEAR), 0);
	status_request(&client, 10, 0);
	status_request(&client, 11, ENOENT);
	dispatch(&client, 12, GR_MSG_TYPE(TEST_MODULE, 0x7f), 0, NULL); // unknown
	trace_dump(&client);
	assert_int_equal(client.n_entries, 3);
	for (unsigned i = 0; i < 3; i++) {
		e = &client.entries[i];
		assert_int_equal(e->id, 10 + i);
		assert_int_equal(e->pid, CLIENT_PID);
		assert_int_equal(e->transport, GR_SHM_TRANSPORT_SHM);
		assert_int_equal(e->responses, 1);
		assert_int_equal(e->flags, 0);
		assert_int_equal(e->captured_len, 0);
		assert_true(all_zero(e->payload, sizeof(e->payload)));
		assert_true(e->time_ns > 0);
	}
	assert_int_equal(client.entries[0].type, TEST_STATUS);
	assert_int_equal(client.entries[0].req_len, 8);
	assert_int_equal(client.entries[0].status, 0);
	assert_int_equal(client.entries[1].status, ENOENT);
	assert_int_equal(client.entries[2].status, ENOTSUP);
	assert_int_equal(client.entries[2].handle_ns, 0);
	// The trace's own requests (set, dump) are not in it.
	trace_dump(&client);
	assert_int_equal(client.n_entries, 3);
}

static void full_trace_keeps_the_newest(void **state) {
	struct fake_client client;

	(void)state;
	client_init(&client, 0, false);
	assert_int_equal(trace_set(&client, GR_SHM_TRACE_ON | GR_SHM_TRACE_CLEAR), 0);
	for (uint32_t id = 100; id < 110; id++)
		status_request(&client, id, 0);
	trace_dump(&client);
	assert_int_equal(client.n_entries, TRACE_SIZE);
	for (unsigned i = 0; i < TRACE_SIZE; i++) {
		assert_int_equal(client.entries[i].id, 110 - TRACE_SIZE + i);
		assert_int_equal(client.entries[i].transport, GR_SHM_TRANSPORT_SOCKET);
	}
	dispatch(&client, 4, GR_SHM_TRACE_INFO, 0, NULL);
	assert_int_equal(client.info.held, TRACE_SIZE);
	assert_int_equal(client.info.size, TRACE_SIZE);
	assert_true(client.info.flags & GR_SHM_TRACE_ON);
}

static void capture_keeps_the_first_bytes(void **state) {
	uint8_t payload[GR_SHM_TRACE_CAPTURE_LEN + 72] = {0};
	struct fake_client client;

	(void)state;
	for (size_t i = 4; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	client_init(&client, 0, true);
	assert_int_equal(
		trace_set(&client, GR_SHM_TRACE_ON | GR_SHM_TRACE_CLEAR | GR_SHM_TRACE_CAPTURE),
		0
	);
	status_request(&client, 20, 0);
	dispatch(&client, 21, TEST_STATUS, sizeof(payload), payload);
	trace_dump(&client);
	assert_int_equal(client.n_entries, 2);
	assert_true(client.entries[0].flags & GR_SHM_TRACE_CAPTURED);
	assert_int_equal(client.entries[0].captured_len, 8);
	assert_int_equal(client.entries[0].payload[4], 0xa5);
	assert_true(all_zero(client.entries[0].payload + 8, GR_SHM_TRACE_CAPTURE_LEN - 8));
	assert_int_equal(client.entries[1].captured_len, GR_SHM_TRACE_CAPTURE_LEN);
	assert_int_equal(client.entries[1].req_len, sizeof(payload));
	assert_memory_equal(client.entries[1].payload, payload, GR_SHM_TRACE_CAPTURE_LEN);
	// Capture off again: entries that overwrite captured ones hold none.
	assert_int_equal(trace_set(&client, GR_SHM_TRACE_ON), 0);
	for (uint32_t id = 30; id < 30 + TRACE_SIZE; id++)
		status_request(&client, id, 0);
	trace_dump(&client);
	assert_int_equal(client.n_entries, TRACE_SIZE);
	for (unsigned i = 0; i < TRACE_SIZE; i++) {
		assert_false(client.entries[i].flags & GR_SHM_TRACE_CAPTURED);
		assert_true(all_zero(client.entries[i].payload, GR_SHM_TRACE_CAPTURE_LEN));
	}
}

static void deferred_reply_is_an_entry(void **state) {
	struct fake_client client;

	(void)state;
	client_init(&client, 0, true);
	assert_int_equal(trace_set(&client, GR_SHM_TRACE_ON | GR_SHM_TRACE_CLEAR), 0);
	dispatch(&client, 40, TEST_DEFER, 0, NULL);
	assert_int_equal(gr_api_deferred_reply(deferred, EIO, 0, NULL), 0);
	assert_int_equal(api_deferred_flush(&client.ctx), 1);
	trace_dump(&client);
	assert_int_equal(client.n_entries, 2);
	assert_int_equal(client.entries[0].id, 40);
	assert_int_equal(client.entries[0].flags, GR_SHM_TRACE_DEFERRED);
	assert_int_equal(client.entries[0].responses, 0);
	assert_int_equal(client.entries[1].id, 40);
	assert_int_equal(client.entries[1].type, TEST_DEFER);
	assert_int_equal(client.entries[1].flags, GR_SHM_TRACE_REPLY);
	assert_int_equal(client.entries[1].status, EIO);
	api_deferred_close(&client.ctx);
	api_deferred_release(&client.ctx);
}

static void off_records_nothing(void **state) {
	struct fake_client client;

	(void)state;
	client_init(&client, 0, true);
	assert_int_equal(trace_set(&client, GR_SHM_TRACE_ON | GR_SHM_TRACE_CLEAR), 0);
	status_request(&client, 50, 0);
	assert_int_equal(trace_set(&client, 0), 0);
	status_request(&client, 51, 0);
	trace_dump(&client);
	assert_int_equal(client.n_entries, 1);
	assert_int_equal(client.entries[0].id, 50);
	assert_int_equal(trace_set(&client, 1u << 31), EINVAL);
}

static void other_uid_gets_eperm_and_is_logged(void **state) {
	unsigned before = log_lines("client pid 4242", "refused (EPERM)");
	struct fake_client client;

	(void)state;
	if (geteuid() == OTHER_UID)
		skip();
	client_init(&client, OTHER_UID, false);
	assert_int_equal(trace_set(&client, GR_SHM_TRACE_ON), EPERM);
	client.n_entries = 0;
	dispatch(&client, 3, GR_SHM_TRACE_DUMP, 0, NULL);
	assert_int_equal(client.last_status, EPERM);
	assert_int_equal(client.n_entries, 0);
	// The state is anyone's to read.
	dispatch(&client, 4, GR_SHM_TRACE_INFO, 0, NULL);
	assert_int_equal(client.last_status, 0);
	assert_int_equal(log_lines("client pid 4242", "refused (EPERM)"), before + 1);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dump_shows_a_known_sequence),
		cmocka_unit_test(full_trace_keeps_the_newest),
		cmocka_unit_test(capture_keeps_the_first_bytes),
		cmocka_unit_test(deferred_reply_is_an_entry),
		cmocka_unit_test(off_records_nothing),
		cmocka_unit_test(other_uid_gets_eperm_and_is_logged),
	};

	return cmocka_run_group_tests(tests, setup, log_capture_teardown);
}
