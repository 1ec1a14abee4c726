#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench fails on real errors only, and says which: smoke/bench.sh
# (BENCH_QUICK, the part of the run where the fault lies) with stand-ins for ref_bench and ping2_perf
# (fake_tools.sh), each run with one fault: a tool
# that crashes, a tool whose output is not what the report reads (a matrix
# cell, the headline, the loaded host's event-loop cells), the daemon killed
# under a cell. Each must end the bench with a non-zero status
# and a line naming the tool, the cell and what happened, and leave no
# daemon behind. bench_report.py on a results folder with a corrupt file
# must fail naming the file.
#
#   bench_errors_test.sh SHMCHAND
set -eu

SHMT_NAME=bench_errors
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../test/lib.sh"
shmt_args "SHMCHAND" "$@"
builddir=$(cd "$(dirname "$SHMT_DAEMON")/.." && pwd)
smoke=$(cd "$(dirname "$0")" && pwd)
# Each faulty bench ends within its part, in seconds; below meson's
# timeout, so that the script still stops its run and says so.
BENCH_BOUND_S=100

SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX")
shmt_python_direct
case_n=0

# expect_failure MESSAGE PART VAR=VALUE...: bench.sh with stand-ins and the
# given fault must fail in the given part of its run, and its error output
# must hold MESSAGE (fixed string).
# Each case runs in the background (the stand-ins mostly wait); the checks
# come once all have ended (check_cases).
declare -a case_messages case_faults case_pids
expect_failure() {
	local message=$1 part=$2 dir
	shift 2
	case_n=$((case_n + 1))
	dir=$SHMT_TMPDIR/case-$case_n
	mkdir -p "$dir/state"
	case_messages[case_n]=$message
	case_faults[case_n]="$*"
	(
		rc=0
		shmt_run_bounded "$BENCH_BOUND_S" env BENCH_QUICK=1 BENCH_BUILD=0 \
			BENCH_RESULTS="$dir/results" BENCH_REF_BENCH="$smoke/fake_tools.sh" \
			BENCH_PING2_PERF="$smoke/fake_tools.sh" BENCH_GAP_PY="$smoke/fake_tools.sh" \
			BENCH_PY_BENCH="$smoke/fake_tools.sh" \
			FAKE_STATE="$dir/state" "$@" \
			"$smoke/bench.sh" "$builddir" "$part" >"$dir/out" 2>"$dir/err" || rc=$?
		echo "$rc" >"$dir/rc"
	) &
	case_pids[case_n]=$!
}

# check_cases: wait for every case, then check each as expect_failure says.
check_cases() {
	local n dir rc pid message fault
	for n in "${!case_pids[@]}"; do
		wait "${case_pids[n]}" || true
	done
	for n in "${!case_pids[@]}"; do
		dir=$SHMT_TMPDIR/case-$n
		message=${case_messages[n]}
		fault=${case_faults[n]}
		rc=$(cat "$dir/rc" 2>/dev/null || echo missing)
		if [ "$rc" = 0 ] || [ "$rc" = 124 ] || [ "$rc" = 137 ] || [ "$rc" = missing ]; then
			cat "$dir/err" >&2
			shmt_fail "$fault: bench.sh ended with status $rc, expected a failure"
		fi
		if ! grep -qF -- "$message" "$dir/err"; then
			tail -n 30 "$dir/err" >&2
			shmt_fail "$fault: bench.sh did not say '$message'"
		fi
		# The daemon a failed bench started is stopped by its EXIT trap.
		while read -r pid; do
			! shmt_running "$pid" ||
				shmt_fail "$fault: daemon $pid still runs after the bench failed"
		done < <(sed -n 's/^bench: daemon .*, pid \([0-9]*\)$/\1/p' "$dir/err")
		shmt_log "$fault: status $rc, '$message'"
	done
}

expect_failure "bench: FAIL: ref_bench syscall crashed: killed by SIGSEGV" refs FAKE_REF_CRASH=syscall
expect_failure "bench: FAIL: ref_bench clock: bad output: $SHMT_TMPDIR/case-2/results/ref-clock.json: not JSON" \
	refs FAKE_REF_BAD=clock
expect_failure "bench: FAIL: ping2_perf socket spinning d1 c16 z64 crashed: killed by SIGSEGV" \
	spinning FAKE_PERF_CRASH="-t socket -d 1 -c 16"
expect_failure "no 'calls_per_s'" spinning FAKE_PERF_BAD="-t socket -d 32 -c 1"
expect_failure "during ping2_perf memfd spinning d32 c1 z64: killed by SIGKILL" \
	spinning FAKE_PERF_KILL_DAEMON="-t shm -d 32 -c 1"
# python/bench.py's output without a transport: the report says which file.
expect_failure "headline.json: no 'c_socket'" occasional FAKE_PERF_BAD="--rounds 1"
# The loaded host's event-loop cells fail as its other cells do, named.
expect_failure "bench: FAIL: ping2_perf socket event loop (quiet) crashed: killed by SIGSEGV" \
	loaded BENCH_LOADED_SCENARIOS=quiet FAKE_PERF_CRASH="-t socket --event-loop"
cell=$SHMT_TMPDIR/case-8/results/loaded-quiet-shm-evloop-r1.json
expect_failure "ping2_perf shm event loop (quiet): bad output: $cell: no 'calls_per_s' number" \
	loaded BENCH_LOADED_SCENARIOS=quiet FAKE_PERF_BAD="-t shm --event-loop"
check_cases
grep -qF "bench: FAIL: the daemon (pid" "$SHMT_TMPDIR/case-5/err" ||
	shmt_fail "the daemon's death was not reported as such: $(tail -n 5 "$SHMT_TMPDIR/case-5/err")"

# The report reads a run's files: a cell cut short fails it, naming the file.
results=$SHMT_TMPDIR/case-5/results
printf '{"mode": "calls", "calls_per_s": ' >"$results/cell-socket-spinning-d1-c1-z64.json"
rc=0
python3 "$smoke/bench_report.py" "$results" 20000 120000 >/dev/null 2>"$SHMT_TMPDIR/report.err" ||
	rc=$?
[ "$rc" = 1 ] || shmt_fail "bench_report.py on a corrupt cell ended with status $rc, expected 1"
grep -qF "bench_report: bad output: $results/cell-socket-spinning-d1-c1-z64.json: not JSON" \
	"$SHMT_TMPDIR/report.err" ||
	shmt_fail "bench_report.py did not name the corrupt file: $(cat "$SHMT_TMPDIR/report.err")"
