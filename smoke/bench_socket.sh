#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench-socket: the socket transport with and without its optimisations
# (client single send, client read-ahead, daemon single write, daemon direct
# read). Builds build-bench-opt (defaults) and build-bench-noopt (all four
# off) side by side, runs GR_PING2 over the socket on each, alternately, so
# machine noise hits both, with a raw Unix socket ping-pong of the same
# messages (ref_bench unix, unpinned as the daemon and its client are)
# between them, and prints calls/s per round, the medians, their ratio and
# each build's round trip over the raw one's. Then counts the system calls
# per call of the client (strace -f) and of the daemon's main thread, which
# serves the socket (strace -p), which is deterministic.
set -eu

cd "$(dirname "$0")/.."
SHMT_NAME=bench-socket
# shellcheck source=test/lib.sh
. test/lib.sh

ROUNDS=${ROUNDS:-3}
CALLS=${CALLS:-100000}
# strace counts the startup too: two runs of different lengths, and the
# difference divided by the difference in calls, leave only the per-call part.
STRACE_CALLS_SHORT=1000
STRACE_CALLS_LONG=6000

builds=(build-bench-opt build-bench-noopt)
build_opts_opt=(-Dclient_single_send=true -Dclient_readahead=true -Ddaemon_single_write=true
	-Ddaemon_direct_read=true)
build_opts_noopt=(-Dclient_single_send=false -Dclient_readahead=false -Ddaemon_single_write=false
	-Ddaemon_direct_read=false -Dtests=false)
# strace -p attaches to the daemon's threads one by one: let it finish.
STRACE_ATTACH_S=1

# Configure and build the daemon and ping2_perf of build folder $1 with the
# meson options that follow. Quiet unless it fails.
configure() {
	local dir=$1 out
	shift
	if [ -f "$dir/build.ninja" ]; then
		out=$(meson configure "$dir" "$@" 2>&1) || shmt_fail "meson configure $dir: $out"
	else
		out=$(meson setup "$dir" "$@" 2>&1) || shmt_fail "meson setup $dir: $out"
	fi
	out=$(ninja -C "$dir" main/shmchand smoke/ping2_perf smoke/ref_bench 2>&1) ||
		shmt_fail "ninja -C $dir: $out"
}
echo "building ${builds[*]}" >&2
configure build-bench-opt "${build_opts_opt[@]}"
configure build-bench-noopt "${build_opts_noopt[@]}"

results=$(mktemp -d "${TMPDIR:-/tmp}/shmchan-bench.XXXXXX")
SHMT_TMPDIR=$results

# Start build $1's daemon, run its ping2_perf with the rest of the arguments.
run_build() {
	local dir=$1
	shift
	SHMT_DAEMON=$dir/main/shmchand
	start_daemon
	"$dir/smoke/ping2_perf" -s "$SHMT_SOCK" -t socket -z 64 -q "$@" ||
		shmt_fail "$dir: ping2_perf failed"
	stop_daemon
}

for round in $(seq "$ROUNDS"); do
	order=("${builds[@]}")
	# Alternate which build goes first, so a drift in machine load does
	# not always favour the same one.
	if [ $((round % 2)) = 0 ]; then
		order=("${builds[1]}" "${builds[0]}")
	fi
	for dir in "${order[@]}"; do
		echo "round $round: $dir" >&2
		# Timed as the raw references are: no clock read per call,
		# and no system call counter (its tracepoint slows every
		# system call of the machine; strace counts them below).
		run_build "$dir" -n "$CALLS" --json --no-stamps --no-syscall-count \
			>"$results/$dir-$round.json"
	done
	echo "round $round: raw Unix socket (ref_bench unix, unix-epoll)" >&2
	build-bench-opt/smoke/ref_bench --json --no-pin -z 64 unix >"$results/raw-$round.json" ||
		shmt_fail "ref_bench unix failed"
	build-bench-opt/smoke/ref_bench --json --no-pin -z 64 unix-epoll \
		>"$results/raw-epoll-$round.json" || shmt_fail "ref_bench unix-epoll failed"
done

for dir in "${builds[@]}"; do
	for calls in "$STRACE_CALLS_SHORT" "$STRACE_CALLS_LONG"; do
		echo "strace: $dir, $calls calls" >&2
		SHMT_DAEMON=$dir/main/shmchand
		start_daemon
		strace -f -c -o "$results/$dir-strace-$calls.txt" \
			"$dir/smoke/ping2_perf" -s "$SHMT_SOCK" -t socket -z 64 -q -w 0 \
			-n "$calls" >/dev/null || shmt_fail "$dir: ping2_perf under strace failed"
		strace -c -o "$results/$dir-strace-daemon-$calls.txt" -p "$SHMT_PID" 2>/dev/null &
		strace_pid=$!
		shmt_track "$strace_pid"
		sleep "$STRACE_ATTACH_S"
		"$dir/smoke/ping2_perf" -s "$SHMT_SOCK" -t socket -z 64 -q -w 0 -n "$calls" \
			>/dev/null || shmt_fail "$dir: ping2_perf with the daemon under strace failed"
		kill -INT "$strace_pid" 2>/dev/null || true
		wait "$strace_pid" || true
		stop_daemon
	done
done

python3 - "$results" "$ROUNDS" "$CALLS" "$STRACE_CALLS_SHORT" "$STRACE_CALLS_LONG" \
	"${builds[@]}" <<'EOF'
import json, os, statistics, sys

results = sys.argv[1]
rounds, calls, short, long = (int(a) for a in sys.argv[2:6])
builds = sys.argv[6:]

def strace_total(path):
    # The last line of strace -c: "100.00 SECONDS USECS/CALL CALLS [ERRORS] total"
    # None if strace could not attach (ptrace not permitted).
    if not os.path.exists(path):
        return None
    with open(path) as f:
        totals = [l.split() for l in f if l.rstrip().endswith("total")]
    return int(totals[-1][3]) if totals else None

print(f"GR_PING2 over the socket, {rounds} rounds of {calls} calls, alternating builds")
print(f"{'round':6}" + "".join(f"{b:>20}" for b in builds))
rates = {b: [] for b in builds}
for r in range(1, rounds + 1):
    line = f"{r:<6}"
    for b in builds:
        with open(os.path.join(results, f"{b}-{r}.json")) as f:
            rate = json.load(f)["calls_per_s"]
        rates[b].append(rate)
        line += f"{rate:20.0f}"
    print(line)
medians = {b: statistics.median(rates[b]) for b in builds}
print(f"{'median':6}" + "".join(f"{medians[b]:20.0f}" for b in builds))
print(f"ratio {builds[0]} / {builds[1]}: {medians[builds[0]] / medians[builds[1]]:.2f}")

for name, label in (("raw", "raw Unix socket round trip (ref_bench unix, 64 B, unpinned)"),
                    ("raw-epoll", "the same, its follower an epoll loop (ref_bench unix-epoll)")):
    raw = []
    for r in range(1, rounds + 1):
        with open(os.path.join(results, f"{name}-{r}.json")) as f:
            raw.append(json.load(f)["ns_per_op"])
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
        s = strace_total(os.path.join(results, f"{b}-strace-{infix}{short}.txt"))
        l = strace_total(os.path.join(results, f"{b}-strace-{infix}{long}.txt"))
        line += f" {b} " + ("-" if s is None or l is None else f"{(l - s) / (long - short):.2f}")
    print(line)
EOF
