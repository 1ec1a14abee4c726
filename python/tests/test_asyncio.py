# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""AsyncClient: many calls in flight on one loop, no thread per request."""

import asyncio
import os
import signal
import threading

import pytest

import shmchan

CONCURRENT = 1000
# Generous: 1000 calls take milliseconds on an idle machine.
BOUND_S = 60


def pattern(i):
    return bytes((i * 7 + k) & 0xFF for k in range(shmchan.GR_PING2_LEN))


@pytest.mark.parametrize("transport", ["shm", "socket"])
def test_1000_concurrent_calls(daemon, transport):
    async def run():
        threads = threading.active_count()
        async with await shmchan.connect_async(daemon.sock, transport=transport) as c:
            assert c.transport == transport
            answers = await asyncio.wait_for(
                asyncio.gather(*(c.ping2(pattern(i)) for i in range(CONCURRENT))), BOUND_S
            )
            assert answers == [pattern(i) for i in range(CONCURRENT)]
            # Errors reach their own caller only.
            results = await asyncio.gather(
                c.call(shmchan.GR_PING2, b"short"), c.ping2(pattern(1)), return_exceptions=True
            )
            assert isinstance(results[0], OSError) and results[0].errno == 90
            assert results[1] == pattern(1)
            # connect_async's worker thread is the only one added.
            assert threading.active_count() <= threads + 1
            assert not c._pending

    asyncio.run(run())


def test_cancelled_call_drops_its_answer(daemon):
    async def run():
        async with await shmchan.connect_async(daemon.sock) as c:
            task = asyncio.ensure_future(c.call(shmchan.GR_PING2, pattern(2)))
            await asyncio.sleep(0)
            task.cancel()
            assert await c.ping2(pattern(3)) == pattern(3)
            for _ in range(100):
                if not c._pending:
                    break
                await asyncio.sleep(0.01)
            assert not c._pending

    asyncio.run(run())


@pytest.mark.parametrize("transport", ["shm", "socket"])
def test_async_events(daemon, transport):
    async def run():
        async with await shmchan.connect_async(daemon.sock, transport=transport) as c:
            await c.subscribe(shmchan.GR_SHM_EVENT_TEST)
            with shmchan.connect(daemon.sock) as pub:
                pub.call(shmchan.GR_SHM_EVENT_PUBLISH)
            ev = await asyncio.wait_for(c.next_event(), BOUND_S)
            assert ev == (shmchan.GR_SHM_EVENT_TEST, b"")
            assert isinstance(ev, shmchan.Event) and ev.type == "test"

    asyncio.run(run())


@pytest.mark.parametrize("transport", ["shm", "socket"])
def test_kill_9_fails_calls_in_flight(own_daemon, transport):
    async def run():
        async with await shmchan.connect_async(own_daemon.sock, transport=transport) as c:
            await c.ping2(pattern(0))
            own_daemon.pause()
            calls = [asyncio.ensure_future(c.ping2(pattern(i))) for i in range(100)]
            await asyncio.sleep(0.1)
            os.kill(own_daemon.pid, signal.SIGKILL)
            results = await asyncio.wait_for(
                asyncio.gather(*calls, return_exceptions=True), BOUND_S
            )
            assert all(isinstance(r, ConnectionError) for r in results), results

    asyncio.run(run())
    own_daemon.proc.wait(timeout=10)


@pytest.mark.parametrize("transport", ["shm", "socket"])
def test_kill_9_fails_every_later_next_event(own_daemon, transport):
    # The subscriber waiting when the daemon dies gets the connection's
    # error, and so does every later next_event(): the subscription did not
    # end by the program's choice.
    async def run():
        async with await shmchan.connect_async(own_daemon.sock, transport=transport) as c:
            await c.subscribe(shmchan.GR_SHM_EVENT_TEST)
            waiting = asyncio.ensure_future(c.next_event())
            await asyncio.sleep(0.1)
            os.kill(own_daemon.pid, signal.SIGKILL)
            with pytest.raises(ConnectionError):
                await asyncio.wait_for(waiting, BOUND_S)
            for _ in range(2):
                with pytest.raises(ConnectionError):
                    await asyncio.wait_for(c.next_event(), BOUND_S)

    asyncio.run(run())
    own_daemon.proc.wait(timeout=10)


def test_answers_behind_an_unanswered_id_are_taken(daemon):
    # A scan stops at the first id without an answer; answers stashed behind
    # it must still be found (answers may come out of order).
    never_sent = 0xFFFFFFF0

    async def run():
        async with await shmchan.connect_async(daemon.sock) as c:
            c._pending[never_sent] = asyncio.get_running_loop().create_future()
            answers = await asyncio.wait_for(
                asyncio.gather(*(c.ping2(pattern(i)) for i in range(10))), 10
            )
            assert answers == [pattern(i) for i in range(10)]
            del c._pending[never_sent]

    asyncio.run(run())
