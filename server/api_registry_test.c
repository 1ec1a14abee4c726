// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The handler registry's hash table (every type found among many that
// collide, misses end, the API_HANDLERS_MAX bound aborts) and who owns a
// response payload: the dispatcher frees a handler's malloc'ed payload and
// never a borrowed one.

#include "api.h"
#include "config.h"

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

// Handlers registered besides test_handlers: the daemon's own (by
// constructors) and owned_h, borrowed_h.
static unsigned other_handlers;

static const char borrowed_payload[] = "kept by the handler";

static struct api_out nothing(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return api_out(0, 0, NULL);
}

static struct api_out owned(const void *request, uint32_t len, struct api_ctx *ctx) {
	char *payload = strdup("given away");

	(void)request;
	(void)len;
	(void)ctx;
	if (payload == NULL)
		return api_out(ENOMEM, 0, NULL);
	return api_out(0, (uint32_t)strlen(payload) + 1, payload);
}

static struct api_out borrowed(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return api_out_borrowed(0, sizeof(borrowed_payload), borrowed_payload);
}

static struct api_handler test_handlers[TEST_HANDLERS];
static char test_names[TEST_HANDLERS][16];

// What the fake transport was last asked to send.
static struct {
	uint32_t status;
	uint32_t len;
	char payload[64];
} sent;

static int fake_send(struct api_ctx *ctx, uint32_t for_id, const struct api_out *out) {
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
		test_handlers[i] = (struct api_handler){
			.name = test_names[i],
			.request_type = TEST_TYPE(i),
			.callback = nothing,
		};
		api_handler_register(&test_handlers[i]);
	}
}

static void every_type_found(void **state) {
	(void)state;
	for (unsigned i = 0; i < TEST_HANDLERS; i++)
		assert_ptr_equal(api_handler_lookup(TEST_TYPE(i)), &test_handlers[i]);
	// The daemon's own handlers, registered by constructors before ours.
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

// Fill the registry to API_HANDLERS_MAX, check every handler is still
// found, then register one more: in a child, which must abort there.
static void fill_then_one_more(void *arg) {
	static struct api_handler extra[API_HANDLERS_MAX];
	static struct api_handler one_more = {
		.name = "one more",
		.request_type = GR_MSG_TYPE(0x7e71, 0),
		.callback = nothing,
	};
	unsigned n = 0;

	(void)arg;
	while (api_handler_count() < API_HANDLERS_MAX) {
		extra[n] = (struct api_handler){
			.name = "extra",
			.request_type = GR_MSG_TYPE(0x7e70, n),
			.callback = nothing,
		};
		api_handler_register(&extra[n++]);
	}
	for (unsigned i = 0; i < n; i++) {
		if (api_handler_lookup(GR_MSG_TYPE(0x7e70, i)) != &extra[i])
			_exit(1);
	}
	if (api_handler_lookup(one_more.request_type) != NULL)
		_exit(2);
	api_handler_register(&one_more);
	_exit(3);
}

// Registering past the bound is a programming error, never a silent
// overwrite or an endless probe.
static void full_registry_aborts(void **state) {
	int status;

	(void)state;
	status = child_status_of(fill_then_one_more, NULL);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
}

static struct api_handler owned_h = {
	.name = "owned",
	.request_type = OWNED_TYPE,
	.callback = owned};
static struct api_handler borrowed_h = {
	.name = "borrowed",
	.request_type = BORROWED_TYPE,
	.callback = borrowed,
};

static void dispatch_ok(uint32_t type) {
	struct api_ctx ctx = {.transport = &fake_transport, .hello_done = true, .sock_fd = -1};
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

static int setup(void **state) {
	(void)state;
	other_handlers = api_handler_count();
	register_test_handlers();
	api_handler_register(&owned_h);
	api_handler_register(&borrowed_h);
	other_handlers += 2;
	return 0;
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_type_found),
		cmocka_unit_test(unknown_types_missed),
		cmocka_unit_test(full_registry_aborts),
		cmocka_unit_test(owned_payload_sent_and_freed),
		cmocka_unit_test(borrowed_payload_sent_and_kept),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
