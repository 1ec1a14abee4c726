#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench-events: event fan-out of BUILDDIR's shmchand, for 1, 4 and 16
# subscribers x shm and socket x 64 B and 4 KiB events, two lines per cell:
# with 16 publishes in flight (throughput: events delivered per second, all
# subscribers together, and events lost to full backlogs), then with one in
# flight (publish-to-receive latency with little queueing). The daemon runs
# with its defaults (a 1024-event backlog per subscriber).
#
#   [EVENT_BENCH_SPIN=US] smoke/event_bench.sh BUILDDIR [EVENTS]
#
# EVENT_BENCH_SPIN: the subscribers' client spin budget in microseconds,
# passed to event_bench --spin (0 sleeps at once); unset or empty: the
# library's adaptive spin. E.g. EVENT_BENCH_SPIN=0 make bench-events.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: [EVENT_BENCH_SPIN=US] $0 BUILDDIR [EVENTS]" >&2
	exit 2
fi
builddir=$1
events=${2:-20000}
SHMT_DAEMON=$builddir/main/shmchand
SHMT_NAME=event-bench
bench=$builddir/smoke/event_bench
spin_args=()
if [ -n "${EVENT_BENCH_SPIN:-}" ]; then
	spin_args=(--spin "$EVENT_BENCH_SPIN")
fi
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../test/lib.sh"

[ -x "$bench" ] || shmt_fail "no $bench: build first (make)"
start_daemon
for transport in shm socket; do
	for size in 64 4096; do
		for subs in 1 4 16; do
			for depth in 16 1; do
				"$bench" -s "$SHMT_SOCK" -t "$transport" -n "$subs" -z "$size" \
					-c "$events" -d "$depth" "${spin_args[@]}" ||
					shmt_fail "event_bench -t $transport -n $subs -z $size -d $depth failed"
			done
		done
	done
done
stop_daemon
