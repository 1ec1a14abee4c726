#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# shmchanctl log level list and set:
#   list          the daemon's own types (shmchand), no DPDK one; -a adds
#                 DPDK's (lib.eal); as a table and as JSON;
#   set           by name and by number, by pattern, seen in the next list;
#   bad levels, patterns, sub-commands: EX_USAGE (64), nothing sent;
#   a pattern that matches no log type (which the daemon would answer 0,
#                 as Grout's does): EX_DATAERR (65), a message saying so,
#                 and no level changed;
#   a daemon that refuses with EINVAL (a fake one here): EX_DATAERR (65)
#                 and a message saying it refused.
#
#   shmchanctl_log.sh DAEMON_BIN SHMCHANCTL_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN SHMCHANCTL_BIN" "$@"
ctl=$2
CTL_TIMEOUT_S=10
READY_WAIT_S=10
EX_USAGE=64
EX_DATAERR=65
LONG_PATTERN=$(printf 'x%.0s' $(seq 64))

# Run shmchanctl on socket $1; its output in $out, its status in $rc.
ctl_on() {
	local sock=$1
	shift
	rc=0
	out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$sock" "$@" 2>&1) || rc=$?
}

ctl_ok() {
	ctl_on "$SHMT_SOCK" "$@"
	[ "$rc" = 0 ] || shmt_fail "shmchanctl $*: status $rc: $out"
}

# The level column of type $2 in the table of "log level list" ($1: -a or "").
level_of() {
	# shellcheck disable=SC2086
	ctl_ok log level list $1
	echo "$out" | awk -v t="$2" '$1 == t {print $2, $3}'
}

start_daemon

ctl_ok log level list
echo "$out"
echo "$out" | head -n1 | grep -Eqx 'NAME +LEVEL' || shmt_fail "list: no titles"
echo "$out" | grep -Eqx 'shmchand +[a-z]+ \([1-8]\)' || shmt_fail "list: no shmchand line"
! echo "$out" | grep -q '^lib\.eal ' || shmt_fail "list without -a: lib.eal listed"
ctl_ok log level list -a
echo "$out" | grep -Eqx 'lib\.eal +[a-z]+ \([1-8]\)' || shmt_fail "list -a: no lib.eal line"
echo "$out" | grep -Eq '^shmchand ' || shmt_fail "list -a: no shmchand line"
ctl_ok -j log level list -a
echo "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
names = {e["name"]: e for e in j}
assert "shmchand" in names and "lib.eal" in names, names.keys()
assert all(1 <= e["level"] <= 8 and e["level_name"] for e in j), j
' || shmt_fail "list -j -a: not the JSON expected: $out"
echo "list, -a, -j: ok"

ctl_ok log level set shmchand debug
[ -z "$out" ] || shmt_fail "set: printed '$out'"
[ "$(level_of "" shmchand)" = "debug (8)" ] || shmt_fail "set debug: shmchand not at debug"
ctl_ok log level set 'shmch*' 6
[ "$(level_of "" shmchand)" = "notice (6)" ] || shmt_fail "set 'shmch*' 6: not notice"
ctl_ok log level set 'lib.eal' WARNING
[ "$(level_of -a lib.eal)" = "warning (5)" ] || shmt_fail "set lib.eal WARNING: not warning"
echo "set by name, number, pattern: ok"

for bad in "log level set shmchand 0" "log level set shmchand 9" "log level set shmchand loud" \
	"log level set shmchand" "log level set $LONG_PATTERN info" "log level list extra" \
	"log level list -x" "log level get" "log level" "log" "log levels list"; do
	# shellcheck disable=SC2086
	ctl_on "$SHMT_SOCK" $bad
	[ "$rc" = "$EX_USAGE" ] || shmt_fail "'shmchanctl $bad': status $rc, expected $EX_USAGE: $out"
	echo "shmchanctl $bad: EX_USAGE: ok"
done
ctl_on "$SHMT_SOCK" log level set "" info
[ "$rc" = "$EX_USAGE" ] || shmt_fail "set of an empty pattern: status $rc: $out"
[ "$(level_of "" shmchand)" = "notice (6)" ] || shmt_fail "a refused set changed the level"
ctl_on "$SHMT_SOCK" log level set 'nosuch*' debug
[ "$rc" = "$EX_DATAERR" ] || shmt_fail "set of a pattern that matches nothing: status $rc: $out"
echo "$out" | grep -q "no log type matches the pattern; nothing changed" ||
	shmt_fail "set of a pattern that matches nothing: no message that says so: $out"
[ "$(level_of "" shmchand)" = "notice (6)" ] || shmt_fail "a pattern that matched nothing changed a level"
echo "set of a pattern that matches nothing: EX_DATAERR: ok"
stop_daemon

# A fake daemon that says hello and refuses every other request with EINVAL.
fake=$SHMT_TMPDIR/refuses.sock
shmt_client_start fake "$(dirname "$0")/fake_ctl_daemon.py" "$fake" --default EINVAL
shmt_clients_wait_ready "$READY_WAIT_S"
for cmd in "log level set shmchand info" "log level list"; do
	# shellcheck disable=SC2086
	ctl_on "$fake" $cmd
	[ "$rc" = "$EX_DATAERR" ] || shmt_fail "'$cmd' refused: status $rc, expected $EX_DATAERR: $out"
	echo "$out" | grep -q "on $fake: refused: Invalid argument (a pattern of 1 to 63" ||
		shmt_fail "'$cmd' refused: no message that says so: $out"
	echo "shmchanctl $cmd, refused: EX_DATAERR: ok"
done
shmt_clients_stop
