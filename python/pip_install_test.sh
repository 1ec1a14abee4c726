#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# pip installs the package into a fresh virtual environment, offline, as
# docs/python.md says: python3 -m venv --system-site-packages (for Debian's
# meson-python), then pip install --no-build-isolation of a copy of
# python/ (--no-index: no package index is asked for anything). Then, from
# the environment alone (no PYTHONPATH, no SHMCHAN_LIBRARY; the library
# found by the loader, here through LD_LIBRARY_PATH as after ldconfig):
# the package and its C module _shmchan_fast load from the environment's
# site-packages, the distribution's version is the project's, and
# Client.ping2() and Client.call() answer, through the C module, on the
# channel of a daemon of the test's.
#
# A library built with AddressSanitizer needs its runtime preloaded into
# Python: SHMT_PYTHON_PRELOAD names it, for the installed package's run only
# (not for pip, meson and the compiler).
#
#   pip_install_test.sh DAEMON_BIN PYTHON SOURCE_ROOT LIBGR_API_CLIENT.so VERSION
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/../test/lib.sh"
shmt_args "DAEMON_BIN PYTHON SOURCE_ROOT LIBGR_API_CLIENT.so VERSION" "$@"
python=$2
src_root=$3
library=$(realpath "$4")
version=$5
# Seconds for the venv with its pip, and for pip's build (meson setup and
# one C file): about 5 and 10 s on a quiet machine.
VENV_TIMEOUT_S=120
PIP_TIMEOUT_S=300
CALL_TIMEOUT_S=30

if ! "$python" -c 'import mesonpy, venv, ensurepip' 2>/dev/null; then
	echo "SKIP: $python lacks meson-python or venv (scripts/deps.sh installs python3-mesonpy and python3-venv)"
	exit 77
fi

SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX")
# A copy: pip and meson-python write into the folder they build.
mkdir "$SHMT_TMPDIR/src"
cp -r "$src_root/python/." "$SHMT_TMPDIR/src/python"
rm -rf "$SHMT_TMPDIR/src/python/tests"
venv=$SHMT_TMPDIR/venv
shmt_run_bounded "$VENV_TIMEOUT_S" "$python" -m venv --system-site-packages "$venv" \
	>"$SHMT_TMPDIR/venv.log" 2>&1 || shmt_fail "python3 -m venv failed: $(cat "$SHMT_TMPDIR/venv.log")"
# The machine's pip settings (an index, a cache) are not the test's.
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PYTHONPATH SHMCHAN_LIBRARY
export PIP_CONFIG_FILE=/dev/null PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
(cd "$SHMT_TMPDIR/src" && shmt_run_bounded "$PIP_TIMEOUT_S" "$venv/bin/pip" install \
	--no-build-isolation --no-index ./python) >"$SHMT_TMPDIR/pip.log" 2>&1 ||
	shmt_fail "pip install failed: $(cat "$SHMT_TMPDIR/pip.log")"
tail -n1 "$SHMT_TMPDIR/pip.log"

LD_LIBRARY_PATH=$(dirname "$library")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
start_daemon
cat >"$SHMT_TMPDIR/installed.py" <<'PY'
import importlib.metadata
import os
import sys

import _shmchan_fast
import shmchan
import shmchan.client

sock, venv, version = sys.argv[1:4]
for module in (shmchan, _shmchan_fast):
    path = os.path.realpath(module.__file__)
    assert path.startswith(os.path.realpath(venv) + "/"), f"{module.__name__} from {path}"
dist = importlib.metadata.version("shmchan")
assert dist == version, f"installed version {dist}, project version {version}"
with shmchan.connect(sock) as c:
    assert shmchan.client._cfast is _shmchan_fast, "the package does not use _shmchan_fast"
    payload = bytes(range(64))
    assert c.ping2(payload) == payload
    assert c.call(shmchan.GR_PING) == b""
    print(f"shmchan {dist} from {os.path.dirname(shmchan.__file__)}, _shmchan_fast, {c.transport}")
PY
out=$(cd "$SHMT_TMPDIR" && LD_PRELOAD=${SHMT_PYTHON_PRELOAD:-${LD_PRELOAD:-}} \
	shmt_run_bounded "$CALL_TIMEOUT_S" "$venv/bin/python" installed.py "$SHMT_SOCK" "$venv" \
	"$version" 2>&1) || shmt_fail "the installed package: $out"
echo "$out"
case $out in
*", shm") ;;
*) shmt_fail "not on the channel: $out" ;;
esac
stop_daemon
