#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors

# Each public header compiles alone, with no warning, as ISO C11 with POSIX
# 2008 (gr_clock.h calls clock_gettime()) and as C++17 (-pedantic -Wall
# -Wextra -Werror), and, included together with the others, twice in one
# file: gr_api_client_impl.h first, as it must be. Without a C++ compiler
# only C is checked.
# usage: headers_test.sh API_DIR CC [CXX]

set -eu
if [ $# -lt 2 ]; then
	echo "usage: $0 API_DIR CC [CXX]" >&2
	exit 2
fi
api=$1
cc=$2
cxx=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
warn="-pedantic -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L"

check() { # LANG STD FILE WHAT
	if ! "$5" -x "$1" -std="$2" $warn -fsyntax-only -I"$api" "$3" 2>"$tmp/err"; then
		echo "$4 does not compile as $2:" >&2
		cat "$tmp/err" >&2
		exit 1
	fi
}

n=0
all="$tmp/all.h"
printf '#include <gr_api_client_impl.h>\n' >"$all"
for h in "$api"/*.h; do
	name=$(basename "$h")
	printf '#include <%s>\n' "$name" >"$tmp/one.c"
	[ "$name" = gr_api_client_impl.h ] || printf '#include <%s>\n' "$name" >>"$all"
	check c c11 "$tmp/one.c" "$name" "$cc"
	if [ -n "$cxx" ]; then
		check c++ c++17 "$tmp/one.c" "$name" "$cxx"
	fi
	n=$((n + 1))
done
cat "$all" "$all" >"$tmp/twice.c"
check c c11 "$tmp/twice.c" "all headers, twice" "$cc"
langs="C11"
if [ -n "$cxx" ]; then
	check c++ c++17 "$tmp/twice.c" "all headers, twice" "$cxx"
	langs="C11 and C++17"
fi
echo "$n public headers compile alone as $langs, -pedantic, without warnings"
