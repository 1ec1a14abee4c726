#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# shmchanctl's exit statuses (sysexits.h) and messages when it cannot talk
# to a daemon: a connect that failed prints the client library's reason
# (gr_api_client_last_error()), a request that failed its error and a hint.
#   no socket file                EX_UNAVAILABLE (69), "is shmchand running"
#   a stale socket, nobody there  EX_UNAVAILABLE (69), "nobody listens"
#   a daemon that refuses its API
#   version, or serves none of its
#   requests (fake daemons here)  EX_PROTOCOL (76)
#   a socket it may not open      EX_NOPERM (77), with the socket's mode,
#                                 owner and group and the caller's uid, as
#                                 root for a client of another uid (skipped
#                                 otherwise)
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
EX_PROTOCOL=76
EX_NOPERM=77
READY_WAIT_S=10
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
	for cmd in info clients channels stats "ping -c 1" "events -c 1" "-j info"; do
		rc=0
		# shellcheck disable=SC2086
		out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$@" "$ctl" -s "$sock" $cmd 2>&1) || rc=$?
		[ "$rc" = "$want" ] || shmt_fail "shmchanctl $cmd on $sock: status $rc, expected $want: $out"
		echo "$out" | grep -Eq "$pattern" ||
			shmt_fail "shmchanctl $cmd on $sock: no '$pattern' in: $out"
	done
	echo "$sock: status $want, '$pattern': ok"
}

expect "$EX_UNAVAILABLE" "cannot connect: no socket at $missing: is shmchand running" "$missing"
expect "$EX_UNAVAILABLE" "cannot connect: nobody listens on $stale" "$stale"

# A fake daemon on $2 that answers GR_HELLO with status $1 (0, or EBADMSG:
# another API version) and every other request with ENOTSUP, until SIGTERM.
fake_daemon_start() {
	shmt_client_start "fake-$1" "$(dirname "$0")/fake_ctl_daemon.py" "$2" \
		--status "0xcafe1981=$1" --default ENOTSUP
}
fake_daemon_start 74 "$SHMT_TMPDIR/other-version.sock" # EBADMSG
fake_daemon_start 0 "$SHMT_TMPDIR/serves-nothing.sock"
shmt_clients_wait_ready "$READY_WAIT_S"
other_version=$SHMT_TMPDIR/other-version.sock
expect "$EX_PROTOCOL" "cannot connect: the daemon on $other_version refused API versions" \
	"$other_version"
expect "$EX_PROTOCOL" "Operation not supported \(the daemon does not serve this request\)" \
	"$SHMT_TMPDIR/serves-nothing.sock"
shmt_clients_stop

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "permission denied: not checked (needs root and setpriv)"
	exit 0
fi
as_other=(setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups)
# The build may sit in a folder only root can read (a clone in a mktemp -d
# folder): then the other uid cannot even run shmchanctl.
if ! "${as_other[@]}" "$ctl" --version >/dev/null 2>&1; then
	echo "permission denied: not checked (uid $OTHER_UID cannot run $ctl from here)"
	exit 0
fi
start_daemon -m 0600
chmod 0755 "$SHMT_TMPDIR"
# The library's reason: the socket's mode, owner and group, and the caller's ids.
denied="cannot connect: socket $SHMT_SOCK: permission denied: mode 0600, owner root \(0\),"
denied+=" group [^ ]+ \(0\); this process runs as uid $OTHER_UID gid $OTHER_UID"
expect "$EX_NOPERM" "$denied" "$SHMT_SOCK" "${as_other[@]}"
stop_daemon
