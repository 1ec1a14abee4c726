#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A client cannot make the daemon block on its response doorbell
# (test/doorbell_client_blocking.c): the attack, on a daemon with one poller,
# twice. First the attacker stays alive: its poller's other client is served,
# and SIGTERM stops the daemon within STOP_BOUND_S while the attacker still
# holds its channel. Then the attacker exits after its attack: its channel is
# detached, the other client is served, and SIGTERM stops the daemon as fast.
#
#   doorbell_client_blocking.sh DAEMON_BIN CLIENT_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN CLIENT_BIN" "$@"
client_bin=$2

# A daemon whose poller is not blocked stops in milliseconds on a quiet
# host, and within a second or two on one loaded far past its CPUs; a blocked
# poller never stops.
STOP_BOUND_S=5
# The client's own bound (its watchdog is 20 s; it measures for 2 to 6 s).
CLIENT_TIMEOUT_S=25
READY_S=10

start_daemon --pollers 1
shmt_client_start stay "$client_bin" "$SHMT_SOCK" stay
shmt_clients_wait_ready "$READY_S"
SHMT_STOP_WAIT_S=$STOP_BOUND_S stop_daemon
shmt_clients_stop

start_daemon --pollers 1
rc=0
shmt_run_bounded "$CLIENT_TIMEOUT_S" "$client_bin" "$SHMT_SOCK" exit || rc=$?
[ "$rc" = 0 ] || shmt_fail "attacker that exits: the test client failed (status $rc)"
shmt_log_expect "detach" 1 "detached: lease closed"
SHMT_STOP_WAIT_S=$STOP_BOUND_S stop_daemon
