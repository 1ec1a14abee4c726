#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Two users' daemons on one machine. Each daemon touches only its own files,
# and leaves none:
#  1. a user other than root gets the default file prefix shmchand-UID, not
#     root's shmchand, and once stopped leaves nothing in its runtime base
#     ($XDG_RUNTIME_DIR: not even the dpdk folder EAL made there);
#  2. (as root) beside root's daemon with hugepages on prefix P, nobody's
#     daemon on the same prefix P (without hugepages: the hugetlbfs mount is
#     root's) stops at once: root's hugepage files, in use, are no reason to
#     wait, and nobody's runtime folder goes;
#  3. once root's daemon is killed with SIGKILL, its hugepage files stay
#     (until another primary's EAL init clears them): a daemon of nobody on P
#     neither tries to remove them nor says it cannot;
#  4. root's next daemon on P removes its own files and leaves a file of
#     nobody's that bears P's hugepage name.
# As another user than root, only step 1 runs, then the script exits 77.
#
#   daemon_files_two_users.sh SHMCHAND
# (run it under need_hugepages.sh). Run as root, it runs itself as nobody
# for nobody's daemons: daemon_files_two_users.sh SHMCHAND nonroot STEP [P]
set -eu

# The user a root run starts the other daemons as.
NONROOT_USER=nobody
# A daemon that waits for nobody (SIGTERM, pollers, EAL cleanup) stops well
# within this; one that waits for another user's files waits 2 s.
QUICK_STOP_MS=1500
# Lines of a daemon that looked at a file it does not own.
FOREIGN_LINES="still in use|cannot remove"

SHMT_NAME=daemon_files_two_users
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
if [ "${2:-}" = nonroot ]; then
	SHMT_DAEMON=$1
	step=$3
	prefix=${4:-}
else
	shmt_args "SHMCHAND" "$@"
	step=root
fi

# EAL's runtime base in the test's own folder, for a user other than root:
# $XDG_RUNTIME_DIR may be another user's, and what is left in it is what
# the daemon left.
own_runtime_base() {
	shmt_tmpdir
	export XDG_RUNTIME_DIR=$SHMT_TMPDIR/run
	mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
}

# Fail if the runtime base holds anything.
expect_runtime_base_empty() {
	local left
	left=$(find "$XDG_RUNTIME_DIR" -mindepth 1 -printf "%p (%u) " | head -c 600)
	[ -z "$left" ] || shmt_fail "$1: the daemon of uid $(id -u) left $left"
}

# Fail if the daemon's log says it looked at another user's files.
expect_no_foreign_lines() {
	if grep -Eq "$FOREIGN_LINES" "$SHMT_LOG"; then
		shmt_fail "$1: the daemon of uid $(id -u) looked at another user's files:" \
			"$(grep -E "$FOREIGN_LINES" "$SHMT_LOG" | head -n 3)"
	fi
}

# stop_daemon, failing if it took QUICK_STOP_MS or more.
stop_quickly() {
	local start_ns took_ms
	start_ns=$(date +%s%N)
	stop_daemon
	took_ms=$((($(date +%s%N) - start_ns) / 1000000))
	[ "$took_ms" -lt "$QUICK_STOP_MS" ] ||
		shmt_fail "$1: the daemon of uid $(id -u) took $took_ms ms to stop"
	stopped_in_ms=$took_ms
}

# 1. The default prefix: a daemon without --file-prefix (lib.sh always
# gives one), on a socket of its own, without hugepages.
step_default() {
	local sock log pid polls rc=0 want
	own_runtime_base
	sock=$SHMT_TMPDIR/default.sock
	log=$SHMT_TMPDIR/default.log
	want="file prefix shmchand-$(id -u),"
	shmt_spawn "$SHMT_DAEMON" -s "$sock" --hugepages off >"$log" 2>&1
	pid=$SHMT_SPAWNED
	polls=$((SHMT_SOCKET_WAIT_S * SHMT_POLLS_PER_S))
	until grep -q " ready: " "$log"; do
		shmt_running "$pid" || { cat "$log" >&2; shmt_fail "default: the daemon exited"; }
		[ "$polls" -gt 0 ] || shmt_fail "default: the daemon did not start"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
	grep -qF "$want" "$log" || { cat "$log" >&2; shmt_fail "default: no '$want' in its log"; }
	kill -TERM "$pid"
	shmt_wait_gone "$pid" "$SHMT_STOP_WAIT_S" || shmt_fail "default: the daemon did not stop"
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] || shmt_fail "default: the daemon exited with status $rc"
	expect_runtime_base_empty "default"
	shmt_log "uid $(id -u): default prefix shmchand-$(id -u), nothing left"
}

# A daemon of a user other than root on prefix $prefix, started and
# stopped: it stops quickly, says nothing about another user's files and
# leaves nothing.
step_beside() {
	own_runtime_base
	start_daemon -- --file-prefix "$prefix"
	SHMT_PREFIX=
	stop_quickly "$1"
	expect_no_foreign_lines "$1"
	expect_runtime_base_empty "$1"
	shmt_log "$1: uid $(id -u) on root's prefix $prefix: stopped in $stopped_in_ms ms, nothing left"
}

case $step in
default)
	step_default
	exit 0
	;;
beside | after_kill)
	step_beside "$step"
	exit 0
	;;
root) ;;
*)
	echo "$0: unknown step '$step'" >&2
	exit 2
	;;
esac

if [ "$(id -u)" != 0 ]; then
	step_default
	shmt_log "SKIP: the steps of two users need root (the default step passed)"
	exit 77
fi
if ! uid=$(id -u "$NONROOT_USER" 2>/dev/null) || ! gid=$(id -g "$NONROOT_USER"); then
	echo "SKIP: no user $NONROOT_USER to run as" >&2
	exit 77
fi
as_user=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --)
for f in "$SHMT_DAEMON" "$0"; do
	"${as_user[@]}" test -r "$f" || {
		echo "SKIP: user $NONROOT_USER cannot read $f" >&2
		exit 77
	}
done
mnt=$(awk '$3 == "hugetlbfs" {print $2; exit}' /proc/mounts)
[ -n "$mnt" ] || shmt_fail "no hugetlbfs mount (run under need_hugepages.sh)"
# nobody's part, in a folder of its own in /tmp: EAL's runtime folder of a
# long prefix in a deeper one would not leave room for its socket's name in
# sun_path (EAL then binds it at a name cut short, and leaves that).
as_nobody() {
	local rc=0
	shmt_run_bounded 60 env TMPDIR=/tmp "${as_user[@]}" "$0" "$SHMT_DAEMON" nonroot "$@" ||
		rc=$?
	[ "$rc" = 0 ] || shmt_fail "uid $uid, step $1: failed (status $rc)"
}

# 1.
as_nobody default

# 2.
start_daemon --hugepages on
prefix=$SHMT_PREFIX
root_files=$(find "$mnt" -maxdepth 1 -name "${prefix}map_*" | sort)
[ -n "$root_files" ] || shmt_fail "root's daemon has no hugepage file in $mnt"
as_nobody beside "$prefix"
[ "$(find "$mnt" -maxdepth 1 -name "${prefix}map_*" | sort)" = "$root_files" ] ||
	shmt_fail "beside: root's hugepage files changed while nobody's daemon ran"

# 3.
kill -KILL "$SHMT_PID"
shmt_wait_gone "$SHMT_PID" "$SHMT_STOP_WAIT_S" || shmt_fail "root's daemon survived SIGKILL"
{ wait "$SHMT_PID"; } 2>/dev/null || true
SHMT_PID=
# Whether they stay is not nobody's daemon's to say: unlocked now, the EAL
# init of any other primary on the mount (another test's) may clear them.
as_nobody after_kill "$prefix"

# 4. A file of nobody's with P's hugepage name: not root's daemon's to remove.
# Made once its EAL init is done: that init clears every hugepage file no
# process holds from the mount (EAL's --huge-unlink=existing), whoever's.
start_daemon --hugepages on -- --file-prefix "$prefix"
SHMT_PREFIX=$prefix
foreign=$mnt/${prefix}map_999999
# In use, as EAL marks a hugepage file it maps: another primary's EAL init
# (another test's) then leaves it alone; the daemon, not its owner, must too.
# Made and locked under a name no EAL init clears (none with "map_"), then
# renamed: under its hugepage name it is never unlocked, or another test's
# EAL init could remove it in between.
staged=$mnt/${prefix}foreign.$$
exec 4<>"$staged"
flock -s 4
chown "$uid:$gid" "$staged"
mv "$staged" "$foreign"
# stop_daemon removes what is left (nobody's file too) once it noted it.
stop_daemon
exec 4<&-
[ "$SHMT_DPDK_LEFT" = "$foreign" ] ||
	shmt_fail "root's daemon left '$SHMT_DPDK_LEFT', expected only $foreign, a file of uid $uid"
shmt_log "root's daemon: its own files removed, uid $uid's left alone"
