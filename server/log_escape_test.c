// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What a client writes reaches the log escaped: a newline in a hello's
// version string or in a log level pattern makes no line of its own, and
// any byte that is not printable ASCII shows as \xNN; log_escape() itself
// never cuts an escape, and always terminates.

#include "api.h"
#include "dispatch_test.h"
#include "log_capture_test.h"
#include "log_escape.h"
#include "config.h"

#include <gr_api.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

// What a forging client writes after its newline: a line of the daemon's
// own shape.
#define FORGED "shmchand: serve: forged line"

static int quiet_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	(void)ctx;
	(void)for_id;
	(void)out;
	return 0;
}

static const struct api_transport quiet_transport = {.name = "test", .send = quiet_send};

static void client_init(struct gr_api_ctx *ctx, pid_t pid) {
	memset(ctx, 0, sizeof(*ctx));
	ctx->transport = &quiet_transport;
	ctx->sock_fd = -1;
	ctx->peer_pid = pid;
}

static void escapes_controls_and_high_bytes(void **state) {
	char out[LOG_ESCAPE_LEN(16)];

	(void)state;
	assert_string_equal(log_escape(out, sizeof(out), "plain text"), "plain text");
	assert_string_equal(log_escape(out, sizeof(out), "a\nb\r\x1b[2J"), "a\\x0ab\\x0d\\x1b[2J");
	assert_string_equal(log_escape(out, sizeof(out), "back\\slash"), "back\\\\slash");
	// DEL, a C1 control in UTF-8 (U+009B), a byte of Latin-1.
	assert_string_equal(
		log_escape(out, sizeof(out), "\x7f\xc2\x9b\xe9"),
		"\\x7f\\xc2\\x9b\\xe9"
	);
}

static void never_cuts_an_escape(void **state) {
	char out[6];

	(void)state;
	// "ab" then "\x0a" would need 6 bytes with the NUL: cut before it.
	assert_string_equal(log_escape(out, sizeof(out), "ab\ncd"), "ab");
	assert_string_equal(log_escape(out, 1, "abc"), "");
	assert_string_equal(log_escape(out, sizeof(out), "abcdefgh"), "abcde");
}

static void hello_version_escaped(void **state) {
	struct gr_hello_req hello = {.api_version = GR_API_VERSION};
	struct gr_api_request req = {.id = 1, .type = GR_HELLO, .payload_len = sizeof(hello)};
	struct gr_api_ctx ctx;

	(void)state;
	snprintf(hello.version, sizeof(hello.version), "v1\n" FORGED);
	client_init(&ctx, 4646);
	assert_int_equal(api_dispatch(&ctx, &req, &hello), 0);
	assert_int_equal(log_lines("client pid 4646: hello from 'v1\\x0a" FORGED "'", NULL), 1);
	assert_int_equal(log_lines(FORGED, NULL), 1);
}

static void log_pattern_escaped(void **state) {
	struct gr_hello_req hello = {.api_version = GR_API_VERSION, .version = "test"};
	struct gr_api_request req = {.id = 1, .type = GR_HELLO, .payload_len = sizeof(hello)};
	// RTE_LOG_INFO: 7 in the line below.
	struct gr_log_level_set_req set = {.level = RTE_LOG_INFO};
	struct gr_api_ctx ctx;

	(void)state;
	client_init(&ctx, 4747);
	assert_int_equal(api_dispatch(&ctx, &req, &hello), 0);
	// Matches no log type: the test's own log level stays.
	snprintf(set.pattern, sizeof(set.pattern), "nomatch\n" FORGED);
	req = (struct gr_api_request
	){.id = 2, .type = GR_LOG_LEVEL_SET, .payload_len = sizeof(set)};
	assert_int_equal(api_dispatch(&ctx, &req, &set), 0);
	assert_int_equal(
		log_lines(
			"client pid 4747: log level pattern 'nomatch\\x0a" FORGED
			"' matches no log type",
			NULL
		),
		1
	);
	assert_int_equal(log_lines(FORGED, NULL), 2);
}

// The server's own handlers this test links, as gr_api_server_start()
// registers them, and the log captured.
static int setup(void **state) {
	assert_int_equal(dispatch_test_handlers(), 0);
	return log_capture_setup(state);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escapes_controls_and_high_bytes),
		cmocka_unit_test(never_cuts_an_escape),
		cmocka_unit_test(hello_version_escaped),
		cmocka_unit_test(log_pattern_escaped),
	};
	return cmocka_run_group_tests(tests, setup, log_capture_teardown);
}
