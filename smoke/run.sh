#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make run: start BUILDDIR's shmchand with its defaults (only the socket path
# and the DPDK file prefix are private), time GR_PING and GR_PING2 over the
# socket and over the shared-memory channel with ping2_perf, print a table,
# stop the daemon. Takes well under 30 s.
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

# Calls per run: the channel does a few hundred thousand calls a second, the
# socket tens of thousands; both counts make runs of about a second.
SHM_CALLS=${SHM_CALLS:-200000}
SOCKET_CALLS=${SOCKET_CALLS:-50000}

[ -x "$perf" ] || shmt_fail "no $perf: build first (make)"
start_daemon

results=$SHMT_TMPDIR/results
mkdir "$results"
shm_reason=
for req in ping:0 ping2:64; do
	name=${req%%:*}
	size=${req#*:}
	"$perf" -s "$SHMT_SOCK" -t socket -z "$size" -n "$SOCKET_CALLS" -q --json \
		>"$results/$name-socket.json" ||
		shmt_fail "ping2_perf -t socket -z $size failed"
	[ -z "$shm_reason" ] || continue
	if ! "$perf" -s "$SHMT_SOCK" -t shm -z "$size" -n "$SHM_CALLS" -q --json \
		>"$results/$name-shm.json" 2>"$results/$name-shm.err"; then
		shm_reason=$(sed -n 's/.*shm not available: //p' "$results/$name-shm.err")
		if [ -z "$shm_reason" ]; then
			shm_reason="ping2_perf -t shm failed: $(tail -n1 "$results/$name-shm.err")"
		fi
		rm -f "$results/$name-shm.json"
	fi
done
stop_daemon

python3 - "$results" "$shm_reason" <<'EOF'
import json, os, sys

results, shm_reason = sys.argv[1], sys.argv[2]

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
header = f"{'request':8} {'socket calls/s':>15}"
if have_shm:
    header += f" {'shm calls/s':>12} {'shm/socket':>10}"
header += f" {'socket p50/p99 us':>18}"
if have_shm:
    header += f" {'shm p50/p99 us':>15}"
print(header)
for name in ("ping", "ping2"):
    sock = load(name, "socket")
    line = f"{name:8} {sock['calls_per_s']:15.0f}"
    shm = load(name, "shm") if have_shm else None
    if have_shm:
        line += f" {shm['calls_per_s']:12.0f} {shm['calls_per_s'] / sock['calls_per_s']:9.1f}x"
    line += f" {latency(sock):>18}"
    if have_shm:
        line += f" {latency(shm):>15}"
    print(line)
if not have_shm:
    print(f"shm: not measured: {shm_reason}")
EOF
