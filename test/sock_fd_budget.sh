#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The daemon's open files (test/sock_fd_budget.c), against a daemon whose
# RLIMIT_NOFILE is OPEN_FILES, far below what its connection limits need:
#  1. it says so at startup, and names what it will serve;
#  2. the descriptors it says a connection and a memfd channel cost are the
#     ones /proc/PID/fd counts;
#  3. (as root) another user fills it: attaches refused with ENFILE stay on
#     the socket, then connections are refused with ENFILE, and root's 64
#     reserved clients are all served on channels; the daemon never reaches
#     its limit (no "accept: Too many open files").
#
#   sock_fd_budget.sh DAEMON_BIN TEST_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN TEST_BIN" "$@"
test_bin=$2

# The limit the daemon runs with (soft and hard: it cannot raise it), and
# what it must say about it.
OPEN_FILES=1024
warning="open files limited to $OPEN_FILES, under the"
other_uid=65534
run_timeout_s=25

# The script's limit, and so its daemon's and its clients' (which need far
# fewer).
ulimit -n "$OPEN_FILES"
start_daemon -m 0666 --hugepages off --max-conn-per-pid 0 --max-conn-per-uid 0

# 1.
shmt_log_wait 1 "$warning" || shmt_fail "no '$warning' in the daemon's log"
shmt_log "$(grep -F "$warning" "$SHMT_LOG" | sed 's/^shmchand: [a-z_]*: //')"

# 2.
line=$(grep -F "open files: limit $OPEN_FILES," "$SHMT_LOG") ||
	shmt_fail "the daemon does not say what a client costs it"
conn_fds=$(echo "$line" | sed -n 's/.*per client \([0-9]*\) for its connection.*/\1/p')
channel_fds=$(echo "$line" | sed -n 's/.*, \([0-9]*\) for a memfd channel.*/\1/p')
[ -n "$conn_fds" ] && [ -n "$channel_fds" ] || shmt_fail "cannot read '$line'"
rc=0
shmt_run_bounded "$run_timeout_s" "$test_bin" "$SHMT_SOCK" "$SHMT_PID" count "$conn_fds" \
	"$channel_fds" || rc=$?
[ "$rc" = 0 ] || shmt_fail "count: the program failed (status $rc)"

# 3.
if [ "$(id -u)" != 0 ]; then
	shmt_log "fill: skipped (needs root to run clients of another uid)"
	stop_daemon
	exit 0
fi
# The other uid's clients must reach the socket.
chmod 0755 "$SHMT_TMPDIR"
rc=0
shmt_run_bounded "$run_timeout_s" "$test_bin" "$SHMT_SOCK" "$SHMT_PID" fill "$other_uid" || rc=$?
[ "$rc" = 0 ] || shmt_fail "fill: the program failed (status $rc)"
! grep -q "accept: .*; retrying in" "$SHMT_LOG" ||
	shmt_fail "the daemon ran out of descriptors: $(grep -m 1 "accept: .*; retrying in" "$SHMT_LOG")"
shmt_log_wait 1 "attach refused (ENFILE)" ||
	shmt_fail "the daemon does not say why it refused the attaches"
shmt_log_wait 1 "uid $other_uid (Too many open files in system): the server's open files limit" ||
	shmt_fail "the daemon does not say why it refused the connections"
stop_daemon
