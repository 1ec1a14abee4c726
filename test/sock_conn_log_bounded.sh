#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A storm of connections costs a bounded number of log lines, per peer uid
# (server/sock_log.c): a client process makes STORM connections in a row
# (connect, hello, close: test/sock_conn_storm.c). The first 10 of its uid
# in each 5 s have their lines logged (connected, hello, closed), the
# others only a summary line per 5 s ("N more connections suppressed"). So
# the daemon's log may grow by 31 lines per 5 s of the storm, plus a margin
# for the intervals it straddles; and its lines must account for every
# connection exactly: those logged plus the summaries' counts. As root, a
# connection of another uid made right after the storm is logged all the
# same: the limit is per peer.
#
#   sock_conn_log_bounded.sh DAEMON_BIN STORM_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN STORM_BIN" "$@"
storm_bin=$2

STORM=3000
# server/sock_log.c: SOCK_LOG_BURST connections logged per uid and
# SOCK_LOG_INTERVAL_MS, each of LINES_PER_CONN lines, then one summary.
BURST=10
INTERVAL_MS=5000
LINES_PER_CONN=3
# Intervals a storm straddles beyond its length: the one it began in and
# the one its summary closes.
EXTRA_INTERVALS=2
STORM_TIMEOUT_S=25
# The last summary comes once its interval is over, on a timer.
SUMMARY_WAIT_S=$((2 * INTERVAL_MS / 1000))
OTHER_UID=65534
LOG_WAIT_S=5

# Connections of uid $1 the log accounts for: each logged one (of pid $2
# alone if given), and the counts of the summaries.
accounted() {
	local logged suppressed
	logged=$(grep -cE "client connected: pid ${2:-[0-9]+} uid $1 " "$SHMT_LOG" || true)
	suppressed=$(sed -n -E "s/.*clients of uid $1: ([0-9]+) more connections suppressed.*/\1/p" \
		"$SHMT_LOG" | awk '{ n += $1 } END { print n + 0 }')
	echo $((logged + suppressed))
}

start_daemon -m 0666
uid=$(id -u)
# The summaries before the storm (none: the readiness probe's connection is
# the first of its uid). That connection's own lines may come after this
# look on a loaded host: the storm's logged ones are counted by its pid.
before_conns=$(accounted "$uid" 0)
before_lines=$(wc -l <"$SHMT_LOG")
out=$(shmt_run_bounded "$STORM_TIMEOUT_S" "$storm_bin" "$SHMT_SOCK" "$STORM") ||
	shmt_fail "the storm failed: $out"
elapsed_ms=$(shmt_word "$out" elapsed_ms)
storm_pid=$(shmt_word "$out" pid)

polls=$((SUMMARY_WAIT_S * SHMT_POLLS_PER_S))
until n=$(($(accounted "$uid" "$storm_pid") - before_conns)) && [ "$n" -ge "$STORM" ]; do
	[ "$polls" -gt 0 ] || break
	polls=$((polls - 1))
	sleep "$SHMT_POLL_S"
done
added=$(($(wc -l <"$SHMT_LOG") - before_lines))
bound=$(((elapsed_ms / INTERVAL_MS + EXTRA_INTERVALS) * (BURST * LINES_PER_CONN + 1)))
shmt_log "$STORM connections in $elapsed_ms ms: $added log lines (bound $bound)," \
	"accounting for $n of them"
[ "$added" -le "$bound" ] || shmt_fail "$STORM connections added $added log lines, bound $bound"
[ "$n" = "$STORM" ] || shmt_fail "the log accounts for $n of the $STORM connections"

if [ "$uid" = 0 ]; then
	# mktemp made the folder 0700: open it to the other uid.
	chmod 0755 "$SHMT_TMPDIR"
	out=$(shmt_run_bounded "$STORM_TIMEOUT_S" "$storm_bin" "$SHMT_SOCK" "$STORM") ||
		shmt_fail "the second storm failed: $out"
	out=$(shmt_run_bounded "$STORM_TIMEOUT_S" "$storm_bin" "$SHMT_SOCK" 1 "$OTHER_UID") ||
		shmt_fail "the connection as uid $OTHER_UID failed: $out"
	pid=$(shmt_word "$out" pid)
	shmt_log_expect "uid $OTHER_UID" "$LOG_WAIT_S" "client connected: pid $pid uid $OTHER_UID "
	shmt_log "a connection of uid $OTHER_UID right after a storm of uid 0: logged"
else
	echo "SKIP: needs root for a client of another uid (the rest passed)" >&2
fi
stop_daemon
