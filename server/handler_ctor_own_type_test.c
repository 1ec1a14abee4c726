// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A handler registered by a constructor (GR_API_HANDLER) for a request type
// the server serves itself is refused there, before main(): the library
// reserves its own types in a constructor that runs before the program's,
// in a program linked with the static library too. The handler is never in
// the registry, and gr_api_server_start() fails with EEXIST, naming it.

#include "api.h"
#include "log_capture_test.h"

#include <gr_api_server.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static struct gr_api_out mine(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(0, 0, NULL);
}

GR_API_HANDLER(GR_PING, mine);

static void own_type_refused_in_a_constructor(void **state) {
	struct gr_api_server_conf conf;

	(void)state;
	assert_null(api_handler_lookup(GR_PING));
	gr_api_server_conf_init(&conf);
	conf.sock_path = "/nonexistent/handler_ctor_own_type_test.sock";
	assert_int_equal(gr_api_server_start(&conf), -EEXIST);
	assert_int_equal(
		log_lines(
			"handler GR_PING of request type 0xcafe1987, registered by a constructor",
			NULL
		),
		1
	);
	assert_null(api_handler_lookup(GR_PING));
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_type_refused_in_a_constructor),
	};

	return cmocka_run_group_tests(tests, log_capture_setup, log_capture_teardown);
}
