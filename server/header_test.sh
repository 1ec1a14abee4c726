#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors

# gr_api_server.h compiles alone, with no warning, as ISO C11 and as C++17
# (-pedantic -Wall -Wextra -Werror), and so does a handler declared with its
# macros and answering with its inline helpers. Without a C++ compiler only
# C is checked.
# usage: header_test.sh API_DIR SERVER_DIR CC [CXX]

set -eu
if [ $# -lt 3 ]; then
	echo "usage: $0 API_DIR SERVER_DIR CC [CXX]" >&2
	exit 2
fi
api=$1
server=$2
cc=$3
cxx=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
warn="-pedantic -Wall -Wextra -Werror"

check() { # LANG STD FILE WHAT COMPILER
	if ! "$5" -x "$1" -std="$2" $warn -fsyntax-only -I"$api" -I"$server" "$3" 2>"$tmp/err"; then
		echo "$4 does not compile as $2:" >&2
		cat "$tmp/err" >&2
		exit 1
	fi
}

printf '#include <gr_api_server.h>\n' >"$tmp/alone.c"
cat >"$tmp/handler.c" <<'C'
#include <gr_api_server.h>
#include <gr_api_server.h>

#include <errno.h>

#define TEST_SET GR_MSG_TYPE(0x7e57, 1)
struct test_set_req {
	unsigned key;
};
GR_REQ(TEST_SET, struct test_set_req, struct gr_empty);

static struct gr_api_out test_set(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)len;
	if (gr_api_ctx_uid(ctx) != 0)
		return gr_api_out(EPERM, 0, NULL);
	return gr_api_out_borrowed(0, sizeof(struct test_set_req), request);
}
GR_API_HANDLER(TEST_SET, test_set);

static struct gr_api_handler explicit_set = GR_API_HANDLER_INIT(TEST_SET, test_set);

int main(void) {
	return gr_api_server_handler_register(&explicit_set);
}
C
# A request and a response with a trailing array, through the helpers.
cat >"$tmp/array.c" <<'C'
#include <gr_api_server.h>

struct test_sums_req {
	uint32_t n;
	uint32_t values[];
};
struct test_sums_resp {
	uint32_t n;
	uint64_t sums[];
};

struct gr_api_out test_sums(const void *request, uint32_t len, struct gr_api_ctx *ctx);

struct gr_api_out test_sums(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct test_sums_req *req = (const struct test_sums_req *)request;
	struct test_sums_resp *resp;
	uint32_t resp_len;

	(void)ctx;
	if (GR_API_REQ_ARRAY_CHECK(req, len, n, values) < 0)
		return gr_api_out(EINVAL, 0, NULL);
	if (GR_API_RESP_ARRAY_ALLOC(resp, req->n, sums, resp_len) == NULL)
		return gr_api_out((uint32_t)errno, 0, NULL);
	resp->n = req->n;
	return gr_api_out(0, resp_len, resp);
}
C
check c c11 "$tmp/array.c" "the trailing array helpers" "$cc"
if [ -n "$cxx" ]; then
	# A flexible array member is an extension of C++: not -pedantic.
	if ! "$cxx" -x c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I"$api" -I"$server" \
		"$tmp/array.c" 2>"$tmp/err"; then
		echo "the trailing array helpers do not compile as C++17:" >&2
		cat "$tmp/err" >&2
		exit 1
	fi
fi
check c c11 "$tmp/alone.c" gr_api_server.h "$cc"
check c c11 "$tmp/handler.c" "a handler" "$cc"
langs="C11"
if [ -n "$cxx" ]; then
	check c++ c++17 "$tmp/alone.c" gr_api_server.h "$cxx"
	check c++ c++17 "$tmp/handler.c" "a handler" "$cxx"
	langs="C11 and C++17"
fi
echo "gr_api_server.h and a handler on it compile as $langs, -pedantic, without warnings"
