#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The socket's mode and group are what decide who may connect, and each
# peer's credentials are logged. As root, with a client run as another uid
# (setpriv), against daemons started with:
#   -m 0600                  the other uid is refused (EACCES);
#   -m 0666                  it is served (hello, ping), and the daemon logs
#                            its pid, uid and gid;
#   -m 0660 -g GROUP         a client in GROUP is served, one outside it is
#                            refused.
# The socket's folder is opened to everyone, so only the socket's own mode
# decides. Skipped (77) unless run as root with setpriv.
#
#   sock_permissions.sh DAEMON_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN" "$@"

# The unprivileged identities: nobody/nogroup on Debian, and the id below it,
# which belongs to no group of the socket.
OTHER_UID=65534
OTHER_GID=65534
STRANGER_ID=65533
CLIENT_TIMEOUT_S=10
LOG_WAIT_S=3

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root to run a client as another uid" >&2
	exit 77
fi
if ! command -v setpriv >/dev/null; then
	echo "SKIP: no setpriv (util-linux)" >&2
	exit 77
fi
# The system's python, not one under root's home that the other uid cannot
# read (pyenv shims).
PYTHON=/usr/bin/python3
if ! setpriv --reuid="$OTHER_UID" --regid="$OTHER_GID" --clear-groups "$PYTHON" -c pass; then
	echo "SKIP: uid $OTHER_UID cannot run $PYTHON" >&2
	exit 77
fi

# A raw client, as uid:gid $1:$2: connect, GR_HELLO (API version 1, as
# GR_API_VERSION in api/gr_api.h), GR_PING. Prints "refused ERRNO", or its
# pid and the status of each answer.
client_as() {
	timeout "$CLIENT_TIMEOUT_S" setpriv --reuid="$1" --regid="$2" --clear-groups \
		"$PYTHON" -c '
import errno, os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("refused", errno.errorcode.get(e.errno, e.errno))
    sys.exit(0)
print("pid", os.getpid(), flush=True)
hello = struct.pack("<I", 1) + b"sock_permissions".ljust(128, b"\0")
s.sendall(struct.pack("<III", 1, 0xcafe1981, len(hello)) + hello
          + struct.pack("<III", 2, 0xcafe1987, 0))
for want in (1, 2):
    hdr = b""
    while len(hdr) < 12:
        chunk = s.recv(12 - len(hdr))
        if not chunk:
            print("closed")
            sys.exit(1)
        hdr += chunk
    for_id, status, plen = struct.unpack("<III", hdr)
    print("answer", for_id, status, plen)
' "$SHMT_SOCK"
}

expect_refused() {
	local out
	out=$(client_as "$1" "$2") || shmt_fail "$3: the client failed: $out"
	[ "$out" = "refused EACCES" ] || shmt_fail "$3: expected EACCES, got: $out"
	echo "$3: refused with EACCES: ok"
}

expect_served() {
	local out pid
	out=$(client_as "$1" "$2") || shmt_fail "$3: the client failed: $out"
	pid=$(echo "$out" | sed -n 's/^pid //p')
	[ -n "$pid" ] || shmt_fail "$3: not connected: $out"
	echo "$out" | grep -qx "answer 1 0 0" || shmt_fail "$3: hello not answered 0: $out"
	echo "$out" | grep -qx "answer 2 0 0" || shmt_fail "$3: ping not answered 0: $out"
	shmt_log_expect "$3" "$LOG_WAIT_S" "client connected: pid $pid uid $1 gid $2"
	echo "$3: served, and logged as pid $pid uid $1 gid $2: ok"
}

# $1: mode (octal), $2: group (or empty): the socket file must carry them.
check_socket_file() {
	local mode group
	mode=$(stat -c %a "$SHMT_SOCK")
	group=$(stat -c %g "$SHMT_SOCK")
	[ "$mode" = "$1" ] || shmt_fail "socket mode $mode, expected $1"
	[ -z "$2" ] || [ "$group" = "$2" ] || shmt_fail "socket group $group, expected $2"
}

# mktemp made the folder 0700: open it, so the socket's mode alone decides.
open_folder() {
	chmod 0755 "$SHMT_TMPDIR"
}

start_daemon -m 0600
open_folder
check_socket_file 600 ""
expect_refused "$OTHER_UID" "$OTHER_GID" "mode 0600, uid $OTHER_UID"
stop_daemon

start_daemon -m 0666
open_folder
check_socket_file 666 ""
expect_served "$OTHER_UID" "$OTHER_GID" "mode 0666, uid $OTHER_UID"
stop_daemon

start_daemon -m 0660 -g "$OTHER_GID"
open_folder
check_socket_file 660 "$OTHER_GID"
expect_served "$OTHER_UID" "$OTHER_GID" "mode 0660 group $OTHER_GID, a member"
expect_refused "$STRANGER_ID" "$STRANGER_ID" "mode 0660 group $OTHER_GID, uid $STRANGER_ID"
stop_daemon
