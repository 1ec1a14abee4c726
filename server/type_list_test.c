// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Introspection and unregistering, on the registry without a running
// server: GR_SHM_TYPE_LIST streams every registered type, sorted, with its
// handler's name, its module's name and its shortest request, at
// GR_API_SERVER_HANDLERS_MAX handlers too; gr_api_server_module_name()
// names a module, renames it, unnames it, refuses the server's own modules
// and bad names; gr_api_server_handler_unregister() removes a handler (its
// requests get ENOTSUP, the others are still found), refuses the server's
// own types (EPERM), an unknown one (ENOENT) and a call from a handler
// (EDEADLK).

#include "api.h"

#include <gr_shm.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define APP_MODULE 0x7e80
#define APP_TYPE(i) GR_MSG_TYPE(APP_MODULE, i)

// What the fake transport got: every response of the last dispatch.
static struct {
	unsigned n;
	uint32_t status; // of the last one
	struct gr_shm_type_info types[GR_API_SERVER_HANDLERS_MAX + 1];
} sent;

static int fake_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	(void)ctx;
	(void)for_id;
	sent.status = out->status;
	if (out->len == 0)
		return 0;
	assert_int_equal(out->len, sizeof(struct gr_shm_type_info));
	assert_true(sent.n < GR_API_SERVER_HANDLERS_MAX + 1);
	memcpy(&sent.types[sent.n++], out->payload, out->len);
	return 0;
}

static const struct api_transport fake_transport = {.name = "fake", .send = fake_send};

static uint32_t dispatch(uint32_t type) {
	struct gr_api_ctx ctx = {.transport = &fake_transport, .hello_done = true, .sock_fd = -1};
	// Long enough for every handler of the test.
	static const uint8_t payload[32];
	struct gr_api_request req = {.id = 9, .type = type, .payload_len = sizeof(payload)};

	memset(&sent, 0, sizeof(sent));
	assert_int_equal(api_dispatch(&ctx, &req, payload), 0);
	return sent.status;
}

static struct gr_api_out nothing(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(0, 0, NULL);
}

// What a handler's calls of the registry return, in its status.
static struct gr_api_out
unregister_in_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	if (gr_api_server_handler_unregister(APP_TYPE(1)) != -EDEADLK)
		return gr_api_out(EPROTO, 0, NULL);
	if (gr_api_server_module_name(APP_MODULE, "inside") != -EDEADLK)
		return gr_api_out(EPROTO, 0, NULL);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler first = {"APP_FIRST", APP_TYPE(1), 24, nothing};
static struct gr_api_handler second = {"APP_SECOND", APP_TYPE(2), 0, nothing};
static struct gr_api_handler misuse = {"APP_MISUSE", APP_TYPE(3), 0, unregister_in_handler};

// The server's own tables as a start registers them (the constructor of the
// library reserved their types already), then the application's.
static int setup(void **state) {
	(void)state;
	// Links server.c, whose constructor reserves the server's own types,
	// as an application's gr_api_server_start() does; no server runs.
	assert_int_equal(gr_api_server_stop(), 0);
	assert_int_equal(api_table_register(&handlers_main), 0);
	assert_int_equal(api_table_register(&handlers_types), 0);
	assert_int_equal(gr_api_server_handler_register(&first), 0);
	assert_int_equal(gr_api_server_handler_register(&second), 0);
	assert_int_equal(gr_api_server_handler_register(&misuse), 0);
	return 0;
}

static const struct gr_shm_type_info *sent_type(uint32_t type) {
	for (unsigned i = 0; i < sent.n; i++)
		if (sent.types[i].type == type)
			return &sent.types[i];
	return NULL;
}

static void list_names_types_and_modules(void **state) {
	const struct gr_shm_type_info *t;

	(void)state;
	assert_int_equal(gr_api_server_module_name(APP_MODULE, "app-1.x_y"), 0);
	assert_int_equal(dispatch(GR_SHM_TYPE_LIST), 0);
	assert_int_equal(sent.n, api_handler_count());
	for (unsigned i = 1; i < sent.n; i++)
		assert_true(sent.types[i - 1].type < sent.types[i].type);
	t = sent_type(APP_TYPE(1));
	assert_non_null(t);
	assert_string_equal(t->name, "APP_FIRST");
	assert_string_equal(t->module, "app-1.x_y");
	assert_int_equal(t->request_len, 24);
	assert_int_equal(t->flags, 0);
	assert_int_equal(t->reserved, 0);
	t = sent_type(GR_HELLO);
	assert_non_null(t);
	assert_string_equal(t->name, "GR_HELLO");
	assert_string_equal(t->module, "main");
	assert_int_equal(t->request_len, sizeof(struct gr_hello_req));
	assert_int_equal(t->flags, GR_SHM_TYPE_SERVER);
	t = sent_type(GR_SHM_TYPE_LIST);
	assert_non_null(t);
	assert_string_equal(t->module, "shm");

	// Renamed, then unnamed.
	assert_int_equal(gr_api_server_module_name(APP_MODULE, "renamed"), 0);
	dispatch(GR_SHM_TYPE_LIST);
	assert_string_equal(sent_type(APP_TYPE(2))->module, "renamed");
	assert_int_equal(gr_api_server_module_name(APP_MODULE, NULL), 0);
	dispatch(GR_SHM_TYPE_LIST);
	assert_string_equal(sent_type(APP_TYPE(2))->module, "");
}

static void module_names_refused(void **state) {
	char too_long[GR_SHM_MODULE_NAME_LEN + 1];

	(void)state;
	memset(too_long, 'a', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	assert_int_equal(gr_api_server_module_name(GR_MAIN_MODULE, "mine"), -EPERM);
	assert_int_equal(gr_api_server_module_name(GR_SHM_MODULE, "mine"), -EPERM);
	assert_int_equal(gr_api_server_module_name(APP_MODULE, ""), -EINVAL);
	assert_int_equal(gr_api_server_module_name(APP_MODULE, "two words"), -EINVAL);
	assert_int_equal(gr_api_server_module_name(APP_MODULE, "esc\x1b"), -EINVAL);
	assert_int_equal(gr_api_server_module_name(APP_MODULE, too_long), -EINVAL);
	too_long[GR_SHM_MODULE_NAME_LEN - 1] = '\0';
	assert_int_equal(gr_api_server_module_name(APP_MODULE, too_long), 0);
	dispatch(GR_SHM_TYPE_LIST);
	assert_string_equal(sent_type(APP_TYPE(1))->module, too_long);
	// The bound: GR_API_SERVER_MODULE_NAMES_MAX modules, this one included.
	for (unsigned i = 1; i < GR_API_SERVER_MODULE_NAMES_MAX; i++)
		assert_int_equal(gr_api_server_module_name((uint16_t)(APP_MODULE + i), "m"), 0);
	assert_int_equal(gr_api_server_module_name(APP_MODULE - 1, "m"), -ENOSPC);
	// Renaming needs no room; unnaming makes some.
	assert_int_equal(gr_api_server_module_name(APP_MODULE, "again"), 0);
	assert_int_equal(gr_api_server_module_name(APP_MODULE + 1, NULL), 0);
	assert_int_equal(gr_api_server_module_name(APP_MODULE - 1, "m"), 0);
	for (unsigned i = 2; i < GR_API_SERVER_MODULE_NAMES_MAX; i++)
		assert_int_equal(gr_api_server_module_name((uint16_t)(APP_MODULE + i), NULL), 0);
	assert_int_equal(gr_api_server_module_name(APP_MODULE - 1, NULL), 0);
}

static void unregister_removes_handler(void **state) {
	unsigned count = api_handler_count();

	(void)state;
	assert_int_equal(dispatch(APP_TYPE(1)), 0);
	assert_int_equal(dispatch(APP_TYPE(3)), 0);
	assert_int_equal(gr_api_server_handler_unregister(APP_TYPE(1)), 0);
	assert_int_equal(api_handler_count(), count - 1);
	assert_int_equal(dispatch(APP_TYPE(1)), ENOTSUP);
	// The others are found still: the table was rebuilt, no chain cut.
	assert_int_equal(dispatch(APP_TYPE(2)), 0);
	assert_int_equal(dispatch(GR_PING), 0);
	dispatch(GR_SHM_TYPE_LIST);
	assert_int_equal(sent.n, count - 1);
	assert_null(sent_type(APP_TYPE(1)));
	assert_int_equal(gr_api_server_handler_unregister(APP_TYPE(1)), -ENOENT);
	// Registered again: served again.
	assert_int_equal(gr_api_server_handler_register(&first), 0);
	assert_int_equal(dispatch(APP_TYPE(1)), 0);
}

static void unregister_refused(void **state) {
	(void)state;
	assert_int_equal(gr_api_server_handler_unregister(GR_PING), -EPERM);
	assert_int_equal(gr_api_server_handler_unregister(GR_SHM_TYPE_LIST), -EPERM);
	// Reserved whether registered or not: the attach is not in this test.
	assert_int_equal(gr_api_server_handler_unregister(GR_SHM_ATTACH), -EPERM);
	assert_int_equal(dispatch(GR_PING), 0);
	assert_int_equal(gr_api_server_handler_unregister(APP_TYPE(0x777)), -ENOENT);
	// In a handler: refused at once, not a wait for its own lock.
	assert_int_equal(dispatch(APP_TYPE(3)), 0);
	assert_int_equal(dispatch(APP_TYPE(1)), 0);
}

// The registry full: GR_API_SERVER_HANDLERS_MAX types, every one listed.
static void list_of_a_full_registry(void **state) {
	static struct gr_api_handler fill[GR_API_SERVER_HANDLERS_MAX];
	// Names longer than the field, to be cut.
	static char names[GR_API_SERVER_HANDLERS_MAX][GR_SHM_TYPE_NAME_LEN + 8];
	unsigned n = 0;

	(void)state;
	while (api_handler_count() < GR_API_SERVER_HANDLERS_MAX) {
		memset(names[n], 'x', sizeof(names[n]) - 1);
		memcpy(names[n], "FILL_", 5);
		names[n][5] = (char)('0' + n / 100);
		names[n][6] = (char)('0' + n / 10 % 10);
		names[n][7] = (char)('0' + n % 10);
		fill[n] = (struct gr_api_handler){names[n], GR_MSG_TYPE(0x7e90, n), n, nothing};
		assert_int_equal(gr_api_server_handler_register(&fill[n]), 0);
		n++;
	}
	assert_int_equal(dispatch(GR_SHM_TYPE_LIST), 0);
	assert_int_equal(sent.n, GR_API_SERVER_HANDLERS_MAX);
	for (unsigned i = 0; i < n; i++) {
		const struct gr_shm_type_info *t = sent_type(GR_MSG_TYPE(0x7e90, i));

		assert_non_null(t);
		assert_int_equal(t->request_len, i);
		assert_int_equal(strlen(t->name), GR_SHM_TYPE_NAME_LEN - 1);
		assert_memory_equal(t->name, names[i], GR_SHM_TYPE_NAME_LEN - 1);
	}
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(gr_api_server_handler_unregister(GR_MSG_TYPE(0x7e90, i)), 0);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(list_names_types_and_modules),
		cmocka_unit_test(module_names_refused),
		cmocka_unit_test(unregister_removes_handler),
		cmocka_unit_test(unregister_refused),
		cmocka_unit_test(list_of_a_full_registry),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
