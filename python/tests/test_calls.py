# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Every call of shmchan.Client against a live daemon, on both transports."""

import os
import select
import struct

import pytest

import shmchan

PIPELINED = 10000
# struct gr_log_entry: name[GR_LOG_NAME_LEN], uint32_t level.
LOG_ENTRY = struct.Struct(f"{shmchan.GR_LOG_NAME_LEN}sI")


def pattern(i):
    return bytes((i + k) & 0xFF for k in range(shmchan.GR_PING2_LEN))


def test_connect_transport_and_reason(daemon):
    with shmchan.connect(daemon.sock) as c:
        assert c.transport == "shm"
        assert c.transport_reason == ""
    with shmchan.connect(daemon.sock, transport="socket") as c:
        assert c.transport == "socket"
        assert c.transport_reason != ""


def test_ping_and_ping2(client):
    client.ping()
    for i in range(100):
        assert client.ping2(pattern(i)) == pattern(i)
    with pytest.raises(ValueError):
        client.ping2(b"short")


def test_call_returns_the_payload(client):
    assert client.call(shmchan.GR_PING2, pattern(7)) == pattern(7)
    assert client.call(shmchan.GR_PING) == b""
    payload = os.urandom(100000)
    assert client.call(shmchan.GR_SHM_ECHO, payload) == payload


def test_pipelining_10k_requests(client):
    ids = [client.send(shmchan.GR_PING2, pattern(i)) for i in range(PIPELINED)]
    assert len(set(ids)) == PIPELINED
    # Taken in reverse order: the library keeps the others for later.
    for i in reversed(range(PIPELINED)):
        assert client.recv(ids[i]) == pattern(i)


def test_send_more_flush_and_try_recv(client):
    ids = [client.send_more(shmchan.GR_PING2, pattern(i)) for i in range(64)]
    client.flush()
    answers = {}
    while len(answers) < len(ids):
        ready = client.poll_prepare()
        if not ready:
            readable, _, _ = select.select([client.fileno()], [], [], 10)
            assert readable, "no wake-up within 10 s"
        client.poll_done()
        for i, rid in enumerate(ids):
            if rid not in answers:
                got = client.try_recv(rid)
                if got is not None:
                    answers[rid] = got
    assert [answers[rid] for rid in ids] == [pattern(i) for i in range(len(ids))]
    assert client.try_recv(client.send(shmchan.GR_PING)) in (None, b"")


def test_fileno_is_stable(client):
    fd = client.fileno()
    assert fd >= 0 and client.fileno() == fd


def test_stream_log_levels(client):
    entries = [LOG_ENTRY.unpack(e) for e in client.stream(shmchan.GR_LOG_LEVEL_LIST, b"\0")]
    assert entries, "no log type listed"
    names = [name.rstrip(b"\0").decode() for name, _ in entries]
    assert any(n.startswith("shmchan") or n.startswith("user") for n in names), names
    for _, level in entries:
        assert shmchan.GR_LOG_LEVEL_MIN <= level <= shmchan.GR_LOG_LEVEL_MAX


def test_stream_channel_list_sees_this_client(daemon):
    with shmchan.connect(daemon.sock, transport="shm") as c:
        infos = list(c.stream(shmchan.GR_SHM_CHANNEL_LIST))
        assert len(infos) >= 1
        # An abandoned stream is drained: the next call gets its own answer.
        it = c.stream(shmchan.GR_SHM_CHANNEL_LIST)
        next(it)
        it.close()
        assert c.ping2(pattern(3)) == pattern(3)
        assert not c.poll_prepare()
        c.poll_done()


def test_closed_client_refuses_calls(daemon):
    c = shmchan.connect(daemon.sock)
    c.close()
    c.close()
    with pytest.raises(ValueError):
        c.ping()


def test_connect_without_daemon_gives_the_reason(tmp_path):
    path = str(tmp_path / "none.sock")
    with pytest.raises(FileNotFoundError) as err:
        shmchan.connect(path)
    assert path in str(err.value)


def test_bad_transport_name(daemon):
    with pytest.raises(ValueError):
        shmchan.connect(daemon.sock, transport="pipe")


def test_send_recv_into_refuses_a_short_buffer(client):
    # The library's one-call request (gr_api_client_send_recv_into()), which
    # call() and ping2() use, with a buffer shorter than the answer.
    import ctypes
    import errno

    from shmchan import _lib

    buf = ctypes.create_string_buffer(shmchan.GR_PING2_LEN)
    payload = bytes(range(100))
    n = _lib.lib.gr_api_client_send_recv_into(
        client._handle, shmchan.GR_SHM_ECHO, len(payload), payload, buf, len(buf)
    )
    assert n == -1 and ctypes.get_errno() == errno.EMSGSIZE
    n = _lib.lib.gr_api_client_send_recv_into(
        client._handle, shmchan.GR_SHM_ECHO, 64, payload, buf, len(buf)
    )
    assert n == 64 and buf.raw == payload[:64]


def test_connect_options(daemon):
    import math

    # struct gr_shm_client_info starts with pid, uid, gid, transport.
    client_info = struct.Struct("=iIII")
    with shmchan.connect(daemon.sock, spin_us=0, version="pytest", timeout=math.inf) as c:
        assert c.ping2(pattern(9)) == pattern(9)
        clients = [client_info.unpack_from(i) for i in c.stream(shmchan.GR_SHM_CLIENT_LIST)]
        me = (os.getpid(), os.getuid(), os.getgid(), shmchan.GR_SHM_TRANSPORT_SHM)
        assert me in clients
    for bad in (0, -1):
        with pytest.raises(ValueError):
            shmchan.connect(daemon.sock, timeout=bad)


def test_dropped_client_is_disconnected(daemon):
    import gc
    import time

    # struct gr_shm_client_info starts with the client's pid.
    def mine(c):
        return sum(
            1
            for info in c.stream(shmchan.GR_SHM_CLIENT_LIST)
            if struct.unpack_from("=i", info)[0] == os.getpid()
        )

    with shmchan.connect(daemon.sock) as watcher:
        before = mine(watcher)
        dropped = shmchan.connect(daemon.sock)
        assert mine(watcher) == before + 1
        del dropped
        gc.collect()
        deadline = time.monotonic() + 10
        while mine(watcher) != before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mine(watcher) == before
