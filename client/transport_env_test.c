// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Transport choice: GR_API_TRANSPORT=auto|shm|socket, anything else is
// EINVAL, and a transport set in the options overrides the environment.

#include "client_priv.h"

#include <errno.h>
#include <stdlib.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// Not a transport, so that a test sees whether the choice wrote its result.
#define UNSET ((enum gr_api_transport)99)

static void
expect_choice(const struct gr_api_client_opts *opts, const char *env, enum gr_api_transport want) {
	enum gr_api_transport got = UNSET;
	assert_int_equal(client_transport_choose(opts, env, &got), 0);
	assert_int_equal(got, want);
}

static void expect_invalid(const struct gr_api_client_opts *opts, const char *env) {
	enum gr_api_transport got = UNSET;
	assert_int_equal(client_transport_choose(opts, env, &got), -EINVAL);
}

static void env_values(void **state) {
	(void)state;
	expect_choice(NULL, NULL, GR_API_TRANSPORT_AUTO);
	expect_choice(NULL, "", GR_API_TRANSPORT_AUTO);
	expect_choice(NULL, "auto", GR_API_TRANSPORT_AUTO);
	expect_choice(NULL, "shm", GR_API_TRANSPORT_SHM);
	expect_choice(NULL, "socket", GR_API_TRANSPORT_SOCKET);
}

static void env_invalid(void **state) {
	(void)state;
	expect_invalid(NULL, "SHM");
	expect_invalid(NULL, "sock");
	expect_invalid(NULL, "socket ");
	expect_invalid(NULL, "shmem");
	expect_invalid(NULL, "1");
}

static void opts_override_env(void **state) {
	(void)state;
	struct gr_api_client_opts opts = {.transport = GR_API_TRANSPORT_SOCKET};
	expect_choice(&opts, "shm", GR_API_TRANSPORT_SOCKET);
	expect_choice(&opts, "nonsense", GR_API_TRANSPORT_SOCKET);
	opts.transport = GR_API_TRANSPORT_SHM;
	expect_choice(&opts, "socket", GR_API_TRANSPORT_SHM);
	expect_choice(&opts, NULL, GR_API_TRANSPORT_SHM);
}

static void opts_auto_defers_to_env(void **state) {
	(void)state;
	struct gr_api_client_opts opts = {.transport = GR_API_TRANSPORT_AUTO};
	expect_choice(&opts, "shm", GR_API_TRANSPORT_SHM);
	expect_choice(&opts, "socket", GR_API_TRANSPORT_SOCKET);
	expect_choice(&opts, NULL, GR_API_TRANSPORT_AUTO);
	expect_invalid(&opts, "bogus");
}

static void opts_invalid(void **state) {
	(void)state;
	struct gr_api_client_opts opts = {.transport = (enum gr_api_transport)42};
	expect_invalid(&opts, NULL);
}

// connect reads the environment before it touches the socket: with a bad
// value it fails EINVAL, not ENOENT for the missing socket.
static void connect_rejects_bad_env(void **state) {
	(void)state;
	const char *path = "/nonexistent/shmchan-transport-env-test.sock";
	assert_int_equal(setenv("GR_API_TRANSPORT", "bogus", 1), 0);
	errno = 0;
	assert_null(gr_api_client_connect(path));
	assert_int_equal(errno, EINVAL);

	struct gr_api_client_opts opts = {.transport = GR_API_TRANSPORT_SOCKET, .spin_us = -1};
	errno = 0;
	assert_null(gr_api_client_connect_opts(path, &opts));
	assert_int_equal(errno, ENOENT);

	assert_int_equal(setenv("GR_API_TRANSPORT", "socket", 1), 0);
	errno = 0;
	assert_null(gr_api_client_connect(path));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(unsetenv("GR_API_TRANSPORT"), 0);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(env_values),
		cmocka_unit_test(env_invalid),
		cmocka_unit_test(opts_override_env),
		cmocka_unit_test(opts_auto_defers_to_env),
		cmocka_unit_test(opts_invalid),
		cmocka_unit_test(connect_rejects_bad_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
