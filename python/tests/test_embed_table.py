# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""examples/embed_table, a DPDK application serving its own module with
libgr_api_server, driven from Python with Client.call() and the module's
type values: set, get, their errors and the change events, on each
transport, with the socket side on the application's loop and on the
library's thread."""

import errno
import os
import struct

import pytest

import shmchan
from conftest import Daemon

# examples/embed_table.h
MODULE = 0x4554
SET = (MODULE << 16) | 0x0001
GET = (MODULE << 16) | 0x0002
EVENT_CHANGED = (MODULE << 16) | 0x1001
KEY_LEN = 32
TICKS = b"ticks"
# struct embed_table_set_req and embed_table_event_changed: the key, then a
# u64 value on its own 8 bytes.
ENTRY = struct.Struct(f"={KEY_LEN}sQ")
# Events read at most while looking for one: the timer's come every 100 ms.
EVENTS_MAX = 64


def entry(key, value=0):
    return ENTRY.pack(key, value)


@pytest.fixture(scope="module", params=["own", "thread"])
def app(request, tmp_path_factory):
    binary = os.environ.get("SHMCHAN_EMBED_TABLE")
    if not binary:
        pytest.skip("SHMCHAN_EMBED_TABLE (examples/embed_table) is not set")
    mode = request.param
    own_args = ("--library-thread",) if mode == "thread" else ()
    d = Daemon(binary, tmp_path_factory.mktemp(f"embed_{mode}"), f"embed_{mode}", own_args=own_args)
    yield d
    d.stop()


@pytest.fixture(params=["shm", "socket"])
def client(request, app):
    with shmchan.connect(app.sock, transport=request.param) as c:
        assert c.transport == request.param
        yield c


def test_set_then_get(client):
    key = f"py-{client.transport}".encode()
    with pytest.raises(OSError) as e:
        client.call(GET, entry(key)[:KEY_LEN])
    assert e.value.errno == errno.ENOENT
    assert client.call(SET, entry(key, 1234)) == b""
    assert struct.unpack("=Q", client.call(GET, entry(key)[:KEY_LEN])) == (1234,)


def test_bad_requests(client):
    with pytest.raises(OSError) as e:
        client.call(SET, entry(b"", 1))
    assert e.value.errno == errno.EINVAL
    # Shorter than the request's struct: the library refuses it before the
    # handler.
    with pytest.raises(OSError) as e:
        client.call(SET, b"short")
    assert e.value.errno == errno.EMSGSIZE


def test_change_events(client):
    key = f"ev-{client.transport}".encode()
    client.subscribe(EVENT_CHANGED)
    client.call(SET, entry(key, 99))
    ticks = []
    seen = False
    for _ in range(EVENTS_MAX):
        ev_type, payload = client.next_event()
        assert ev_type == EVENT_CHANGED
        name, value = ENTRY.unpack(payload)
        name = name.rstrip(b"\0")
        if name == TICKS:
            ticks.append(value)
        else:
            assert (name, value) == (key, 99)
            seen = True
        if seen and len(ticks) >= 2:
            break
    assert seen and len(ticks) >= 2
    # The application's own timer counts up, under the handler lock.
    assert ticks == sorted(ticks) and len(set(ticks)) == len(ticks)
