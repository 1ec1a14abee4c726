#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Garbage in a channel's rings, one hostile client per case (test/hostile.c),
# while a healthy channel client (test/ping2_loop.c) runs pipelined GR_PING2
# throughout. After each case: the daemon is alive, the healthy client has
# seen no error and still runs, and for a corrupting case the culprit lost
# its lease (hostile checks the EOF) and the daemon's log names the channel
# and the reason; for a case served, GR_SHM_STATS counts its lease ended
# once it left (the line of a routine detach is one of its connection's
# lines, which a uid has logged at a bounded rate: server/sock_log.c). At
# the end GR_SHM_STATS counts each corrupt detach.
#
#   shm_ring_garbage.sh DAEMON_BIN HOSTILE_BIN PING2_LOOP_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN HOSTILE_BIN PING2_LOOP_BIN" "$@"
hostile_bin=$2
loop_bin=$3

# Bounds: one hostile run (it bounds each of its waits, and has a watchdog),
# the healthy client's attach, the daemon's log line after the lease ended.
HOSTILE_TIMEOUT_S=10
READY_WAIT_S=5
LOG_WAIT_S=2

# Corrupting cases and the reason the daemon must log when it detaches.
declare -A corrupt_reason=(
	[frame_short]='corrupt request ring'
	[frame_long]='corrupt request ring'
	[frame_huge]='corrupt request ring'
	[payload_len_mismatch]='request frame length disagrees with its payload_len'
	[payload_over_max]='request payload over the maximum'
	[tail_backwards]='corrupt region'
	[tail_past_capacity]='corrupt region'
)
corrupt_cases="frame_short frame_long frame_huge payload_len_mismatch
	payload_over_max tail_backwards tail_past_capacity"
# Cases the daemon may survive either way (serve on or detach); it serves
# frame_unpublished nothing and keeps its lease (the case checks both).
other_cases="frame_unpublished ring_header sleep_flags"

# Wait until GR_SHM_STATS counts one more lease ended than $leases, and
# count it there.
lease_end_wait() {
	local polls=$((LOG_WAIT_S * SHMT_POLLS_PER_S)) now
	until now=$(shmt_shm_stat "$hostile_bin" "$HOSTILE_TIMEOUT_S" detach_lease) &&
		[ "$now" -gt "$leases" ]; do
		[ "$polls" -gt 0 ] || shmt_fail "$1: its lease did not end"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
	leases=$now
}

start_daemon

shmt_client_start healthy "$loop_bin" "$SHMT_SOCK"
shmt_clients_wait_ready "$READY_WAIT_S"

corrupt_before=$(shmt_shm_stat "$hostile_bin" "$HOSTILE_TIMEOUT_S" detach_corrupt)
leases=$(shmt_shm_stat "$hostile_bin" "$HOSTILE_TIMEOUT_S" detach_lease)
detached=0

for case in $corrupt_cases $other_cases; do
	out=$SHMT_TMPDIR/hostile-$case.out
	rc=0
	shmt_run_bounded "$HOSTILE_TIMEOUT_S" "$hostile_bin" "$SHMT_SOCK" "$case" >"$out" 2>&1 || rc=$?
	sed "s/^/$case: /" "$out"
	[ "$rc" = 0 ] || shmt_fail "$case: hostile failed (status $rc)"

	channel=$(sed -n 's/^channel \([^ ]*\) pid \([0-9]*\)$/\1 (pid \2)/p' "$out")
	outcome=$(sed -n 's/^outcome //p' "$out")
	[ -n "$channel" ] || shmt_fail "$case: hostile did not name its channel"
	reason=${corrupt_reason[$case]:-}
	if [ -n "$reason" ]; then
		[ "$outcome" = detached ] || shmt_fail "$case: not detached (outcome '$outcome')"
		want="channel $channel detached: $reason"
	elif [ "$outcome" = detached ]; then
		want="channel $channel detached:"
	else
		[ "$outcome" = served ] || shmt_fail "$case: outcome '$outcome'"
		want=
		lease_end_wait "$case"
	fi
	# The daemon outlived the case, and still serves its healthy client.
	if [ -n "$want" ]; then
		shmt_log_expect "$case" "$LOG_WAIT_S" "$want"
	fi
	shmt_clients_check "$case"
	if [ "$outcome" = detached ]; then
		detached=$((detached + 1))
	fi
	echo "$case: $outcome: ok"
done

shmt_clients_check "all cases"
corrupt_after=$(shmt_shm_stat "$hostile_bin" "$HOSTILE_TIMEOUT_S" detach_corrupt)
[ $((corrupt_after - corrupt_before)) = "$detached" ] ||
	shmt_fail "GR_SHM_STATS counts $((corrupt_after - corrupt_before)) corrupt detaches, expected $detached"

shmt_clients_stop

stop_daemon
