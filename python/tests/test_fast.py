# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Client.call() and ping2() through _shmchan_fast, the package's C module,
when the build has it, and through ctypes otherwise (or with
SHMCHAN_PURE_PYTHON set): the same answers and the same errors either way."""

import ctypes
import errno
import os
import subprocess
import sys

import pytest

import shmchan
from shmchan import client as client_mod

NOT_A_TYPE = shmchan.constants.msg_type(0x7777, 0x0001)


def test_the_module_built_is_the_one_used():
    # SHMCHAN_EXPECT_FAST comes from the build (python/meson.build): a module
    # built but not imported must fail here, not fall back unnoticed.
    expect = os.environ.get("SHMCHAN_EXPECT_FAST")
    if expect is None:
        pytest.skip("SHMCHAN_EXPECT_FAST not set: not run by meson")
    assert (client_mod._cfast is not None) == (expect == "1")


@pytest.mark.parametrize("transport", ["shm", "socket"])
def test_calls_and_errors(daemon, transport):
    with shmchan.connect(daemon.sock, transport=transport) as c:
        data = bytes(range(64))
        assert c.ping2(data) == data
        assert c.ping2(bytearray(data)) == data
        assert c.call(shmchan.GR_PING) == b""
        with pytest.raises(OSError) as err:
            c.call(NOT_A_TYPE)
        assert err.value.errno == errno.ENOTSUP
        assert f"request of type {NOT_A_TYPE:#x}" in str(err.value)
        with pytest.raises(ValueError):
            c.call(1 << 32)
        with pytest.raises(ValueError):
            c.call(-1)
    with pytest.raises(ValueError):
        c.ping2(bytes(64))
    with pytest.raises(ValueError):
        c.call(shmchan.GR_PING)


def test_module_refuses_bad_arguments():
    fast = client_mod._cfast
    if fast is None:
        pytest.skip("built without _shmchan_fast")
    rx = ctypes.create_string_buffer(64)
    with pytest.raises(TypeError):
        fast.call(1, 2, b"")
    with pytest.raises(ValueError):
        fast.call(0, shmchan.GR_PING, b"", rx)
    with pytest.raises(ValueError):
        fast.call(1, 1 << 32, b"", rx)
    with pytest.raises(BufferError):
        fast.call(1, shmchan.GR_PING, b"", b"not writable")
    with pytest.raises(ValueError):
        fast.bind(0)


def test_pure_python_gives_the_same(daemon):
    # The ctypes path, in a process of its own (the choice is made at import).
    script = f"""
import errno, shmchan
from shmchan import client
assert client._cfast is None
for transport in ("shm", "socket"):
    with shmchan.connect({daemon.sock!r}, transport=transport) as c:
        data = bytes(range(64))
        assert c.ping2(data) == data
        assert c.call(shmchan.GR_PING) == b""
        try:
            c.call({NOT_A_TYPE})
        except OSError as e:
            assert e.errno == errno.ENOTSUP and "request of type {NOT_A_TYPE:#x}" in str(e)
        else:
            raise AssertionError("no error for an unknown type")
print("ok")
"""
    env = dict(os.environ, SHMCHAN_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
