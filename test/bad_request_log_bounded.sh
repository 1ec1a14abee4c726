#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A flood of bad requests costs a bounded number of log lines.
#
# On a channel, then on the socket: one client sends 100,000 GR_PING2 with a
# 10-byte payload (each answered EMSGSIZE). The daemon's log may grow by a
# few lines plus one a second of the flood, at most; and its lines about
# them must account for every one of the 100,000 (the first logged alone,
# the others counted in summaries). A line per bad request, written under
# the handler lock every poller shares, is what slowed the other clients
# down (docs/reliability.md): counting the lines catches it whatever the
# load, so this runs beside other tests.
#
#   bad_request_log_bounded.sh DAEMON_BIN FLOOD_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN FLOOD_BIN" "$@"
flood_bin=$2

flood_count=100000
# Bound of one flood of flood_count requests.
flood_timeout_s=25
# Log lines a flood may add besides one a second (server/log_limit.h): its
# connect, hello, attach, close and detach lines, the first fault's, the
# last summary's, and a margin for a second boundary crossed.
fixed_lines=10
# How long the last summary may take to come after the client left: a
# channel's is written once the daemon frees it, after an RCU grace period.
summary_wait_s=5

# The number of the flooder's requests that the log accounts for: one per
# line of a single fault, N per summary line ("N short-payload requests" or
# "N more short-payload requests suppressed").
logged_faults() {
	grep -F "client pid $1: " "$SHMT_LOG" | grep -F 'payload is' |
		sed -n -E 's/.*client pid [0-9]+: ([0-9]+) (more )?short-payload requests.*/\1/p; t; s/.*/1/p' |
		awk '{ n += $1 } END { print n + 0 }'
}

log_bound_check() {
	local transport=$1 before after out line pid elapsed_ms answered added bound polls n
	before=$(wc -l <"$SHMT_LOG")
	out=$(shmt_run_bounded "$flood_timeout_s" "$flood_bin" "$SHMT_SOCK" "$transport" bad \
		"$flood_count") || shmt_fail "$transport: the flood failed: $out"
	line=$(grep '^pid=' <<<"$out")
	pid=$(shmt_word "$line" pid)
	elapsed_ms=$(shmt_word "$line" elapsed_ms)
	answered=$(shmt_word "$line" answered)
	[ "$answered" = "$flood_count" ] || shmt_fail "$transport: $answered requests answered"
	polls=$((summary_wait_s * SHMT_POLLS_PER_S))
	until n=$(logged_faults "$pid") && [ "$n" -ge "$flood_count" ]; do
		[ "$polls" -gt 0 ] || break
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
	after=$(wc -l <"$SHMT_LOG")
	added=$((after - before))
	bound=$((fixed_lines + elapsed_ms / 1000))
	shmt_log "$transport: $flood_count bad requests in $elapsed_ms ms: $added log lines" \
		"(bound $bound), accounting for $n of them"
	[ "$added" -le "$bound" ] ||
		shmt_fail "$transport: $flood_count bad requests added $added log lines, bound $bound"
	[ "$n" = "$flood_count" ] ||
		shmt_fail "$transport: the log accounts for $n of the $flood_count bad requests"
}

start_daemon
for transport in shm socket; do
	log_bound_check "$transport"
done
stop_daemon
