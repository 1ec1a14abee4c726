# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Errors raise OSError subclasses carrying the errno: the daemon's status,
a daemon gone (stopped, or killed with SIGKILL mid-call), a timeout."""

import errno
import os
import signal
import threading
import time

import pytest

import shmchan
from conftest import connect_short

NOT_A_TYPE = shmchan.constants.msg_type(0x7777, 0x0001)
# Far above the answer of a live daemon, far below a hang.
DEATH_NOTICED_S = 8


def test_unknown_type_is_enotsup(client):
    with pytest.raises(OSError) as err:
        client.call(NOT_A_TYPE)
    assert err.value.errno == errno.ENOTSUP
    assert client.ping2(bytes(64)) == bytes(64), "the client stays usable"


def test_short_payload_is_emsgsize(client):
    with pytest.raises(OSError) as err:
        client.call(shmchan.GR_PING2, b"x" * 10)
    assert err.value.errno == errno.EMSGSIZE


@pytest.mark.daemon_args("--no-shm")
def test_shm_forced_without_channel_is_enotsup(own_daemon):
    with pytest.raises(OSError) as err:
        shmchan.connect(own_daemon.sock, transport="shm")
    assert err.value.errno == errno.ENOTSUP
    assert "shm" in str(err.value)
    with shmchan.connect(own_daemon.sock) as c:
        assert c.transport == "socket"
        assert c.transport_reason


@pytest.mark.parametrize("transport", ["shm", "socket"])
def test_stopped_daemon_gives_connection_errors(own_daemon, transport):
    c = shmchan.connect(own_daemon.sock, transport=transport)
    c.ping()
    own_daemon.stop()
    with pytest.raises(ConnectionError):
        c.ping()
    with pytest.raises(ConnectionError):
        c.ping()
    c.close()


@pytest.mark.parametrize("transport", ["shm", "socket"])
def test_kill_9_mid_call_raises(own_daemon, transport):
    c = shmchan.connect(own_daemon.sock, transport=transport)
    calls = 0
    killer = threading.Timer(0.3, os.kill, (own_daemon.pid, signal.SIGKILL))
    start = time.monotonic()
    killer.start()
    try:
        with pytest.raises(ConnectionError):
            while time.monotonic() - start < DEATH_NOTICED_S * 2:
                c.ping2(bytes(64))
                calls += 1
    finally:
        killer.cancel()
    assert time.monotonic() - start < DEATH_NOTICED_S
    assert calls > 0
    own_daemon.proc.wait(timeout=10)
    assert own_daemon.proc.returncode == -signal.SIGKILL
    c.close()


@pytest.mark.parametrize("transport", ["shm", "socket"])
def test_stopped_daemon_times_out_and_client_stays_usable(own_daemon, transport):
    c = connect_short(own_daemon.sock, 0.5, transport)
    own_daemon.pause()
    try:
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            c.ping2(bytes(64))
        assert time.monotonic() - start >= 0.4
    finally:
        os.kill(own_daemon.pid, signal.SIGCONT)
    assert c.ping2(b"\1" * 64) == b"\1" * 64
    c.close()
