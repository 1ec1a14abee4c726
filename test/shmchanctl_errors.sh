#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# shmchanctl's exit statuses (sysexits.h) and messages when it cannot talk
# to a daemon:
#   no socket file                EX_UNAVAILABLE (69), "is shmchand running?"
#   a stale socket, nobody there  EX_UNAVAILABLE (69)
#   a socket it may not open      EX_NOPERM (77), as root for a client of
#                                 another uid (skipped otherwise)
# for every command, and for -j too.
#
#   shmchanctl_errors.sh DAEMON_BIN SHMCHANCTL_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN SHMCHANCTL_BIN" "$@"
ctl=$2
CTL_TIMEOUT_S=10
EX_UNAVAILABLE=69
EX_NOPERM=77
OTHER_UID=65534

SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX")
missing=$SHMT_TMPDIR/missing.sock
stale=$SHMT_TMPDIR/stale.sock
# A socket file nobody listens on, as a killed daemon leaves it.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$stale"

# expect STATUS MESSAGE_PATTERN SOCK [as UID]
expect() {
	local want=$1 pattern=$2 sock=$3 cmd rc out
	shift 3
	for cmd in info clients channels stats "ping -c 1" "-j info"; do
		rc=0
		# shellcheck disable=SC2086
		out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$@" "$ctl" -s "$sock" $cmd 2>&1) || rc=$?
		[ "$rc" = "$want" ] || shmt_fail "shmchanctl $cmd on $sock: status $rc, expected $want: $out"
		echo "$out" | grep -Eq "$pattern" ||
			shmt_fail "shmchanctl $cmd on $sock: no '$pattern' in: $out"
	done
	echo "$sock: status $want, '$pattern': ok"
}

expect "$EX_UNAVAILABLE" "cannot connect to $missing: No such file .*is shmchand running" \
	"$missing"
expect "$EX_UNAVAILABLE" "cannot connect to $stale: Connection refused" "$stale"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "permission denied: not checked (needs root and setpriv)"
	exit 0
fi
start_daemon -m 0600
chmod 0755 "$SHMT_TMPDIR"
expect "$EX_NOPERM" "Permission denied \(the socket's mode and group" "$SHMT_SOCK" \
	setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups
stop_daemon
