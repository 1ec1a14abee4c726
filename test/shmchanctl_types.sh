#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# shmchanctl against an application that embeds the server library
# (test/embed_types_app.c: its module named, the registry filled to its 256
# handlers):
#   info        works: the program's name and the server library's version;
#   types       lists all 256 types, the application's module by its name,
#               the server's as "main" and "shm", as a table and as JSON;
#   call        by number and by name, over the socket and the channel: a
#               payload as hex and from a file, a stream (-S) of 256
#               responses, a trailing-array request checked (EINVAL when its
#               count disagrees with its length, however large), a status
#               (exit 65), a handler's unregister refused (EDEADLK), a type
#               unregistered by the application (ENOTSUP);
#   bad input   an unknown type name, odd hex, a bad digit, an unreadable
#               or too long file, a bad number: a clear error and its
#               exit status, before anything is sent;
#   the log     of the application: the server library's lines never call
#               it a daemon.
#
#   shmchanctl_types.sh APP_BIN SHMCHANCTL_BIN VERSION
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "APP_BIN SHMCHANCTL_BIN VERSION" "$@"
ctl=$2
version=$3
CTL_TIMEOUT_S=10
HANDLERS_MAX=256
# sysexits.h
EX_USAGE=64
EX_DATAERR=65
EX_NOINPUT=66
# errno values
EINVAL=22
EDEADLK=35
ENOTSUP=95

# Run shmchanctl on the application's socket; its output in $out, its
# status in $rc.
ctl() {
	rc=0
	out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$SHMT_SOCK" "$@" 2>&1) || rc=$?
}

# shmchanctl "$@" must exit $1 and print a line matching $2.
expect() {
	local want=$1 line=$2
	shift 2
	ctl "$@"
	[ "$rc" = "$want" ] || shmt_fail "shmchanctl $*: status $rc, expected $want: $out"
	echo "$out" | grep -Eq -- "$line" || shmt_fail "shmchanctl $*: no line '$line': $out"
	echo "shmchanctl $*: $want, $line: ok"
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
sys.exit(0 if eval(sys.argv[1], {}, {"j": j}) else 1)
' "$check" || shmt_fail "shmchanctl -j $*: not $check: $out"
	echo "shmchanctl -j $*: $check: ok"
}

start_daemon

expect 0 "^program +embed_types_app$" info
expect 0 "^server library +$version$" info
json_check 'j["program"] == "embed_types_app" and j["server_version"] == "'"$version"'"' info

ctl types
[ "$rc" = 0 ] || shmt_fail "types: status $rc: $out"
echo "$out" | head -n 3
[ "$(echo "$out" | tail -n +2 | wc -l)" = "$HANDLERS_MAX" ] ||
	shmt_fail "types: not $HANDLERS_MAX types: $out"
echo "$out" | grep -Eq '^TYPE +MODULE +NAME +MIN LEN +SERVED BY$' || shmt_fail "types: no titles"
echo "$out" | grep -Eq '^0x7e540001 +embed_types +EMBED_TYPES_SUMS +4 +application$' ||
	shmt_fail "types: no EMBED_TYPES_SUMS line"
echo "$out" | grep -Eq '^0xcafe1981 +main +GR_HELLO +132 +server$' || shmt_fail "types: no GR_HELLO"
echo "$out" | grep -Eq '^0x5348000a +shm +GR_SHM_TYPE_LIST +0 +server$' ||
	shmt_fail "types: no GR_SHM_TYPE_LIST"
json_check 'len(j) == '$HANDLERS_MAX' and len({t["type"] for t in j}) == '$HANDLERS_MAX types
json_check '[t["module"] for t in j if t["name"] == "EMBED_TYPES_FILL_0"] == ["embed_types"]' types
json_check 'all(t["served_by"] == "server" for t in j if t["module"] in ("main", "shm"))' types

for transport in socket shm; do
	expect 0 "^status 0 \(OK\), 0 bytes$" call -t "$transport" 0xcafe1987
	expect 0 "^status 0 \(OK\), 0 bytes$" call -t "$transport" gr_ping
	# Two values, 1 and 2: their sums, 1 and 3.
	expect 0 "^00000000  02 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00$" \
		call -t "$transport" EMBED_TYPES_SUMS "02000000 01000000 02000000"
	expect 0 "^00000010  03 00 00 00 00 00 00 00$" \
		call -t "$transport" EMBED_TYPES_SUMS "02000000 01000000 02000000"
	# A count past the values; 0x40000001 values of 4 bytes are 4 bytes
	# in 32 bits; the largest count.
	for n in 03000000 01000040 ffffffff; do
		expect "$EX_DATAERR" "^status $EINVAL " \
			call -t "$transport" EMBED_TYPES_SUMS "$n 01000000 02000000"
	done
	expect "$EX_DATAERR" "^status $EDEADLK " call -t "$transport" EMBED_TYPES_UNREGISTER_SELF
	expect "$EX_DATAERR" "^status $ENOTSUP " call -t "$transport" 0x7e54ffff
	# The whole list, as a stream.
	expect 0 "^end: status 0 \(OK\), $HANDLERS_MAX responses$" call -S -t "$transport" GR_SHM_TYPE_LIST
	json_check 'len(j["responses"]) == '$HANDLERS_MAX' and j["status"] == 0' \
		call -S -t "$transport" GR_SHM_TYPE_LIST
	json_check 'j["payload"] == "00010203" and j["status"] == 0' \
		call -t "$transport" GR_SHM_ECHO 00010203
done

# A payload from a file, and from standard input.
printf '\x01\x00\x00\x00\x07\x00\x00\x00' >"$SHMT_TMPDIR/sums.bin"
json_check 'j["payload"] == "01000000000000000700000000000000"' \
	call EMBED_TYPES_SUMS "@$SHMT_TMPDIR/sums.bin"
rc=0
out=$("$ctl" -s "$SHMT_SOCK" -j call GR_SHM_ECHO @- <"$SHMT_TMPDIR/sums.bin" 2>&1) || rc=$?
[ "$rc" = 0 ] && echo "$out" | grep -q '"payload": "0100000007000000"' ||
	shmt_fail "call GR_SHM_ECHO @-: status $rc: $out"

# The application unregisters a type: ENOTSUP from then on.
expect 0 "^status 0 " call EMBED_TYPES_VICTIM
kill -USR1 "$SHMT_PID"
shmt_log_wait 10 "EMBED_TYPES_VICTIM unregistered: 0" ||
	shmt_fail "the application did not unregister EMBED_TYPES_VICTIM"
expect "$EX_DATAERR" "^status $ENOTSUP " call 0x7e540003
expect "$EX_USAGE" "serves no request named 'EMBED_TYPES_VICTIM'" call EMBED_TYPES_VICTIM

# Bad input: said, with its status, nothing sent.
expect "$EX_USAGE" "serves no request named 'NO_SUCH_TYPE' \('shmchanctl types' lists them\)" \
	call NO_SUCH_TYPE
expect "$EX_USAGE" "odd number of hex digits \(3\)" call GR_SHM_ECHO abc
expect "$EX_USAGE" "'g' in the payload is no hex digit" call GR_SHM_ECHO 0g
expect "$EX_USAGE" "a blank inside a byte" call GR_SHM_ECHO "0 1"
expect "$EX_NOINPUT" "cannot read $SHMT_TMPDIR/none: No such file or directory" \
	call GR_SHM_ECHO "@$SHMT_TMPDIR/none"
expect "$EX_NOINPUT" "cannot read $SHMT_TMPDIR: Is a directory" call GR_SHM_ECHO "@$SHMT_TMPDIR"
head -c $((128 * 1024 + 1)) /dev/zero >"$SHMT_TMPDIR/big.bin"
expect "$EX_USAGE" "holds more than 131072 bytes" call GR_SHM_ECHO "@$SHMT_TMPDIR/big.bin"
expect "$EX_USAGE" "'0x1ffffffff' is no request type" call 0x1ffffffff
expect "$EX_USAGE" "'12abc' is no request type" call 12abc
expect "$EX_USAGE" "^Usage: shmchanctl .*call" call
expect "$EX_USAGE" "^Usage: shmchanctl .*call" call GR_PING 00 00
expect "$EX_USAGE" "-t takes auto, shm or socket" call -t udp GR_PING

# What the server logs about clients, in the words of an application:
# a hello of another version (EBADMSG, which shmchanctl takes for a broken
# protocol) and a client on a channel when the server stops.
hello=$(printf '63000000%0264d' 0)
expect 76 "Bad message" call GR_HELLO "$hello"
shmt_log_wait 10 "API version 99; the server speaks" || shmt_fail "no line about the hello"
# The lines of a uid's connections are logged 10 per 5 s interval (the
# server's SOCK_LOG_BURST and SOCK_LOG_INTERVAL_MS), and the calls above
# made dozens: the pinger goes to a server started afresh, rather than
# waiting for a new interval, so that its attach and its end at the stop
# are logged whatever the pace of the calls was.
first_log=$SHMT_LOG
stop_daemon
start_daemon
shmt_spawn "$ctl" -s "$SHMT_SOCK" ping -t shm -i 1
pinger=$SHMT_SPAWNED
shmt_log_wait 10 "attached: pid $pinger " || shmt_fail "the pinger attached no channel"
stop_daemon
wait "$pinger" || true
grep -q "closed: server stopping" "$SHMT_LOG" || shmt_fail "no line about the stop"
grep -q "detached: lease closed by the server" "$SHMT_LOG" || shmt_fail "no detach line"
if grep -i daemon "$first_log" "$SHMT_LOG"; then
	shmt_fail "the server library's log says 'daemon' in an application"
fi
