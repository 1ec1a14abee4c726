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
check c c11 "$tmp/alone.c" gr_api_server.h "$cc"
check c c11 "$tmp/handler.c" "a handler" "$cc"
langs="C11"
if [ -n "$cxx" ]; then
	check c++ c++17 "$tmp/alone.c" gr_api_server.h "$cxx"
	check c++ c++17 "$tmp/handler.c" "a handler" "$cxx"
	langs="C11 and C++17"
fi
echo "gr_api_server.h and a handler on it compile as $langs, -pedantic, without warnings"
