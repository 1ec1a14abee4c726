// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A handler registered by a constructor (GR_API_HANDLER) whose registration
// fails, a second one for a type already taken: the constructor cannot
// return the error, so gr_api_server_start() does, naming the handler, and
// starts nothing; the first handler of the type stays. Nothing aborts.

#include "api.h"
#include "log_capture_test.h"

#include <gr_api_server.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define TEST_TAKEN GR_MSG_TYPE(0x7e58, 1)
GR_REQ(TEST_TAKEN, struct gr_empty, struct gr_empty);
// The same type under another name, as a second module would claim it.
#define TEST_TAKEN_AGAIN TEST_TAKEN
enum { TEST_TAKEN_AGAIN_REQ_LEN = 0 };

static struct gr_api_out first(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out second(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	return first(request, len, ctx);
}

GR_API_HANDLER(TEST_TAKEN, first);
GR_API_HANDLER(TEST_TAKEN_AGAIN, second);

static void start_fails_naming_the_handler(void **state) {
	const struct gr_api_handler *kept = api_handler_lookup(TEST_TAKEN);
	struct gr_api_server_conf conf;
	const char *refused;

	(void)state;
	// C leaves the order of two constructors open (link-time optimisation
	// may swap those of one file): whichever registered first keeps the
	// type, the other is the failure start names.
	assert_non_null(kept);
	if (strcmp(kept->name, "TEST_TAKEN") == 0) {
		assert_ptr_equal(kept->callback, first);
		refused = "handler TEST_TAKEN_AGAIN of request type 0x7e580001";
	} else {
		assert_string_equal(kept->name, "TEST_TAKEN_AGAIN");
		assert_ptr_equal(kept->callback, second);
		refused = "handler TEST_TAKEN of request type 0x7e580001";
	}
	gr_api_server_conf_init(&conf);
	conf.sock_path = "/nonexistent/handler_ctor_test.sock";
	assert_int_equal(gr_api_server_start(&conf), -EEXIST);
	assert_int_equal(log_lines(refused, NULL), 1);
	// Every start fails the same way: the handler is still not registered.
	assert_int_equal(gr_api_server_start(&conf), -EEXIST);
	assert_ptr_equal(api_handler_lookup(TEST_TAKEN), kept);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(start_fails_naming_the_handler),
	};

	return cmocka_run_group_tests(tests, log_capture_setup, log_capture_teardown);
}
