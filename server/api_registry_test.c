// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The handler registry's hash table (every type found among many that
// collide, misses end, the GR_API_SERVER_HANDLERS_MAX bound refuses with
// ENOSPC, the server's own handlers dropped and registered again as a stop
// and a start do, the application's kept) and who owns a
// response payload: the dispatcher frees a handler's malloc'ed payload and
// never a borrowed one.

#include "api.h"
#include "dispatch_test.h"
#include "config.h"

#include <gr_shm.h>

// child_die_with_parent(), shared with the integration tests.
#include "check.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

// Test types: few modules, consecutive ids, as real modules number their
// requests; they share hash slots and probe runs with each other and with
// the daemon's own types.
#define TEST_MODULES 5
#define TEST_TYPE(i) GR_MSG_TYPE(0x7e50 + (i) % TEST_MODULES, (i) / TEST_MODULES)
#define TEST_HANDLERS 160

#define OWNED_TYPE GR_MSG_TYPE(0x7e60, 1)
#define BORROWED_TYPE GR_MSG_TYPE(0x7e60, 2)

// Handlers registered besides test_handlers: the server's own
// (api_table_register()) and owned_h, borrowed_h.
static unsigned other_handlers;
// The server's own among them.
static unsigned own_handlers;

static const char borrowed_payload[] = "kept by the handler";

static struct gr_api_out nothing(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out owned(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	char *payload = strdup("given away");

	(void)request;
	(void)len;
	(void)ctx;
	if (payload == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	return gr_api_out(0, (uint32_t)strlen(payload) + 1, payload);
}

static struct gr_api_out borrowed(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out_borrowed(0, sizeof(borrowed_payload), borrowed_payload);
}

static struct gr_api_handler test_handlers[TEST_HANDLERS];
static char test_names[TEST_HANDLERS][16];

// What the fake transport was last asked to send.
static struct {
	uint32_t status;
	uint32_t len;
	char payload[64];
} sent;

static int fake_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	(void)ctx;
	(void)for_id;
	sent.status = out->status;
	sent.len = out->len;
	assert_true(out->len <= sizeof(sent.payload));
	memcpy(sent.payload, out->payload, out->len);
	return 0;
}

static const struct api_transport fake_transport = {.name = "fake", .send = fake_send};

static void register_test_handlers(void) {
	for (unsigned i = 0; i < TEST_HANDLERS; i++) {
		snprintf(test_names[i], sizeof(test_names[i]), "test %u", i);
		test_handlers[i] = (struct gr_api_handler){
			.name = test_names[i],
			.request_type = TEST_TYPE(i),
			.callback = nothing,
		};
		assert_int_equal(gr_api_server_handler_register(&test_handlers[i]), 0);
	}
}

static void every_type_found(void **state) {
	(void)state;
	for (unsigned i = 0; i < TEST_HANDLERS; i++)
		assert_ptr_equal(api_handler_lookup(TEST_TYPE(i)), &test_handlers[i]);
	// The server's own handlers, registered before ours.
	assert_non_null(api_handler_lookup(GR_PING2));
	assert_int_equal(api_handler_lookup(GR_PING2)->request_type, GR_PING2);
	assert_int_equal(api_handler_lookup(GR_HELLO)->request_type, GR_HELLO);
	assert_int_equal(api_handler_count(), TEST_HANDLERS + other_handlers);
}

static void unknown_types_missed(void **state) {
	(void)state;
	// Next to registered ones: same modules, the ids just past the last.
	for (unsigned i = TEST_HANDLERS; i < TEST_HANDLERS + 2 * TEST_MODULES; i++)
		assert_null(api_handler_lookup(TEST_TYPE(i)));
	assert_null(api_handler_lookup(0));
	assert_null(api_handler_lookup(UINT32_MAX));
	assert_null(api_handler_lookup(GR_MSG_TYPE(GR_MAIN_MODULE, 0xffff)));
}

// Fill the registry to GR_API_SERVER_HANDLERS_MAX, check every handler is
// still found, then register one more: in a child, so that the other tests
// keep their room.
static void fill_then_one_more(void *arg) {
	static struct gr_api_handler extra[GR_API_SERVER_HANDLERS_MAX];
	static struct gr_api_handler one_more = {
		.name = "one more",
		.request_type = GR_MSG_TYPE(0x7e71, 0),
		.callback = nothing,
	};
	unsigned n = 0;

	(void)arg;
	while (api_handler_count() < GR_API_SERVER_HANDLERS_MAX) {
		extra[n] = (struct gr_api_handler){
			.name = "extra",
			.request_type = GR_MSG_TYPE(0x7e70, n),
			.callback = nothing,
		};
		if (gr_api_server_handler_register(&extra[n++]) != 0)
			_exit(1);
	}
	for (unsigned i = 0; i < n; i++) {
		if (api_handler_lookup(GR_MSG_TYPE(0x7e70, i)) != &extra[i])
			_exit(2);
	}
	if (gr_api_server_handler_register(&one_more) != -ENOSPC)
		_exit(3);
	if (api_handler_lookup(one_more.request_type) != NULL)
		_exit(4);
	// A table of the server's own past the bound: none of it stays.
	api_tables_drop();
	if (api_handler_lookup(GR_PING2) != NULL ||
	    api_handler_lookup(GR_MSG_TYPE(0x7e70, 0)) == NULL)
		_exit(5);
	while (api_handler_count() < GR_API_SERVER_HANDLERS_MAX - 1) {
		extra[n] = (struct gr_api_handler){
			.name = "extra",
			.request_type = GR_MSG_TYPE(0x7e70, n),
			.callback = nothing,
		};
		if (gr_api_server_handler_register(&extra[n++]) != 0)
			_exit(6);
	}
	if (api_table_register(&handlers_main) != -ENOSPC || api_handler_lookup(GR_HELLO) != NULL ||
	    api_handler_count() != GR_API_SERVER_HANDLERS_MAX - 1)
		_exit(7);
	_exit(0);
}

// Registering past the bound is refused, never a silent overwrite or an
// endless probe, and never an abort.
static void full_registry_refused(void **state) {
	int status;

	(void)state;
	status = child_status_of(fill_then_one_more, NULL);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

// What a stop and a start do to the registry: the server's own handlers go
// and come back; the application's stay and keep their types.
static void own_handlers_dropped_and_back(void **state) {
	unsigned count = api_handler_count();

	(void)state;
	api_tables_drop();
	assert_null(api_handler_lookup(GR_HELLO));
	assert_null(api_handler_lookup(GR_SHM_ECHO));
	assert_int_equal(api_handler_count(), count - own_handlers);
	for (unsigned i = 0; i < TEST_HANDLERS; i++)
		assert_ptr_equal(api_handler_lookup(TEST_TYPE(i)), &test_handlers[i]);
	assert_int_equal(dispatch_test_handlers(), 0);
	assert_int_equal(api_handler_count(), count);
	assert_non_null(api_handler_lookup(GR_HELLO));
	// A table of the server's own is refused whole when one of its types
	// is the application's.
	assert_int_equal(api_table_register(&handlers_main), -EEXIST);
	assert_int_equal(api_handler_count(), count);
}

static struct gr_api_handler owned_h = {
	.name = "owned",
	.request_type = OWNED_TYPE,
	.callback = owned};
static struct gr_api_handler borrowed_h = {
	.name = "borrowed",
	.request_type = BORROWED_TYPE,
	.callback = borrowed,
};

static void dispatch_ok(uint32_t type) {
	struct gr_api_ctx ctx = {.transport = &fake_transport, .hello_done = true, .sock_fd = -1};
	struct gr_api_request req = {.id = 7, .type = type};

	memset(&sent, 0, sizeof(sent));
	assert_int_equal(api_dispatch(&ctx, &req, NULL), 0);
	assert_int_equal(sent.status, 0);
}

// Freed by the dispatcher: LeakSanitizer fails the sanitized build if not.
static void owned_payload_sent_and_freed(void **state) {
	(void)state;
	dispatch_ok(OWNED_TYPE);
	assert_int_equal(sent.len, sizeof("given away"));
	assert_string_equal(sent.payload, "given away");
}

// A free() of this static array would abort (glibc: invalid pointer).
static void borrowed_payload_sent_and_kept(void **state) {
	(void)state;
	for (int i = 0; i < 3; i++) {
		dispatch_ok(BORROWED_TYPE);
		assert_int_equal(sent.len, sizeof(borrowed_payload));
		assert_string_equal(sent.payload, borrowed_payload);
	}
	assert_string_equal(borrowed_payload, "kept by the handler");
}

// The server's own handlers this test links, as gr_api_server_start()
// registers them, then the test's.
static int setup(void **state) {
	(void)state;
	assert_int_equal(dispatch_test_handlers(), 0);
	own_handlers = api_handler_count();
	register_test_handlers();
	assert_int_equal(gr_api_server_handler_register(&owned_h), 0);
	assert_int_equal(gr_api_server_handler_register(&borrowed_h), 0);
	other_handlers = own_handlers + 2;
	return 0;
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_type_found),
		cmocka_unit_test(unknown_types_missed),
		cmocka_unit_test(full_registry_refused),
		cmocka_unit_test(own_handlers_dropped_and_back),
		cmocka_unit_test(owned_payload_sent_and_freed),
		cmocka_unit_test(borrowed_payload_sent_and_kept),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
