#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# shmchanctl events prints the daemon's events as they come:
#   events -c 2                 every type: a channel client (test/ping2_loop.c)
#                               attaches and leaves: channel-attached with its pid,
#                               memfd and the channel's name, then channel-detached,
#                               reason lease; then it exits 0 by itself;
#   -j events -c 2 TYPES        only the types named (one by name, one in hex): of an
#                               attach, a GR_SHM_EVENT_PUBLISH and a detach, the test
#                               event (its payload in hex) and the detach, as two
#                               JSON Lines records;
#   events, then SIGINT/SIGTERM exits 0 after the lines printed so far;
#   bad types and counts        EX_USAGE (64).
#
#   shmchanctl_events.sh DAEMON_BIN SHMCHANCTL_BIN PING2_LOOP_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN SHMCHANCTL_BIN PING2_LOOP_BIN" "$@"
ctl=$2
ping2_loop=$3
READY_WAIT_S=10
CTL_TIMEOUT_S=20
SUBS_WAIT_S=10
EX_USAGE=64
TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'
# GR_SHM_EVENT_CHANNEL_DETACHED, as a hex value on the command line.
DETACHED_HEX=0x53488002

# A raw client of the daemon: "subscriptions" prints the daemon's count of
# event subscriptions (GR_SHM_EVENT_STATS); "publish HEX..." publishes a
# test event per argument, with that payload (GR_SHM_EVENT_PUBLISH).
api() {
	python3 -c '
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
def recv(n):
    b = b""
    while len(b) < n:
        d = s.recv(n - len(b))
        assert d, "daemon closed the connection"
        b += d
    return b
def request(req_id, req_type, payload=b""):
    s.sendall(struct.pack("<III", req_id, req_type, len(payload)) + payload)
    for_id, status, plen = struct.unpack("<III", recv(12))
    assert (for_id, status) == (req_id, 0), (hex(req_type), for_id, status)
    return recv(plen)
request(1, 0xcafe1981, struct.pack("<I", 1) + b"shmchanctl_events".ljust(128, b"\0"))
if sys.argv[2] == "subscriptions":
    print(struct.unpack("<II", request(2, 0x53480009)[:8])[1])
else:
    for i, payload in enumerate(sys.argv[3:]):
        request(3 + i, 0x53480008, bytes.fromhex(payload))
' "$SHMT_SOCK" "$@"
}

wait_subscriptions() {
	local polls=$((SUBS_WAIT_S * SHMT_POLLS_PER_S)) n
	until n=$(api subscriptions) && [ "$n" = "$1" ]; do
		[ "$polls" -gt 0 ] || shmt_fail "$1 event subscriptions expected, the daemon has ${n:-?}"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
}

# Start shmchanctl "$@" in the background, output in $SHMT_TMPDIR/$1.out,
# its PID in $ctl_pid.
ctl_start() {
	local name=$1
	shift
	shmt_spawn_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$SHMT_SOCK" "$@" >"$SHMT_TMPDIR/$name.out" 2>&1
	ctl_pid=$SHMT_SPAWNED
}

# Wait for the shmchanctl of ctl_start; fail unless it exits 0.
ctl_wait() {
	local rc=0
	wait "$ctl_pid" || rc=$?
	[ "$rc" = 0 ] || shmt_fail "shmchanctl $1: status $rc: $(cat "$SHMT_TMPDIR/$1.out")"
	cat "$SHMT_TMPDIR/$1.out"
}

# A channel client that attaches, then leaves when stopped; its pid in
# $client_pid.
channel_client_start() {
	shmt_client_start "$1" "$ping2_loop" "$SHMT_SOCK"
	shmt_clients_wait_ready "$READY_WAIT_S"
	client_pid=${shmt_client_pid[$1]}
}

start_daemon

# Every type, as text, ending by itself after two events.
ctl_start all events -c 2
wait_subscriptions 1
channel_client_start loop1
shmt_clients_stop >/dev/null
ctl_wait all
out=$(cat "$SHMT_TMPDIR/all.out")
[ "$(echo "$out" | wc -l)" = 2 ] || shmt_fail "events -c 2: not 2 lines"
echo "$out" | sed -n 1p |
	grep -Eqx "$TS channel-attached pid=$client_pid backing=memfd name=shmc-[0-9]+-[0-9]+" ||
	shmt_fail "events: no channel-attached line of pid $client_pid"
echo "$out" | sed -n 2p |
	grep -Eqx "$TS channel-detached pid=$client_pid reason=lease name=shmc-[0-9]+-[0-9]+" ||
	shmt_fail "events: no channel-detached line of pid $client_pid"
name=$(echo "$out" | sed -n '1s/.* name=//p')
[ "$(echo "$out" | sed -n '2s/.* name=//p')" = "$name" ] || shmt_fail "events: two channel names"
echo "events -c 2: attached and detached: ok"

# Two types, one by name and one in hex, as JSON Lines: the attach is left out.
wait_subscriptions 0
ctl_start json -j events -c 2 test "$DETACHED_HEX"
wait_subscriptions 2
channel_client_start loop2
api publish 00ff7f
shmt_clients_stop >/dev/null
ctl_wait json
python3 -c '
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, lines
test, detached = (json.loads(line) for line in lines)
for r in (test, detached):
    assert re.fullmatch(sys.argv[3], r["time"]), r
assert test["type"] == "test" and test["ev_type"] == 0x53488004, test
assert test["len"] == 3 and test["data"] == "00ff7f", test
assert detached["type"] == "channel-detached" and detached["ev_type"] == 0x53488002, detached
assert detached["pid"] == int(sys.argv[2]) and detached["reason"] == "lease", detached
assert detached["name"].startswith("shmc-") and detached["len"] == 40, detached
' "$SHMT_TMPDIR/json.out" "$client_pid" "$TS" || shmt_fail "events -j: not the records expected"
echo "events -j -c 2 test $DETACHED_HEX: ok"

# Until a signal: what came is printed whole, and the status is 0.
for sig in INT TERM; do
	wait_subscriptions 0
	shmt_spawn "$ctl" -s "$SHMT_SOCK" events >"$SHMT_TMPDIR/sig.out" 2>&1
	ctl_pid=$SHMT_SPAWNED
	wait_subscriptions 1
	api publish 0102
	polls=$((CTL_TIMEOUT_S * SHMT_POLLS_PER_S))
	until grep -Eqx "$TS test len=0x2 data=0102" "$SHMT_TMPDIR/sig.out"; do
		[ "$polls" -gt 0 ] || shmt_fail "events: no test line: $(cat "$SHMT_TMPDIR/sig.out")"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
	kill -"$sig" "$ctl_pid"
	shmt_wait_gone "$ctl_pid" "$CTL_TIMEOUT_S" || shmt_fail "events: still runs after SIG$sig"
	ctl_wait sig
	[ "$(wc -l <"$SHMT_TMPDIR/sig.out")" = 1 ] || shmt_fail "events: not one line after SIG$sig"
	echo "events, SIG$sig: status 0: ok"
done

for bad in "events nosuch" "events 0x123456789" "events -c 0" "events -c x" "events -x"; do
	rc=0
	# shellcheck disable=SC2086
	out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$SHMT_SOCK" $bad 2>&1) || rc=$?
	[ "$rc" = "$EX_USAGE" ] || shmt_fail "'shmchanctl $bad': status $rc, expected $EX_USAGE: $out"
	echo "shmchanctl $bad: EX_USAGE: ok"
done

stop_daemon
