#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The daemon leaves nothing of its DPDK file prefix behind (no hugepage file
# in any hugetlbfs mount, no runtime folder):
#  1. started, then stopped with SIGTERM;
#  2. a second daemon on the socket of a running one fails at once, says
#     why, and creates nothing;
#  3. a second daemon on the file prefix of a running one fails EAL init and
#     leaves the running one's files alone;
#  4. a daemon that fails after EAL init (its socket's folder, there when it
#     started, is gone when it binds) removes what EAL made;
#  5. killed with SIGKILL, it leaves its files; the next daemon on the same
#     prefix reclaims them and, once stopped with SIGTERM, leaves nothing;
#  6. (huge only) stopped with SIGTERM while a DPDK secondary still maps its
#     files, it leaves them to the secondary and names it; once the
#     secondary has exited, the next daemon on the prefix reclaims them.
#
#   daemon_files_cleanup.sh SHMCHAND MODE SHM_RESTART_SECONDARY
# MODE "huge": the daemons run with --hugepages on (run it under
# need_hugepages.sh); "nohuge": with --hugepages off, which has a runtime
# folder only. SHM_RESTART_SECONDARY holds a secondary (its "hold" mode).
set -eu

SHMT_NAME=daemon_files_cleanup
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND MODE SHM_RESTART_SECONDARY" "$@"
mode=$2
secondary=$3

# A daemon that fails to start exits within a second or two (EAL init);
# one that starts would run until this bound.
FAILED_START_TIMEOUT_S=15
# A secondary's EAL init and attach take about a second.
ATTACH_WAIT_S=10

case $mode in
huge) hugepages=(--hugepages on) ;;
nohuge) hugepages=(--hugepages off) ;;
*)
	echo "$0: MODE is huge or nohuge, not '$mode'" >&2
	exit 2
	;;
esac
SHMT_NAME=daemon_files_cleanup_$mode

# The files of prefix $1, on one line.
files_of() {
	shmt_dpdk_files "$1" | tr '\n' ' '
}

# Fail, naming step $2, if a daemon that failed to start left files of its
# prefix $1 (removed first: the EXIT trap knows only SHMT_PREFIX).
expect_none() {
	local left f
	left=$(files_of "$1")
	[ -n "$left" ] || return 0
	shmt_dpdk_files "$1" | while read -r f; do
		rm -rf "${f:?}"
	done
	shmt_fail "$2: the failed daemon left $(echo "$left" | wc -w) files: ${left:0:200}..."
}

# Fail unless the daemon stopped by stop_daemon left nothing.
expect_nothing_left() {
	[ -z "$SHMT_DPDK_LEFT" ] ||
		shmt_fail "$1: the daemon left $(echo "$SHMT_DPDK_LEFT" | wc -l) DPDK files of its" \
			"prefix: $(echo "$SHMT_DPDK_LEFT" | head -n 3 | tr '\n' ' ')..."
}

# While a daemon runs, the files are there: the checks can see them. With
# $3 = runtime, only the runtime folder is looked for: once no process holds
# a hugepage file, the EAL init of any primary on the mount (another test's
# daemon too) may remove it.
expect_files() {
	local files
	files=$(shmt_dpdk_files "$1")
	echo "$files" | grep -q "/dpdk/$1\$" || shmt_fail "$2: no runtime folder of $1: $files"
	if [ "$mode" = huge ] && [ "${3:-}" != runtime ]; then
		echo "$files" | grep -q "map_" || shmt_fail "$2: no hugepage file of $1: $files"
	fi
}

# Run a daemon on socket $2 and file prefix $3 that must fail to start,
# $1 naming the step; its output goes to probe_out.
probe_out=
probe_daemon() {
	local step=$1 rc=0
	probe_out=$SHMT_TMPDIR/probe-$step.out
	shmt_run_bounded "$FAILED_START_TIMEOUT_S" "$SHMT_DAEMON" -s "$2" "${hugepages[@]}" -- \
		--file-prefix "$3" >"$probe_out" 2>&1 || rc=$?
	[ "$rc" = 1 ] || shmt_fail "$step: the daemon exited with status $rc, expected 1:" \
		"$(cat "$probe_out")"
}

# 1. SIGTERM.
start_daemon "${hugepages[@]}"
expect_files "$SHMT_PREFIX" "running"
stop_daemon
expect_nothing_left "SIGTERM"
shmt_log "SIGTERM: nothing left"

# 2. Another daemon answers on the socket.
start_daemon "${hugepages[@]}"
probe_prefix=shmt-$SHMT_NAME-$$-socket
probe_daemon socket "$SHMT_SOCK" "$probe_prefix"
want="another server answers on $SHMT_SOCK; stop it or choose another socket path (-s/--socket)"
grep -qF "$want" "$probe_out" || shmt_fail "socket: no '$want' in: $(cat "$probe_out")"
grep -q "EAL" "$probe_out" && shmt_fail "socket: the daemon ran EAL init: $(cat "$probe_out")"
expect_none "$probe_prefix" socket
shmt_socket_ready || shmt_fail "socket: the first daemon stopped serving"
shmt_log "socket in use: refused, nothing created"

# 3. Another daemon on the prefix of a running one: EAL init fails, and the
# running daemon's files stay.
before=$(files_of "$SHMT_PREFIX")
probe_daemon prefix "$SHMT_TMPDIR/prefix.sock" "$SHMT_PREFIX"
grep -qF "still uses file prefix $SHMT_PREFIX" "$probe_out" ||
	shmt_fail "prefix: the failed daemon does not say the prefix is in use: $(cat "$probe_out")"
after=$(files_of "$SHMT_PREFIX")
[ "$before" = "$after" ] ||
	shmt_fail "prefix: the running daemon's files changed: before $before, after $after"
shmt_socket_ready || shmt_fail "prefix: the first daemon stopped serving"
stop_daemon
expect_nothing_left "prefix"
shmt_log "prefix in use: refused, the running daemon's files untouched"

# 4. A failure after EAL init: the socket's folder is there when the daemon
# checks it, before EAL init, and gone when it binds, after. The daemon is
# stopped as soon as it says it starts EAL (-v: "EAL arguments"), while EAL
# init runs (a tenth of a second and more), the folder removed, and the
# daemon resumed.
probe_prefix=shmt-$SHMT_NAME-$$-bind
probe_out=$SHMT_TMPDIR/probe-bind.out
mkdir "$SHMT_TMPDIR/vanishing"
shmt_spawn_bounded "$FAILED_START_TIMEOUT_S" "$SHMT_DAEMON" -v -s "$SHMT_TMPDIR/vanishing/x.sock" \
	"${hugepages[@]}" -- --file-prefix "$probe_prefix" >"$probe_out" 2>&1
probe=$SHMT_SPAWNED
# Polled every 5 ms: well inside EAL init's time.
polls=$((SHMT_SOCKET_WAIT_S * 200))
until grep -q "EAL arguments" "$probe_out"; do
	shmt_running "$probe" || shmt_fail "bind: the daemon ended before EAL init: $(cat "$probe_out")"
	[ "$polls" -gt 0 ] || shmt_fail "bind: the daemon did not start EAL init: $(cat "$probe_out")"
	polls=$((polls - 1))
	sleep 0.005
done
kill -STOP "$probe"
rmdir "$SHMT_TMPDIR/vanishing"
kill -CONT "$probe"
rc=0
wait "$probe" || rc=$?
[ "$rc" = 1 ] || shmt_fail "bind: the daemon exited with status $rc, expected 1: $(cat "$probe_out")"
grep -q "bind $SHMT_TMPDIR/vanishing/x.sock" "$probe_out" ||
	shmt_fail "bind: the daemon does not say that bind failed: $(cat "$probe_out")"
expect_none "$probe_prefix" bind
shmt_log "failure after EAL init: nothing left"

# 5. SIGKILL, then a restart on the same prefix.
start_daemon "${hugepages[@]}"
prefix=$SHMT_PREFIX
kill -KILL "$SHMT_PID"
shmt_wait_gone "$SHMT_PID" "$SHMT_STOP_WAIT_S" || shmt_fail "daemon $SHMT_PID survived SIGKILL"
{ wait "$SHMT_PID"; } 2>/dev/null || true
SHMT_PID=
expect_files "$prefix" "after SIGKILL" runtime
# The last --file-prefix wins; the EXIT trap cleans up $prefix if this fails.
start_daemon "${hugepages[@]}" -- --file-prefix "$prefix"
SHMT_PREFIX=$prefix
stop_daemon
expect_nothing_left "restart after SIGKILL"
shmt_log "SIGKILL then restart: reclaimed, nothing left"

[ "$mode" = huge ] || exit 0

# 6. SIGTERM while a secondary maps the files.
start_daemon "${hugepages[@]}"
prefix=$SHMT_PREFIX
# The secondary reads its orders from a fifo that this script holds open.
# Not shmt_spawn: a background job's stdin is its own redirection or
# /dev/null.
fifo=$SHMT_TMPDIR/secondary.in
mkfifo "$fifo"
sec_out=$SHMT_TMPDIR/secondary.out
"${shmt_die_with_parent[@]}" "$secondary" hold "$SHMT_SOCK" <"$fifo" >"$sec_out" 2>&1 &
sec_pid=$!
shmt_track "$sec_pid"
exec 3>"$fifo"
shmt_wait_output "$sec_pid" "$sec_out" '^attached' "$ATTACH_WAIT_S" "secondary"
pid=$SHMT_PID
kill -TERM "$pid"
shmt_wait_gone "$pid" "$SHMT_STOP_WAIT_S" || shmt_fail "secondary: the daemon did not stop"
rc=0
wait "$pid" || rc=$?
SHMT_PID=
[ "$rc" = 0 ] || shmt_fail "secondary: the daemon exited with status $rc on SIGTERM"
grep -q "file prefix $prefix: still in use" "$SHMT_LOG" ||
	shmt_fail "secondary: the daemon does not say its files are still in use"
grep -q "live DPDK secondaries:.*\b$sec_pid\b" "$SHMT_LOG" ||
	shmt_fail "secondary: the daemon does not name secondary $sec_pid"
shmt_dpdk_files "$prefix" | grep -q map_ ||
	shmt_fail "secondary: the daemon removed the hugepage files secondary $sec_pid maps"
# The secondary sees the lease end, then exits once its stdin closes.
echo stopped >&3
exec 3>&-
sec_rc=0
wait "$sec_pid" || sec_rc=$?
[ "$sec_rc" = 0 ] || shmt_fail "secondary: exited with status $sec_rc: $(cat "$sec_out")"
start_daemon "${hugepages[@]}" -- --file-prefix "$prefix"
SHMT_PREFIX=$prefix
stop_daemon
expect_nothing_left "restart after a secondary"
shmt_log "SIGTERM with a live secondary: its files kept, then reclaimed"
