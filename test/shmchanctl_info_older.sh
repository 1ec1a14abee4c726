#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# shmchanctl info against an older daemon, whose GR_SHM_DAEMON_INFO is the
# 168 bytes before the per-peer limits and event backlog bounds (a fake
# daemon here): the fields it sent are shown, the ones it did not are left
# out, as a table and as JSON, rather than shown as zeros ("no limit").
#
#   shmchanctl_info_older.sh DAEMON_BIN SHMCHANCTL_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN SHMCHANCTL_BIN" "$@"
ctl=$2
CTL_TIMEOUT_S=10
READY_WAIT_S=10
FAKE_PID=4242
OLDER_INFO_LEN=168

shmt_tmpdir
sock=$SHMT_TMPDIR/older.sock
shmt_client_start older "$(dirname "$0")/fake_ctl_daemon.py" "$sock" \
	--info "$FAKE_PID" "$OLDER_INFO_LEN" --default ENOTSUP
shmt_clients_wait_ready "$READY_WAIT_S"

rc=0
out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$sock" info 2>&1) || rc=$?
[ "$rc" = 0 ] || shmt_fail "info: status $rc: $out"
echo "$out"
echo "$out" | grep -Eq "^pid +$FAKE_PID$" || shmt_fail "info: no pid line"
echo "$out" | grep -Eq "^socket backlog " || shmt_fail "info: no socket backlog line"
! echo "$out" | grep -Eq "^(connections per|event backlog)" ||
	shmt_fail "info: limits the daemon did not send are shown"

rc=0
out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$sock" -j info 2>&1) || rc=$?
[ "$rc" = 0 ] || shmt_fail "info -j: status $rc: $out"
echo "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["pid"] == int(sys.argv[1]), j
for key in ("max_conn_per_pid", "max_conn_per_uid", "event_backlog", "event_backlog_bytes"):
    assert key not in j["limits"], key
' "$FAKE_PID" || shmt_fail "info -j: not the JSON expected: $out"
echo "info of an older daemon: the fields it sent: ok"
shmt_clients_stop
