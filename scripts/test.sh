#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run every test with meson and end with a summary that names each skipped
# test with its reason (test_summary.py: a skipping test prints a line with
# "SKIP: why"), so a log shows at once what did not run, and why.
#
# In a build with sanitizers (make test SANITIZE=1: -Db_sanitize=address,
# undefined), a report fails the process that made it: UndefinedBehaviorSanitizer
# only prints by default, so it is told to halt; AddressSanitizer halts
# anyway, and LeakSanitizer checks every process at its exit (the daemon's
# included: it stops on SIGTERM and frees what it holds). Options already in
# the environment are kept (docs/reliability.md).
set -u
builddir=${1:-build}

sanitize=$(meson introspect --buildoptions "$builddir" 2>/dev/null | python3 -c '
import json, sys
print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "b_sanitize"), "none"))
' 2>/dev/null || echo none)
if [ "$sanitize" != none ] && [ -n "$sanitize" ]; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:print_summary=1}"
	export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:print_summary=1}"
	echo "sanitizers: $sanitize; ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS"
fi

# Twice as many tests at once as there are CPUs (MESON_TESTTHREADS
# overrides): most of them spend their time waiting (for a daemon's start,
# a timeout, a stall bound, a child), so that one a CPU leaves half of the
# CPUs idle. Each test has its own socket, DPDK file prefix and folders,
# none bounds the time of what other tests slow, and those that measure or
# pin CPUs, or keep them busy, run alone (is_parallel: false in meson.build).
# Not under the sanitizers: their tests compute more than they wait (every
# access checked), so a test a CPU is what keeps them within their timeouts.
per_cpu=2
[ "$sanitize" = none ] || [ -z "$sanitize" ] || per_cpu=1
jobs=${MESON_TESTTHREADS:-$((per_cpu * $(nproc)))}
meson test -C "$builddir" --print-errorlogs --num-processes "$jobs"
rc=$?
log="$builddir/meson-logs/testlog.json"
if [ -f "$log" ]; then
	python3 "$(dirname "$0")/test_summary.py" "$log"
fi
exit $rc
