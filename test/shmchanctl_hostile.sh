#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# shmchanctl against a hostile daemon (fake_ctl_daemon.py on cue):
#   escape sequences, carriage returns, line breaks, DEL and C1 bytes in
#       every version, file prefix and name it sends: info, clients,
#       channels, log level list and events, as tables and as JSON, print
#       no byte below 0x20 but newline and tab, and none from 0x7f on, on
#       stdout or stderr, and still show the text (escaped);
#   a list that never ends, as fast as the socket takes it: clients,
#       channels and log level list stop at 16 MiB of it and exit 76
#       (EX_PROTOCOL) with a message that says so, instead of holding it all;
#   a list that never ends, slowly: they exit 75 (EX_TEMPFAIL) once the
#       timeout (GR_API_TIMEOUT_MS) passed for the whole list, instead of
#       waiting a timeout per response for ever.
#
#   shmchanctl_hostile.sh DAEMON_BIN SHMCHANCTL_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN SHMCHANCTL_BIN" "$@"
ctl=$2
fake=$(dirname "$0")/fake_ctl_daemon.py
# A command that has not exited after this long did not honour its timeout
# (1 s here), nor its bound: far above both on a busy host.
CTL_TIMEOUT_S=30
READY_WAIT_S=10
TIMEOUT_MS=1000
# The timeout of a fast list without end: the 16 MiB bound must strike
# first, which a sanitized build on a loaded host did not always do within
# 1 s; well under the fake's 20 s of an endless stream.
FAST_TIMEOUT_MS=15000
EX_TEMPFAIL=75
EX_PROTOCOL=76
GR_LOG_LEVEL_LIST=0xcafe1983
GR_SHM_CHANNEL_LIST=0x53480003
GR_SHM_CLIENT_LIST=0x53480006
GR_SHM_EVENT_SUBSCRIBE=0x53480007
# A slow endless list: one response every this many seconds.
SLOW_INTERVAL_S=0.01
LISTS=("clients" "channels" "log level list")

# Run shmchanctl on socket $1 with GR_API_TIMEOUT_MS=$TIMEOUT_MS; its
# stdout and stderr in $out_file, its status in $rc, how long it ran in $ms.
ctl_on() {
	local sock=$1 start
	shift
	out_file=$SHMT_TMPDIR/out
	rc=0
	start=$(date +%s%N)
	GR_API_TIMEOUT_MS=$TIMEOUT_MS shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$sock" "$@" \
		>"$out_file" 2>&1 || rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
}

# Fail if $out_file holds a byte a terminal acts on: below 0x20 but newline
# and tab, or from 0x7f on (in the C locale a byte is a character, and the
# range is the bytes from space to tilde).
expect_plain() {
	! LC_ALL=C grep -q $'[^\t -~]' "$out_file" ||
		shmt_fail "shmchanctl $*: a daemon's control bytes reach the terminal: $(od -c "$out_file" | head -20)"
}

shmt_tmpdir
json_files=()
sock=$SHMT_TMPDIR/text.sock
shmt_client_start text "$fake" "$sock" --hostile-text --status "$GR_SHM_EVENT_SUBSCRIBE=0"
shmt_clients_wait_ready "$READY_WAIT_S"
for cmd in info clients channels "log level list" "events -c 2"; do
	for json in "" -j; do
		# shellcheck disable=SC2086
		ctl_on "$sock" $json $cmd
		[ "$rc" = 0 ] || shmt_fail "shmchanctl $json $cmd: status $rc: $(cat "$out_file")"
		expect_plain $json $cmd
		grep -q 'pwned' "$out_file" || shmt_fail "shmchanctl $json $cmd: the text is not shown"
		if [ -z "$json" ] && [ "$cmd" != "events -c 2" ]; then
			grep -qF '\x1b]0;pwned\x07\x1b[2J\x0dX\x0aFORGED \x7f\x9b2J' "$out_file" ||
				shmt_fail "shmchanctl $cmd: the text is not shown escaped: $(cat "$out_file")"
		elif [ "$cmd" != "events -c 2" ]; then
			cp "$out_file" "$out_file.${#json_files[@]}"
			json_files+=("$out_file.${#json_files[@]}")
		fi
		echo "shmchanctl $json $cmd: the daemon's text escaped: ok"
	done
done
shmt_clients_stop
python3 -c '
import json, sys
for name in sys.argv[1:]:
    with open(name) as f:
        json.load(f)
' "${json_files[@]}" || shmt_fail "shmchanctl -j: not JSON"
echo "shmchanctl -j: JSON: ok"

# Lists without end, fast then slow.
fast=$SHMT_TMPDIR/fast.sock
slow=$SHMT_TMPDIR/slow.sock
shmt_client_start fast "$fake" "$fast" --endless "$GR_LOG_LEVEL_LIST" \
	--endless "$GR_SHM_CHANNEL_LIST" --endless "$GR_SHM_CLIENT_LIST"
shmt_client_start slow "$fake" "$slow" --endless "$GR_LOG_LEVEL_LIST" \
	--endless "$GR_SHM_CHANNEL_LIST" --endless "$GR_SHM_CLIENT_LIST" \
	--endless-interval "$SLOW_INTERVAL_S"
shmt_clients_wait_ready "$READY_WAIT_S"
for cmd in "${LISTS[@]}"; do
	# shellcheck disable=SC2086
	TIMEOUT_MS=$FAST_TIMEOUT_MS ctl_on "$fast" $cmd
	[ "$rc" = "$EX_PROTOCOL" ] ||
		shmt_fail "shmchanctl $cmd, a list without end: status $rc, expected $EX_PROTOCOL: $(cat "$out_file")"
	grep -q "Protocol error (the daemon broke the protocol" "$out_file" ||
		shmt_fail "shmchanctl $cmd, a list without end: no message that says so: $(cat "$out_file")"
	echo "shmchanctl $cmd, a list without end: EX_PROTOCOL after $ms ms: ok"
	# shellcheck disable=SC2086
	ctl_on "$slow" $cmd
	[ "$rc" = "$EX_TEMPFAIL" ] ||
		shmt_fail "shmchanctl $cmd, a slow list without end: status $rc, expected $EX_TEMPFAIL: $(cat "$out_file")"
	grep -q "timed out" "$out_file" ||
		shmt_fail "shmchanctl $cmd, a slow list without end: no message that says so: $(cat "$out_file")"
	echo "shmchanctl $cmd, a slow list without end: EX_TEMPFAIL after $ms ms (timeout $TIMEOUT_MS ms): ok"
done
shmt_clients_stop
