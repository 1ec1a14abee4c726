#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# ping2_perf --event-loop makes its calls as an event-loop controller does
# (gr_api_client_try_recv_into(), gr_api_client_poll_prepare(), epoll_wait()
# on gr_api_client_fd(), gr_api_client_poll_done()): on each transport, at
# depth 1 and DEPTH, every echo checked by ping2_perf itself, it completes
# and its JSON says event_loop and holds the fields of a run of calls (and
# of --idle),
# against a daemon whose poller never spins (-S 0: every request goes
# through both doorbells). With the daemon stopped now and then, strace
# sees the client wait in its loop's epoll_wait() for one event (on
# gr_api_client_fd()) with --event-loop, and never without: a blocking
# receive on the channel sleeps in the library's own epoll_wait(), for
# two (the doorbell and the socket), and one on the socket in recv().
# Unless strace is missing or may not trace (that part alone is skipped,
# said so). Options that cannot go with --event-loop are refused, naming
# it.
#
#   ping2_perf_event_loop.sh SHMCHAND PING2_PERF
set -eu

SHMT_NAME=ping2_perf_event_loop
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND PING2_PERF" "$@"
perf=$2
shmt_python_direct

# Calls of each run: every path of the loop many times, a second or two on
# a loaded host with a poller that sleeps after every request.
CALLS=2000
# Requests in flight of the pipelined runs (sent with send_more, flushed by
# the prepare).
DEPTH=8
# Each traced run calls for TRACED_S; meanwhile the daemon is stopped for
# PAUSE_S every 2 * PAUSE_S, so that the client finds no response for a
# while, whatever the scheduler does (a poller woken by the doorbell often
# answers before the client looks): it must wait, in epoll_wait() with
# --event-loop and in the library's poll() without.
TRACED_S=2
PAUSE_S=0.05

start_daemon -S 0

for t in shm socket; do
	for d in 1 "$DEPTH"; do
		out=$("$perf" -s "$SHMT_SOCK" -t "$t" --event-loop -d "$d" -n "$CALLS" -w 10 -q --json) ||
			shmt_fail "ping2_perf --event-loop -t $t -d $d failed"
		python3 - "$out" "$t" "$d" "$CALLS" <<'PY' ||
import json, sys
r = json.loads(sys.argv[1])
want = {"mode": "calls", "transport": sys.argv[2], "event_loop": True, "clients": 1,
        "depth": int(sys.argv[3]), "count": int(sys.argv[4]), "request": "GR_PING2"}
wrong = {k: r.get(k) for k, v in want.items() if r.get(k) != v}
positive = ("calls_per_s", "seconds", "client_cpu_ns_per_call")
wrong.update({k: r.get(k) for k in positive if not (r.get(k) or 0) > 0})
lat = r.get("latency_ns") or {}
if not all((lat.get(p) or 0) > 0 for p in ("p50", "p99", "p999", "max")):
    wrong["latency_ns"] = lat
if wrong:
    sys.exit(f"wrong or missing: {wrong}")
PY
			shmt_fail "ping2_perf --event-loop -t $t -d $d: $out"
		shmt_log "--event-loop -t $t -d $d: $CALLS calls, JSON checked"
	done
done

# --idle times its requests after silences the same way.
out=$("$perf" -s "$SHMT_SOCK" -t shm --event-loop --idle 0.2 --idle-rounds 2 -w 10 -q --json) ||
	shmt_fail "ping2_perf --event-loop --idle failed"
[[ $out == *'"mode": "idle"'*'"event_loop": true'*'"after_idle_ns": {"rounds": 2'* ]] ||
	shmt_fail "ping2_perf --event-loop --idle: $out"

# The blocking calls say so too.
out=$("$perf" -s "$SHMT_SOCK" -t shm -n 100 -w 10 -q --json) || shmt_fail "ping2_perf -t shm failed"
[[ $out == *'"event_loop": false'* ]] || shmt_fail "blocking calls: no \"event_loop\": false: $out"

# epoll_wait() calls for MAX events at most of a traced ping2_perf run (its
# forked client included) with ARGS, the daemon stopped now and then
# meanwhile. strace ends a call's line, whole or resumed, with its events
# then "MAX, TIMEOUT) = RESULT".
traced_waits() {
	local trace=$SHMT_TMPDIR/strace.txt pid max=$1
	shift
	# LeakSanitizer cannot run under ptrace (a sanitized build's traced
	# program would fail at its exit): off for the traced runs only; the
	# runs above, untraced, keep the leak check.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -e trace=epoll_wait -o "$trace" "$perf" -s "$SHMT_SOCK" -T "$TRACED_S" \
		-w 10 -q --no-syscall-count "$@" >/dev/null &
	pid=$!
	while shmt_running "$pid"; do
		kill -STOP "$SHMT_PID"
		sleep "$PAUSE_S"
		kill -CONT "$SHMT_PID"
		sleep "$PAUSE_S"
	done
	wait "$pid" || shmt_fail "ping2_perf $* under strace failed"
	grep -cE "\], $max, -?[0-9]+\) += " "$trace" || true
}
if ! command -v strace >/dev/null || ! strace -qq -o /dev/null true 2>/dev/null; then
	shmt_log "strace missing or may not trace: the epoll_wait() counts are skipped"
else
	for t in shm socket; do
		n=$(traced_waits 1 -t "$t" --event-loop)
		[ "$n" -gt 0 ] || shmt_fail "--event-loop -t $t: no epoll_wait() while the daemon was stopped"
		shmt_log "--event-loop -t $t: $n epoll_wait() calls in its loop"
		n=$(traced_waits 1 -t "$t")
		[ "$n" = 0 ] || shmt_fail "-t $t without --event-loop: $n epoll_wait() calls of a loop, expected none"
	done
	n=$(traced_waits 2 -t shm)
	[ "$n" -gt 0 ] || shmt_fail "-t shm without --event-loop: no sleep in the library's epoll_wait()"
	shmt_log "-t shm without --event-loop: $n sleeps in the library's epoll_wait()"
fi

# What cannot go with --event-loop is refused, naming it.
for bad in "--gap 1" "--beside-ring 1" "--spin 0 -n 10"; do
	# shellcheck disable=SC2086 # bad is a list of words
	if err=$("$perf" -s "$SHMT_SOCK" --event-loop $bad -q 2>&1); then
		shmt_fail "ping2_perf accepted --event-loop $bad"
	fi
	[[ $err == *--event-loop* ]] ||
		shmt_fail "ping2_perf --event-loop $bad: no word of --event-loop: $err"
done

stop_daemon
