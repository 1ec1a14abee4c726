#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench's driver (smoke/bench.sh, BENCH_QUICK) with stand-ins for its
# tools (bench_fake_tools.sh) against real daemons: a whole run ends with
# status 0, its report and summary, its loaded host and route table (real
# route_table and route_inject), and leaves nothing running; a run with one
# fault (a tool that crashes, output the report cannot read, the daemon
# killed under a cell) ends non-zero with a line naming the tool, the cell
# and what happened, and leaves no daemon behind; the report on a corrupt
# file fails naming it. The runs go side by side: the stand-ins mostly wait.
#
#   bench_driver.sh SHMCHAND
set -eu

SHMT_NAME=bench_driver
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND" "$@"
builddir=$(cd "$(dirname "$SHMT_DAEMON")/.." && pwd)
srcdir=$(cd "$(dirname "$0")/.." && pwd)
fake=$srcdir/test/bench_fake_tools.sh
# A whole run takes about 40 s on a busy host: below meson's timeout, so
# that the script still stops its runs and says so.
BENCH_BOUND_S=200
# Routes of each route table run: checked whole, not timed.
ROUTES_N=2000

SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX")
shmt_python_direct

# bench_run NAME EXPECTED VAR=VALUE... -- PART...: bench.sh with the
# stand-ins in the background, into $SHMT_TMPDIR/NAME; EXPECTED is what its
# error output must hold (empty: it must succeed). check_runs judges them.
declare -A run_expected run_pid
bench_run() {
	local name=$1 dir=$SHMT_TMPDIR/$1 env=()
	run_expected[$name]=$2
	shift 2
	while [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	shift
	mkdir -p "$dir"
	(
		rc=0
		shmt_run_bounded "$BENCH_BOUND_S" env BENCH_QUICK=1 BENCH_BUILD=0 \
			BENCH_ROUTES_N="$ROUTES_N" BENCH_RESULTS="$dir/results" BENCH_REF_BENCH="$fake" \
			BENCH_PING2_PERF="$fake" BENCH_GAP_PY="$fake" BENCH_PY_BENCH="$fake" "${env[@]}" \
			"$srcdir/smoke/bench.sh" "$builddir" "$@" >"$dir/out" 2>"$dir/err" || rc=$?
		echo "$rc" >"$dir/rc"
	) &
	run_pid[$name]=$!
}

bench_run whole "" -- refs spinning sleeping pinned shared idle-channels occasional end
bench_run whole-loaded "" -- loaded routes
bench_run ref-crash "bench: FAIL: ref_bench syscall crashed: killed by SIGSEGV" \
	FAKE_REF_CRASH=syscall -- refs
bench_run ref-bad "bench: FAIL: ref_bench clock: bad output: $SHMT_TMPDIR/ref-bad/results/ref-clock.json: not JSON" \
	FAKE_REF_BAD=clock -- refs
bench_run cell-crash "bench: FAIL: ping2_perf socket spinning d1 c16 z64 crashed: killed by SIGSEGV" \
	FAKE_PERF_CRASH="-t socket -d 1 -c 16" -- spinning
bench_run cell-bad "no 'calls_per_s'" FAKE_PERF_BAD="-t socket -d 32 -c 1" -- spinning
bench_run daemon-killed \
	"bench: FAIL: the daemon (pid" FAKE_PERF_KILL_DAEMON="-t shm -d 32 -c 1" -- spinning
# python/bench.py's output without a transport: the report names the file.
bench_run headline-bad "headline.json" FAKE_PERF_BAD="--rounds 1" -- occasional
bench_run evloop-crash "bench: FAIL: ping2_perf socket event loop (quiet) crashed: killed by SIGSEGV" \
	BENCH_LOADED_SCENARIOS=quiet FAKE_PERF_CRASH="-t socket --event-loop" -- loaded

for name in "${!run_pid[@]}"; do
	wait "${run_pid[$name]}" || true
done
for name in "${!run_pid[@]}"; do
	dir=$SHMT_TMPDIR/$name
	rc=$(cat "$dir/rc" 2>/dev/null || echo missing)
	expected=${run_expected[$name]}
	if [ -z "$expected" ]; then
		[ "$rc" = 0 ] || { cat "$dir/err" >&2; shmt_fail "$name: bench.sh ended with status $rc"; }
	else
		case $rc in 0 | 124 | 137 | missing)
			cat "$dir/err" >&2
			shmt_fail "$name: bench.sh ended with status $rc, expected a failure"
			;;
		esac
		grep -qF -- "$expected" "$dir/err" ||
			{ tail -n 30 "$dir/err" >&2; shmt_fail "$name: bench.sh did not say '$expected'"; }
	fi
	# Every daemon and route_table a bench started is stopped, even when it fails.
	while read -r pid; do
		! shmt_running "$pid" || shmt_fail "$name: process $pid still runs after the bench"
	done < <(sed -n 's/^bench: \(daemon .*\|route_table\), pid \([0-9]*\)$/\2/p' "$dir/err")
	shmt_log "$name: status $rc"
done
grep -q "during ping2_perf memfd spinning d32 c1 z64: killed by SIGKILL" \
	"$SHMT_TMPDIR/daemon-killed/err" || shmt_fail "the daemon's death not named with its cell"
grep -Eq '^bench: \[[0-9]+:[0-9]{2}\] ref clock$' "$SHMT_TMPDIR/whole/err" ||
	shmt_fail "no progress line: $(head -n 3 "$SHMT_TMPDIR/whole/err")"

# The whole runs' summaries: every goal of the parts run measured; the
# stand-in's rates alike on both transports of the loaded host, the other
# server's client counted; every route table run whole.
python3 - "$SHMT_TMPDIR/whole/results/summary.json" "$SHMT_TMPDIR/whole-loaded/results/summary.json" \
	"$ROUTES_N" <<'PY' || shmt_fail "summary.json: wrong goals, loaded host or route table"
import json, sys
main, loaded = (json.load(open(p)) for p in sys.argv[1:3])
unmeasured = [g["goal"] for g in main["goals"] + loaded["goals"] if g["measured"] is None]
if unmeasured or len(main["goals"]) < 10:
    sys.exit(f"goals not measured: {unmeasured}, {len(main['goals'])} goals")
rows = {r["scenario"]: r for r in loaded["loaded"]}
if set(rows) != {"busy-1", "cc-1x", "servers-1"}:
    sys.exit(f"loaded scenarios {sorted(rows)}")
if any((r["busy_ratio"], r["evloop_ratio"]) != (1.0, 1.0) for r in rows.values()):
    sys.exit(f"loaded ratios {[(r['busy_ratio'], r['evloop_ratio']) for r in rows.values()]}")
if not isinstance(rows["servers-1"]["others_per_server"], (int, float)):
    sys.exit("the other server's client was not counted")
runs = loaded["routes"]
if set(runs) != {"reference", "shm-d1", "shm-d32", "socket-d1", "socket-d32", "list-shm",
                 "list-socket"}:
    sys.exit(f"route runs {sorted(runs)}")
if any(r["count"] != int(sys.argv[3]) or r["routes_per_s"] <= 0 for r in runs.values()):
    sys.exit(f"route runs {runs}")
PY
for dir in whole whole-loaded; do
	grep -q "^### Goals$" "$SHMT_TMPDIR/$dir/results/report.md" || shmt_fail "$dir: no goals in report.md"
done
loaded=$SHMT_TMPDIR/whole-loaded/results
[ -s "$loaded/loaded-cc.c" ] || shmt_fail "no compiler loop's source"
# The loops name the results folder on their command lines.
left=$(pgrep -d, -f "$loaded" || true)
[ -z "$left" ] || shmt_fail "the loaded host left processes running: $(ps -o pid,args -p "$left")"

# The report reads a run's files: a cell cut short fails it, naming the file.
results=$SHMT_TMPDIR/whole/results
printf '{"mode": "calls", "calls_per_s": ' >"$results/cell-socket-spinning-d1-c1-z64.json"
rc=0
python3 "$srcdir/smoke/bench_report.py" "$results" 20000 120000 >/dev/null 2>"$SHMT_TMPDIR/report.err" ||
	rc=$?
[ "$rc" = 1 ] || shmt_fail "bench_report.py on a corrupt cell ended with status $rc, expected 1"
grep -qF "$results/cell-socket-spinning-d1-c1-z64.json" "$SHMT_TMPDIR/report.err" ||
	shmt_fail "bench_report.py did not name the corrupt file: $(cat "$SHMT_TMPDIR/report.err")"
