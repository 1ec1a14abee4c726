#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# shmchanctl clients lists every connection of the daemon: a live client on
# a shared-memory channel (test/ping2_loop.c) with its channel, its state
# and its counters, and a live client on the socket alone (a raw client
# that said hello), each with its pid and uid, as a table and as JSON.
#
#   shmchanctl_clients.sh DAEMON_BIN SHMCHANCTL_BIN PING2_LOOP_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN SHMCHANCTL_BIN PING2_LOOP_BIN" "$@"
ctl=$2
ping2_loop=$3
READY_WAIT_S=10
CTL_TIMEOUT_S=10

start_daemon

# A socket client: GR_HELLO (API version 1, as GR_API_VERSION), then idle
# until SIGTERM.
shmt_client_start shm "$ping2_loop" "$SHMT_SOCK"
shmt_client_start sock python3 -c '
import signal, socket, struct, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
hello = struct.pack("<I", 1) + b"shmchanctl_clients".ljust(128, b"\0")
s.sendall(struct.pack("<III", 1, 0xcafe1981, len(hello)) + hello)
for_id, status, plen = struct.unpack("<III", s.recv(12))
assert (for_id, status, plen) == (1, 0, 0), (for_id, status, plen)
print("ready", flush=True)
signal.sigwait([signal.SIGTERM])
' "$SHMT_SOCK"
shmt_clients_wait_ready "$READY_WAIT_S"
shm_pid=${shmt_client_pid[shm]}
sock_pid=${shmt_client_pid[sock]}
uid=$(id -u)

table=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$SHMT_SOCK" clients) ||
	shmt_fail "shmchanctl clients failed: $table"
echo "$table"
echo "$table" | head -n1 | grep -Eq '^ *PID +UID +TRANSPORT +CHANNEL +STATE +AGE +REQUESTS' ||
	shmt_fail "no title line"
echo "$table" | grep -Eq "^ *$shm_pid +$uid +shm \(memfd\) +shmc-[0-9]+-[0-9]+ +UP " ||
	shmt_fail "the shm client $shm_pid is not listed with its channel"
echo "$table" | grep -Eq "^ *$sock_pid +$uid +socket +- +- " ||
	shmt_fail "the socket client $sock_pid is not listed"
# Columns aligned: the last one is right-aligned, so every line is as long
# as the title line.
widths=$(echo "$table" | awk '{ print length($0) }' | sort -u | wc -l)
[ "$widths" = 1 ] || shmt_fail "columns not aligned"

json=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" clients -j -s "$SHMT_SOCK") ||
	shmt_fail "shmchanctl clients -j failed: $json"
echo "$json" | python3 -m json.tool >/dev/null || shmt_fail "not JSON: $json"
echo "$json" | python3 -c '
import json, sys
shm_pid, sock_pid, uid = map(int, sys.argv[1:])
clients = json.load(sys.stdin)
by_pid = {c["pid"]: c for c in clients}
# The two clients and shmchanctl itself.
assert len(clients) >= 3, clients
shm = by_pid[shm_pid]
assert shm["transport"] == "shm", shm
assert shm["uid"] == uid, shm
assert shm["channel"]["name"].startswith("shmc-"), shm
assert shm["channel"]["backing"] == "memfd", shm
assert shm["channel"]["state"] == "UP", shm
assert shm["channel_counters"]["requests"] > 0, shm
assert shm["channel_counters"]["responses"] > 0, shm
# Hello and attach went over the socket.
assert shm["socket"]["requests"] == 2, shm
sock = by_pid[sock_pid]
assert sock["transport"] == "socket", sock
assert sock["uid"] == uid, sock
assert "channel" not in sock, sock
assert sock["socket"]["requests"] == 1 and sock["socket"]["responses"] == 1, sock
assert sock["socket"]["req_bytes"] == 12 + 132, sock
assert sock["socket"]["resp_bytes"] == 12, sock
print("clients JSON: ok")
' "$shm_pid" "$sock_pid" "$uid" || shmt_fail "wrong clients JSON: $json"

shmt_clients_stop
stop_daemon
