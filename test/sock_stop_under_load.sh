#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# SIGTERM stops the daemon promptly whatever its socket clients do: CONNS
# connections of one process (test/sock_turn_flood.c) keep their sockets
# full of GR_LOG_LEVEL_LIST (about 200 streamed responses each), then the
# daemon gets SIGTERM. It must exit 0, remove its socket and close every
# connection within STOP_BOUND_MS. A turn of a connection is bounded by the
# work it causes (server/sock.h), so the stop waits for about one request
# of each connection: a few hundred milliseconds on 2 shared cores, where it
# took 7.7 s with turns bounded by the bytes read. The bound is the goal's
# 5 s, over 3 times the quiet duration. That a stop is noticed between
# requests is asserted by count in server/sock_turn_test.c.
#
#   sock_stop_under_load.sh DAEMON_BIN FLOOD_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN FLOOD_BIN" "$@"
flood_bin=$2

CONNS=120
STOP_BOUND_MS=5000
# Bounds of the flooder's start, and of its end once the daemon is gone.
READY_WAIT_S=15
FLOOD_END_WAIT_S=10

# The flooder's connections are one process's: lift the per-process bound.
start_daemon --max-conn-per-pid 0
shmt_client_start flood "$flood_bin" "$SHMT_SOCK" "$CONNS"
shmt_clients_wait_ready "$READY_WAIT_S"
shmt_clients_check "flooding"

pid=$SHMT_PID
start_ns=$(date +%s%N)
stop_daemon
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
shmt_log "daemon $pid stopped ${elapsed_ms} ms after SIGTERM beside $CONNS pipelining connections"
[ "$elapsed_ms" -lt "$STOP_BOUND_MS" ] ||
	shmt_fail "the daemon took $elapsed_ms ms to stop, over $STOP_BOUND_MS ms"

# Every connection was closed by the daemon: the flooder ends on its own.
flood_pid=${shmt_client_pid[flood]}
shmt_wait_gone "$flood_pid" "$FLOOD_END_WAIT_S" || shmt_fail "the flooder still runs after the stop"
rc=0
wait "$flood_pid" || rc=$?
cat "$SHMT_TMPDIR/flood.out"
[ "$rc" = 0 ] || shmt_fail "the flooder failed (status $rc)"
closed=$(shmt_word "$(grep '^conns=' "$SHMT_TMPDIR/flood.out")" closed_by_daemon)
[ "$closed" = "$CONNS" ] || shmt_fail "$closed of $CONNS connections closed by the daemon"
shmt_clients=()
shmt_client_pid=()
