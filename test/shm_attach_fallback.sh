#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Transport choice against two daemons in turn: one started with --no-shm,
# then one with its default channels.
#
#   shm_attach_fallback.sh DAEMON_BIN TEST_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN TEST_BIN" "$@"
test_bin=$2

# Bound of each run of the test program (it has a watchdog of its own).
run_timeout_s=10

for mode in no-shm shm; do
	if [ "$mode" = no-shm ]; then
		start_daemon --no-shm
	else
		start_daemon
	fi
	timeout --kill-after=2 "$run_timeout_s" "$test_bin" "$SHMT_SOCK" "$mode" ||
		shmt_fail "$mode: test program failed (status $?)"
	stop_daemon
done
