#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The systemd unit meson generates: its socket in RuntimeDirectory=shmchand,
# its options from the environment file (SHMCHAND_OPTS), Restart=on-failure,
# and systemd-analyze verify accepts it (with the daemon of this build in
# ExecStart, since the installed path need not exist here). Skipped (77)
# without systemd-analyze.
#
#   systemd_unit.sh DAEMON_BIN UNIT_FILE
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN UNIT_FILE" "$@"
unit=$2

grep -qx 'RuntimeDirectory=shmchand' "$unit" || shmt_fail "no RuntimeDirectory=shmchand"
grep -qx 'Restart=on-failure' "$unit" || shmt_fail "no Restart=on-failure"
grep -Eqx 'EnvironmentFile=-/.*/default/shmchand' "$unit" || shmt_fail "no EnvironmentFile"
# shellcheck disable=SC2016 # $SHMCHAND_OPTS is the unit's, literally
grep -Eqx 'ExecStart=/.*/shmchand -s /run/shmchand/shmchand.sock \$SHMCHAND_OPTS' "$unit" ||
	shmt_fail "ExecStart does not serve /run/shmchand/shmchand.sock with SHMCHAND_OPTS"
echo "unit contents: ok"

if ! command -v systemd-analyze >/dev/null; then
	echo "SKIP: no systemd-analyze" >&2
	exit 77
fi
SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX")
daemon=$(realpath "$SHMT_DAEMON")
sed -E "s|^ExecStart=[^ ]+|ExecStart=$daemon|" "$unit" >"$SHMT_TMPDIR/shmchand.service"
# --man=no: the man pages of Documentation= are not installed here.
out=$(systemd-analyze verify --man=no "$SHMT_TMPDIR/shmchand.service" 2>&1) ||
	shmt_fail "systemd-analyze verify: $out"
[ -z "$out" ] || shmt_fail "systemd-analyze verify warns: $out"
echo "systemd-analyze verify: ok"
