#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# --hugepages auto chooses hugepages when enough are free; when EAL then
# cannot get them (another DPDK process took them in between), the daemon
# starts again in the same process with --hugepages off, says why, and
# serves a memfd channel. The shortage is made for certain: EAL gets a
# hugetlbfs mount of its own (--huge-dir) limited to less than the daemon
# asks for, while the machine's count of free hugepages says plenty. With
# --hugepages on, the same shortage fails the start, as it must. Needs
# root (the mount): 77 otherwise.
#
#   hugepages_auto_taken.sh SHMCHAND PING2_PERF
set -eu

SHMT_NAME=hugepages_auto_taken
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND PING2_PERF" "$@"
perf=$2

# Less than the daemon's default -m 128 takes.
MOUNT_SIZE=4M
RETRY_SAYS="starting again with --hugepages off"

[ "$(id -u)" = 0 ] || {
	shmt_log "SKIP: mounting a hugetlbfs of the test's own needs root"
	exit 77
}
shmt_hugepages_usable || {
	shmt_log "SKIP: $SHMT_NO_HUGEPAGES_WHY (auto would not try hugepages)"
	exit 77
}
shmt_tmpdir
mnt=$SHMT_TMPDIR/huge
mkdir "$mnt"
mount -t hugetlbfs -o pagesize=2M,size=$MOUNT_SIZE nodev "$mnt" || {
	shmt_log "SKIP: cannot mount hugetlbfs on $mnt"
	exit 77
}
# The mount goes before lib.sh's EXIT trap removes the test's folder (it
# cannot remove a mount point): chained, with the script's status kept
# (set +e: under set -e the status's own "(exit 1)" would end the trap).
# shellcheck disable=SC2154
trap 'rc=$?; set +e; umount "$mnt" 2>/dev/null; (exit "$rc"); shmt_on_exit' EXIT

start_daemon -- --huge-dir "$mnt"
pid=$SHMT_PID
grep -qF "$RETRY_SAYS" "$SHMT_LOG" || shmt_fail "the daemon does not say '$RETRY_SAYS'"
grep -q "ready: .* hugepages no," "$SHMT_LOG" ||
	shmt_fail "the daemon started again does not run without hugepages"
out=$(shmt_run_bounded 20 "$perf" -s "$SHMT_SOCK" -t shm -n 1000 -q --json) ||
	shmt_fail "ping2_perf -t shm failed against the daemon started again"
echo "$out" | grep -q '"transport": *"shm"' || shmt_fail "ping2_perf: not on a channel: $out"
# The same process: whoever started it stops it by its PID.
[ "$SHMT_PID" = "$pid" ] || shmt_fail "the daemon's PID changed"
stop_daemon
[ -z "$SHMT_DPDK_LEFT" ] || shmt_fail "the daemon started again left $SHMT_DPDK_LEFT"

# --hugepages on: no second start.
log=$SHMT_TMPDIR/on.log
rc=0
shmt_run_bounded 30 "$SHMT_DAEMON" -s "$SHMT_TMPDIR/on.sock" --hugepages on -- \
	--file-prefix "shmt-$SHMT_NAME-$$-on" --huge-dir "$mnt" >"$log" 2>&1 || rc=$?
[ "$rc" = 1 ] || shmt_fail "--hugepages on with too few hugepages exited $rc, not 1: $(cat "$log")"
! grep -qF "$RETRY_SAYS" "$log" || shmt_fail "--hugepages on started again without hugepages"
shmt_log "auto started again without hugepages; on failed as it must"
