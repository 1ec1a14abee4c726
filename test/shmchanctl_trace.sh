#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# shmchanctl stats --types and trace, against the daemon:
#   stats --types     after a known run on a fresh daemon, GR_PING2 and
#                     GR_PING counted exactly, as a table and as JSON (whose
#                     histograms add up to the count);
#   trace             on with capture, the run dumped (table and JSON, the
#                     64 bytes of each GR_PING2 captured), off, saved (mode
#                     0600), replayed against a fresh daemon with the same
#                     statuses and counted there; a trace without capture
#                     replays the empty requests and skips the others,
#                     saying why;
#   who               (as root) nobody, whom the socket's mode admits, gets
#                     EPERM (status 77) for dump and on, logged by the
#                     daemon, and may read the state; not root: that part
#                     is skipped.
#
#   shmchanctl_trace.sh DAEMON_BIN SHMCHANCTL_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN SHMCHANCTL_BIN" "$@"
ctl=$2
CTL_TIMEOUT_S=10
EX_NOPERM=77
NONROOT_USER=nobody

# Run shmchanctl; its output in $out, its status in $rc.
ctl_on() {
	rc=0
	out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$SHMT_SOCK" "$@" 2>&1) || rc=$?
}

ctl_ok() {
	ctl_on "$@"
	[ "$rc" = 0 ] || shmt_fail "shmchanctl $*: status $rc: $out"
}

# The COUNT column of type $1 in the output of "stats --types" ($out).
types_count() {
	echo "$out" | awk -v t="$1" '$2 == t {print $3}'
}

start_daemon -m 0666
ctl_ok trace on --capture --clear
ctl_ok ping -c 3 -i 0 -2 -t shm
ctl_ok ping -c 2 -i 0 -t socket

ctl_ok stats --types
[ "$(types_count GR_PING2)" = 3 ] || shmt_fail "stats --types: GR_PING2 not 3: $out"
[ "$(types_count GR_PING)" = 2 ] || shmt_fail "stats --types: GR_PING not 2: $out"
echo "$out" | head -n1 | grep -q '^TYPE  *NAME  *COUNT  *ERRORS' || shmt_fail "stats --types: titles: $out"
ctl_ok -j stats --types
echo "$out" | python3 -c '
import json, sys
types = {t["name"]: t for t in json.load(sys.stdin)}
p = types["GR_PING2"]
assert p["count"] == 3 and p["errors"] == 0 and p["type"] == 0xcafe1988, p
for t in types.values():
    assert sum(t["handle_hist_log2_ns"]) == t["count"], t
    assert sum(t["queue_hist_log2_ns"]) == t["count"], t
' || shmt_fail "stats --types -j: $out"

ctl_ok trace off
ctl_ok trace dump
echo "$out"
[ "$(echo "$out" | grep -c ' GR_PING2 ')" = 3 ] || shmt_fail "dump: not 3 GR_PING2"
[ "$(echo "$out" | grep -c ' GR_PING ')" = 2 ] || shmt_fail "dump: not 2 GR_PING"
ctl_ok -j trace dump
echo "$out" | python3 -c '
import json, sys
entries = json.load(sys.stdin)
pings2 = [e for e in entries if e["type_name"] == "GR_PING2"]
assert len(pings2) == 3, entries
for e in pings2:
    assert e["status"] == 0 and e["req_len"] == 64 and len(e["payload"]) == 128, e
    assert e["transport"] == "shm", e
assert not any(e["type_name"].startswith("GR_SHM_TRACE") for e in entries), entries
' || shmt_fail "trace dump -j: $out"
trace_file=$SHMT_TMPDIR/api.trace
ctl_ok trace save "$trace_file"
[ "$(stat -c %a "$trace_file")" = 600 ] || shmt_fail "saved trace: mode $(stat -c %a "$trace_file")"
stop_daemon

# A fresh daemon: the same statuses, and it served them.
start_daemon -m 0666
ctl_ok trace replay "$trace_file"
echo "$out"
echo "$out" | grep -Eq '^[0-9]+ replayed: [0-9]+ with the saved status, 0 with another, 0 unknown' ||
	shmt_fail "replay: $out"
[ "$(echo "$out" | sed -n 's/^\([0-9]*\) replayed.*/\1/p')" -ge 6 ] || shmt_fail "replay: fewer than 6 sent: $out"
echo "$out" | grep -q 'GR_HELLO id 1: skipped' || shmt_fail "replay: hello not skipped: $out"
ctl_ok stats --types
[ "$(types_count GR_PING2)" = 3 ] || shmt_fail "replayed GR_PING2 not counted 3: $out"

# Without capture: requests with a payload are skipped, saying so.
ctl_ok trace on --clear
ctl_ok ping -c 2 -i 0 -2 -t socket
ctl_ok ping -c 1 -i 0 -t socket
ctl_ok trace save "$trace_file"
ctl_ok trace replay "$trace_file"
echo "$out"
[ "$(echo "$out" | grep -c 'GR_PING2 id [0-9]*: skipped: payload not captured')" = 2 ] ||
	shmt_fail "replay without capture: GR_PING2 not skipped: $out"
echo "$out" | grep -Eq '^[1-9][0-9]* replayed: .* 0 with another' ||
	shmt_fail "replay without capture: GR_PING not replayed: $out"

as_nobody=(setpriv --reuid="$NONROOT_USER" --regid=nogroup --clear-groups)
if [ "$(id -u)" != 0 ]; then
	echo "SKIP (part): not root, cannot run shmchanctl as $NONROOT_USER"
# The build may sit in a folder only root can read (a clone in a mktemp -d
# folder): then nobody cannot even run shmchanctl.
elif ! "${as_nobody[@]}" "$ctl" --version >/dev/null 2>&1; then
	echo "SKIP (part): $NONROOT_USER cannot run $ctl from here"
else
	chmod 0711 "$SHMT_TMPDIR"
	for sub in dump on; do
		rc=0
		out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "${as_nobody[@]}" "$ctl" -s "$SHMT_SOCK" \
			trace $sub 2>&1) || rc=$?
		[ "$rc" = "$EX_NOPERM" ] || shmt_fail "trace $sub as $NONROOT_USER: status $rc: $out"
		echo "$out" | grep -q 'Operation not permitted' || shmt_fail "trace $sub as $NONROOT_USER: $out"
	done
	shmt_log_wait "$CTL_TIMEOUT_S" "of the API trace refused (EPERM): uid $(id -u "$NONROOT_USER")" ||
		shmt_fail "EPERM not logged"
	out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "${as_nobody[@]}" "$ctl" -s "$SHMT_SOCK" trace status 2>&1) ||
		shmt_fail "trace status as $NONROOT_USER: $out"
	echo "$out" | grep -q '^trace on' || shmt_fail "trace status as $NONROOT_USER: $out"
	echo "$NONROOT_USER: EPERM for dump and on, logged; status read"
fi
stop_daemon
echo "shmchanctl stats --types and trace: ok"
