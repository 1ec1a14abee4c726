#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make run: start BUILDDIR's shmchand with its defaults (only the socket path
# and the DPDK file prefix are private), time GR_PING and GR_PING2 over the
# socket, a memfd channel and a memzone channel (ping2_perf --secondary,
# which needs the daemon to have hugepages: without them the reason is
# shown), calls back to back and each after 20 ms of silence (ping2_perf
# --gap, the channel and the socket alternated call by call), print a table,
# stop the daemon. On a busy host it says so under the table.
#
#   smoke/run.sh BUILDDIR
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 BUILDDIR" >&2
	exit 2
fi
builddir=$1
SHMT_DAEMON=$builddir/main/shmchand
SHMT_NAME=run
perf=$builddir/smoke/ping2_perf
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../test/lib.sh"

# Seconds per run rather than a number of calls: the same few seconds on a
# quiet host and on a busy one, where the channel's rate can fall 100-fold.
RUN_SECONDS=${RUN_SECONDS:-1}
# 25 calls on each transport after 20 ms of silence each: 1 s per transport.
RUN_GAP_MS=20
RUN_GAP_ROUNDS=25
# No system-call counting: its tracepoint would add every system call of
# the machine to the socket's round trip.
busy=(-T "$RUN_SECONDS" --no-syscall-count)
gap=(--gap "$RUN_GAP_MS" --gap-rounds "$RUN_GAP_ROUNDS")

[ -x "$perf" ] || shmt_fail "no $perf: build first (make)"
start_daemon
results=$SHMT_TMPDIR/results
mkdir "$results"

# measure NAME PING2_PERF-ARGS...: ping2_perf at the request's size into
# NAME.json; false, and no NAME.json, if it failed.
measure() {
	local name=$1
	shift
	"$perf" -s "$SHMT_SOCK" -z "$size" "$@" -q --json >"$results/$name.json" && return 0
	rm -f "$results/$name.json"
	return 1
}

# The tasks ready to run, less this reader, before each measurement.
runnable=()
runnable_sample() {
	runnable+=($(($(awk '$1 == "procs_running" { print $2 }' /proc/stat) - 1)))
}

shm_reason=
memzone_reason=
for req in ping:0 ping2:64; do
	name=${req%%:*}
	size=${req#*:}
	runnable_sample
	measure "$name-socket" -t socket "${busy[@]}" || shmt_fail "ping2_perf -t socket -z $size failed"
	runnable_sample
	if [ -z "$shm_reason" ] &&
		! measure "$name-shm" -t shm "${busy[@]}" 2>"$results/$name-shm.err"; then
		shm_reason=$(sed -n 's/.*shm not available: //p' "$results/$name-shm.err")
		shm_reason=${shm_reason:-ping2_perf -t shm failed: $(tail -n1 "$results/$name-shm.err")}
	fi
	# After silence, the memfd channel and the socket alternated.
	[ -n "$shm_reason" ] || measure "$name-gap" "${gap[@]}" ||
		shmt_fail "ping2_perf --gap $RUN_GAP_MS -z $size failed"
	# ping2_perf --secondary's last line says why it has no memzone channel.
	if [ -z "$shm_reason$memzone_reason" ] &&
		! measure "$name-memzone" --secondary "${busy[@]}" 2>"$results/$name-memzone.err"; then
		memzone_reason=$(tail -n1 "$results/$name-memzone.err" | sed 's/^ping2_perf: //')
		memzone_reason=${memzone_reason:-ping2_perf --secondary failed}
	fi
	[ -n "$shm_reason$memzone_reason" ] || measure "$name-memzone-gap" --secondary "${gap[@]}" ||
		shmt_fail "ping2_perf --secondary --gap $RUN_GAP_MS -z $size failed"
done
stop_daemon

python3 - "$results" "$shm_reason" "$memzone_reason" "$RUN_SECONDS" "$RUN_GAP_MS" \
	"$RUN_GAP_ROUNDS" "${runnable[*]}" "$(nproc)" <<'PY'
import json, pathlib, sys, textwrap

results, shm_reason, memzone_reason, seconds, gap_ms, gap_rounds = sys.argv[1:7]
runnable, cpus = sorted(map(int, sys.argv[7].split())), int(sys.argv[8])

def load(name):
    path = pathlib.Path(results, f"{name}.json")
    return json.loads(path.read_text()) if path.exists() else None

def latency(lat):
    return "-" if lat is None else "/".join(f"{lat[p] / 1000:.1f}" for p in ("p50", "p99"))

def after_gap(name):
    # The gap run's only gap: {"shm": ..., "socket": ...}, or {}.
    r = load(name)
    return r["gaps"][0] if r else {}

# The rows measured: the socket's, then memfd's, then memzone's, which needs memfd.
measured = 1 if shm_reason else 2 if memzone_reason else 3
after = f"after {gap_ms} ms p50/p99 us"
print(f"{'request':8} {'transport':9} {'calls/s':>10} {'/socket':>8} {'p50/p99 us':>14} "
      f"{after:>24}")
for name in ("ping", "ping2"):
    sock = load(f"{name}-socket")
    # The socket's calls after silence: the memfd run's, which alternates.
    gap, zgap = after_gap(f"{name}-gap"), after_gap(f"{name}-memzone-gap")
    rows = (("socket", sock, gap.get("socket")), ("memfd", load(f"{name}-shm"), gap.get("shm")),
            ("memzone", load(f"{name}-memzone"), zgap.get("shm")))
    for transport, busy, quiet in rows[:measured]:
        print(f"{name:8} {transport:9} {busy['calls_per_s']:10.0f} "
              f"{busy['calls_per_s'] / sock['calls_per_s']:7.1f}x "
              f"{latency(busy['latency_ns']):>14} {latency(quiet):>24}")
if shm_reason:
    print(f"shm: not measured: {shm_reason}")
elif memzone_reason:
    print(f"memzone: not measured: {memzone_reason}")
# Busy: other runnable tasks leave fewer CPUs than the client and the poller need.
others = runnable[len(runnable) // 2] if runnable else 0
if others + 2 > cpus:
    print(f"host busy ({others} other runnable tasks, {cpus} CPUs): all figures lower and "
          "noisier than on a quiet host")

legend = [
    ("request", "ping: GR_PING, empty request and response; "
     "ping2: GR_PING2, 64 bytes echoed and checked"),
    ("transport", "socket: the Unix socket; memfd: a shared-memory channel in a memfd (any "
     "process can map one); memzone: a channel in a memzone (the client is a DPDK secondary "
     "of the daemon)"),
    ("calls/s", f"round trips per second, one call right after the other: 1 client, 1 "
     f"request in flight (depth 1), for {seconds} s"),
    ("/socket", "the row's calls/s over the socket's"),
    ("p50/p99 us", "median and 99th-percentile round trip of those calls, in microseconds"),
    (after, f"the same for calls each after {gap_ms} ms of silence, as most calls of a "
     f"controller come ({gap_rounds} on each transport, the channel and the socket "
     "alternated call by call)"),
]
WIDTH = 100
print()
width = max(len(name) for name, _ in legend)
for name, text in legend:
    print(textwrap.fill(text, WIDTH, initial_indent=f"{name:{width}}  ",
                        subsequent_indent=" " * (width + 2)))
print(textwrap.fill("More clients, depths, payloads and gaps, against raw references: make "
                    "bench (smoke/bench.sh), reported in docs/performance.md.", WIDTH))
PY
