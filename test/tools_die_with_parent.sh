#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The benchmark tools' helper processes die with their parent: ping2_perf,
# killed with SIGKILL while its three clients load the daemon, and
# ref_bench, killed while its follower spins, leave no child running (each
# child asks the kernel for SIGKILL at its parent's death). The children are
# found by PID (pgrep -P) before the kill.
#
#   tools_die_with_parent.sh SHMCHAND PING2_PERF REF_BENCH
set -eu

SHMT_NAME=tools_die_with_parent
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND PING2_PERF REF_BENCH" "$@"
perf=$2
ref=$3

CLIENTS=3
# Far longer than the test: the tools must be killed, not end.
RUN_S=60
# Forking, attaching and starting the clients take well under a second.
START_WAIT_S=10
# The kernel kills the orphans at once; the bound is for a loaded machine.
ORPHAN_GONE_S=5

children=()

# Fail, after killing the children still running ($1 names the tool).
fail_children() {
	local pid
	for pid in "${children[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	shmt_fail "$@"
}

# Wait until process $1 has $2 children; set children to their PIDs.
wait_children() {
	local polls=$((START_WAIT_S * SHMT_POLLS_PER_S))
	while :; do
		mapfile -t children < <(pgrep -P "$1" || true)
		[ "${#children[@]}" -lt "$2" ] || return 0
		shmt_running "$1" || shmt_fail "$3: ended before it had $2 children"
		[ "$polls" -gt 0 ] || shmt_fail "$3: ${#children[@]} children after $START_WAIT_S s," \
			"expected $2"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
}

# SIGKILL process $1 (a tracked job) and check that none of its children
# outlives it by more than ORPHAN_GONE_S.
kill_and_check_orphans() {
	local parent=$1 what=$2 pid
	kill -KILL "$parent"
	{ wait "$parent"; } 2>/dev/null || true
	for pid in "${children[@]}"; do
		shmt_wait_gone "$pid" "$ORPHAN_GONE_S" ||
			fail_children "$what: child $pid still runs $ORPHAN_GONE_S s after its parent" \
				"$parent was killed with SIGKILL"
	done
	shmt_log "$what: its ${#children[@]} children died with it"
	children=()
}

start_daemon
shmt_spawn "$perf" -s "$SHMT_SOCK" -t shm -c "$CLIENTS" -d 4 -T "$RUN_S" -w 10 -q
perf_pid=$SHMT_SPAWNED
wait_children "$perf_pid" "$CLIENTS" ping2_perf
# Each client is attached, so it is past its fork and loading the daemon.
polls=$((START_WAIT_S * SHMT_POLLS_PER_S))
until [ "$(grep -c ' attached: pid ' "$SHMT_LOG")" -ge "$CLIENTS" ]; do
	[ "$polls" -gt 0 ] || fail_children "ping2_perf: its clients did not attach"
	polls=$((polls - 1))
	sleep "$SHMT_POLL_S"
done
kill_and_check_orphans "$perf_pid" ping2_perf
stop_daemon

# The follower spins on its own CPU unless it dies with its leader.
shmt_spawn "$ref" -T "$RUN_S" --no-pin cacheline
ref_pid=$SHMT_SPAWNED
wait_children "$ref_pid" 1 ref_bench
kill_and_check_orphans "$ref_pid" ref_bench
