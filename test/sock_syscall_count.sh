#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The daemon serves a socket request in at most 3 system calls: one
# epoll_wait(), one read of its own (no ioctl(FIONREAD) before it), one
# write. strace -c counts the system calls of the daemon's main thread, which
# serves every socket connection, during two runs of ping2_perf over the
# socket, one request in flight (GR_PING2, 64 bytes). The difference of the
# two counts leaves the per-request part (connecting, saying hello and the
# tool's own queries cost about the same in both: SETUP_JITTER_MAX). Counts,
# not timings: deterministic on a loaded machine.
#
#   sock_syscall_count.sh DAEMON_BIN PING2_PERF
#
# Exits 77 (skip) if strace is missing or may not trace.
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN PING2_PERF" "$@"
perf=$2

# Requests of the two runs.
CALLS_SHORT=2000
CALLS_LONG=12000
# The goal: epoll_wait, read, write.
SYSCALLS_PER_REQUEST_MAX=3
# What connecting, hello, the tool's own queries and the daemon's logging
# cost is nearly the same in both runs: seen to differ by up to 5 calls.
# Far below the 10,000 more calls a fourth call per request would make.
SETUP_JITTER_MAX=50
# Bounds: strace attaching, and each client run.
ATTACH_WAIT_S=5
CLIENT_TIMEOUT_S=60

skip() {
	shmt_log "SKIP: $*"
	exit 77
}

command -v strace >/dev/null || skip "strace is not installed"
# In a sanitized build (make test SANITIZE=1, which sets ASAN_OPTIONS) the
# count is not measured: LeakSanitizer cannot run under strace. The plain
# build of the same CI run counts them.
if [ -n "${ASAN_OPTIONS:-}" ]; then
	skip "sanitized build: system calls are counted in the plain build"
fi
strace -f -qq -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace not permitted)"

start_daemon

# count N: strace -c on the daemon's main thread during N requests; sets
# total and ioctls, and prints the table.
count() {
	local n=$1 rc=0 polls strace_pid
	local summary=$SHMT_TMPDIR/daemon-$n.strace err=$SHMT_TMPDIR/daemon-$n.strace.err

	strace -c -p "$SHMT_PID" -o "$summary" 2>"$err" &
	strace_pid=$!
	shmt_track "$strace_pid"
	polls=$((ATTACH_WAIT_S * SHMT_POLLS_PER_S))
	until grep -q attached "$err" 2>/dev/null; do
		if ! shmt_running "$strace_pid"; then
			wait "$strace_pid" || true
			if grep -qi 'not permitted' "$err"; then
				skip "strace cannot attach to the daemon: $(cat "$err")"
			fi
			shmt_fail "strace -p $SHMT_PID ended: $(cat "$err")"
		fi
		[ "$polls" -gt 0 ] || shmt_fail "strace did not attach to $SHMT_PID within $ATTACH_WAIT_S s"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done

	shmt_run_bounded "$CLIENT_TIMEOUT_S" "$perf" -s "$SHMT_SOCK" -t socket -z 64 -d 1 -c 1 \
		-n "$n" -w 0 -q >/dev/null || rc=$?
	[ "$rc" = 0 ] || shmt_fail "ping2_perf -n $n over the socket failed (status $rc)"

	kill -INT "$strace_pid"
	shmt_wait_gone "$strace_pid" "$SHMT_STOP_WAIT_S" || shmt_fail "strace -p did not stop on SIGINT"
	wait "$strace_pid" || true

	echo "---- daemon main thread, $n requests ----"
	cat "$summary"
	# The last line of strace -c: "100.00 SECONDS USECS/CALL CALLS [ERRORS] total"
	total=$(awk '$NF == "total" { print $4 }' "$summary")
	ioctls=$(awk '$NF == "ioctl" { print $4 }' "$summary")
	[ -n "$total" ] || shmt_fail "no total in strace's summary: $(cat "$summary")"
	ioctls=${ioctls:-0}
}

count "$CALLS_SHORT"
total_short=$total ioctls_short=$ioctls
count "$CALLS_LONG"
total_long=$total ioctls_long=$ioctls
stop_daemon

per_request=$(awk -v s="$total_short" -v l="$total_long" -v ns="$CALLS_SHORT" -v nl="$CALLS_LONG" \
	'BEGIN { printf "%.3f", (l - s) / (nl - ns) }')
ioctls_per_request=$(awk -v s="$ioctls_short" -v l="$ioctls_long" -v ns="$CALLS_SHORT" \
	-v nl="$CALLS_LONG" 'BEGIN { printf "%.3f", (l - s) / (nl - ns) }')
echo "daemon system calls per socket request: $per_request ($total_short in $CALLS_SHORT" \
	"requests, $total_long in $CALLS_LONG); ioctl per request: $ioctls_per_request"
limit=$((SYSCALLS_PER_REQUEST_MAX * (CALLS_LONG - CALLS_SHORT) + SETUP_JITTER_MAX))
[ $((total_long - total_short)) -le "$limit" ] ||
	shmt_fail "the daemon made $per_request system calls per socket request, more than" \
		"$SYSCALLS_PER_REQUEST_MAX ($((total_long - total_short)) for" \
		"$((CALLS_LONG - CALLS_SHORT)) more requests, at most $limit)"
