#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Build the libFuzzer harnesses (clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, -Dfuzz=true) in BUILDDIR and run each one for
# SECONDS, starting from its seed corpus in fuzz/corpus/<harness>/. Fails if
# a harness crashes, hangs (an input over FUZZ_TIMEOUT_S), leaks or trips a
# sanitizer; the input that did it is kept in BUILDDIR/fuzz-artifacts/. The
# corpus a run grows stays in BUILDDIR/fuzz-corpus/, so the next run starts
# from it; the seeds in the tree are never written.
#
#   fuzz/run.sh BUILDDIR SECONDS [meson options...]
set -euo pipefail

if [ $# -lt 2 ]; then
	echo "usage: $0 BUILDDIR SECONDS [meson options...]" >&2
	exit 2
fi
builddir=$1
seconds=$2
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
harnesses="sock_dispatch_fuzz channel_recv_fuzz"
# One input taking longer than this is a hang.
FUZZ_TIMEOUT_S=10

if [ ! -f "$builddir/build.ninja" ]; then
	CC=clang meson setup "$builddir" "$src" -Db_sanitize=address,undefined -Db_lundef=false \
		-Db_lto=false -Dfuzz=true -Dtests=false "$@"
elif [ $# -gt 0 ]; then
	meson configure "$builddir" "$@" >/dev/null
fi
targets=()
for h in $harnesses; do
	targets+=("fuzz/$h")
done
ninja -C "$builddir" "${targets[@]}"

rc=0
for h in $harnesses; do
	corpus=$builddir/fuzz-corpus/$h
	artifacts=$builddir/fuzz-artifacts/$h/
	log=$builddir/fuzz-$h.log
	mkdir -p "$corpus" "$artifacts"
	echo "fuzz: $h for $seconds s (log $log)"
	hrc=0
	"$builddir/fuzz/$h" -max_total_time="$seconds" -timeout="$FUZZ_TIMEOUT_S" \
		-print_final_stats=1 -artifact_prefix="$artifacts" \
		"$corpus" "$src/fuzz/corpus/$h" >"$log" 2>&1 || hrc=$?
	grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb):' \
		"$log" | sed "s/^/fuzz: $h: /" || true
	grep -E '^#[0-9]+[[:space:]]+DONE ' "$log" | sed "s/^/fuzz: $h: /" || true
	if [ "$hrc" != 0 ]; then
		echo "fuzz: $h FAILED (status $hrc); last lines of $log:" >&2
		tail -n 60 "$log" >&2
		rc=1
	fi
done
exit $rc
