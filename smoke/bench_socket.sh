#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench-socket: the socket transport with and without its optimisations
# (client single send, client read-ahead, daemon single write, daemon direct
# read): build-bench-opt and build-bench-noopt side by side, GR_PING2 over
# the socket on each in alternated rounds, a raw Unix socket ping-pong
# (ref_bench unix, unix-epoll) between them; then the system calls per call
# of the client and of the daemon under strace, which is deterministic.
set -eu

cd "$(dirname "$0")/.."
SHMT_NAME=bench-socket
# shellcheck source=test/lib.sh
. test/lib.sh

ROUNDS=${ROUNDS:-3}
CALLS=${CALLS:-100000}
# strace counts startup too: the difference of two lengths leaves the per-call part.
STRACE_CALLS_SHORT=1000
STRACE_CALLS_LONG=6000
builds=(build-bench-opt build-bench-noopt)
optimisations=(-Dclient_single_send -Dclient_readahead -Ddaemon_single_write -Ddaemon_direct_read)

# configure DIR MESON-OPTIONS...: the daemon, ping2_perf and ref_bench of DIR.
configure() {
	local dir=$1 out how=setup
	shift
	[ ! -f "$dir/build.ninja" ] || how=configure
	out=$(meson "$how" "$dir" "$@" 2>&1) || shmt_fail "meson $how $dir: $out"
	out=$(ninja -C "$dir" main/shmchand smoke/ping2_perf smoke/ref_bench 2>&1) ||
		shmt_fail "ninja -C $dir: $out"
}
echo "building ${builds[*]}" >&2
configure build-bench-opt "${optimisations[@]/%/=true}"
configure build-bench-noopt "${optimisations[@]/%/=false}" -Dtests=false

results=$(mktemp -d "${TMPDIR:-/tmp}/shmchan-bench.XXXXXX")
SHMT_TMPDIR=$results

for round in $(seq "$ROUNDS"); do
	order=("${builds[@]}")
	# Alternated, so that a drift in load favours neither.
	[ $((round % 2)) = 1 ] || order=("${builds[1]}" "${builds[0]}")
	for dir in "${order[@]}"; do
		echo "round $round: $dir" >&2
		SHMT_DAEMON=$dir/main/shmchand
		start_daemon
		# Timed as the raw references are: no clock read per call, no
		# system-call counter (its tracepoint slows every system call).
		"$dir/smoke/ping2_perf" -s "$SHMT_SOCK" -t socket -z 64 -q -n "$CALLS" --json --no-stamps \
			--no-syscall-count >"$results/$dir-$round.json" || shmt_fail "$dir: ping2_perf failed"
		stop_daemon
	done
	echo "round $round: raw Unix socket (ref_bench unix, unix-epoll)" >&2
	for t in unix unix-epoll; do
		build-bench-opt/smoke/ref_bench --json --no-pin -z 64 "$t" \
			>"$results/raw-$t-$round.json" || shmt_fail "ref_bench $t failed"
	done
done

for dir in "${builds[@]}"; do
	for calls in "$STRACE_CALLS_SHORT" "$STRACE_CALLS_LONG"; do
		echo "strace: $dir, $calls calls" >&2
		SHMT_DAEMON=$dir/main/shmchand
		start_daemon
		ping=("$dir/smoke/ping2_perf" -s "$SHMT_SOCK" -t socket -z 64 -q -w 0 -n "$calls")
		strace -f -c -o "$results/$dir-strace-$calls.txt" "${ping[@]}" >/dev/null ||
			shmt_fail "$dir: ping2_perf under strace failed"
		shmt_spawn strace -c -o "$results/$dir-strace-daemon-$calls.txt" -p "$SHMT_PID" 2>/dev/null
		# strace attaches to the daemon's threads one by one.
		sleep 1
		"${ping[@]}" >/dev/null || shmt_fail "$dir: ping2_perf with the daemon under strace failed"
		kill -INT "$SHMT_SPAWNED" 2>/dev/null || true
		wait "$SHMT_SPAWNED" || true
		stop_daemon
	done
done

python3 - "$results" "$ROUNDS" "$CALLS" "$STRACE_CALLS_SHORT" "$STRACE_CALLS_LONG" \
	"${builds[@]}" <<'EOF'
import json, pathlib, statistics, sys

results = sys.argv[1]
rounds, calls, short, long = (int(a) for a in sys.argv[2:6])
builds = sys.argv[6:]

def each_round(name, field):
    return [json.loads(pathlib.Path(results, f"{name}-{r}.json").read_text())[field]
            for r in range(1, rounds + 1)]

def strace_total(name):
    # The last line of strace -c: "100.00 SECONDS USECS/CALL CALLS [ERRORS] total"
    # None if strace could not attach (ptrace not permitted).
    path = pathlib.Path(results, name)
    text = path.read_text() if path.exists() else ""
    totals = [l.split() for l in text.splitlines() if l.rstrip().endswith("total")]
    return int(totals[-1][3]) if totals else None

rates = {b: each_round(b, "calls_per_s") for b in builds}
medians = {b: statistics.median(rates[b]) for b in builds}
print(f"GR_PING2 over the socket, {rounds} rounds of {calls} calls, alternating builds")
print(f"{'round':6}" + "".join(f"{b:>20}" for b in builds))
for r in range(rounds):
    print(f"{r + 1:<6}" + "".join(f"{rates[b][r]:20.0f}" for b in builds))
print(f"{'median':6}" + "".join(f"{medians[b]:20.0f}" for b in builds))
print(f"ratio {builds[0]} / {builds[1]}: {medians[builds[0]] / medians[builds[1]]:.2f}")

for name, label in (("raw-unix", "raw Unix socket round trip (ref_bench unix, 64 B, unpinned)"),
                    ("raw-unix-epoll", "the same, its follower an epoll loop (ref_bench unix-epoll)")):
    raw = each_round(name, "ns_per_op")
    raw_ns = statistics.median(raw)
    print(f"{label}: " + ", ".join(f"{ns / 1e3:.1f}" for ns in raw)
          + f" us, median {raw_ns / 1e3:.1f} us")
    for b in builds:
        # Each round's ratio, of runs one right after the other; their median.
        ratios = [(1e9 / rates[b][i]) / raw[i] for i in range(rounds)]
        print(f"round trip through the daemon / {name}: {b} "
              f"{1e9 / medians[b] / 1e3:.1f} us / {raw_ns / 1e3:.1f} us; median of the rounds' "
              f"ratios {statistics.median(ratios):.2f} ("
              + ", ".join(f"{x:.2f}" for x in ratios) + ")")

for who, infix in (("client", ""), ("daemon", "daemon-")):
    line = f"{who} syscalls per call (strace -c):"
    for b in builds:
        s, l = (strace_total(f"{b}-strace-{infix}{n}.txt") for n in (short, long))
        line += f" {b} " + ("-" if s is None or l is None else f"{(l - s) / (long - short):.2f}")
    print(line)
EOF
