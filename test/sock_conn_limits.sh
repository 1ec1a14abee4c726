#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Per-peer connection limits (test/sock_conn_limits.c): a hog process of
# 1100 connections against a daemon with its default limits, then, as root,
# clients of another uid against a daemon with small ones, and a pid given
# again to another process, which the per-pid limit must not count for the
# first one's connections. The refusals are logged, but not one line each.
# --help documents both options.
#
#   sock_conn_limits.sh DAEMON_BIN TEST_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN TEST_BIN" "$@"
test_bin=$2

# The defaults of --max-conn-per-pid (server/config.c), and the small limits
# of the uid case.
default_per_pid=64
uid_per_pid=32
uid_per_uid=48
other_uid=65534
reuse_per_pid=4
# Bound of each run of the test program (it has a watchdog of its own).
run_timeout_s=25
# Lines about refusals: the first, one a second, one at shutdown; the hog's
# run takes a few seconds at most.
refusal_lines_max=12
# A refusal that came within a second of a logged one is logged a second
# after that one (server/log_limit.h).
refusal_log_wait_s=3

help=$("$SHMT_DAEMON" --help)
for opt in --max-conn-per-pid --max-conn-per-uid; do
	grep -q -e "$opt" <<<"$help" || shmt_fail "--help does not document $opt"
done

refusal_lines() {
	grep -c 'refus' "$SHMT_LOG" || true
}

start_daemon
rc=0
shmt_run_bounded "$run_timeout_s" "$test_bin" "$SHMT_SOCK" pid "$default_per_pid" || rc=$?
[ "$rc" = 0 ] || shmt_fail "pid limit: test program failed (status $rc)"
stop_daemon
lines=$(refusal_lines)
shmt_log "pid limit: $lines log lines about refusals"
[ "$lines" -ge 1 ] || shmt_fail "no refusal logged"
[ "$lines" -le "$refusal_lines_max" ] ||
	shmt_fail "$lines log lines about refusals, at most $refusal_lines_max expected"

if [ "$(id -u)" != 0 ]; then
	shmt_log "uid limit: skipped (needs root to run clients of another uid)"
	exit 0
fi
start_daemon -m 0666 --max-conn-per-pid "$uid_per_pid" --max-conn-per-uid "$uid_per_uid"
# The clients of the other uid must reach the socket.
chmod 0755 "$SHMT_TMPDIR"
rc=0
shmt_run_bounded "$run_timeout_s" "$test_bin" "$SHMT_SOCK" uid "$uid_per_pid" "$uid_per_uid" \
	"$other_uid" || rc=$?
[ "$rc" = 0 ] || shmt_fail "uid limit: test program failed (status $rc)"
# Within an interval of the EMFILE refusal logged first: summed up after it.
shmt_log_wait "$refusal_log_wait_s" "uid $other_uid (Too many users)" ||
	shmt_fail "no EUSERS refusal logged"
stop_daemon

start_daemon --max-conn-per-pid "$reuse_per_pid"
rc=0
shmt_run_bounded "$run_timeout_s" "$test_bin" "$SHMT_SOCK" reuse "$reuse_per_pid" || rc=$?
case $rc in
0) ;;
77) shmt_log "pid reuse: skipped (the kernel's next pid cannot be set here)" ;;
*) shmt_fail "pid reuse: test program failed (status $rc)" ;;
esac
stop_daemon
