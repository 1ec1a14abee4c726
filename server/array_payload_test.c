// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The helpers of gr_api_server.h for payloads with a trailing array: a
// request is accepted only when its length is exactly its header and its
// count of items, whatever the count (huge ones that wrap a multiplication
// in 32 or 64 bits included), and its count is never read from a payload
// shorter than the header; a response is allocated zeroed, its length set,
// or refused with EMSGSIZE past GR_API_MAX_MSG_LEN, a huge count included.

#include <gr_api_server.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct sums_req {
	uint32_t n;
	uint32_t values[];
};

struct sums_resp {
	uint32_t n;
	uint32_t reserved;
	uint64_t sums[];
};

static void exact_length_accepted(void **state) {
	(void)state;
	assert_int_equal(gr_api_array_check(4, 4, 0, 4), 0);
	assert_int_equal(gr_api_array_check(12, 4, 2, 4), 0);
	assert_int_equal(
		gr_api_array_check(GR_API_MAX_MSG_LEN, 8, (GR_API_MAX_MSG_LEN - 8) / 8, 8),
		0
	);
	// Items of no bytes: the header alone, whatever the count.
	assert_int_equal(gr_api_array_check(4, 4, 7, 0), 0);
}

static void other_lengths_refused(void **state) {
	(void)state;
	// Shorter than the header.
	assert_int_equal(gr_api_array_check(3, 4, 0, 4), -EINVAL);
	// A count past the items, short of them, or a piece of an item.
	assert_int_equal(gr_api_array_check(12, 4, 3, 4), -EINVAL);
	assert_int_equal(gr_api_array_check(12, 4, 1, 4), -EINVAL);
	assert_int_equal(gr_api_array_check(13, 4, 2, 4), -EINVAL);
	assert_int_equal(gr_api_array_check(5, 4, 0, 0), -EINVAL);
}

// Counts whose product with the item size wraps to the length there is.
static void huge_counts_refused(void **state) {
	(void)state;
	// 0x40000001 * 4 is 4 in 32 bits: one item there.
	assert_int_equal(gr_api_array_check(8, 4, 0x40000001u, 4), -EINVAL);
	// 2^62 * 4 is 0 in 64 bits: the header alone.
	assert_int_equal(gr_api_array_check(4, 4, UINT64_C(1) << 62, 4), -EINVAL);
	assert_int_equal(gr_api_array_check(8, 4, UINT32_MAX, 4), -EINVAL);
	assert_int_equal(gr_api_array_check(8, 4, UINT64_MAX, 1), -EINVAL);
}

static void request_macro(void **state) {
	uint32_t buf[4] = {2, 1, 2, 0};
	const struct sums_req *req = (const struct sums_req *)buf;
	struct sums_req *short_req;

	(void)state;
	assert_int_equal(GR_API_REQ_ARRAY_CHECK(req, 12u, n, values), 0);
	assert_int_equal(GR_API_REQ_ARRAY_CHECK(req, 16u, n, values), -EINVAL);
	buf[0] = 0x40000001;
	assert_int_equal(GR_API_REQ_ARRAY_CHECK(req, 8u, n, values), -EINVAL);
	// Two bytes: the count is not read (AddressSanitizer would see it).
	short_req = malloc(2);
	assert_non_null(short_req);
	assert_int_equal(GR_API_REQ_ARRAY_CHECK(short_req, 2u, n, values), -EINVAL);
	free(short_req);
}

static void response_allocated(void **state) {
	struct sums_resp *resp;
	uint32_t len = 0;

	(void)state;
	assert_non_null(GR_API_RESP_ARRAY_ALLOC(resp, 3, sums, len));
	assert_int_equal(len, sizeof(*resp) + 3 * sizeof(resp->sums[0]));
	// Zeroed: nothing of the heap reaches a client.
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(resp->sums[i], 0);
	assert_int_equal(resp->n, 0);
	free(resp);
	// The largest the server can send, and no byte more.
	assert_non_null(GR_API_RESP_ARRAY_ALLOC(resp, (GR_API_MAX_MSG_LEN - 8) / 8, sums, len));
	assert_int_equal(len, GR_API_MAX_MSG_LEN);
	free(resp);
	errno = 0;
	assert_null(GR_API_RESP_ARRAY_ALLOC(resp, (GR_API_MAX_MSG_LEN - 8) / 8 + 1, sums, len));
	assert_int_equal(errno, EMSGSIZE);
	// No item: the header alone.
	assert_non_null(GR_API_RESP_ARRAY_ALLOC(resp, 0, sums, len));
	assert_int_equal(len, sizeof(*resp));
	free(resp);
}

static void huge_response_refused(void **state) {
	uint32_t len = 0;

	(void)state;
	errno = 0;
	// 2^61 * 8 is 0 in 64 bits.
	assert_null(gr_api_array_alloc(8, UINT64_C(1) << 61, 8, &len));
	assert_int_equal(errno, EMSGSIZE);
	errno = 0;
	assert_null(gr_api_array_alloc(8, UINT64_MAX, 1, &len));
	assert_int_equal(errno, EMSGSIZE);
	errno = 0;
	assert_null(gr_api_array_alloc(GR_API_MAX_MSG_LEN + 1, 0, 8, &len));
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(len, 0);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_length_accepted),
		cmocka_unit_test(other_lengths_refused),
		cmocka_unit_test(huge_counts_refused),
		cmocka_unit_test(request_macro),
		cmocka_unit_test(response_allocated),
		cmocka_unit_test(huge_response_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
