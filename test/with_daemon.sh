#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Run one test program against a daemon of its own:
#
#   with_daemon.sh [--daemon-killed] DAEMON_BIN TEST_BIN [daemon args] -- [test args]
#
# Starts DAEMON_BIN with a private socket and file prefix (test/lib.sh), runs
# TEST_BIN with every @SOCK@ in its arguments replaced by the socket path and
# SHMT_SOCK and SHMT_DAEMON_PID in its environment, then stops the daemon and
# asserts that it exited 0 and removed its socket. With --daemon-killed the
# test kills the daemon with SIGKILL itself, and that is what is asserted.
# The test's exit status is kept, 77 (skip) included; the daemon is checked
# only after a test that passed.
set -eu

# Bound of the test program, below meson's timeout (test/meson.build) so the
# daemon is still stopped and cleaned up here; then SIGKILL after lib.sh's
# grace (SHMT_KILL_AFTER_S).
SHMT_TEST_TIMEOUT_S=${SHMT_TEST_TIMEOUT_S:-25}

daemon_killed=0
if [ "${1:-}" = --daemon-killed ]; then
	daemon_killed=1
	shift
fi
if [ $# -lt 2 ]; then
	echo "usage: $0 [--daemon-killed] DAEMON_BIN TEST_BIN [daemon args] -- [test args]" >&2
	exit 2
fi
SHMT_DAEMON=$1
test_bin=$2
shift 2
SHMT_NAME=$(basename "$test_bin")
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"

daemon_args=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	daemon_args+=("$1")
	shift
done
if [ $# -gt 0 ]; then
	shift
fi

start_daemon "${daemon_args[@]}"

test_args=()
for arg in "$@"; do
	test_args+=("${arg//@SOCK@/$SHMT_SOCK}")
done
export SHMT_DAEMON_PID=$SHMT_PID
rc=0
# In the script's process group, and killed with the script: nothing of the
# test outlives a meson timeout.
shmt_run_bounded "$SHMT_TEST_TIMEOUT_S" "$test_bin" "${test_args[@]}" || rc=$?
case $rc in
124) shmt_log "test did not end within $SHMT_TEST_TIMEOUT_S s: stopped" ;;
137) shmt_log "test killed by SIGKILL (timeout without exit, or out of memory)" ;;
esac

if [ "$rc" != 0 ]; then
	if [ "$rc" != 77 ]; then
		state="still running"
		shmt_running "$SHMT_PID" || state="gone"
		shmt_log "test exited with status $rc; daemon $SHMT_PID is $state"
		shmt_dump_log
	fi
	# The EXIT trap stops the daemon and removes the folder.
	exit "$rc"
fi
if [ "$daemon_killed" = 1 ]; then
	reap_killed_daemon
else
	stop_daemon
fi
