// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The library's messages (gr_api_message_register(), gr_api_message_name()):
// every message of gr_api.h and gr_shm.h is known by its name; a program
// that includes gr_api_client_impl.h first gets its own GR_REQ(),
// GR_REQ_STREAM() and GR_EVENT() registered before main(); one type keeps
// its first name; the table has a bound, and a type never registered is
// named by its value.

// clang-format off
#include <gr_api_client_impl.h>
// clang-format on

#include "fake_daemon.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// A module of this test's, as a program's own header declares its messages.
#define TEST_MODULE 0x7e57
#define TEST_REQ GR_MSG_TYPE(TEST_MODULE, 0x0001)
#define TEST_LIST GR_MSG_TYPE(TEST_MODULE, 0x0002)
#define TEST_EVENT GR_MSG_TYPE(TEST_MODULE, 0x8001)
struct test_resp {
	uint64_t a, b;
};
GR_REQ(TEST_REQ, struct gr_empty, struct test_resp);
GR_REQ_STREAM(TEST_LIST, struct gr_empty, struct test_resp);
GR_EVENT(TEST_EVENT, struct test_resp);

// A type nobody registers.
#define UNKNOWN_TYPE GR_MSG_TYPE(TEST_MODULE, 0x7777)

static void library_names(void **state) {
	(void)state;
	assert_string_equal(gr_api_message_name(GR_HELLO), "GR_HELLO");
	assert_string_equal(gr_api_message_name(GR_PING2), "GR_PING2");
	assert_string_equal(gr_api_message_name(GR_LOG_LEVEL_LIST), "GR_LOG_LEVEL_LIST");
	assert_string_equal(gr_api_message_name(GR_SHM_CLIENT_LIST), "GR_SHM_CLIENT_LIST");
	assert_string_equal(gr_api_message_name(GR_SHM_EVENT_LOST), "GR_SHM_EVENT_LOST");
	assert_string_equal(gr_api_message_name(UNKNOWN_TYPE), "0x7e577777?");
}

static void program_names(void **state) {
	(void)state;
	assert_string_equal(gr_api_message_name(TEST_REQ), "TEST_REQ");
	assert_string_equal(gr_api_message_name(TEST_LIST), "TEST_LIST");
	assert_string_equal(gr_api_message_name(TEST_EVENT), "TEST_EVENT");
	assert_int_equal(TEST_REQ_RESP_SIZE, sizeof(struct test_resp));
	assert_int_equal(TEST_EVENT_OBJ_SIZE, sizeof(struct test_resp));
	// The sizes registered are those of the declarations.
	assert_int_equal(client_message_check(TEST_REQ, TEST_REQ_RESP_SIZE - 1), -EMSGSIZE);
	assert_int_equal(client_message_check(TEST_REQ, TEST_REQ_RESP_SIZE), 0);
	assert_int_equal(client_message_check(TEST_REQ, 0), -EMSGSIZE);
	assert_int_equal(client_message_check(TEST_LIST, 0), 0);
	assert_int_equal(client_message_check(TEST_LIST, 1), -EMSGSIZE);
	assert_int_equal(client_message_check(TEST_EVENT, 1), -EMSGSIZE);
	assert_int_equal(client_message_check(UNKNOWN_TYPE, 1), 0);
}

static void first_name_stays(void **state) {
	(void)state;
	assert_int_equal(gr_api_message_register(GR_PING2, "GR_PING2", 64, false), 0);
	assert_int_equal(gr_api_message_register(GR_PING2, "MY_PING", 1, false), -EEXIST);
	assert_string_equal(gr_api_message_name(GR_PING2), "GR_PING2");
	assert_int_equal(client_message_check(GR_PING2, 1), -EMSGSIZE);
	assert_int_equal(gr_api_message_register(UNKNOWN_TYPE, NULL, 0, false), -EINVAL);
	assert_int_equal(gr_api_message_register(UNKNOWN_TYPE, "", 0, false), -EINVAL);
	assert_string_equal(gr_api_message_name(UNKNOWN_TYPE), "0x7e577777?");
}

// Last: fills the table.
static void bounded(void **state) {
	char name[32];
	unsigned added = 0;
	int ret;
	(void)state;
	for (uint32_t id = 0;; id++) {
		snprintf(name, sizeof(name), "FILL_%u", id);
		ret = gr_api_message_register(GR_MSG_TYPE(0x7e58, id), name, 0, false);
		if (ret < 0)
			break;
		added++;
		assert_true(added <= GR_API_MESSAGES_MAX);
	}
	assert_int_equal(ret, -ENOSPC);
	for (uint32_t id = 0; id < added; id++) {
		snprintf(name, sizeof(name), "FILL_%u", id);
		assert_string_equal(gr_api_message_name(GR_MSG_TYPE(0x7e58, id)), name);
	}
	assert_string_equal(gr_api_message_name(GR_PING), "GR_PING");
	assert_string_equal(gr_api_message_name(UNKNOWN_TYPE), "0x7e577777?");
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(library_names),
		cmocka_unit_test(program_names),
		cmocka_unit_test(first_name_stays),
		cmocka_unit_test(bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
