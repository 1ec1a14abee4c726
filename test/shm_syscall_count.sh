#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A busy channel makes no system call per request (or per event), on either
# side. strace counts them, which is deterministic where timings are not:
# - the client (syscall_count_client, under strace -f) between its two
#   marker calls, around 100,000 GR_PING2 calls (WHAT ping2) or 100,000
#   events published by one channel and received on another (WHAT events);
# - the daemon's poller thread (strace -p TID) during the whole client run.
# Both must stay below SYSCALLS_MAX, in one of ATTEMPTS runs. The client's
# default spin budget; the daemon's is ALONE_SPIN_US (below: why).
# Then, unless BUSY_BIN is none, the same client attaches while another one (BUSY_BIN, pipelined
# GR_PING2 calls) keeps the poller busy, so that the poller never goes idle:
# the new client's sends must make no system call either (its channel starts
# with the daemon's need-wakeup flag set; the poller clears it when it first
# serves the channel, not only when it wakes from a sleep). Its writes (the
# doorbell rings of its sends) must stay below SYSCALLS_MAX; its receives may
# sleep now and then, since three threads spin on two cores, and its poll and
# read calls are printed, not counted.
#
#   shm_syscall_count.sh DAEMON_BIN CLIENT_BIN ping2|fd|events BUSY_BIN|none
#
# WHAT fd makes the client an event-loop controller (gr_api_client_fd(),
# try_recv; syscall_count_client.c).
#
# Exits 77 (skip) if strace is missing or may not trace.
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN CLIENT_BIN WHAT BUSY_BIN" "$@"
client_bin=$2
what=$3
busy_bin=$4

# 100,000 calls, below 0.01 system calls per call (1,000 in 100,000, the
# bound of make bench's busy-channel goal): a per-call cost would make
# 100,000 and more. Each descheduling hiccup costs a few: a sleep on each
# side, and, when a client's spin ran out meanwhile, its doorbell and the
# daemon's before both spin again (the poller's spin follows work, so it
# does not spin through the client's wake-up; docs/spin-budgets.md). Events:
# the same bound; an event round trip crosses two channels, and each
# hiccup costs both of them a sleep.
SYSCALLS_MAX=1000
# The markers of syscall_count_client.c.
MARK_START='close(-1000)'
MARK_END='close(-1001)'
POLLER_COMM=shmchan-poll0
# The daemon's longest spin budget (GR_API_SERVER_SPIN_US_MAX, server/gr_api_server.h,
# which main/options.c takes for -S): 1 s.
POLLER_SPIN_MAX_US=1000000
# The first phase's spin budget. strace stops the traced client and poller at
# each of their system calls, for tens of µs. After a descheduling hiccup, a
# traced pair of wake-ups (the client's, then the poller's) can outlast the
# default 100 µs budget. The poller's spin follows only work that comes
# within a budget of the work before it (docs/spin-budgets.md), so under the
# tracer the two sides could go on waking each other for thousands of calls
# (seen: 1,900-2,500 doorbells in 100,000 calls, in every attempt of a run).
# 2 ms covers a traced pair of wake-ups; a per-call system call still counts
# 100,000.
ALONE_SPIN_US=2000
# A per-call system call shows in every run (100,000 of them or more); other
# load on the machine deschedules a spinning side now and then, and each such
# hiccup costs a sleep on both sides (3 calls each). A run is repeated when it
# went over: the test passes if one of ATTEMPTS runs stays below the limit.
# Every count is printed.
ATTEMPTS=${SHMT_SYSCALL_ATTEMPTS:-3}
# Bounds: strace attaching, and the client run (it has a watchdog of its own).
ATTACH_WAIT_S=5
CLIENT_TIMEOUT_S=20
# The busy client attaches and serves within this bound.
BUSY_READY_S=10

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

# Sets poller_tid: the daemon's poller thread.
poller_find() {
	local task
	poller_tid=
	for task in /proc/"$SHMT_PID"/task/*; do
		if [ "$(cat "$task/comm" 2>/dev/null)" = "$POLLER_COMM" ]; then
			poller_tid=${task##*/}
		fi
	done
	[ -n "$poller_tid" ] || shmt_fail "daemon $SHMT_PID has no $POLLER_COMM thread"
}

# One measurement: sets client_lines, client_writes and daemon_lines, prints
# them and what the calls were.
measure() {
	local n=$1 rc=0 polls strace_pid
	local daemon_trace=$SHMT_TMPDIR/daemon-$n.strace
	local daemon_err=$SHMT_TMPDIR/daemon-$n.strace.err
	local client_trace=$SHMT_TMPDIR/client-$n.strace

	"${shmt_die_with_parent[@]}" strace -p "$poller_tid" -o "$daemon_trace" 2>"$daemon_err" &
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
		"${client_pin[@]}" strace -f -qq -o "$client_trace" "$client_bin" "$SHMT_SOCK" "$what" ||
		rc=$?
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
	client_writes=$(awk -v start="$MARK_START" -v end="$MARK_END" '
		index($0, end) { inside = 0 }
		inside && / write\(/ { n++ }
		index($0, start) { inside = 1 }
		END { print n + 0 }' "$client_trace")
	daemon_lines=$(wc -l <"$daemon_trace")

	echo "attempt $n: system calls during 100000 $what round trips:" \
		"client $client_lines ($client_writes writes), daemon poller $daemon_lines"
	echo "---- client, between the markers (by name) ----"
	awk -v start="$MARK_START" -v end="$MARK_END" '
		index($0, end) { inside = 0 }
		inside { sub(/^[0-9]+ +/, ""); sub(/\(.*/, ""); print }
		index($0, start) { inside = 1 }' "$client_trace" | sort | uniq -c
	echo "---- daemon poller (by name) ----"
	sed -e 's/(.*//' "$daemon_trace" | sort | uniq -c
}

# One measurement after another, until one stays below SYSCALLS_MAX: every
# call of the client and of the daemon's poller ($2 "all"), or the client's
# writes only ($2 "client-writes"). $1 names the phase in the log.
measure_until_below() {
	local phase=$1 counted=$2 attempt
	for attempt in $(seq "$ATTEMPTS"); do
		measure "$phase-$attempt"
		if [ "$counted" = client-writes ] && [ "$client_writes" -lt "$SYSCALLS_MAX" ]; then
			return 0
		fi
		if [ "$counted" = all ] && [ "$client_lines" -lt "$SYSCALLS_MAX" ] &&
			[ "$daemon_lines" -lt "$SYSCALLS_MAX" ]; then
			return 0
		fi
		shmt_log "$phase, attempt $attempt: over $SYSCALLS_MAX system calls (descheduled by other load?)"
	done
	shmt_fail "$phase: every attempt made $SYSCALLS_MAX system calls or more (client" \
		"$client_lines with $client_writes writes, daemon poller $daemon_lines in the last one)"
}

# The first phase counts the channel's protocol, not where the scheduler
# puts its two sides: with two CPUs or more, the daemon (every thread) runs
# on one and the client on another. Left to the scheduler, the client and
# the poller sometimes shared one CPU, the tracers' wake-ups between them,
# and woke each other for most calls (thousands of doorbells in a run, on
# an idle 2-vCPU guest); how the waits fare on shared CPUs is measured by
# make bench's loaded host (docs/spin-budgets.md).
client_pin=()
mapfile -t own_cpus < <(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:2], sep="\n")')
start_daemon --spin-us "$ALONE_SPIN_US"
if [ "${#own_cpus[@]}" -ge 2 ]; then
	taskset -a -p -c "${own_cpus[0]}" "$SHMT_PID" >/dev/null ||
		shmt_fail "taskset: cannot pin daemon $SHMT_PID to CPU ${own_cpus[0]}"
	client_pin=(taskset -c "${own_cpus[1]}")
fi
poller_find
measure_until_below alone all
stop_daemon
client_pin=()
[ "$busy_bin" != none ] || exit 0

# The second phase: the busy client's own doorbells and sleeps show in the
# poller's trace, so only the measured client's writes are counted. The
# daemon spins for up to POLLER_SPIN_MAX_US before it sleeps, so that its
# poller never goes idle while the busy client runs, however often this
# loaded machine deschedules the busy client.
start_daemon --spin-us "$POLLER_SPIN_MAX_US"
poller_find
shmt_client_start busy "$busy_bin" "$SHMT_SOCK"
shmt_clients_wait_ready "$BUSY_READY_S"
measure_until_below beside-busy client-writes
shmt_clients_check "the busy client"
shmt_clients_stop
stop_daemon
