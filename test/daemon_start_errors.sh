#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# What shmchand says when it cannot start, before EAL starts (so that it
# creates nothing of its file prefix), each with what to do:
#   a socket path in a folder that does not exist: the folder is named;
#   a socket path under a file: said not to be a folder;
#   a folder this user may not write (the default /run/shmchand.sock for a
#     user other than root): a hint to choose a path with -s (as root, that
#     part runs as nobody, and is left out, saying so, when nobody cannot run
#     the daemon);
#   an EAL option given before --: a hint that EAL options go after --;
#   an unknown option, and an option without its value: named;
#   a file prefix so long that the multi-process socket of a DPDK secondary
#     would not fit in a Unix socket address (EAL would cut it without a
#     word): how much to shorten it.
# Each exits 1 and leaves no EAL runtime folder of its prefix.
#
#   daemon_start_errors.sh DAEMON_BIN
set -eu

NONROOT_USER=nobody
RUN_TIMEOUT_S=10

SHMT_NAME=daemon_start_errors
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN" "$@"
shmt_tmpdir
prefix=shmt-$SHMT_NAME-$$

# expect_refused WANT [RUN_AS...] -- DAEMON_ARGS...: exit status 1, a line
# holding WANT on stderr, and nothing of the prefix left.
expect_refused() {
	local want=$1 run=() out rc=0
	shift
	while [ "$1" != -- ]; do
		run+=("$1")
		shift
	done
	shift
	out=$(shmt_run_bounded "$RUN_TIMEOUT_S" "${run[@]}" "$SHMT_DAEMON" "$@" 2>&1) || rc=$?
	[ "$rc" = 1 ] || shmt_fail "shmchand $*: exit status $rc, expected 1: $out"
	grep -qF -- "$want" <<<"$out" || shmt_fail "shmchand $*: no '$want' in: $out"
	[ -z "$(shmt_dpdk_files "$prefix")" ] ||
		shmt_fail "shmchand $*: left $(shmt_dpdk_files "$prefix")"
	echo "shmchand $*: $(head -n1 <<<"$out")"
}

expect_refused "$SHMT_TMPDIR/none does not exist; create it, or choose another socket path with -s" \
	-- -s "$SHMT_TMPDIR/none/x.sock" -- --file-prefix "$prefix"
touch "$SHMT_TMPDIR/file"
expect_refused "$SHMT_TMPDIR/file is not a folder; choose another socket path with -s" \
	-- -s "$SHMT_TMPDIR/file/x.sock" -- --file-prefix "$prefix"
expect_refused "--file-prefix is an EAL option: put EAL options after --" \
	-- -s "$SHMT_TMPDIR/x.sock" --file-prefix "$prefix"
expect_refused "-l is an EAL option: put EAL options after --" \
	-- -s "$SHMT_TMPDIR/x.sock" -l 0 -- --file-prefix "$prefix"
expect_refused "unknown option '--no-such-option'" \
	-- -s "$SHMT_TMPDIR/x.sock" --no-such-option -- --file-prefix "$prefix"
expect_refused "--pollers needs a value" -- -s "$SHMT_TMPDIR/x.sock" --pollers
# The longest prefix shmchand takes (63 characters): as root its runtime
# folder is /var/run/dpdk/PREFIX, and a secondary's socket there takes 112
# bytes; another user's is longer still. Hugepages on: secondaries may
# attach (EAL does not start: nothing is reserved).
long_prefix=$prefix$(printf 'x%.0s' $(seq $((63 - ${#prefix}))))
expect_refused "EAL's multi-process socket" \
	-- -s "$SHMT_TMPDIR/x.sock" --hugepages on -- --file-prefix "$long_prefix"
[ -z "$(shmt_dpdk_files "$long_prefix")" ] || shmt_fail "left $(shmt_dpdk_files "$long_prefix")"

# A folder this user may not write, and the default path's hint.
as_user=()
if [ "$(id -u)" = 0 ]; then
	if uid=$(id -u "$NONROOT_USER" 2>/dev/null) && gid=$(id -g "$NONROOT_USER") &&
		setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$SHMT_DAEMON" --version \
			>/dev/null 2>&1; then
		as_user=(setpriv --reuid="$uid" --regid="$gid" --clear-groups)
	else
		echo "left out: the unwritable folder, which needs a user other than root who can" \
			"run $SHMT_DAEMON ($NONROOT_USER cannot)"
		exit 0
	fi
fi
mkdir -p "$SHMT_TMPDIR/ro" && chmod 0555 "$SHMT_TMPDIR/ro"
chmod o+x "$SHMT_TMPDIR"
expect_refused "folder $SHMT_TMPDIR/ro is not writable by uid" "${as_user[@]}" \
	-- -s "$SHMT_TMPDIR/ro/x.sock" -- --file-prefix "$prefix"
if [ -w /run ] && [ ${#as_user[@]} = 0 ]; then
	echo "left out: the default path's hint (/run is writable by $(id -un))"
else
	expect_refused "as a user other than root, choose a socket path with -s PATH" \
		"${as_user[@]}" -- -- --file-prefix "$prefix"
fi
echo "daemon_start_errors: ok"
