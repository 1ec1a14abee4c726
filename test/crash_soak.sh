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
# 10 s (make test, where it runs alone: its every second is the suite's).
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN CRASH_SOAK_BIN" "$@"
soak_bin=$2

SOAK_SECONDS_DEFAULT=10
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
# Lines of the daemon's log shown on failure: thousands of clients come and go.
SHMT_LOG_TAIL_LINES=200

transports="socket memfd"
if shmt_hugepages_usable; then
	start_daemon --hugepages on
	transports="$transports memzone"
else
	shmt_log "$SHMT_NO_HUGEPAGES_WHY: no memzone channel, no DPDK secondary in this run"
	start_daemon --hugepages off
fi

for t in $transports; do
	shmt_client_start "healthy-$t" "$soak_bin" healthy "$SHMT_SOCK" "$t"
done
shmt_clients_wait_ready "$READY_WAIT_S"
shmt_log "healthy clients ready ($transports); churn of $seconds s"

rc=0
shmt_run_bounded $((seconds + CHURN_EXTRA_S)) "$soak_bin" churn "$SHMT_SOCK" "$seconds" || rc=$?
shmt_clients_check "churn"
[ "$rc" = 0 ] || shmt_fail "churn failed (status $rc)"

shmt_clients_stop
for t in $transports; do
	grep -q "^healthy $t: [1-9][0-9]* echoes checked$" "$SHMT_TMPDIR/healthy-$t.out" ||
		shmt_fail "the healthy $t client checked no echo"
done

stop_daemon
