#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors

# The shared client library exports exactly the functions declared in
# gr_api.h (Grout's calls) and gr_api_client.h (shmchan's), and needs no
# DPDK library or symbol. A declared function is a name of the client's
# (gr_api_client_*, __gr_api_client_*, gr_api_message_*) followed by "(",
# outside comments, macros and the static inline helpers of the stream
# macro (names ending in "_"). Each is exported by name from the version
# script, in one of its version nodes (GR_API_CLIENT_*), and the script
# exports by name only: a pattern could export a private function that
# happens to match it.
# usage: exports_test.sh NM READELF LIBGR_API_CLIENT.so GR_API_CLIENT.MAP HEADER...

set -eu
nm_prog=$1
readelf_prog=$2
lib=$3
map=$4
shift 4

declared=$(sed -e 's://.*$::' "$@" |
	awk '/^#define/ { macro = 1 } macro { macro = /\\$/; next } { print }' |
	grep -oE '(\b|__)(__)?gr_api_(client|message)_[a-z0-9_]*[a-z0-9]\(' | tr -d '(' | sort -u)
# nm -D prints a versioned symbol as NAME@@NODE, and each node as a
# symbol of its own (type A).
symbols=$("$nm_prog" -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sort -u)
exported=$(printf '%s\n' "$symbols" | sed 's/@.*//' | sort -u)
if [ "$declared" != "$exported" ]; then
	echo "exported symbols differ from the header's functions (a new one goes into $map):" >&2
	printf 'declared:\n%s\nexported:\n%s\n' "$declared" "$exported" >&2
	exit 1
fi
unversioned=$(printf '%s\n' "$symbols" | grep -v '@@GR_API_CLIENT_' || true)
if [ -n "$unversioned" ]; then
	printf 'exported outside a GR_API_CLIENT_ version node:\n%s\n' "$unversioned" >&2
	exit 1
fi
patterns=$(sed -e 's/#.*//' "$map" | grep -E '[*?[]' | grep -vE '^[[:space:]]*\*;[[:space:]]*$' || true)
if [ -n "$patterns" ]; then
	printf '%s exports by pattern, not by name:\n%s\n' "$map" "$patterns" >&2
	exit 1
fi

dpdk_symbols=$("$nm_prog" -D --undefined-only "$lib" | grep -E '[[:space:]](_*rte_|per_lcore_)' || true)
dpdk_libs=$("$readelf_prog" -d "$lib" | grep NEEDED | grep -E 'librte_' || true)
if [ -n "$dpdk_symbols$dpdk_libs" ]; then
	printf 'the client library needs DPDK:\n%s\n%s\n' "$dpdk_symbols" "$dpdk_libs" >&2
	exit 1
fi
echo "$lib exports the $(printf '%s\n' "$exported" | wc -l) functions of the header, needs no DPDK"
