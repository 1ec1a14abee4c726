#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench-events: event fan-out of BUILDDIR's shmchand (default 1024-event backlog per
# subscriber), two lines per cell of 1, 4, 16 subscribers x shm, socket x 64 B, 4 KiB events:
# 16 publishes in flight (events/s delivered to all subscribers, events lost to full backlogs),
# then 1 (publish-to-receive latency, little queueing): ping2_perf --events. EVENT_BENCH_SPIN=US:
# its --spin US, the subscribers' spin budget (0 sleeps at once; unset or empty: adaptive).
#
#   [EVENT_BENCH_SPIN=US] smoke/event_bench.sh BUILDDIR [EVENTS]
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: [EVENT_BENCH_SPIN=US] $0 BUILDDIR [EVENTS]" >&2
	exit 2
fi
SHMT_DAEMON=$1/main/shmchand SHMT_NAME=event-bench bench=$1/smoke/ping2_perf
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../test/lib.sh"
[ -x "$bench" ] || shmt_fail "no $bench: build first (make)"
start_daemon
for cell in {shm,socket}/{64,4096}/{1,4,16}/{16,1}; do # transport outermost, depth innermost
	IFS=/ read -r transport size subs depth <<<"$cell"
	"$bench" --events -s "$SHMT_SOCK" -t "$transport" -c "$subs" -z "$size" -n "${2:-20000}" \
		-d "$depth" ${EVENT_BENCH_SPIN:+--spin "$EVENT_BENCH_SPIN"} ||
		shmt_fail "ping2_perf --events -t $transport -c $subs -z $size -d $depth failed"
done
stop_daemon
