#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The Python benchmark (python/bench.py) against a daemon of its own: ping2
# calls/s of shmchan.Client on shm and on the socket, of the socket module
# speaking the wire format, and of the C client (ping2_perf) on shm.
#
#   python/bench.sh BUILDDIR [bench.py options]
#
# Environment: BENCH_PYTHON (default python3), BENCH_PRIORITY=1 (root: run in
# a session of its own whose scheduler autogroup has nice -20, as
# smoke/bench.sh does, so that other sessions' work takes less CPU from it).
set -eu

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILDDIR [bench.py options]" >&2
	exit 2
fi
# Nice value of the benchmark's autogroup with BENCH_PRIORITY=1: the highest.
AUTOGROUP_NICE=-20
if [ "${BENCH_PRIORITY:-0}" = 1 ] && [ -z "${BENCH_OWN_SESSION:-}" ]; then
	exec setsid -w env BENCH_OWN_SESSION=1 "$0" "$@"
fi
if [ -n "${BENCH_OWN_SESSION:-}" ]; then
	echo "$AUTOGROUP_NICE" >/proc/self/autogroup ||
		echo "bench: cannot set the autogroup's nice value (root only)" >&2
fi
builddir=$(cd "$1" && pwd)
shift
srcdir=$(cd "$(dirname "$0")/.." && pwd)
SHMT_NAME=python-bench
SHMT_DAEMON=$builddir/main/shmchand
# shellcheck source=test/lib.sh
. "$srcdir/test/lib.sh"

start_daemon
rc=0
PYTHONPATH=$srcdir/python:$builddir/subprojects/shmchan-python SHMCHAN_LIBRARY=$builddir/client/libgr_api_client.so \
	"${BENCH_PYTHON:-python3}" "$srcdir/python/bench.py" "$SHMT_SOCK" \
	--ping2-perf "$builddir/smoke/ping2_perf" "$@" || rc=$?
[ "$rc" = 0 ] || shmt_fail "bench.py failed (status $rc)"
stop_daemon
