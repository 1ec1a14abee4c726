# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""The Python client against a hostile server (test/fake_ctl_daemon.py on
cue): an abandoned stream that never ends costs one timeout, and the
asyncio client keeps the C handle's bound on events and its lost-event
count."""

import asyncio
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

import shmchan
EVENTS_MAX = 1024  # GR_API_CLIENT_EVENTS_MAX, the C handle's bound

FAKE = pathlib.Path(__file__).resolve().parents[2] / "test" / "fake_ctl_daemon.py"
# The fake says "ready" once it listens: a Python start, on a loaded host.
READY_S = 30
# The calls' timeout here.
TIMEOUT_S = 1.0
# The fake ends an endless stream after 20 s (its ENDLESS_MAX_S): a client
# that drains until the stream's end takes that long, one that honours its
# timeout about TIMEOUT_S. Between the two, room for a loaded host.
ABANDON_BOUND_S = 10
# Events the fake sends before it answers, far past the bound.
FLOOD_EVENTS = 5000
EVENT_LEN = 64
GR_LOG_LEVEL_LIST = 0xCAFE1983
GR_SHM_EVENT_SUBSCRIBE = 0x53480007
GR_SHM_EVENT_TEST = 0x53488004
GR_SHM_DAEMON_INFO = 0x53480004


@pytest.fixture
def fake(tmp_path):
    """start(*args): a fake daemon on a socket of its own, stopped by its PID."""
    procs = []

    def start(*args):
        sock = str(tmp_path / f"fake-{len(procs)}.sock")
        proc = subprocess.Popen(
            [sys.executable, str(FAKE), sock, *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        deadline = time.monotonic() + READY_S
        line = proc.stdout.readline()
        assert line.strip() == "ready" and time.monotonic() < deadline, line
        return sock

    yield start
    for proc in procs:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=READY_S)
        proc.stdout.close()


def test_abandoned_endless_stream_returns_within_timeout(fake):
    sock = fake("--endless", hex(GR_LOG_LEVEL_LIST), "--endless-interval", "0.01")
    with shmchan.connect(sock, transport="socket", timeout=TIMEOUT_S) as c:
        it = c.stream(GR_LOG_LEVEL_LIST, b"\0")
        assert len(next(it)) > 0
        start = time.monotonic()
        it.close()  # what leaving a for loop early does
        elapsed = time.monotonic() - start
    assert elapsed < ABANDON_BOUND_S, f"leaving the stream took {elapsed:.1f} s"


def test_asyncio_events_bounded_and_counted(fake):
    sock = fake(
        "--status",
        f"{GR_SHM_EVENT_SUBSCRIBE:#x}=0",
        "--status",
        f"{GR_SHM_DAEMON_INFO:#x}=0",
        "--events-before",
        hex(GR_SHM_DAEMON_INFO),
        str(FLOOD_EVENTS),
        str(EVENT_LEN),
    )

    async def run():
        async with await shmchan.connect_async(sock, transport="socket") as c:
            await c.subscribe()
            # Every event comes before this answer, none is taken yet.
            await c.call(GR_SHM_DAEMON_INFO)
            queued = len(c._events)
            assert queued <= EVENTS_MAX + 1, f"{queued} events queued"
            kept = lost = 0
            while kept + lost < FLOOD_EVENTS:
                ev = await asyncio.wait_for(c.next_event(), 30)
                if ev.ev_type == shmchan.GR_SHM_EVENT_LOST:
                    lost += ev.count
                else:
                    assert ev.ev_type == GR_SHM_EVENT_TEST
                    kept += 1
            return kept, lost

    kept, lost = asyncio.run(run())
    assert kept <= EVENTS_MAX
    assert lost == FLOOD_EVENTS - kept
