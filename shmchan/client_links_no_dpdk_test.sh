#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors

# The client library links no DPDK library: none of its objects may leave a
# DPDK symbol undefined (rte_* functions and variables, per-lcore data).
# usage: client_links_no_dpdk_test.sh NM LIBSHMCHAN_CLIENT.a

set -eu
nm_prog=$1
lib=$2

undefined=$("$nm_prog" -u "$lib")
dpdk=$(printf '%s\n' "$undefined" | grep -E '[[:space:]](_*rte_|per_lcore_)' || true)
if [ -n "$dpdk" ]; then
	echo "the client library needs DPDK symbols:" >&2
	printf '%s\n' "$dpdk" >&2
	exit 1
fi
echo "no DPDK symbol undefined in $lib"
