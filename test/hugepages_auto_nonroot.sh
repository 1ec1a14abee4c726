#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A user who is not root starts the daemon with its defaults (--hugepages
# auto): it runs, serves a memfd channel, says in its log whether it uses
# hugepages and, if not, why (most often: the hugetlbfs mount is root's and
# not writable by this user), and leaves nothing of its file prefix at exit.
# Run as root, the script runs itself again as user nobody (setpriv); it
# skips (77) if there is no such user or it cannot reach the binaries.
#
#   hugepages_auto_nonroot.sh SHMCHAND PING2_PERF
set -eu

# The user a root run becomes.
NONROOT_USER=nobody

if [ "$(id -u)" = 0 ]; then
	if ! uid=$(id -u "$NONROOT_USER" 2>/dev/null) || ! gid=$(id -g "$NONROOT_USER"); then
		echo "SKIP: no user $NONROOT_USER to run as" >&2
		exit 77
	fi
	as_user=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --)
	for f in "$@"; do
		if ! "${as_user[@]}" test -x "$f"; then
			echo "SKIP: user $NONROOT_USER cannot run $f" >&2
			exit 77
		fi
	done
	"${as_user[@]}" test -r "$0" || {
		echo "SKIP: user $NONROOT_USER cannot read $0" >&2
		exit 77
	}
	# Its own script file, with no EXIT trap of lib.sh yet: exec keeps the
	# process, so whoever started the script still has it.
	exec "${as_user[@]}" "$0" "$@"
fi

SHMT_NAME=hugepages_auto_nonroot
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND PING2_PERF" "$@"
perf=$2

# EAL's runtime folder in the test's own folder: $XDG_RUNTIME_DIR may be
# another user's (a root run), and /tmp/dpdk, which EAL would make 0700,
# would keep out every other user after this one.
shmt_tmpdir
export XDG_RUNTIME_DIR=$SHMT_TMPDIR/run
mkdir -m 0700 "$XDG_RUNTIME_DIR"

# What the daemon must say, judged as it does.
free=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
mnt=$(awk '$3 == "hugetlbfs" {print $2; exit}' /proc/mounts)
if [ -z "$mnt" ]; then
	want="hugepages auto: no hugetlbfs mount; running with --no-huge"
	huge=no
elif [ ! -w "$mnt" ]; then
	want="hugepages auto: hugetlbfs $mnt is not writable by uid $(id -u)"
	huge=no
elif [ "$free" -le "$SHMT_HUGEPAGES_MIN_FREE" ]; then
	want="free 2 MB hugepages (need more than $SHMT_HUGEPAGES_MIN_FREE); running with --no-huge"
	huge=no
else
	want="hugepages auto: $free free 2 MB hugepages in $mnt, using them"
	huge=yes
fi

start_daemon
grep -qF "$want" "$SHMT_LOG" || shmt_fail "the daemon of uid $(id -u) does not say '$want'"
grep -q "ready: .* hugepages $huge," "$SHMT_LOG" ||
	shmt_fail "the daemon of uid $(id -u) does not run with hugepages $huge"
shmt_log "uid $(id -u), hugepages $huge: $want"
out=$(shmt_run_bounded 20 "$perf" -s "$SHMT_SOCK" -t shm -n 1000 -q --json) ||
	shmt_fail "ping2_perf -t shm failed against the daemon of uid $(id -u)"
echo "$out" | grep -q '"transport": *"shm"' || shmt_fail "ping2_perf: not on a channel: $out"
stop_daemon
[ -z "$SHMT_DPDK_LEFT" ] || shmt_fail "the daemon of uid $(id -u) left $SHMT_DPDK_LEFT"
