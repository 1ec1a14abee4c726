# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""python/examples/route_inject.py against examples/route_table: routes go
in on each transport and depth, and they are the C route_inject's routes
(the same family and seed make the same prefixes)."""

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

import shmchan
from conftest import Daemon

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import route_inject  # noqa: E402

# A small table: memory for a test, room for what it injects.
APP_ARGS = ("-r", "65536", "-R", "4096", "-p", "1000")
COUNT = 3000


@pytest.fixture
def app(tmp_path):
    binary = os.environ.get("SHMCHAN_ROUTE_TABLE")
    if not binary:
        pytest.skip("SHMCHAN_ROUTE_TABLE (examples/route_table) is not set")
    d = Daemon(binary, tmp_path, "route_inject", own_args=APP_ARGS)
    yield d
    d.stop()


def run(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = route_inject.main(list(args))
    return rc, out.getvalue()


@pytest.mark.parametrize("transport", ["shm", "socket"])
@pytest.mark.parametrize("depth", [1, 16])
def test_routes_go_in(app, transport, depth):
    rc, out = run("-s", app.sock, "-n", str(COUNT), "-d", str(depth), "-t", transport, "--json")
    assert rc == 0, out
    r = json.loads(out)
    assert (r["installed"], r["count"], r["transport"], r["depth"]) == (COUNT, COUNT, transport,
                                                                        depth)
    assert r["routes_per_s"] > 0


def test_ipv6_routes_go_in(app):
    rc, out = run("-6", "-s", app.sock, "-n", "1000", "-t", "shm", "--json")
    assert rc == 0, out
    assert json.loads(out)["installed"] == 1000


def test_same_routes_as_the_c_injector(app):
    c_inject = os.environ.get("SHMCHAN_ROUTE_INJECT")
    if not c_inject:
        pytest.skip("SHMCHAN_ROUTE_INJECT (examples/route_table) is not set")
    subprocess.run([c_inject, "-s", app.sock, "-n", "1000", "--seed", "7", "--json"], check=True,
                   capture_output=True, timeout=120)
    # Every route of the same family and seed is there already.
    with shmchan.connect(app.sock) as c:
        for i, payload in enumerate(route_inject.routes(route_inject.AF_IP4, 7, 1000)):
            with pytest.raises(FileExistsError):
                c.call(route_inject.ROUTE_ADD, payload)
        # And the next one is new to the table.
        payload = list(route_inject.routes(route_inject.AF_IP4, 7, 1001))[-1]
        assert c.call(route_inject.ROUTE_ADD, payload) == b""


def test_bad_arguments():
    with pytest.raises(SystemExit):
        route_inject.main(["-n", "0"])
