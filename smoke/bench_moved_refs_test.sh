#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench survives references that move: the whole of smoke/bench.sh
# (BENCH_QUICK) against a real daemon, with stand-ins for ref_bench and
# ping2_perf (fake_tools.sh) that decide the
# numbers. The cache-line reference moves once, in the first round-trip
# triple; the ring-stream reference moves on every other call, so every
# depth-32 triple sees its references 50 % apart. The bench must finish with
# exit status 0, number its progress lines (n of N, elapsed), and report
# the moved rounds as moved: the round-trip goal is the median of its two
# steady rounds, the depth-32 goal says that none was steady. Its report's
# machine section comes from lscpu. Its loaded host (one scenario of each
# kind with BENCH_QUICK) is reported, counts the other server's requests,
# and leaves no load running; so is its route table. Two runs side by side,
# as the stand-ins mostly wait: the loaded host and the route table in one,
# every other part in the other.
#
#   bench_moved_refs_test.sh SHMCHAND
set -eu

SHMT_NAME=bench_moved_refs
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../test/lib.sh"
shmt_args "SHMCHAND" "$@"
builddir=$(cd "$(dirname "$SHMT_DAEMON")/.." && pwd)
smoke=$(cd "$(dirname "$0")" && pwd)
# The whole bench with stand-ins takes about 40 s on a busy host; below
# meson's timeout, so that the script still stops its runs and says so.
BENCH_BOUND_S=200
# Routes of each route table run: the runs are checked whole, not timed,
# and 2000 take 3 s fewer than 20 000 (their rates are make bench's).
ROUTES_N=2000

SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX")
shmt_python_direct

# bench_run NAME [PART...]: bench.sh with the stand-ins, in the background,
# into $SHMT_TMPDIR/NAME: results/, err, and its exit status in rc.
bench_pids=()
bench_run() {
	local dir=$SHMT_TMPDIR/$1
	shift
	mkdir -p "$dir/state"
	(
		rc=0
		shmt_run_bounded "$BENCH_BOUND_S" env BENCH_QUICK=1 BENCH_BUILD=0 \
			BENCH_ROUTES_N="$ROUTES_N" BENCH_RESULTS="$dir/results" \
			BENCH_REF_BENCH="$smoke/fake_tools.sh" BENCH_PING2_PERF="$smoke/fake_tools.sh" \
			BENCH_GAP_PY="$smoke/fake_tools.sh" BENCH_PY_BENCH="$smoke/fake_tools.sh" \
			FAKE_STATE="$dir/state" FAKE_REF_MOVE_ONCE=cacheline:3 \
			FAKE_REF_ALWAYS_MOVE=ring-stream \
			"$smoke/bench.sh" "$builddir" "$@" >"$dir/out" 2>"$dir/err" || rc=$?
		echo "$rc" >"$dir/rc"
	)&
	bench_pids+=($!)
}

bench_run main refs spinning sleeping pinned shared idle-channels occasional end
bench_run loaded loaded routes
for pid in "${bench_pids[@]}"; do
	wait "$pid" || true
done
# Progress: every step numbered n of the same N, with the time elapsed, the
# last one N of N.
for run in "main:ref clock" "loaded:loaded host: busy-1"; do
	err=$SHMT_TMPDIR/${run%%:*}/err
	rc=$(cat "$SHMT_TMPDIR/${run%%:*}/rc" 2>/dev/null || echo missing)
	if [ "$rc" != 0 ]; then
		cat "$err" >&2
		shmt_fail "bench.sh (${run%%:*}) exited with status $rc on references that moved"
	fi
	grep -Eq "^bench: \[1/[0-9]+ [0-9]+:[0-9]{2}\] ${run#*:}\$" "$err" ||
		shmt_fail "no first progress line: $(head -n 3 "$err")"
	last=$(grep -Eo '^bench: \[[0-9]+/[0-9]+ ' "$err" | tail -n 1 | tr -d '[]' | cut -d' ' -f2)
	[ "${last%/*}" = "${last#*/}" ] || shmt_fail "the last step was $last, not N of N"
done
results=$SHMT_TMPDIR/main/results
loaded=$SHMT_TMPDIR/loaded/results

python3 - "$results/summary.json" <<'PY' || shmt_fail "summary.json: wrong goal rounds"
import json, sys
s = json.load(open(sys.argv[1]))
rounds = {r["round"]: r for r in s["goal_rounds"]}
def expect(cond, what):
    if not cond:
        print(what, json.dumps(rounds, indent=1), file=sys.stderr)
        sys.exit(1)
expect(set(rounds) == {f"{g}-r{i}" for g in ("rtt", "ring", "stream", "echo", "shared-default")
                       for i in (1, 2, 3)},
       "not the 12 goal rounds and the 3 shared-CPU rounds")
moved = {"rtt-r1", "stream-r1", "stream-r2", "stream-r3"}
for name, r in rounds.items():
    expect(r["steady"] == (name not in moved), f"{name}: steady is {r['steady']}")
    expect(r["spread"] == (0.5 if name in moved else 0), f"{name}: spread {r['spread']}")
goals = {g["goal"]: g for g in s["goals"]}
rtt = goals["shm ping2 round trip / raw cache-line ping-pong"]
expect(rtt["detail"].startswith("median of the 2 steady rounds of 3 (1 with moved references "
                                "left out)"), "the round-trip goal kept its moved round")
# The shared-CPU goals, at whatever nice value the poller could take, and
# the round with --poller-nice off beside them.
shared = [g for g in goals if g.startswith("16 clients aggregate / 1 client, all on shared CPUs")]
expect(len(shared) == 1 and goals[shared[0]]["measured"] == 1.0,
       f"no shared-CPU aggregate goal of 1.0 (the stand-in rates alike): {shared}")
beside = [b["what"] for b in s["beside_goals"]]
expect(any("--poller-nice off" in b for b in beside), f"no --poller-nice off row: {beside}")
depth = goals["shm depth 32 requests/s / raw ring streaming"]
expect(depth["detail"].startswith("**no round with steady references**"),
       "the depth-32 goal does not say that no round was steady")
PY

# The loaded host: a row per scenario, the stand-in's rates alike on both
# transports, the other server's client counted; and nothing of the load
# left (its loops name the results folder on their command lines).
python3 - "$loaded/summary.json" <<'PY' || shmt_fail "summary.json: wrong loaded host"
import json, sys
rows = {r["scenario"]: r for r in json.load(open(sys.argv[1]))["loaded"]}
if set(rows) != {"busy-1", "cc-1x", "servers-1"}:
    sys.exit(f"loaded scenarios {sorted(rows)}")
if any(r["busy_ratio"] != 1.0 for r in rows.values()):
    sys.exit(f"busy ratios {[r['busy_ratio'] for r in rows.values()]}")
# The event-loop client's cells, beside the blocking ones.
if any((r["evloop_shm"], r["evloop_socket"], r["evloop_ratio"]) != (1e6, 1e6, 1.0)
       for r in rows.values()):
    sys.exit(f"event-loop rates {[(r['evloop_shm'], r['evloop_ratio']) for r in rows.values()]}")
if not isinstance(rows["servers-1"]["others_per_server"], (int, float)):
    sys.exit("the other server's client was not counted")
PY
[ -s "$loaded/loaded-cc.c" ] || shmt_fail "no compiler loop's source"
left=$(pgrep -d, -f "$loaded" || true)
[ -z "$left" ] || shmt_fail "the loaded host left processes running: $(ps -o pid,args -p "$left")"

# The route table: real route_table and route_inject (ROUTES_N routes), each
# run whole, its section and goals in the report, no route_table left.
python3 - "$loaded/summary.json" "$ROUTES_N" <<'PY' || shmt_fail "summary.json: wrong route table"
import json, sys
s = json.load(open(sys.argv[1]))
runs = s["routes"]
want = {"reference", "shm-d1", "shm-d32", "socket-d1", "socket-d32", "list-shm", "list-socket"}
if set(runs) != want:
    sys.exit(f"route runs {sorted(runs)}")
if any(r["count"] != int(sys.argv[2]) or r["routes_per_s"] <= 0 for r in runs.values()):
    sys.exit(f"route runs {runs}")
if sum(1 for g in s["goals"] if g["goal"].startswith("route table:")) != 4:
    sys.exit("not the route table's four goals")
PY
while read -r pid; do
	! shmt_running "$pid" || shmt_fail "route_table $pid still runs after the bench"
done < <(sed -n 's/^bench: route_table, pid \([0-9]*\)$/\1/p' "$SHMT_TMPDIR/loaded/err")
grep -q '^bench: route_table, pid ' "$SHMT_TMPDIR/loaded/err" || shmt_fail "no route_table was run"

report=$loaded/report.md
grep -q '^### Route table$' "$report" || shmt_fail "report.md: no route table section"
grep -q '^### Loaded host$' "$report" || shmt_fail "report.md: no loaded host section"
grep -qF '| 1 busy loop |' "$report" || shmt_fail "report.md: no busy loop row"
grep -qF '| 1.00 M / 1.00 M | 1.0x |' "$report" ||
	shmt_fail "report.md: no event-loop rates: $(grep -F '| 1 busy loop |' "$report")"
report=$results/report.md
grep -qF '| stream-r1 | 48 / 32 ns | 50 % | **references moved** |' "$report" ||
	shmt_fail "report.md: no moved stream-r1 row: $(grep -n stream-r1 "$report")"
grep -qF '| rtt-r1 | 80 / 120 ns | 50 % | **references moved** |' "$report" ||
	shmt_fail "report.md: no moved rtt-r1 row: $(grep -n rtt-r1 "$report")"
grep -qF '| rtt-r2 | 80 / 80 ns | 0 % | steady |' "$report" ||
	shmt_fail "report.md: no steady rtt-r2 row: $(grep -n rtt-r2 "$report")"
grep -q '^### Machine (lscpu)$' "$report" || shmt_fail "report.md: no machine section"
# The headline: the stand-in's rates (1 M calls/s on each transport) and
# round trips after 20 ms (90 us on shm, 100 us on the socket), from C and
# from Python.
for who in "C (ping2_perf)" "Python (shmchan)"; do
	busy="| $who, one call right after the other: round trip (calls/s)"
	grep -qF "$busy | 1000 ns (1.00 M calls/s) | 1000 ns (1.00 M calls/s) | 1.0x |" \
		"$report" || shmt_fail "report.md: no headline row of $who: $(grep -n "^| $who" "$report")"
	after="| $who, one call after 20 ms of silence: round trip, p50"
	grep -qF "$after | 90.0 us | 100.0 us | 1.1x |" "$report" ||
		shmt_fail "report.md: no 20 ms headline row of $who"
done
grep -qF "Idle daemon: 16 clients attached for 10 s cost it 0.0004 % of a core." "$report" ||
	shmt_fail "report.md: no idle line in the headline: $(grep -n 'Idle daemon' "$report")"
if command -v lscpu >/dev/null; then
	model=$(LC_ALL=C lscpu | sed -n 's/^Model name: *//p')
	[ -z "$model" ] || grep -qF "| model name | $model |" "$report" ||
		shmt_fail "report.md: the model name is not lscpu's ($model)"
	vendor=$(LC_ALL=C lscpu | sed -n 's/^Vendor ID: *//p')
	[ -z "$vendor" ] || grep -qF "| vendor | $vendor |" "$report" ||
		shmt_fail "report.md: the vendor is not lscpu's ($vendor)"
fi
