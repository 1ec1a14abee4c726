#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Socket input costs the daemon time linear in its bytes
# (test/sock_input_linear.c): misaligned pipelining is served about as fast
# as aligned pipelining, side by side in one run. Then ATTACKERS clients
# pipeline misaligned requests at once, each its own process, while a
# well-behaved client on each transport measures its round trips
# (test/latency_probe.c); the same probes idle come first. The figures are
# printed (docs/reliability.md); on 2 shared cores they vary from run to run,
# so what fails the test is the ratio, an error of an attacker, or an error
# or a stall (no answer for 2 s) of a probe.
#
#   sock_input_linear.sh DAEMON_BIN INPUT_LINEAR_BIN LATENCY_PROBE_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN INPUT_LINEAR_BIN LATENCY_PROBE_BIN" "$@"
linear_bin=$2
probe_bin=$3

ATTACKERS=8
# Each probe's length. The attackers flood until both probes are done, for
# at most FLOOD_MAX_MS (below the programs' watchdog, TEST_WATCHDOG_S).
PROBE_MS=1000
FLOOD_MAX_MS=15000
# Bounds of a run of either program, and of the attackers' start.
RUN_TIMEOUT_S=20
READY_WAIT_S=5

start_daemon

shmt_run_bounded "$RUN_TIMEOUT_S" "$linear_bin" "$SHMT_SOCK" ratio ||
	shmt_fail "misaligned pipelining is not served as fast as aligned pipelining"

probe() {
	shmt_run_bounded "$RUN_TIMEOUT_S" "$probe_bin" "$SHMT_SOCK" "$1" "$PROBE_MS" ||
		shmt_fail "latency probe on $1 failed ($2)"
}

declare -A idle during
for t in socket shm; do
	idle[$t]=$(probe "$t" "idle")
done

attackers=()
flood_stop=$SHMT_TMPDIR/flood.stop
for i in $(seq "$ATTACKERS"); do
	shmt_spawn_bounded "$RUN_TIMEOUT_S" "$linear_bin" "$SHMT_SOCK" flood "$FLOOD_MAX_MS" \
		"$flood_stop" >"$SHMT_TMPDIR/attacker-$i.out" 2>&1
	attackers+=("$SHMT_SPAWNED")
done
polls=$((READY_WAIT_S * SHMT_POLLS_PER_S))
for i in $(seq "$ATTACKERS"); do
	until grep -qs '^flooding$' "$SHMT_TMPDIR/attacker-$i.out"; do
		[ "$polls" -gt 0 ] || shmt_fail "attacker $i not flooding within $READY_WAIT_S s"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
done
for t in socket shm; do
	during[$t]=$(probe "$t" "beside $ATTACKERS misaligned pipelining clients")
done
for i in $(seq "$ATTACKERS"); do
	! grep -qs '^flood: ' "$SHMT_TMPDIR/attacker-$i.out" ||
		shmt_fail "attacker $i ended before the probes did: raise FLOOD_MAX_MS"
done
: >"$flood_stop"
for i in $(seq "$ATTACKERS"); do
	rc=0
	wait "${attackers[$((i - 1))]}" || rc=$?
	out=$SHMT_TMPDIR/attacker-$i.out
	[ "$rc" = 0 ] || { cat "$out"; shmt_fail "attacker $i failed (status $rc)"; }
	grep -q '^flood: ' "$out" || shmt_fail "attacker $i printed no rate"
	sed -n "s/^flood: /attacker $i: /p" "$out"
done
for t in socket shm; do
	echo "$t client, idle:                      ${idle[$t]}"
	echo "$t client, beside $ATTACKERS attackers:         ${during[$t]}"
done

stop_daemon
