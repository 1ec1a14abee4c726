#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# An idle daemon tells its clients how busy the host's CPUs are (the
# host_load word of the control block) soon after a call, over whatever the
# client wrote there, and serves on (test/hostile.c, case host_hint).
#
#   shm_host_hint.sh DAEMON_BIN HOSTILE_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN HOSTILE_BIN" "$@"
hostile_bin=$2

# The case's own bound is 10 s, its watchdog 20 s.
HOSTILE_TIMEOUT_S=25

start_daemon --pollers 1
out=$SHMT_TMPDIR/hostile-host_hint.out
rc=0
shmt_run_bounded "$HOSTILE_TIMEOUT_S" "$hostile_bin" "$SHMT_SOCK" host_hint >"$out" 2>&1 || rc=$?
cat "$out"
[ "$rc" = 0 ] || shmt_fail "host_hint: hostile failed (status $rc)"
grep -Eq '^host hint told after [0-9]+ ms: (busy|quiet)$' "$out" ||
	shmt_fail "host_hint: no host hint told"
grep -qx 'outcome served' "$out" || shmt_fail "host_hint: not served after it"
stop_daemon
