# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""An application's own request and event types, registered in Python
(shmchan.register_request(), shmchan.register_event()) and used against
examples/embed_table: requests made of their structs' fields, responses and
events decoded, and the C library told each response's size."""

import ctypes
import errno
import os
import subprocess
import sys

import pytest

import shmchan
from conftest import Daemon

MODULE = 0x4554  # examples/embed_table.h
KEY_LEN = 32


class SetReq(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char * KEY_LEN), ("value", ctypes.c_uint64)]


class GetReq(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char * KEY_LEN)]


class GetResp(ctypes.Structure):
    _fields_ = [("value", ctypes.c_uint64)]


class Changed(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char * KEY_LEN), ("value", ctypes.c_uint64)]


SET = shmchan.msg_type(MODULE, 1)
GET = shmchan.msg_type(MODULE, 2)
EVENT_CHANGED = shmchan.msg_type(MODULE, 0x1001)
# Events read at most while looking for one: the timer's come every 100 ms.
EVENTS_MAX = 64

shmchan.register_request(SET, "EMBED_TABLE_SET", request=SetReq)
shmchan.register_request(GET, "EMBED_TABLE_GET", request=GetReq, response=GetResp)
shmchan.register_event(EVENT_CHANGED, "embed-table-changed", payload=Changed)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    binary = os.environ.get("SHMCHAN_EMBED_TABLE")
    if not binary:
        pytest.skip("SHMCHAN_EMBED_TABLE (examples/embed_table) is not set")
    d = Daemon(binary, tmp_path_factory.mktemp("messages"), "messages", own_args=())
    yield d
    d.stop()


@pytest.fixture(params=["shm", "socket"])
def client(request, app):
    with shmchan.connect(app.sock, transport=request.param) as c:
        yield c


def test_request_from_fields_and_decoded_response(client):
    key = f"msg-{client.transport}".encode()
    assert client.request(SET, key=key, value=77) is None
    resp = client.request(GET, key=key)
    assert isinstance(resp, GetResp)
    assert resp.value == 77
    # A struct instance works as the payload too.
    assert client.request(GET, GetReq(key=key)).value == 77


def test_request_errors_keep_the_status(client):
    with pytest.raises(OSError) as e:
        client.request(GET, key=b"never-set")
    assert e.value.errno == errno.ENOENT


def test_registered_event_is_named_and_decoded(client):
    key = f"ev-msg-{client.transport}".encode()
    client.subscribe(EVENT_CHANGED)
    client.request(SET, key=key, value=5)
    for _ in range(EVENTS_MAX):
        ev = client.next_event()
        assert ev.type == "embed-table-changed"
        if ev.key == key.decode():
            assert ev.value == 5
            assert ev.fields == {"key": key.decode(), "value": 5}
            break
    else:
        pytest.fail("the change event never came")
    client.unsubscribe()


def test_registration_is_checked():
    with pytest.raises(ValueError):
        shmchan.register_request(shmchan.GR_PING, "MINE")  # the main module's
    with pytest.raises(ValueError):
        shmchan.register_request(shmchan.msg_type(shmchan.GR_SHM_MODULE, 0x99), "MINE")
    with pytest.raises(ValueError):
        shmchan.register_request(SET, "ANOTHER_NAME", request=SetReq)
    with pytest.raises(ValueError):
        shmchan.register_request(shmchan.msg_type(MODULE, 9), "")
    with pytest.raises(TypeError):
        shmchan.register_request(shmchan.msg_type(MODULE, 9), "X", request=bytes)
    with pytest.raises(ValueError):
        shmchan.register_event(EVENT_CHANGED, "another-name", payload=Changed)
    # The same registration again is no error.
    assert shmchan.register_request(SET, "EMBED_TABLE_SET", request=SetReq).name == "EMBED_TABLE_SET"


def test_unregistered_request_is_refused(client):
    with pytest.raises(ValueError):
        client.request(shmchan.msg_type(MODULE, 0x77))
    with pytest.raises(TypeError):
        client.request(SET, SetReq(), key=b"x")


def test_registered_names_reach_the_c_library():
    from shmchan import _lib

    assert _lib.lib.gr_api_message_name(SET) == b"EMBED_TABLE_SET"
    assert _lib.lib.gr_api_message_name(GET) == b"EMBED_TABLE_GET"


def test_short_response_is_refused(app):
    """Registered in a fresh interpreter, before the library loads, with a
    response struct longer than what the server answers: EMSGSIZE, as
    Grout's gr_api_client_recv() answers a C client."""
    code = f"""
import ctypes, errno, shmchan
class Big(ctypes.Structure):
    _fields_ = [("value", ctypes.c_uint64), ("more", ctypes.c_uint64)]
class GetReq(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char * {KEY_LEN})]
GET = shmchan.msg_type({MODULE}, 2)
shmchan.register_request(GET, "EMBED_TABLE_GET", request=GetReq, response=Big)
with shmchan.connect({app.sock!r}) as c:
    c.call(shmchan.msg_type({MODULE}, 1), b"k".ljust({KEY_LEN}, b"\\0") + (3).to_bytes(8, "little"))
    try:
        c.request(GET, key=b"k")
    except OSError as e:
        assert e.errno == errno.EMSGSIZE, e
    else:
        raise AssertionError("a short response passed")
    from shmchan import _lib
    assert _lib.lib.gr_api_message_name(GET) == b"EMBED_TABLE_GET"
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
