#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Each shmchanctl command against a daemon started with -p 2 -S 55 and
# per-peer and event backlog limits of their own, beside a live channel
# client (test/ping2_loop.c), as a table and as JSON:
#   --version   shmchanctl's and shmchand's, the project's version;
#   info        the daemon's version, pid, pollers, spin budget and limits,
#               --max-conn-per-pid/-uid and --event-backlog(-bytes) as given;
#   channels    the client's channel, UP, with requests counted;
#   stats       one channel attached, requests counted;
#   ping        -c 3 lines and ping(8)'s summary, over shm and socket, -2;
#   bad usage   exit status 64 (EX_USAGE).
#
#   shmchanctl_commands.sh DAEMON_BIN SHMCHANCTL_BIN PING2_LOOP_BIN VERSION
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN SHMCHANCTL_BIN PING2_LOOP_BIN VERSION" "$@"
ctl=$2
ping2_loop=$3
version=$4
READY_WAIT_S=10
CTL_TIMEOUT_S=10
# sysexits.h
EX_USAGE=64

# Run shmchanctl on the daemon's socket; its output in $out, its status in $rc.
ctl() {
	rc=0
	out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$SHMT_SOCK" "$@" 2>&1) || rc=$?
}

# The JSON of shmchanctl -j "$@", checked by the Python expression $1 on it
# (named j).
json_check() {
	local check=$1
	shift
	ctl -j "$@"
	[ "$rc" = 0 ] || shmt_fail "shmchanctl -j $*: status $rc: $out"
	echo "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
ok = eval(sys.argv[1], {}, {"j": j, "pid": int(sys.argv[2])})
sys.exit(0 if ok else 1)
' "$check" "$SHMT_PID" || shmt_fail "shmchanctl -j $*: not $check: $out"
	echo "shmchanctl -j $*: $check: ok"
}

out=$("$ctl" --version) || shmt_fail "shmchanctl --version failed"
[ "$out" = "shmchanctl $version" ] || shmt_fail "shmchanctl --version: '$out'"
out=$("$SHMT_DAEMON" --version) || shmt_fail "shmchand --version failed"
[ "$out" = "shmchand $version" ] || shmt_fail "shmchand --version: '$out'"

start_daemon -p 2 -S 55 --max-conn-per-pid 7 --max-conn-per-uid 0 --event-backlog 100 \
	--event-backlog-bytes 65536
shmt_client_start shm "$ping2_loop" "$SHMT_SOCK"
shmt_clients_wait_ready "$READY_WAIT_S"
shm_pid=${shmt_client_pid[shm]}

ctl info
[ "$rc" = 0 ] || shmt_fail "info: status $rc: $out"
echo "$out"
echo "$out" | grep -Eq "^version +$version$" || shmt_fail "info: no version line"
echo "$out" | grep -Eq "^pid +$SHMT_PID$" || shmt_fail "info: no pid line"
echo "$out" | grep -Eq "^pollers +2$" || shmt_fail "info: no pollers line"
echo "$out" | grep -Eq "^spin budgets +poller 55 us" || shmt_fail "info: no spin budget line"
echo "$out" | grep -Eq "^hugepages +(on|off)$" || shmt_fail "info: no hugepages line"
echo "$out" | grep -Eq "^uptime +[0-9]+(ms|s) " || shmt_fail "info: no uptime line"
echo "$out" | grep -Eq "^connections per pid +7$" || shmt_fail "info: no per-pid limit line"
echo "$out" | grep -Eq "^connections per uid +no limit$" || shmt_fail "info: no per-uid limit line"
echo "$out" | grep -Eq "^event backlog +100 events, 64.0KiB per subscriber$" ||
	shmt_fail "info: no event backlog line"
json_check 'j["pid"] == pid and j["version"] == "'"$version"'" and j["pollers"] == 2' info
json_check 'j["spin_us"]["poller"] == 55 and j["limits"]["max_clients"] > 0' info
json_check 'j["limits"]["max_msg_len"] == 128 * 1024 and "memfd" in j["backings"]' info
json_check 'j["limits"]["max_conn_per_pid"] == 7 and j["limits"]["max_conn_per_uid"] == 0' info
json_check 'j["limits"]["event_backlog"] == 100 and j["limits"]["event_backlog_bytes"] == 65536' info

ctl channels
[ "$rc" = 0 ] || shmt_fail "channels: status $rc: $out"
echo "$out"
echo "$out" | head -n1 | grep -Eq '^NAME +PID +BACKING +POLLER +STATE' || shmt_fail "channels: no titles"
echo "$out" | grep -Eq "^shmc-[0-9]+-[0-9]+ +$shm_pid +memfd +[01] +UP " ||
	shmt_fail "channels: the client's channel is not listed"
json_check '[c["state"] for c in j if c["pid"] == '"$shm_pid"'] == ["UP"]' channels
json_check 'all(c["requests"] > 0 and c["name"].startswith("shmc-") for c in j)' channels

ctl stats
[ "$rc" = 0 ] || shmt_fail "stats: status $rc: $out"
echo "$out"
echo "$out" | grep -Eq "^channels attached +1$" || shmt_fail "stats: not one channel attached"
json_check 'j["channels"] == 1 and j["requests"] > 0 and j["detaches"] == 0' stats

for transport in socket shm; do
	for req in "" -2; do
		ctl ping -c 3 -i 0 -t "$transport" $req
		[ "$rc" = 0 ] || shmt_fail "ping -t $transport $req: status $rc: $out"
		echo "$out"
		[ "$(echo "$out" | grep -Ec ' bytes from .*: seq=[123] time=[0-9.]+ us$')" = 3 ] ||
			shmt_fail "ping -t $transport $req: not 3 reply lines"
		echo "$out" | grep -q " over $transport" || shmt_fail "ping: not over $transport"
		echo "$out" | grep -qx "3 requests sent, 3 replies, 0% lost, time [0-9]*ms" ||
			shmt_fail "ping -t $transport $req: no summary"
		echo "$out" | grep -Eqx "rtt min/avg/max/mdev = [0-9.]+/[0-9.]+/[0-9.]+/[0-9.]+ us" ||
			shmt_fail "ping -t $transport $req: no rtt line"
	done
done
json_check 'j["sent"] == j["received"] == 4 and len(j["rtt_ns"]) == 4' ping -c 4 -i 0 -2
json_check 'j["min_ns"] <= j["avg_ns"] <= j["max_ns"] and j["request"] == "GR_PING2"' ping -c 4 -i 0 -2

for bad in "nosuchcommand" "info extra" "ping -c 0" "ping -t udp" "clients -x" ""; do
	# shellcheck disable=SC2086
	ctl $bad
	[ "$rc" = "$EX_USAGE" ] || shmt_fail "'shmchanctl $bad': status $rc, expected $EX_USAGE: $out"
	echo "shmchanctl $bad: EX_USAGE: ok"
done

shmt_clients_stop
stop_daemon
