# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""The build-tree command of docs/python.md works as written: its
PYTHONPATH and SHMCHAN_LIBRARY, taken from the page with the build folder
this test runs from in place of build/, import the package with the C
module _shmchan_fast when the build has it (a path without its build folder
would silently fall back to ctypes) and load the build's library."""

import os
import re
import shlex

import pytest

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(SOURCE_ROOT, "docs", "python.md")
# The folder the page's commands say the build is in.
PAGE_BUILD = "build/"
PROGRAM = "import shmchan, shmchan.client as c; shmchan.connect; print(c._cfast is not None)"


def page_command():
    """The variables of the page's sh block that sets PYTHONPATH."""
    with open(PAGE, encoding="utf-8") as f:
        blocks = re.findall(r"```sh\n(.*?)```", f.read(), re.S)
    for block in blocks:
        words = shlex.split(block.replace("\\\n", " "))
        env = dict(w.split("=", 1) for w in words if re.match(r"^[A-Z_]+=", w))
        if "PYTHONPATH" in env:
            return env
    pytest.fail(f"{PAGE} has no sh block that sets PYTHONPATH")


def test_build_tree_command_uses_the_fast_module(run_python):
    library = os.environ.get("SHMCHAN_LIBRARY")
    if not library:
        pytest.skip("SHMCHAN_LIBRARY (the build's library) is not set")
    build = os.path.dirname(os.path.dirname(library))

    def here(path):
        if path.startswith(PAGE_BUILD):
            return os.path.join(build, path[len(PAGE_BUILD) :])
        return os.path.join(SOURCE_ROOT, path)

    env = page_command()
    library_here = here(env["SHMCHAN_LIBRARY"])
    assert os.path.samefile(library_here, library), env["SHMCHAN_LIBRARY"]
    lines = run_python(
        PROGRAM,
        {
            "PYTHONPATH": ":".join(here(p) for p in env["PYTHONPATH"].split(":")),
            "SHMCHAN_LIBRARY": library_here,
        },
    )
    expect_fast = os.environ.get("SHMCHAN_EXPECT_FAST") == "1"
    assert lines == [str(expect_fast)], (
        f"with PYTHONPATH={env['PYTHONPATH']} the package "
        f"{'does not use' if expect_fast else 'uses'} _shmchan_fast"
    )
