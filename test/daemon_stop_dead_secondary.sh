#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# SIGTERM stops the daemon within 5 s whatever lock a dead DPDK secondary
# holds. For each lock of test/shm_secondary_dead_lock.c (memzone: killed in
# rte_memzone_walk(); hotplug: killed inside its EAL init, holding the
# memory hotplug lock that the daemon's rte_eal_cleanup() takes for
# writing), against a daemon with hugepages:
#  1. the program's steps: the daemon and its clients are served on;
#  2. SIGTERM: the daemon exits 0 within STOP_BOUND_S and removes its socket;
#  3. it leaves no file of its prefix (the dead holder maps none);
#  4. hotplug: it logs why it skipped rte_eal_cleanup().
#
#   daemon_stop_dead_secondary.sh SHMCHAND SHM_SECONDARY_DEAD_LOCK
# (run it under need_hugepages.sh)
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND SHM_SECONDARY_DEAD_LOCK" "$@"
dead_lock=$2

# What SIGTERM must take at most, whatever a secondary died holding.
STOP_BOUND_S=5
# Four EAL inits of secondaries, each bounded by the program itself.
RUN_TIMEOUT_S=40
skipped="skipping rte_eal_cleanup(), which would wait on it for ever"

for lock in memzone hotplug; do
	start_daemon --hugepages on
	rc=0
	shmt_run_bounded "$RUN_TIMEOUT_S" "$dead_lock" "$SHMT_SOCK" "$lock" || rc=$?
	[ "$rc" = 0 ] || shmt_fail "$lock: the program failed (status $rc)"
	pid=$SHMT_PID
	start_ns=$(date +%s%N)
	SHMT_STOP_WAIT_S=$STOP_BOUND_S stop_daemon
	took_ms=$((($(date +%s%N) - start_ns) / 1000000))
	[ "$took_ms" -le $((STOP_BOUND_S * 1000)) ] ||
		shmt_fail "$lock: daemon $pid took $took_ms ms to stop, over $STOP_BOUND_S s"
	[ -z "$SHMT_DPDK_LEFT" ] ||
		shmt_fail "$lock: the daemon left files of its prefix: $(echo "$SHMT_DPDK_LEFT" | tr '\n' ' ')"
	if [ "$lock" = hotplug ]; then
		grep -qF "$skipped" "$SHMT_LOG" ||
			shmt_fail "$lock: the daemon does not say why it skipped rte_eal_cleanup()"
	elif grep -qF "$skipped" "$SHMT_LOG"; then
		shmt_fail "$lock: the daemon skipped rte_eal_cleanup() with the hotplug lock free"
	fi
	shmt_log "$lock: stopped in $took_ms ms, nothing left"
done
