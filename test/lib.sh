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
#   shmt_args "DAEMON_BIN NAME..." "$@"
#                                    check the script's arguments, one per name (the
#                                    daemon's first): exit 2 with a usage line if
#                                    they do not match; sets SHMT_DAEMON
#   SHMT_NAME=name                   names the folder and prefix (default: script name)
#   start_daemon [daemon options] [-- EAL args]
#                                    sets SHMT_SOCK, SHMT_PID, SHMT_PREFIX, SHMT_LOG
#   stop_daemon                      SIGTERM; asserts exit status 0 and the socket is gone;
#                                    sets SHMT_DPDK_LEFT to what the daemon left of its
#                                    DPDK file prefix (shmt_dpdk_files) before removing it
#   reap_killed_daemon               for a daemon a test killed with SIGKILL
#   shmt_fail message                print message and the daemon log, exit 1
#   SHMT_LOG_TAIL_LINES=N            show only the last N lines of the log on failure
#   shmt_track PID                   a background job of the script (a client,
#                                    strace) that the EXIT trap ends if it still runs
#   shmt_spawn CMD [ARGS...]         start CMD as a tracked background job that also
#                                    dies with the script; sets SHMT_SPAWNED (its PID)
#   shmt_spawn_bounded S CMD [ARGS...]
#                                    shmt_spawn of CMD under timeout(1): SIGTERM after S
#                                    seconds, SIGKILL 2 s later (status 124 or 137)
#   shmt_run_bounded S CMD [ARGS...] the same, waited for: returns CMD's status
#   shmt_client_start NAME CMD [ARGS...]
#                                    a client that runs until SIGTERM and prints "ready"
#                                    once served; output in $SHMT_TMPDIR/NAME.out
#   shmt_clients_check WHAT          fail, naming WHAT, if the daemon or a client ended
#   shmt_clients_wait_ready S        wait up to S seconds for each client's "ready"
#   shmt_clients_stop                SIGTERM the clients; assert each exits 0 in time,
#                                    print their output
#   shmt_log_wait S STRING           true once the daemon log holds STRING (fixed), within S s
#   shmt_log_expect WHAT S STRING    shmt_log_wait, then shmt_clients_check, then fail if
#                                    STRING never came
#   shmt_word LINE KEY               the value of the word KEY=value of LINE
#   shmt_dpdk_files PREFIX           the DPDK files of PREFIX, one a line: its hugepage
#                                    files in every hugetlbfs mount, its runtime folder
#   shmt_tmpdir                      create the script's folder SHMT_TMPDIR if need be
#                                    (start_daemon does), removed by the EXIT trap
#   shmt_hugepages_usable            true if a daemon of this user can have hugepages;
#                                    else false, with the reason in SHMT_NO_HUGEPAGES_WHY
#   shmt_shm_stat HOSTILE_BIN S KEY  a field of GR_SHM_STATS (test/hostile's "stats")
#
# Every process a script starts stays in the script's process group (a group
# kill, by meson on timeout or by timeout(1), reaches all of them), is stopped
# by PID by the EXIT trap, and is killed by the kernel if the script dies
# first (setpriv --pdeathsig; SIGKILL to the script alone runs no trap).

# EAL init with hugepages takes about a second; leave room for a loaded machine.
SHMT_SOCKET_WAIT_S=${SHMT_SOCKET_WAIT_S:-10}
# The daemon stops its pollers and frees its channels on SIGTERM: quick.
SHMT_STOP_WAIT_S=${SHMT_STOP_WAIT_S:-10}
# Polling period of the bounded waits, and polls per second.
SHMT_POLL_S=0.05
SHMT_POLLS_PER_S=20
# Grace between SIGTERM and SIGKILL of a bounded command.
SHMT_KILL_AFTER_S=${SHMT_KILL_AFTER_S:-2}
SHMT_LOG_TAIL_LINES=${SHMT_LOG_TAIL_LINES:-}

SHMT_NAME=${SHMT_NAME:-$(basename "$0" .sh)}
SHMT_TMPDIR=
SHMT_PID=
SHMT_SOCK=
SHMT_PREFIX=
SHMT_LOG=
SHMT_DPDK_LEFT=
shmt_daemons_started=0
shmt_tracked=()
SHMT_SPAWNED=
# The clients of shmt_client_start, in start order, and their PIDs.
shmt_clients=()
declare -gA shmt_client_pid=()

# Prefix of every command the script starts: the kernel sends it SIGKILL when
# the script dies (PR_SET_PDEATHSIG), so nothing outlives a script killed
# with SIGKILL alone, whose EXIT trap never runs. Empty where setpriv cannot.
shmt_die_with_parent=()
if setpriv --pdeathsig KILL true 2>/dev/null; then
	shmt_die_with_parent=(setpriv --pdeathsig KILL)
fi

shmt_log() {
	echo "$SHMT_NAME: $*" >&2
}

shmt_dump_log() {
	if [ -n "$SHMT_LOG" ] && [ -s "$SHMT_LOG" ]; then
		if [ -n "$SHMT_LOG_TAIL_LINES" ]; then
			echo "---- last $SHMT_LOG_TAIL_LINES lines of the daemon log $SHMT_LOG ----" >&2
			tail -n "$SHMT_LOG_TAIL_LINES" "$SHMT_LOG" >&2
		else
			echo "---- daemon log $SHMT_LOG ----" >&2
			cat "$SHMT_LOG" >&2
		fi
		echo "---- end of daemon log ----" >&2
	fi
}

shmt_fail() {
	shmt_log "FAIL: $*"
	shmt_dump_log
	exit 1
}

# The names are the usage line's; the script takes its other arguments
# from $2 on itself.
shmt_args() {
	local usage=$1 names
	shift
	read -r -a names <<<"$usage"
	if [ $# -ne "${#names[@]}" ]; then
		echo "usage: $0 $usage" >&2
		exit 2
	fi
	SHMT_DAEMON=$1
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

# True once the daemon accepts connections on SOCK, SHMT_SOCK if not given
# (the socket file appears at bind(), before listen()).
shmt_socket_ready() {
	local sock=${1:-$SHMT_SOCK}
	[ -S "$sock" ] || return 1
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])' "$sock" 2>/dev/null
}

# The hugepage files (<mount>/<prefix>map_<n>) and the runtime folder that a
# DPDK primary of file prefix $1 has, where EAL puts them for this user.
shmt_dpdk_files() {
	local mnt fstype runtime f
	while read -r _ mnt fstype _; do
		[ "$fstype" = hugetlbfs ] || continue
		for f in "$mnt/$1"map_*; do
			# <prefix>map_ and digits only: not the files of prefix "$1map_1".
			case ${f#"$mnt/$1"map_} in
			'' | *[!0-9]*) ;;
			*) [ -e "$f" ] && echo "$f" ;;
			esac
		done
	done </proc/mounts
	if [ "$(id -u)" = 0 ]; then
		runtime=/var/run/dpdk
	else
		runtime=${XDG_RUNTIME_DIR:-/tmp}/dpdk
	fi
	if [ -e "$runtime/$1" ]; then
		echo "$runtime/$1"
	fi
}

# Remove what a DPDK primary leaves when it is killed: hugepage files and the
# runtime folder named by its file prefix (unique to this run, so only ours).
shmt_clean_dpdk() {
	local f
	[ -n "$SHMT_PREFIX" ] || return 0
	shmt_dpdk_files "$SHMT_PREFIX" | while read -r f; do
		rm -rf "${f:?}"
	done
}

shmt_tmpdir() {
	if [ -z "$SHMT_TMPDIR" ]; then
		SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX") ||
			shmt_fail "mktemp failed"
		shmt_python_direct
	fi
}

# python3 resolved once, for a script that calls it many times: a version
# manager's shim (pyenv's) runs a shell and a lookup at each call, which
# costs seconds a call on a loaded host. The interpreter it finds goes first
# on PATH, as python3, in the test's folder; "#!/usr/bin/env python3" finds
# it too. Does nothing when python3 is not a script.
shmt_python_direct() {
	local found real
	[ -z "${SHMT_PYTHON_DIRECT:-}" ] || return 0
	SHMT_PYTHON_DIRECT=1
	found=$(command -v python3) || return 0
	case $(head -c 4 "$found" 2>/dev/null | od -An -c | tr -d ' ') in
	177ELF) return 0 ;;
	esac
	real=$(python3 -c 'import sys; print(sys.executable)') || return 0
	[ -x "$real" ] || return 0
	shmt_tmpdir
	mkdir -p "$SHMT_TMPDIR/python-bin"
	ln -sf "$real" "$SHMT_TMPDIR/python-bin/python3"
	PATH=$SHMT_TMPDIR/python-bin:$PATH
}

# Free 2 MB pages a daemon with hugepages wants: its own EAL memory takes a
# few, each memzone channel shares one, and tests run side by side (as
# shmchand's --hugepages auto and need_hugepages.sh judge).
SHMT_HUGEPAGES_MIN_FREE=16
SHMT_NO_HUGEPAGES_WHY=
# shellcheck disable=SC2034 # SHMT_NO_HUGEPAGES_WHY is for the scripts that source this file
shmt_hugepages_usable() {
	local free mnt
	free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
	mnt=$(awk '$3 == "hugetlbfs" {print $2; exit}' /proc/mounts)
	if [ "${free:-0}" -lt "$SHMT_HUGEPAGES_MIN_FREE" ]; then
		SHMT_NO_HUGEPAGES_WHY="${free:-no} free hugepages (need $SHMT_HUGEPAGES_MIN_FREE)"
	elif [ -z "$mnt" ]; then
		SHMT_NO_HUGEPAGES_WHY="no hugetlbfs mounted"
	elif [ ! -w "$mnt" ]; then
		# EAL creates its hugepage files there.
		SHMT_NO_HUGEPAGES_WHY="hugetlbfs $mnt is not writable by $(id -un)"
	else
		return 0
	fi
	return 1
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
	shmt_tmpdir
	shmt_daemons_started=$((shmt_daemons_started + 1))
	SHMT_SOCK=$SHMT_TMPDIR/shmchand-$shmt_daemons_started.sock
	SHMT_PREFIX=shmt-$SHMT_NAME-$$-$shmt_daemons_started
	SHMT_LOG=$SHMT_TMPDIR/daemon-$shmt_daemons_started.log
	"${shmt_die_with_parent[@]}" "$SHMT_DAEMON" -s "$SHMT_SOCK" "${opts[@]}" -- \
		--file-prefix "$SHMT_PREFIX" "${eal[@]}" >"$SHMT_LOG" 2>&1 &
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
	# shellcheck disable=SC2034 # for the scripts that source this file
	SHMT_DPDK_LEFT=$(shmt_dpdk_files "$SHMT_PREFIX")
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

# In the background: the script waits for it with the wait builtin, which a
# trapped signal interrupts, so the traps run at once (bash runs no trap
# while a foreground command runs).
shmt_spawn() {
	"${shmt_die_with_parent[@]}" "$@" &
	SHMT_SPAWNED=$!
	shmt_track "$SHMT_SPAWNED"
}

# --foreground keeps CMD in the script's process group (timeout(1) makes a
# group of its own otherwise, which a kill of the script's group misses).
# CMD dies with timeout, which dies with the script.
shmt_spawn_bounded() {
	local bound=$1
	shift
	shmt_spawn timeout --foreground --kill-after="$SHMT_KILL_AFTER_S" "$bound" \
		"${shmt_die_with_parent[@]}" "$@"
}

shmt_run_bounded() {
	local rc=0
	shmt_spawn_bounded "$@"
	wait "$SHMT_SPAWNED" || rc=$?
	return "$rc"
}

shmt_client_start() {
	local name=$1
	shift
	shmt_spawn "$@" >"$SHMT_TMPDIR/$name.out" 2>&1
	shmt_clients+=("$name")
	shmt_client_pid[$name]=$SHMT_SPAWNED
}

shmt_clients_check() {
	local name pid rc
	shmt_running "$SHMT_PID" || shmt_fail "$1: the daemon died"
	for name in "${shmt_clients[@]}"; do
		pid=${shmt_client_pid[$name]}
		if ! shmt_running "$pid"; then
			rc=0
			wait "$pid" || rc=$?
			cat "$SHMT_TMPDIR/$name.out" >&2
			shmt_fail "$1: client $name ended (status $rc)"
		fi
	done
}

shmt_clients_wait_ready() {
	local name polls
	for name in "${shmt_clients[@]}"; do
		polls=$(($1 * SHMT_POLLS_PER_S))
		until grep -qs '^ready$' "$SHMT_TMPDIR/$name.out"; do
			shmt_clients_check "attach"
			[ "$polls" -gt 0 ] || shmt_fail "client $name not ready within $1 s"
			polls=$((polls - 1))
			sleep "$SHMT_POLL_S"
		done
	done
}

shmt_clients_stop() {
	local name pid rc
	for name in "${shmt_clients[@]}"; do
		kill -TERM "${shmt_client_pid[$name]}"
	done
	for name in "${shmt_clients[@]}"; do
		pid=${shmt_client_pid[$name]}
		shmt_wait_gone "$pid" "$SHMT_STOP_WAIT_S" || shmt_fail "client $name did not stop"
		rc=0
		wait "$pid" || rc=$?
		cat "$SHMT_TMPDIR/$name.out"
		[ "$rc" = 0 ] || shmt_fail "client $name failed (status $rc)"
	done
	shmt_clients=()
	shmt_client_pid=()
}

# shmt_wait_output PID FILE PATTERN SECONDS WHAT: wait until FILE, the
# output of process PID, holds a line matching the extended regular
# expression PATTERN; fail, naming WHAT, when PID ends first or after
# SECONDS.
shmt_wait_output() {
	local polls=$(($4 * SHMT_POLLS_PER_S))
	until grep -qsE -e "$3" "$2"; do
		shmt_running "$1" || shmt_fail "$5: ended before '$3': $(cat "$2")"
		[ "$polls" -gt 0 ] || shmt_fail "$5: no '$3' within $4 s"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
}

shmt_log_wait() {
	local polls=$(($1 * SHMT_POLLS_PER_S))
	until grep -qF -e "$2" "$SHMT_LOG"; do
		[ "$polls" -gt 0 ] || return 1
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
}

# The daemon and the clients are checked before a missing line fails: a death
# explains it better.
shmt_log_expect() {
	local found=1
	shmt_log_wait "$2" "$3" || found=0
	shmt_clients_check "$1"
	[ "$found" = 1 ] || shmt_fail "$1: no '$3' in the daemon's log"
}

shmt_word() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

shmt_shm_stat() {
	local line
	line=$(shmt_run_bounded "$2" "$1" "$SHMT_SOCK" stats) || shmt_fail "stats: hostile failed"
	shmt_word "$line" "$3"
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
	fi
	# Also after a daemon the script killed and did not reap.
	shmt_clean_dpdk
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
