#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The server stops while a client's stream produced in turns
# (gr_api_stream_start()) is open and paused: the client
# (test/stream_server_stop.c) started a stream far longer than its
# transport holds, read a few responses and stopped reading. Then:
# - the application's server (test/embed_stream_app.c) stops at SIGTERM
#   within the usual stop bound;
# - the producer's state was released exactly once, by the stop: the
#   application's counts say no stream released when the stop began, and
#   as many released as started once the server stopped;
# - the client's next stream_next calls fail with ECONNRESET or EPIPE, and
#   none waits for its timeout, while the application still runs;
# - at a second SIGTERM the application exits 0 and its socket is gone
#   (stop_daemon).
# On both transports.
#
#   stream_server_stop.sh APP_BIN CLIENT_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "APP_BIN CLIENT_BIN" "$@"
client_bin=$2

# How long the client may take to start its stream and read a few
# responses, on a busy host.
ready_wait_s=10

# The counts embed_stream_app logs at $1 ("stopping" or "stopped"): sets
# counted_started and counted_released.
stream_counts() {
	local line
	line=$(grep -F "embed_stream_app: $1: streams" "$SHMT_LOG" | tail -n 1)
	[ -n "$line" ] || shmt_fail "no \"$1\" counts in the application's log"
	counted_started=$(shmt_word "$line" started)
	counted_released=$(shmt_word "$line" released)
}

# The application lives on after its server stopped, until a second
# SIGTERM (test/embed_app.h): the client's error must come from the stop,
# not from the process's exit closing its descriptors.
export EMBED_APP_LINGER=1

for transport in socket shm; do
	start_daemon
	shmt_client_start "stream_$transport" "$client_bin" "$SHMT_SOCK" "$transport"
	shmt_clients_wait_ready "$ready_wait_s"
	# At once: a client that stays stopped past the slow-client limit (2 s
	# on a channel, 5 s on the socket) has its stream released before the
	# stop, and the check below says so.
	kill -TERM "$SHMT_PID"
	shmt_log_expect "$transport: server stop" "$SHMT_STOP_WAIT_S" "server stopped, lingering"
	stream_counts stopping
	[ "$counted_started" = 1 ] ||
		shmt_fail "$transport: $counted_started streams started when the stop began, expected 1"
	[ "$counted_released" = 0 ] ||
		shmt_fail "$transport: the stream was released before the stop ($counted_released)"
	stream_counts stopped
	[ "$counted_started" = 1 ] ||
		shmt_fail "$transport: $counted_started streams started after the stop, expected 1"
	[ "$counted_released" = 1 ] ||
		shmt_fail "$transport: $counted_released releases of the one stream at the stop, expected 1"
	# The client reads on: an error, not a hang, while the application
	# still runs.
	shmt_clients_stop
	shmt_running "$SHMT_PID" || shmt_fail "$transport: the application exited before its clients"
	# The second SIGTERM: exit 0, the socket removed.
	stop_daemon
	echo "$transport: stopped mid-stream, the stream released once, the client told"
done
