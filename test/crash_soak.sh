#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Crash soak: one healthy client per transport (socket, memfd channel, and
# memzone channel of a DPDK secondary when the machine has hugepages) runs
# pipelined GR_PING2 throughout, while a churn of short-lived clients on every
# transport is killed with SIGKILL at random moments, hundreds of times
# (test/crash_soak.c). At the end:
#  - no healthy client saw an error or a stall, and each still runs;
#  - the daemon's fds, threads, channels and memzones are back to their
#    baseline after a warm-up, exactly, and its VmRSS within 8 MiB of it;
#  - no kill was counted as a corrupt or slow client;
#  - the daemon stops cleanly on SIGTERM (exit 0).
#
#   crash_soak.sh DAEMON_BIN CRASH_SOAK_BIN
#
# Length of the churn: SOAK_SECONDS if set, else 120 s when CI=true, else
# 20 s (make test).
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 DAEMON_BIN CRASH_SOAK_BIN" >&2
	exit 2
fi
SHMT_DAEMON=$1
soak_bin=$2
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"

SOAK_SECONDS_DEFAULT=20
SOAK_SECONDS_CI=120
if [ -n "${SOAK_SECONDS:-}" ]; then
	seconds=$SOAK_SECONDS
elif [ "${CI:-}" = true ]; then
	seconds=$SOAK_SECONDS_CI
else
	seconds=$SOAK_SECONDS_DEFAULT
fi
# Bounds: a healthy client's attach (a secondary's EAL init included), and
# the churn beyond its own length (warm-up, settling, its own checks).
READY_WAIT_S=15
CHURN_EXTRA_S=60
# Free 2 MB pages wanted for a daemon with hugepages (as need_hugepages.sh).
HUGEPAGES_MIN_FREE=16
# Lines of the daemon's log shown on failure: thousands of clients come and go.
LOG_TAIL_LINES=200

soak_fail() {
	if [ -n "$SHMT_LOG" ] && [ -s "$SHMT_LOG" ]; then
		echo "---- last $LOG_TAIL_LINES lines of the daemon log ----" >&2
		tail -n "$LOG_TAIL_LINES" "$SHMT_LOG" >&2
	fi
	SHMT_LOG='' shmt_fail "$@"
}

free_pages=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
transports="socket memfd"
if [ "${free_pages:-0}" -ge "$HUGEPAGES_MIN_FREE" ] && grep -q '^[^ ]* [^ ]* hugetlbfs ' /proc/mounts; then
	start_daemon --hugepages on
	transports="$transports memzone"
else
	shmt_log "no hugepages: no memzone channel, no DPDK secondary in this run"
	start_daemon --hugepages off
fi

declare -A healthy_pid healthy_out
for t in $transports; do
	healthy_out[$t]=$SHMT_TMPDIR/healthy-$t.out
	"$soak_bin" healthy "$SHMT_SOCK" "$t" >"${healthy_out[$t]}" 2>&1 &
	healthy_pid[$t]=$!
	shmt_track "${healthy_pid[$t]}"
done

healthy_check() {
	local t rc
	for t in $transports; do
		if ! shmt_running "${healthy_pid[$t]}"; then
			rc=0
			wait "${healthy_pid[$t]}" || rc=$?
			cat "${healthy_out[$t]}" >&2
			soak_fail "$1: the healthy $t client ended (status $rc)"
		fi
	done
}

for t in $transports; do
	polls=$((READY_WAIT_S * SHMT_POLLS_PER_S))
	until grep -qs '^ready$' "${healthy_out[$t]}"; do
		healthy_check "attach"
		[ "$polls" -gt 0 ] || soak_fail "the healthy $t client was not served within $READY_WAIT_S s"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
done
shmt_log "healthy clients ready ($transports); churn of $seconds s"

rc=0
timeout --kill-after=2 $((seconds + CHURN_EXTRA_S)) "$soak_bin" churn "$SHMT_SOCK" "$seconds" || rc=$?
shmt_running "$SHMT_PID" || soak_fail "the daemon died"
healthy_check "churn"
[ "$rc" = 0 ] || soak_fail "churn failed (status $rc)"

for t in $transports; do
	kill -TERM "${healthy_pid[$t]}"
done
for t in $transports; do
	shmt_wait_gone "${healthy_pid[$t]}" "$SHMT_STOP_WAIT_S" ||
		soak_fail "the healthy $t client did not stop"
	rc=0
	wait "${healthy_pid[$t]}" || rc=$?
	cat "${healthy_out[$t]}"
	[ "$rc" = 0 ] || soak_fail "the healthy $t client failed (status $rc)"
	grep -q "^healthy $t: [1-9][0-9]* echoes checked$" "${healthy_out[$t]}" ||
		soak_fail "the healthy $t client checked no echo"
done

stop_daemon
