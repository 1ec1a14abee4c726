# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Without the library: "import shmchan" and its constants and events work;
the first name that needs the library (connect, Client, AsyncClient) raises
ImportError naming SHMCHAN_LIBRARY, what was tried, ldconfig and
LD_LIBRARY_PATH."""

import pytest

MISSING = "/nonexistent/libgr_api_client.so"
MISSING_DIR = "/nonexistent-shmchan-lib"
# Run without the library: constants and events, then the names that need it.
PROGRAM = r"""
import shmchan, shmchan.constants
assert shmchan.GR_PING2 == shmchan.constants.GR_PING2 == 0xcafe1988
assert shmchan.Event(shmchan.GR_SHM_EVENT_LOST, bytes(8)).count == 0
for name in ("connect", "Client", "AsyncClient", "connect_async"):
    try:
        getattr(shmchan, name)
    except ImportError as err:
        print(err)
    else:
        print("LOADED")
try:
    from shmchan import connect
except ImportError:
    print("from-import: ImportError")
"""


def assert_says_what_to_do(message, tried):
    for words in (tried, "SHMCHAN_LIBRARY", "ldconfig", "LD_LIBRARY_PATH", "cannot open"):
        assert words in message, f"no {words!r} in: {message}"


def test_missing_library_named_by_shmchan_library(run_python):
    lines = run_python(PROGRAM, {"SHMCHAN_LIBRARY": MISSING, "LD_LIBRARY_PATH": None})
    assert len(lines) == 5, lines
    for line in lines[:4]:
        assert_says_what_to_do(line, f"SHMCHAN_LIBRARY={MISSING}")
    assert lines[4] == "from-import: ImportError"


def test_missing_library_on_the_loader_path(run_python):
    lines = run_python(PROGRAM, {"SHMCHAN_LIBRARY": None, "LD_LIBRARY_PATH": MISSING_DIR})
    if lines[0] == "LOADED":
        pytest.skip("libgr_api_client.so.0 is installed on the loader's path here")
    assert_says_what_to_do(lines[0], "libgr_api_client.so.0 through the dynamic loader")
    assert f"LD_LIBRARY_PATH={MISSING_DIR}" in lines[0], lines[0]
