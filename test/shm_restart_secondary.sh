#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A daemon killed with SIGKILL while a DPDK secondary is attached to it:
#  1. the secondary's next call fails with ECONNRESET at once;
#  2. while that secondary lives, a new daemon on the same file prefix
#     fails to start, and says in plain words that an old secondary still
#     uses the prefix (naming its pid);
#  3. once the secondary has exited (and the killed daemon's files are
#     cleaned up), a new daemon on that prefix starts and serves a memfd
#     client.
#
#   shm_restart_secondary.sh SHMCHAND SHM_RESTART_SECONDARY
# (under need_hugepages.sh: the daemons run with --hugepages on)
set -eu

SHMT_NAME=shm_restart_secondary
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND SHM_RESTART_SECONDARY" "$@"
client=$2

# Bounds of each wait: the secondary's EAL init and attach take about a
# second; everything else answers in milliseconds.
ATTACH_WAIT_S=10
RESET_WAIT_S=5
# A daemon that fails EAL init exits within milliseconds; one that starts
# would run until stopped.
PROBE_TIMEOUT_S=5

sec_pid=
sec_out=

fail() {
	if [ -n "$sec_out" ] && [ -s "$sec_out" ]; then
		echo "---- secondary output ----" >&2
		cat "$sec_out" >&2
	fi
	if [ -n "$sec_pid" ]; then
		kill -KILL "$sec_pid" 2>/dev/null || true
		wait "$sec_pid" 2>/dev/null || true
	fi
	shmt_fail "$@"
}

# Wait up to $2 seconds for the secondary to print a line starting with $1.
wait_secondary_says() {
	local polls=$(($2 * SHMT_POLLS_PER_S))
	until grep -q "^$1" "$sec_out"; do
		shmt_running "$sec_pid" || fail "the secondary ended before it said '$1'"
		[ "$polls" -gt 0 ] || fail "the secondary did not say '$1' within $2 s"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
}

start_daemon --hugepages on
prefix=$SHMT_PREFIX
killed_pid=$SHMT_PID

# The secondary reads its orders from a fifo that this script holds open.
mkfifo "$SHMT_TMPDIR/secondary.in"
sec_out=$SHMT_TMPDIR/secondary.out
"${shmt_die_with_parent[@]}" "$client" hold "$SHMT_SOCK" <"$SHMT_TMPDIR/secondary.in" \
	>"$sec_out" 2>&1 &
sec_pid=$!
exec 3>"$SHMT_TMPDIR/secondary.in"
wait_secondary_says attached "$ATTACH_WAIT_S"

kill -KILL "$killed_pid"
shmt_wait_gone "$killed_pid" "$SHMT_STOP_WAIT_S" || fail "daemon $killed_pid survived SIGKILL"
echo killed >&3
wait_secondary_says reset "$RESET_WAIT_S"
shmt_log "daemon killed: $(grep '^reset' "$sec_out")"

# The old secondary still maps the prefix's hugepage and EAL files.
probe_log=$SHMT_TMPDIR/probe.log
probe_rc=0
timeout "$PROBE_TIMEOUT_S" "$SHMT_DAEMON" -s "$SHMT_TMPDIR/probe.sock" --hugepages on \
	-- --file-prefix "$prefix" >"$probe_log" 2>&1 || probe_rc=$?
if [ "$probe_rc" = 0 ] || [ "$probe_rc" = 124 ]; then
	fail "a new daemon started on file prefix $prefix while secondary $sec_pid lives" \
		"(status $probe_rc): $(cat "$probe_log")"
fi
want="another shmchand, or a DPDK secondary of an old one, still uses file prefix $prefix;"
want="$want stop it or pick another --file-prefix"
grep -qF "$want" "$probe_log" ||
	fail "the failed daemon does not say that an old secondary uses the prefix: $(cat "$probe_log")"
grep -q "live DPDK secondaries:.*\b$sec_pid\b" "$probe_log" ||
	fail "the failed daemon does not name secondary $sec_pid: $(cat "$probe_log")"
shmt_log "new daemon refused while the secondary lives: ok"

# The secondary exits once its stdin closes.
exec 3>&-
sec_rc=0
wait "$sec_pid" || sec_rc=$?
sec_pid=
[ "$sec_rc" = 0 ] || fail "the secondary exited with status $sec_rc"

# Clean up after the killed daemon, then start anew on its prefix (the last
# --file-prefix wins, for EAL and for shmchand).
reap_killed_daemon
start_daemon --hugepages on -- --file-prefix "$prefix"
# Clean up (stop_daemon, or the EXIT trap) the prefix the daemon uses.
SHMT_PREFIX=$prefix
"$client" memfd "$SHMT_SOCK" "$prefix" || fail "the new daemon on $prefix does not serve"
stop_daemon
