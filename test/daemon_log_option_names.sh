#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The daemon's log names each setting by the option that sets it, never by
# the server library's field: channels off says --no-shm, the event bounds
# say --event-subscriptions and --event-memory, and no line says "conf.".
# An option out of range names the option too.
#
#   daemon_log_option_names.sh DAEMON_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN" "$@"

expect_line() {
	grep -qF -- "$1" "$SHMT_LOG" || shmt_fail "no line holds '$1' in: $(cat "$SHMT_LOG")"
}

start_daemon --no-shm
stop_daemon
expect_line "shared-memory channels off (--no-shm): socket only"
expect_line "subscriptions per connection (--event-subscriptions)"
expect_line "bytes of queued events in all (--event-memory)"
! grep -F "conf." "$SHMT_LOG" || shmt_fail "a line names a field of the library's configuration"
echo "log lines name the options: ok"

out=$("$SHMT_DAEMON" -s "$SHMT_TMPDIR/x.sock" -p 17 2>&1) && shmt_fail "-p 17 accepted"
grep -qF -- "-p/--pollers must be 1..16, not '17'" <<<"$out" || shmt_fail "-p 17: $out"
out=$("$SHMT_DAEMON" -s "$SHMT_TMPDIR/x.sock" -S 2000000 2>&1) && shmt_fail "-S 2000000 accepted"
grep -qF -- "-S/--spin-us must be 0..1000000" <<<"$out" || shmt_fail "-S 2000000: $out"
echo "options out of range named: ok"
