# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Events: Client.events() subscribes and yields what the daemon publishes."""

import pytest

import shmchan

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
    with shmchan.connect(daemon.sock, timeout=0.3) as sub:
        events = sub.events([shmchan.GR_SHM_EVENT_TEST])
        with pytest.raises(TimeoutError):
            next(events)
