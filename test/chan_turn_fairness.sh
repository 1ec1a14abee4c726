#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A channel client's round trips beside channels that keep expensive
# requests in flight: FLOODERS channels (test/chan_turn_flood.c) each keep
# DEPTH GR_LOG_LEVEL_LIST in flight (about 200 streamed responses each), and
# a well-behaved client measures its GR_PING2 round trips on a channel
# (test/latency_probe.c), alone first, then beside them. A channel's turn is
# bounded by the work it causes (server/channel.h, CHANNEL_TURN_RESPONSES),
# and a poller gives every channel with work a turn before it serves one
# again, so the probe waits for at most one turn of each flooder. The
# figures are printed (docs/reliability.md), not asserted: on a shared host
# they vary from run to run. What fails the test is an error of a client,
# or a stall of the probe (no answer for 2 s). The responses a turn may
# produce, and the order of service, are asserted by
# server/channel_turn_test.c.
#
#   chan_turn_fairness.sh DAEMON_BIN FLOOD_BIN LATENCY_PROBE_BIN [FLOODERS [DEPTH [PROBE_MS]]]
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN FLOOD_BIN LATENCY_PROBE_BIN" "${@:1:3}"
flood_bin=$2
probe_bin=$3

FLOODERS=${4:-16}
DEPTH=${5:-32}
PROBE_MS=${6:-1000}
# Bounds of a probe run, and of the flooders' start.
RUN_TIMEOUT_S=20
READY_WAIT_S=10

start_daemon

probe() {
	shmt_run_bounded "$RUN_TIMEOUT_S" "$probe_bin" "$SHMT_SOCK" shm "$PROBE_MS" ||
		shmt_fail "latency probe failed ($1)"
}

idle=$(probe idle)
shmt_client_start flood "$flood_bin" "$SHMT_SOCK" "$FLOODERS" "$DEPTH"
shmt_clients_wait_ready "$READY_WAIT_S"
beside=$(probe "beside $FLOODERS flooders")
shmt_clients_check "the probe beside the flooders"
shmt_clients_stop
echo "channel client, alone:                                            $idle"
echo "channel client, beside $FLOODERS channels of $DEPTH GR_LOG_LEVEL_LIST in flight: $beside"

stop_daemon
