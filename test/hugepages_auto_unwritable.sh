#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# --hugepages auto runs without hugepages, instead of failing EAL init, for a
# user who may not create files in the hugetlbfs mount (root's, mode 0755,
# as Debian mounts /dev/hugepages). As root, the daemon runs as uid 65534;
# it must serve, log why it left hugepages out, and say hugepages off.
# Skipped (77) unless run as root with setpriv, with a hugetlbfs mount that
# uid 65534 may not write.
#
#   hugepages_auto_unwritable.sh DAEMON_BIN SHMCHANCTL_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN SHMCHANCTL_BIN" "$@"
daemon=$(realpath "$SHMT_DAEMON")
ctl=$2
OTHER_UID=65534
LOG_WAIT_S=3
CTL_TIMEOUT_S=10

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP: needs root and setpriv to run the daemon as another uid" >&2
	exit 77
fi
as_other=(setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups)
mount_dir=$(awk '$3 == "hugetlbfs" { print $2; exit }' /proc/mounts)
if [ -z "$mount_dir" ] || "${as_other[@]}" test -w "$mount_dir"; then
	echo "SKIP: no hugetlbfs mount that uid $OTHER_UID may not write" >&2
	exit 77
fi

# The daemon as the other uid: a folder it may write its socket and EAL's
# runtime folder in ($XDG_RUNTIME_DIR/dpdk for a user other than root),
# removed with everything else by lib.sh's EXIT trap.
SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX")
chmod 0777 "$SHMT_TMPDIR"
cat >"$SHMT_TMPDIR/daemon-as-other" <<SH
#!/bin/sh
exec ${as_other[*]} env XDG_RUNTIME_DIR="$SHMT_TMPDIR" "$daemon" "\$@"
SH
chmod 0755 "$SHMT_TMPDIR/daemon-as-other"
SHMT_DAEMON=$SHMT_TMPDIR/daemon-as-other

start_daemon --hugepages auto
shmt_log_expect "auto" "$LOG_WAIT_S" "this user may not create files in $mount_dir" ||
	shmt_fail "no reason logged"
out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$SHMT_SOCK" -j info) ||
	shmt_fail "shmchanctl info: $out"
echo "$out" | python3 -c '
import json, sys
info = json.load(sys.stdin)
assert info["hugepages"] is False and info["backings"] == ["memfd"], info
' || shmt_fail "the daemon does not say hugepages off, memfd only: $out"
echo "served without hugepages, reason logged: ok"
stop_daemon
