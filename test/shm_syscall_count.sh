#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A busy channel makes no system call per request, on either side. strace
# counts them, which is deterministic where timings are not:
# - the client (syscall_count_client, under strace -f) between its two
#   marker calls, around 100,000 GR_PING2 calls;
# - the daemon's poller thread (strace -p TID) during the whole client run.
# Both must stay below SYSCALLS_MAX, in one of ATTEMPTS runs. Default spin
# budgets on both sides.
#
#   shm_syscall_count.sh DAEMON_BIN CLIENT_BIN
#
# SHMT_SYSCALL_CLIENT_MODE=fd makes the client an event-loop controller
# (gr_api_client_fd(), try_recv; syscall_count_client.c).
#
# Exits 77 (skip) if strace is missing or may not trace.
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN CLIENT_BIN" "$@"
client_bin=$2

# 100,000 calls: a sleep of either side costs a couple of system calls, so
# this allows a few dozen descheduling hiccups and no per-call cost at all.
SYSCALLS_MAX=100
# The markers of syscall_count_client.c.
MARK_START='close(-1000)'
MARK_END='close(-1001)'
POLLER_COMM=shmchan-poll0
# A per-call system call shows in every run (100,000 of them or more); other
# load on the machine deschedules a spinning side now and then, and each such
# hiccup costs a sleep on both sides (3 calls each). A run is repeated when it
# went over: the test passes if one of ATTEMPTS runs stays below the limit.
# Every count is printed.
ATTEMPTS=${SHMT_SYSCALL_ATTEMPTS:-3}
# Bounds: strace attaching, and the client run (it has a watchdog of its own).
ATTACH_WAIT_S=5
CLIENT_TIMEOUT_S=20

skip() {
	shmt_log "SKIP: $*"
	exit 77
}

command -v strace >/dev/null || skip "strace is not installed"
# In a sanitized build (make test SANITIZE=1, which sets ASAN_OPTIONS) the
# count is not measured: LeakSanitizer cannot run under strace, and the
# instrumented client under strace outlasts its bound. The plain build of
# the same CI run counts them.
if [ -n "${ASAN_OPTIONS:-}" ]; then
	skip "sanitized build: system calls are counted in the plain build"
fi
strace -f -qq -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace not permitted)"

start_daemon

poller_tid=
for task in /proc/"$SHMT_PID"/task/*; do
	if [ "$(cat "$task/comm" 2>/dev/null)" = "$POLLER_COMM" ]; then
		poller_tid=${task##*/}
	fi
done
[ -n "$poller_tid" ] || shmt_fail "daemon $SHMT_PID has no $POLLER_COMM thread"

# One measurement: sets client_lines and daemon_lines, prints both and what
# the calls were.
measure() {
	local n=$1 rc=0 polls strace_pid
	local daemon_trace=$SHMT_TMPDIR/daemon-$n.strace
	local daemon_err=$SHMT_TMPDIR/daemon-$n.strace.err
	local client_trace=$SHMT_TMPDIR/client-$n.strace

	strace -p "$poller_tid" -o "$daemon_trace" 2>"$daemon_err" &
	strace_pid=$!
	shmt_track "$strace_pid"
	polls=$((ATTACH_WAIT_S * SHMT_POLLS_PER_S))
	until grep -q attached "$daemon_err" 2>/dev/null; do
		if ! shmt_running "$strace_pid"; then
			wait "$strace_pid" || true
			if grep -qi 'not permitted' "$daemon_err"; then
				skip "strace cannot attach to the daemon: $(cat "$daemon_err")"
			fi
			shmt_fail "strace -p $poller_tid ended: $(cat "$daemon_err")"
		fi
		[ "$polls" -gt 0 ] ||
			shmt_fail "strace did not attach to $poller_tid within $ATTACH_WAIT_S s"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done

	timeout --kill-after=2 "$CLIENT_TIMEOUT_S" \
		strace -f -qq -o "$client_trace" "$client_bin" "$SHMT_SOCK" \
		${SHMT_SYSCALL_CLIENT_MODE:+"$SHMT_SYSCALL_CLIENT_MODE"} || rc=$?
	[ "$rc" = 0 ] || shmt_fail "client failed (status $rc)"

	kill -INT "$strace_pid"
	shmt_wait_gone "$strace_pid" "$SHMT_STOP_WAIT_S" ||
		shmt_fail "strace -p did not stop on SIGINT"
	wait "$strace_pid" || true

	grep -qF "$MARK_START" "$client_trace" || shmt_fail "no start marker in the client's trace"
	grep -qF "$MARK_END" "$client_trace" || shmt_fail "no end marker in the client's trace"
	client_lines=$(awk -v start="$MARK_START" -v end="$MARK_END" '
		index($0, end) { inside = 0 }
		inside { n++ }
		index($0, start) { inside = 1 }
		END { print n + 0 }' "$client_trace")
	daemon_lines=$(wc -l <"$daemon_trace")

	echo "attempt $n: system calls during 100000 GR_PING2 calls:" \
		"client $client_lines, daemon poller $daemon_lines"
	echo "---- client, between the markers (by name) ----"
	awk -v start="$MARK_START" -v end="$MARK_END" '
		index($0, end) { inside = 0 }
		inside { sub(/^[0-9]+ +/, ""); sub(/\(.*/, ""); print }
		index($0, start) { inside = 1 }' "$client_trace" | sort | uniq -c
	echo "---- daemon poller (by name) ----"
	sed -e 's/(.*//' "$daemon_trace" | sort | uniq -c
}

for attempt in $(seq "$ATTEMPTS"); do
	measure "$attempt"
	if [ "$client_lines" -lt "$SYSCALLS_MAX" ] && [ "$daemon_lines" -lt "$SYSCALLS_MAX" ]; then
		stop_daemon
		exit 0
	fi
	shmt_log "attempt $attempt: over $SYSCALLS_MAX system calls (descheduled by other load?)"
done
shmt_fail "every attempt made $SYSCALLS_MAX system calls or more (client $client_lines," \
	"daemon poller $daemon_lines in the last one)"
