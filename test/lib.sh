# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Shell helpers of the end-to-end tests and of the smoke scripts, sourced by
# bash scripts. One shmchand at a time, with its own socket (in a mktemp
# folder) and its own DPDK --file-prefix, so any number of tests run side by
# side. The daemon is always stopped by its PID, and the folder removed, by
# an EXIT trap installed here: a script that sources this file must not set
# its own EXIT trap.
#
#   SHMT_DAEMON=path/to/shmchand     the daemon binary (required)
#   SHMT_NAME=name                   names the folder and prefix (default: script name)
#   start_daemon [daemon options] [-- EAL args]
#                                    sets SHMT_SOCK, SHMT_PID, SHMT_PREFIX, SHMT_LOG
#   stop_daemon                      SIGTERM; asserts exit status 0 and the socket is gone
#   reap_killed_daemon               for a daemon a test killed with SIGKILL
#   shmt_fail message                print message and the daemon log, exit 1
#   shmt_track PID                   a background job of the script (a client,
#                                    strace) that the EXIT trap ends if it still runs

# EAL init with hugepages takes about a second; leave room for a loaded machine.
SHMT_SOCKET_WAIT_S=${SHMT_SOCKET_WAIT_S:-10}
# The daemon stops its pollers and frees its channels on SIGTERM: quick.
SHMT_STOP_WAIT_S=${SHMT_STOP_WAIT_S:-10}
# Polling period of the bounded waits, and polls per second.
SHMT_POLL_S=0.05
SHMT_POLLS_PER_S=20

SHMT_NAME=${SHMT_NAME:-$(basename "$0" .sh)}
SHMT_TMPDIR=
SHMT_PID=
SHMT_SOCK=
SHMT_PREFIX=
SHMT_LOG=
shmt_daemons_started=0
shmt_tracked=()

shmt_log() {
	echo "$SHMT_NAME: $*" >&2
}

shmt_dump_log() {
	if [ -n "$SHMT_LOG" ] && [ -s "$SHMT_LOG" ]; then
		echo "---- daemon log $SHMT_LOG ----" >&2
		cat "$SHMT_LOG" >&2
		echo "---- end of daemon log ----" >&2
	fi
}

shmt_fail() {
	shmt_log "FAIL: $*"
	shmt_dump_log
	exit 1
}

# True while process $1 exists and is not a zombie.
shmt_running() {
	local stat state
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	state=${stat##*) }
	[ "${state%% *}" != Z ]
}

# Wait up to $2 seconds for process $1 to end. True if it ended.
shmt_wait_gone() {
	local polls=$(($2 * SHMT_POLLS_PER_S))
	while shmt_running "$1"; do
		[ "$polls" -gt 0 ] || return 1
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
}

# True once the daemon accepts connections on SHMT_SOCK (the socket file
# appears at bind(), before listen()).
shmt_socket_ready() {
	[ -S "$SHMT_SOCK" ] || return 1
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])' "$SHMT_SOCK" 2>/dev/null
}

# Remove what a DPDK primary leaves when it is killed: hugepage files and the
# runtime folder named by its file prefix (unique to this run, so only ours).
shmt_clean_dpdk() {
	local mnt runtime
	[ -n "$SHMT_PREFIX" ] || return 0
	while read -r _ mnt fstype _; do
		if [ "$fstype" = hugetlbfs ]; then
			rm -f "$mnt/$SHMT_PREFIX"map_*
		fi
	done </proc/mounts
	if [ "$(id -u)" = 0 ]; then
		runtime=/var/run/dpdk
	else
		runtime=${XDG_RUNTIME_DIR:-/tmp}/dpdk
	fi
	rm -rf "${runtime:?}/$SHMT_PREFIX"
}

# Daemon options are optional: most callers pass none.
# shellcheck disable=SC2120
start_daemon() {
	local opts=() eal=() in_eal=0 arg polls
	[ -z "$SHMT_PID" ] || shmt_fail "start_daemon: daemon $SHMT_PID is still running"
	[ -x "$SHMT_DAEMON" ] || shmt_fail "start_daemon: no daemon binary '$SHMT_DAEMON' (build it first)"
	for arg in "$@"; do
		if [ "$in_eal" = 0 ] && [ "$arg" = -- ]; then
			in_eal=1
		elif [ "$in_eal" = 1 ]; then
			eal+=("$arg")
		else
			opts+=("$arg")
		fi
	done
	if [ -z "$SHMT_TMPDIR" ]; then
		SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX") ||
			shmt_fail "mktemp failed"
	fi
	shmt_daemons_started=$((shmt_daemons_started + 1))
	SHMT_SOCK=$SHMT_TMPDIR/shmchand-$shmt_daemons_started.sock
	SHMT_PREFIX=shmt-$SHMT_NAME-$$-$shmt_daemons_started
	SHMT_LOG=$SHMT_TMPDIR/daemon-$shmt_daemons_started.log
	"$SHMT_DAEMON" -s "$SHMT_SOCK" "${opts[@]}" -- --file-prefix "$SHMT_PREFIX" "${eal[@]}" \
		>"$SHMT_LOG" 2>&1 &
	SHMT_PID=$!
	export SHMT_SOCK SHMT_PID

	polls=$((SHMT_SOCKET_WAIT_S * SHMT_POLLS_PER_S))
	until shmt_socket_ready; do
		if ! shmt_running "$SHMT_PID"; then
			local rc=0
			wait "$SHMT_PID" || rc=$?
			SHMT_PID=
			shmt_clean_dpdk
			shmt_fail "daemon exited with status $rc before serving $SHMT_SOCK"
		fi
		if [ "$polls" -le 0 ]; then
			shmt_fail "daemon $SHMT_PID did not serve $SHMT_SOCK within $SHMT_SOCKET_WAIT_S s"
		fi
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
}

stop_daemon() {
	local pid=$SHMT_PID rc=0
	[ -n "$pid" ] || shmt_fail "stop_daemon: no daemon running"
	if ! shmt_running "$pid"; then
		wait "$pid" || rc=$?
		SHMT_PID=
		shmt_clean_dpdk
		shmt_fail "daemon $pid died before it was stopped (status $rc)"
	fi
	kill -TERM "$pid"
	if ! shmt_wait_gone "$pid" "$SHMT_STOP_WAIT_S"; then
		kill -KILL "$pid"
		wait "$pid" || true
		SHMT_PID=
		shmt_clean_dpdk
		shmt_fail "daemon $pid still ran $SHMT_STOP_WAIT_S s after SIGTERM (killed)"
	fi
	wait "$pid" || rc=$?
	SHMT_PID=
	shmt_clean_dpdk
	[ "$rc" = 0 ] || shmt_fail "daemon $pid exited with status $rc on SIGTERM, expected 0"
	[ ! -e "$SHMT_SOCK" ] || shmt_fail "daemon $pid left its socket $SHMT_SOCK behind"
}

# For a test that killed the daemon with SIGKILL: reap it and clean up after it.
reap_killed_daemon() {
	local pid=$SHMT_PID rc=0
	[ -n "$pid" ] || shmt_fail "reap_killed_daemon: no daemon"
	if ! shmt_wait_gone "$pid" "$SHMT_STOP_WAIT_S"; then
		kill -KILL "$pid"
		wait "$pid" || true
		SHMT_PID=
		shmt_clean_dpdk
		shmt_fail "daemon $pid was expected to be killed but still ran"
	fi
	wait "$pid" || rc=$?
	SHMT_PID=
	shmt_clean_dpdk
	# 128 + SIGKILL, as the shell reports a process killed by signal 9.
	[ "$rc" = 137 ] || shmt_fail "daemon $pid ended with status $rc, expected SIGKILL (137)"
}

shmt_track() {
	shmt_tracked+=("$1")
}

# SIGTERM, then SIGKILL after a bound, to the tracked jobs still running.
# Only jobs the shell has not reaped yet are signalled: a PID the script
# already waited for may belong to another process by now.
shmt_stop_tracked() {
	local pid jobs_left
	jobs_left=" $(jobs -p | tr '\n' ' ') "
	for pid in "${shmt_tracked[@]}"; do
		case $jobs_left in
		*" $pid "*) ;;
		*) continue ;;
		esac
		kill -TERM "$pid" 2>/dev/null || true
		if ! shmt_wait_gone "$pid" "$SHMT_STOP_WAIT_S"; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
		wait "$pid" 2>/dev/null || true
	done
	shmt_tracked=()
}

# EXIT trap: whatever happened, stop the tracked jobs and the daemon by PID,
# and remove the folder.
shmt_cleanup() {
	shmt_stop_tracked
	if [ -n "$SHMT_PID" ]; then
		kill -TERM "$SHMT_PID" 2>/dev/null || true
		if ! shmt_wait_gone "$SHMT_PID" "$SHMT_STOP_WAIT_S"; then
			kill -KILL "$SHMT_PID" 2>/dev/null || true
		fi
		wait "$SHMT_PID" 2>/dev/null || true
		SHMT_PID=
		shmt_clean_dpdk
	fi
	if [ -n "$SHMT_TMPDIR" ]; then
		rm -rf "$SHMT_TMPDIR"
	fi
}

shmt_on_exit() {
	local rc=$?
	shmt_cleanup
	exit "$rc"
}

trap shmt_on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
