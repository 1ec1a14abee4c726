#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A socket client's round trips beside clients that pipeline expensive
# requests: FLOODERS connections (test/sock_turn_flood.c) each keep their
# socket full of GR_LOG_LEVEL_LIST (about 200 streamed responses each), and
# a well-behaved client measures its GR_PING2 round trips on the socket
# (test/latency_probe.c), idle first, then beside them. A turn of a
# connection is bounded by the work it causes (server/sock.h,
# SOCK_TURN_RESPONSES), so the probe waits for at most one request of each
# flooder: its median stays around a millisecond on 2 shared cores where it
# was hundreds of milliseconds with turns bounded by the bytes read. The
# figures are printed (docs/reliability.md), not asserted: on a shared host
# they vary from run to run. What fails the test is an error of a client,
# or a stall of the probe (no answer for 2 s). The order of service is
# asserted by server/sock_turn_test.c.
#
#   sock_turn_fairness.sh DAEMON_BIN FLOOD_BIN LATENCY_PROBE_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN FLOOD_BIN LATENCY_PROBE_BIN" "$@"
flood_bin=$2
probe_bin=$3

FLOODERS=8
PROBE_MS=1000
# Bounds of a probe run, and of the flooders' start.
RUN_TIMEOUT_S=20
READY_WAIT_S=10

start_daemon

probe() {
	shmt_run_bounded "$RUN_TIMEOUT_S" "$probe_bin" "$SHMT_SOCK" socket "$PROBE_MS" ||
		shmt_fail "latency probe failed ($1)"
}

idle=$(probe idle)
shmt_client_start flood "$flood_bin" "$SHMT_SOCK" "$FLOODERS"
shmt_clients_wait_ready "$READY_WAIT_S"
beside=$(probe "beside $FLOODERS flooders")
shmt_clients_check "the probe beside the flooders"
shmt_clients_stop
echo "socket client, idle:                                   $idle"
echo "socket client, beside $FLOODERS pipelining GR_LOG_LEVEL_LIST: $beside"

stop_daemon
