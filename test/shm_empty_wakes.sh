#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Empty wake-ups cost the daemon no more than they cost the client that
# rings them: a hostile channel client (test/hostile.c ring_empty_*) writes
# its request doorbell every 20 us, then every 300 us, for 2 s each, with no
# request, at nice 19. The poller thread's CPU time over that while (from
# /proc/PID/task/TID/stat) must stay within RINGER_FACTOR x the ringer's own
# + SLACK_S, and the channel must still serve afterwards. A poller that
# spins its budget after every wake-up (at its nice value, -20 when the
# daemon may set it) used several times the ringer's CPU.
#
#   shm_empty_wakes.sh DAEMON_BIN HOSTILE_BIN
set -eu

# The bound: poller CPU <= RINGER_FACTOR x ringer CPU + SLACK_S, over 2 s.
RINGER_FACTOR=1.5
SLACK_S=0.2
HOSTILE_TIMEOUT_S=20
READY_WAIT_S=5

SHMT_NAME=shm_empty_wakes
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN HOSTILE_BIN" "$@"
hostile_bin=$2

# Seconds of CPU (user + system) of the daemon's thread named COMM.
thread_cpu_s() {
	local t comm stat fields hz
	hz=$(getconf CLK_TCK)
	for t in /proc/"$1"/task/*; do
		read -r comm <"$t/comm" 2>/dev/null || continue
		[ "$comm" = "$2" ] || continue
		read -r stat <"$t/stat"
		# After the ") " that ends the command name: field 3 on.
		read -ra fields <<<"${stat##*) }"
		echo "$(((fields[11] + fields[12]) * 1000 / hz))" | awk '{printf "%.3f", $1 / 1000}'
		return 0
	done
	return 1
}

start_daemon
for case in ring_empty_20us ring_empty_300us; do
	out=$SHMT_TMPDIR/$case.out
	shmt_spawn_bounded "$HOSTILE_TIMEOUT_S" nice -n 19 "$hostile_bin" "$SHMT_SOCK" "$case" >"$out"
	ringer=$SHMT_SPAWNED
	waited=0
	until grep -q '^ringing$' "$out"; do
		shmt_running "$ringer" || shmt_fail "$case: the ringer ended before ringing: $(cat "$out")"
		[ "$waited" -lt $((READY_WAIT_S * 10)) ] || shmt_fail "$case: no 'ringing' within $READY_WAIT_S s"
		waited=$((waited + 1))
		sleep 0.1
	done
	before=$(thread_cpu_s "$SHMT_PID" shmchan-poll0) || shmt_fail "no thread shmchan-poll0"
	rc=0
	wait "$ringer" || rc=$?
	after=$(thread_cpu_s "$SHMT_PID" shmchan-poll0) || shmt_fail "no thread shmchan-poll0"
	[ "$rc" = 0 ] || shmt_fail "$case: the ringer failed ($rc): $(cat "$out")"
	grep -q '^outcome served$' "$out" || shmt_fail "$case: not served after ringing: $(cat "$out")"
	read -r _ _ ringer_s _ rings < <(grep '^ringer cpu_s ' "$out") ||
		shmt_fail "$case: no ringer figures: $(cat "$out")"
	poller_s=$(awk -v a="$after" -v b="$before" 'BEGIN {printf "%.3f", a - b}')
	echo "$case: $rings rings; poller cpu ${poller_s} s, ringer cpu ${ringer_s} s"
	awk -v p="$poller_s" -v r="$ringer_s" -v f="$RINGER_FACTOR" -v s="$SLACK_S" \
		'BEGIN {exit !(p <= f * r + s)}' ||
		shmt_fail "$case: the poller used ${poller_s} s of CPU for ${ringer_s} s of the ringer's (bound: $RINGER_FACTOR x + $SLACK_S s)"
done
stop_daemon
echo "shm_empty_wakes: ok"
