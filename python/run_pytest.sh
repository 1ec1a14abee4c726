#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors

# Run pytest over the Python package's tests for meson.
# usage: run_pytest.sh PYTHON TESTS_DIR [pytest args]
# Exit status: pytest's, except 77 (skip) when PYTHON has no pytest, and 1
# when pytest collected no test (its status 5): a suite that tests nothing
# must not pass.
set -u
python=$1
tests=$2
shift 2

# pytest's exit status when it collected no test.
PYTEST_NO_TESTS=5
# A test still running after this long prints every thread's stack, so that
# a hang says where before meson's timeout (python/meson.build) ends it.
PYTEST_STACKS_AFTER_S=120

if ! "$python" -c 'import pytest' 2>/dev/null; then
	echo "run_pytest: SKIP: $python has no pytest (scripts/deps.sh installs python3-pytest)" >&2
	exit 77
fi
# Where the daemons' DPDK runtime folders go (tests/conftest.py), named
# pyt-NAME-PID after the pytest process.
if [ "$(id -u)" = 0 ]; then
	dpdk_runtime=/var/run/dpdk
else
	dpdk_runtime=${XDG_RUNTIME_DIR:-/tmp}/dpdk
fi
pytest_pid=
# pytest's temporary folders (the daemons' sockets and logs), removed after;
# and the runtime folders of daemons that a crash of pytest left (they die
# with it, by PR_SET_PDEATHSIG, without the fixtures' clean-up).
basetemp=$(mktemp -d "${TMPDIR:-/tmp}/shmchan-pytest.XXXXXX") || exit 1
trap 'rm -rf "$basetemp"; [ -z "$pytest_pid" ] || rm -rf "$dpdk_runtime"/pyt-*-"$pytest_pid"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
rc=0
"$python" -m pytest -p no:cacheprovider -o faulthandler_timeout="$PYTEST_STACKS_AFTER_S" \
	--basetemp "$basetemp/t" -v "$tests" "$@" &
pytest_pid=$!
wait "$pytest_pid" || rc=$?
if [ "$rc" = "$PYTEST_NO_TESTS" ]; then
	echo "run_pytest: no test collected in $tests" >&2
	exit 1
fi
exit "$rc"
