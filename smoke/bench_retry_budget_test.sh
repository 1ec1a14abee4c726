#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench keeps to its retry budget: smoke/bench.sh (BENCH_QUICK, the
# parts of its run with goal rounds) against a real daemon, with stand-ins
# for its tools (fake_tools.sh) whose cache-line reference moves on every
# other call, so that every round-trip triple sees its references 50 %
# apart. With no retry budget (BENCH_RETRY_S=0) the
# bench must measure each such triple once, keep it as moved, say so, report
# it as "retry budget spent", and finish with exit status 0.
# (bench_moved_refs_test.sh: retries within the budget.)
#
#   bench_retry_budget_test.sh SHMCHAND
set -eu

SHMT_NAME=bench_retry_budget
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../test/lib.sh"
shmt_args "SHMCHAND" "$@"
builddir=$(cd "$(dirname "$SHMT_DAEMON")/.." && pwd)
smoke=$(cd "$(dirname "$0")" && pwd)
# Those parts with stand-ins take about 15 s on a busy host; below meson's
# timeout, so that the script still stops its run and says so.
BENCH_BOUND_S=100

SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX")
shmt_python_direct
mkdir "$SHMT_TMPDIR/state"
results=$SHMT_TMPDIR/results
err=$SHMT_TMPDIR/err
rc=0
shmt_run_bounded "$BENCH_BOUND_S" env BENCH_QUICK=1 BENCH_BUILD=0 BENCH_RESULTS="$results" \
	BENCH_RETRY_S=0 BENCH_REF_BENCH="$smoke/fake_tools.sh" \
	BENCH_PING2_PERF="$smoke/fake_tools.sh" BENCH_GAP_PY="$smoke/fake_tools.sh" \
	BENCH_PY_BENCH="$smoke/fake_tools.sh" \
	FAKE_STATE="$SHMT_TMPDIR/state" \
	FAKE_REF_ALWAYS_MOVE=cacheline \
	"$smoke/bench.sh" "$builddir" spinning shared end >"$SHMT_TMPDIR/out" 2>"$err" || rc=$?
if [ "$rc" != 0 ]; then
	cat "$err" >&2
	shmt_fail "bench.sh exited with status $rc with no retry budget"
fi

for round in 1 2 3; do
	grep -q "goal rtt-r$round: no retry budget left (0 s in all): kept as moved" "$err" ||
		shmt_fail "the bench did not say that it kept rtt-r$round as moved"
	[ ! -e "$results/goal-rtt-r$round-t2-ref1.json" ] ||
		shmt_fail "rtt-r$round was measured again with no retry budget"
	grep -q "| rtt-r$round | 1 | .* | 50 % | \*\*references moved\*\* (retry budget spent) |" \
		"$results/report.md" ||
		shmt_fail "report.md: rtt-r$round not reported as moved: $(grep -n "rtt-r$round" \
			"$results/report.md")"
done
python3 - "$results/summary.json" <<'PY' || shmt_fail "summary.json: wrong goal rounds"
import json, sys
s = json.load(open(sys.argv[1]))
rounds = {r["round"]: r for r in s["goal_rounds"]}
bad = [name for name, r in rounds.items() if name.startswith("rtt-") and
       (r["steady"] or r["tries"] != 1 or r["stopped"] != "budget" or r["spread"] != 0.5)]
bad += [name for name, r in rounds.items() if not name.startswith("rtt-") and not r["steady"]]
# The 12 goal rounds and the 3 rounds of 16 clients on shared CPUs.
if bad or len(rounds) != 15:
    print(bad, json.dumps(rounds, indent=1), file=sys.stderr)
    sys.exit(1)
goal = next(g for g in s["goals"] if g["goal"].startswith("shm ping2 round trip"))
if not goal["detail"].startswith("**no round with steady references**"):
    print(goal, file=sys.stderr)
    sys.exit(1)
PY
