#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The daemon killed with SIGKILL under load (test/daemon_kill_load.c):
#  1. clients on every transport (socket, memfd channel, and memzone channel
#     of a DPDK secondary when the machine has hugepages), each with requests
#     in flight, all fail with ECONNRESET or EPIPE within 1 s of the kill,
#     and none hangs;
#  2. once they are gone (the secondaries too), a new daemon on the same
#     file prefix starts and serves new clients of every transport.
#
#   daemon_kill_load.sh DAEMON_BIN DAEMON_KILL_LOAD_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN DAEMON_KILL_LOAD_BIN" "$@"
client=$2


if shmt_hugepages_usable; then
	hugepages=on
else
	shmt_log "$SHMT_NO_HUGEPAGES_WHY: no memzone channel, no DPDK secondary in this run"
	hugepages=off
fi

# In the background, waited for: the program dies with this script (lib.sh),
# and a signal to the script runs its traps at once. Its watchdog bounds it.
run_client() {
	shmt_spawn "$client" "$@"
	wait "$SHMT_SPAWNED"
}

start_daemon --hugepages "$hugepages"
prefix=$SHMT_PREFIX
run_client kill "$SHMT_SOCK" || shmt_fail "clients of the killed daemon"
reap_killed_daemon

# Every client, secondaries included, has exited: the prefix is free again
# (the last --file-prefix wins, for EAL and for shmchand).
start_daemon --hugepages "$hugepages" -- --file-prefix "$prefix"
SHMT_PREFIX=$prefix
run_client serve "$SHMT_SOCK" || shmt_fail "the daemon restarted on file prefix $prefix"
stop_daemon
