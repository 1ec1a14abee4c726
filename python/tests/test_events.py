# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Events: Client.events() subscribes and yields what the daemon publishes,
each an Event: the tuple (ev_type, payload), with the payload of the known
types decoded into named fields."""

import ctypes
import os
import struct

import pytest

import shmchan
from conftest import connect_short

PUBLISHED = 20


@pytest.mark.parametrize("transport", ["shm", "socket"])
def test_events_receive_published_test_events(daemon, transport):
    with shmchan.connect(daemon.sock, transport=transport, timeout=10) as sub, shmchan.connect(
        daemon.sock
    ) as pub:
        events = sub.events(shmchan.GR_SHM_EVENT_TEST)
        for _ in range(PUBLISHED):
            pub.call(shmchan.GR_SHM_EVENT_PUBLISH)
        got = [next(events) for _ in range(PUBLISHED)]
        assert got == [(shmchan.GR_SHM_EVENT_TEST, b"")] * PUBLISHED
        assert sub.try_event() is None
        # Responses and events share the handle.
        pub.call(shmchan.GR_SHM_EVENT_PUBLISH)
        assert sub.ping2(b"\5" * 64) == b"\5" * 64
        assert next(events) == (shmchan.GR_SHM_EVENT_TEST, b"")


def test_events_of_other_types_are_not_sent(daemon):
    with shmchan.connect(daemon.sock, timeout=10) as sub, shmchan.connect(daemon.sock) as pub:
        sub.subscribe(shmchan.GR_SHM_EVENT_LOST)
        pub.call(shmchan.GR_SHM_EVENT_PUBLISH)
        sub.ping()
        assert sub.try_event() is None
        sub.unsubscribe()


def test_events_time_out_when_none_comes(daemon):
    with connect_short(daemon.sock, 0.3) as sub:
        events = sub.events([shmchan.GR_SHM_EVENT_TEST])
        with pytest.raises(TimeoutError):
            next(events)


@pytest.mark.parametrize("transport", ["shm", "socket"])
def test_channel_events_come_decoded(daemon, transport):
    # A channel attached then detached: each event's fields by name, the raw
    # payload beside them, and the tuple of old.
    with shmchan.connect(daemon.sock, transport=transport, timeout=10) as sub:
        sub.subscribe(shmchan.GR_SHM_EVENT_CHANNEL_ATTACHED)
        sub.subscribe(shmchan.GR_SHM_EVENT_CHANNEL_DETACHED)
        with shmchan.connect(daemon.sock, transport="shm") as other:
            other.ping()
        attached, detached = sub.next_event(), sub.next_event()
    assert isinstance(attached, shmchan.Event)
    assert attached.type == "channel-attached"
    assert attached.fields == {"pid": os.getpid(), "backing": "memfd", "name": attached.name}
    assert attached.pid == os.getpid() and attached.backing == "memfd" and attached.name
    ev_type, payload = attached
    assert ev_type == attached.ev_type == shmchan.GR_SHM_EVENT_CHANNEL_ATTACHED
    assert payload == attached.payload
    assert len(payload) == ctypes.sizeof(shmchan.events.EventChannel)
    assert detached.type == "channel-detached"
    assert (detached.pid, detached.reason, detached.name) == (os.getpid(), "lease", attached.name)


def test_event_decoding_of_each_type():
    lost = shmchan.Event(shmchan.GR_SHM_EVENT_LOST, struct.pack("=Q", 7))
    assert (lost.type, lost.count, lost.fields) == ("lost", 7, {"count": 7})
    test = shmchan.Event(shmchan.GR_SHM_EVENT_TEST, b"free bytes")
    assert (test.type, test.fields, test.payload) == ("test", {}, b"free bytes")
    name = b"shmchan-x".ljust(shmchan.GR_SHM_NAME_LEN, b"\0")
    detached = shmchan.Event(
        shmchan.GR_SHM_EVENT_CHANNEL_DETACHED,
        struct.pack("=iI", 42, shmchan.GR_SHM_DETACH_SLOW) + name,
    )
    assert detached.fields == {"pid": 42, "reason": "slow", "name": "shmchan-x"}
    odd = shmchan.Event(
        shmchan.GR_SHM_EVENT_CHANNEL_ATTACHED, struct.pack("=iI", 1, 0x80) + name
    )
    assert odd.backing == "unknown", "a backing the package does not know"
    # A payload too short for its type's struct, and a type of another
    # module, stay undecoded; the raw bytes are there.
    short = shmchan.Event(shmchan.GR_SHM_EVENT_LOST, b"\1\2")
    assert (short.fields, short.payload) == ({}, b"\1\2")
    other = shmchan.Event(0x12340001, b"xyz")
    assert (other.type, other.fields, tuple(other)) == ("0x12340001", {}, (0x12340001, b"xyz"))
    with pytest.raises(AttributeError):
        other.pid
