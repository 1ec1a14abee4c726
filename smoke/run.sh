#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make run: start BUILDDIR's shmchand with its defaults (only the socket path
# and the DPDK file prefix are private), time GR_PING and GR_PING2 over the
# socket, over a shared-memory channel in a memfd, and over one in a memzone
# (ping2_perf --secondary: a DPDK secondary of the daemon, which needs the
# daemon to have hugepages; without them the column is left out and the
# reason shown), print a table, stop the daemon. Takes well under 30 s.
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

# Seconds per run (ping2_perf -T): a fixed time rather than a number of
# calls, so that the whole table takes the same few seconds on a quiet
# machine and on a busy one, where the channel's rate can fall 100-fold.
RUN_SECONDS=${RUN_SECONDS:-1}

[ -x "$perf" ] || shmt_fail "no $perf: build first (make)"
start_daemon

results=$SHMT_TMPDIR/results
mkdir "$results"
shm_reason=
memzone_reason=
for req in ping:0 ping2:64; do
	name=${req%%:*}
	size=${req#*:}
	"$perf" -s "$SHMT_SOCK" -t socket -z "$size" -T "$RUN_SECONDS" -q --json \
		>"$results/$name-socket.json" ||
		shmt_fail "ping2_perf -t socket -z $size failed"
	if [ -z "$shm_reason" ] &&
		! "$perf" -s "$SHMT_SOCK" -t shm -z "$size" -T "$RUN_SECONDS" -q --json \
			>"$results/$name-shm.json" 2>"$results/$name-shm.err"; then
		shm_reason=$(sed -n 's/.*shm not available: //p' "$results/$name-shm.err")
		if [ -z "$shm_reason" ]; then
			shm_reason="ping2_perf -t shm failed: $(tail -n1 "$results/$name-shm.err")"
		fi
		rm -f "$results/$name-shm.json"
	fi
	# ping2_perf --secondary says why when it cannot have a memzone
	# channel (no hugepages in the daemon, most often): its last line.
	if [ -z "$shm_reason" ] && [ -z "$memzone_reason" ] &&
		! "$perf" -s "$SHMT_SOCK" --secondary -z "$size" -T "$RUN_SECONDS" -q --json \
			>"$results/$name-memzone.json" 2>"$results/$name-memzone.err"; then
		memzone_reason=$(tail -n1 "$results/$name-memzone.err")
		memzone_reason=${memzone_reason#ping2_perf: }
		memzone_reason=${memzone_reason:-ping2_perf --secondary failed}
		rm -f "$results/$name-memzone.json"
	fi
done
stop_daemon

python3 - "$results" "$shm_reason" "$memzone_reason" "$RUN_SECONDS" <<'EOF'
import json, os, sys

results, shm_reason, memzone_reason = sys.argv[1], sys.argv[2], sys.argv[3]

def load(name, transport):
    path = os.path.join(results, f"{name}-{transport}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)

def latency(r):
    us = lambda ns: f"{ns / 1000:.1f}"
    return f"{us(r['latency_ns']['p50'])}/{us(r['latency_ns']['p99'])}"

have_shm = not shm_reason
have_memzone = have_shm and not memzone_reason
# The channel columns: (file suffix, title) of those measured.
columns = []
if have_shm:
    columns.append(("shm", "memfd"))
if have_memzone:
    columns.append(("memzone", "memzone"))
header = f"{'request':8} {'socket calls/s':>15}"
for _, title in columns:
    header += f" {title + ' calls/s':>16} {title + '/socket':>15}"
header += f" {'socket p50/p99 us':>18}"
for _, title in columns:
    header += f" {title + ' p50/p99 us':>19}"
print(header)
for name in ("ping", "ping2"):
    sock = load(name, "socket")
    line = f"{name:8} {sock['calls_per_s']:15.0f}"
    chans = [load(name, suffix) for suffix, _ in columns]
    for r in chans:
        line += f" {r['calls_per_s']:16.0f} {r['calls_per_s'] / sock['calls_per_s']:14.1f}x"
    line += f" {latency(sock):>18}"
    for r in chans:
        line += f" {latency(r):>19}"
    print(line)
if not have_shm:
    print(f"shm: not measured: {shm_reason}")
elif not have_memzone:
    print(f"memzone: not measured: {memzone_reason}")

# One line per column, in the table's order.
what = {
    "memfd": "a shared-memory channel in a memfd (any process can map one)",
    "memzone": "a channel in a memzone (the client is a DPDK secondary of the daemon)",
}
legend = [
    ("request", "ping: GR_PING, empty request and response; "
     "ping2: GR_PING2, 64 bytes echoed and checked"),
    ("socket calls/s", f"round trips per second over the Unix socket: 1 client, "
     f"1 request in flight (depth 1), for {sys.argv[4]} s"),
]
for _, title in columns:
    legend.append((f"{title} calls/s", f"the same over {what[title]}"))
    legend.append((f"{title}/socket", f"the {title} channel's calls/s over the socket's"))
legend.append(("socket p50/p99 us", "median and 99th-percentile round trip over the "
               "socket, in microseconds"))
for _, title in columns:
    legend.append((f"{title} p50/p99 us", f"the same over the {title} channel"))
print()
width = max(len(name) for name, _ in legend)
for name, text in legend:
    print(f"{name:{width}}  {text}")
print("More clients, depths and payloads, against raw references: make bench "
      "(smoke/bench.sh), reported in docs/performance.md.")
EOF
