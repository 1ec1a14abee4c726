#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors

# The shared client library exports exactly the functions declared in
# gr_api_client.h, and needs no DPDK library or symbol.
# usage: exports_test.sh NM READELF LIBGR_API_CLIENT.so GR_API_CLIENT.h

set -eu
nm_prog=$1
readelf_prog=$2
lib=$3
header=$4

declared=$(grep -oE '\bgr_api_client_[a-z_]+\(' "$header" | tr -d '(' | sort -u)
exported=$("$nm_prog" -D --defined-only "$lib" | awk '{print $3}' | sort -u)
if [ "$declared" != "$exported" ]; then
	echo "exported symbols differ from the header's functions:" >&2
	printf 'declared:\n%s\nexported:\n%s\n' "$declared" "$exported" >&2
	exit 1
fi

dpdk_symbols=$("$nm_prog" -D --undefined-only "$lib" | grep -E '[[:space:]](_*rte_|per_lcore_)' || true)
dpdk_libs=$("$readelf_prog" -d "$lib" | grep NEEDED | grep -E 'librte_' || true)
if [ -n "$dpdk_symbols$dpdk_libs" ]; then
	printf 'the client library needs DPDK:\n%s\n%s\n' "$dpdk_symbols" "$dpdk_libs" >&2
	exit 1
fi
echo "$lib exports the $(printf '%s\n' "$exported" | wc -l) functions of the header, needs no DPDK"
