# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""asyncio client: many requests in flight on one Client, no thread per
request. The loop waits on Client.fileno() with loop.add_reader() and frames
each wait with poll_prepare()/poll_done(), as docs/event-loop.md describes;
answers are taken with the try calls and matched to their futures by id."""

import asyncio
import collections
import ctypes
import errno
import functools

from . import constants as C
from ._lib import EventSubscribeReq, fast
from .client import _EVENT_HEADER_LEN, Client, _error, connect
from .events import Event, EventLost

# The bound of the events not yet taken, the C handle's own
# (GR_API_CLIENT_EVENTS_MAX, GR_API_CLIENT_EVENTS_MAX_BYTES in
# gr_api_client.h): the loop moves each event out of the handle as it comes,
# so this queue is the one that fills.
EVENTS_MAX = 1024
EVENTS_MAX_BYTES = 4 << 20
_COUNT_MAX = (1 << 64) - 1


async def connect_async(path=None, transport="auto", timeout=None, spin_us=None, version=None):
    """connect() in a worker thread (it may wait for the daemon), then an
    AsyncClient on the running loop. Same arguments as connect()."""
    loop = asyncio.get_running_loop()
    client = await loop.run_in_executor(
        None, functools.partial(connect, path, transport, timeout, spin_us, version)
    )
    return AsyncClient(client)


class AsyncClient:
    """An asyncio front of a Client, bound to the running loop.

    await call(type, payload) sends at once (batched: one daemon wake-up per
    loop turn) and resolves when the answer comes; any number may be in
    flight. The Client must not be used directly meanwhile. A send may wait
    (blocking the loop) only while the request ring is full.
    """

    def __init__(self, client, loop=None):
        if not isinstance(client, Client):
            raise TypeError("AsyncClient wraps a shmchan.Client")
        self.client = client
        self._loop = loop or asyncio.get_running_loop()
        self._fd = client.fileno()
        self._pending = {}  # request id -> future, in send order
        self._events = None  # deque of events once subscribed
        self._event_bytes = 0  # their headers and payloads, as the C handle counts
        self._events_lost = 0  # dropped past the bound, told with the next that fits
        self._event_waiter = None  # the future next_event() awaits
        # What ended the subscription (the connection's error): raised by
        # every later next_event().
        self._failed = None
        self._reading = False
        self._armed = False
        self._scheduled = False
        # The last scan stopped at its first unanswered id and took nothing:
        # look at every id next time (answers may come out of order).
        self._full_scan = False

    @property
    def transport(self):
        """"shm" or "socket"."""
        return self.client.transport

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        self.close()

    def close(self):
        """Stop watching the descriptor, fail what is in flight, disconnect."""
        self._unwatch()
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(ConnectionAbortedError(errno.ECONNABORTED, "client closed"))
        self._pending.clear()
        self.client.close()

    def _watch(self):
        if not self._reading:
            self._loop.add_reader(self._fd, self._pump)
            self._reading = True

    def _unwatch(self):
        if self._reading:
            self._loop.remove_reader(self._fd)
            self._reading = False

    def _schedule(self):
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._pump)

    async def call(self, req_type, payload=b""):
        """Send a request and return the payload of its answer.

        Raises what Client.call() raises. Cancelling the awaiting task drops
        the answer when it comes. Not for stream requests, which have more
        than one answer: use Client.stream() in a worker thread.
        """
        rid = self.client.send_more(req_type, payload)
        fut = self._loop.create_future()
        self._pending[rid] = fut
        self._schedule()
        return await fut

    async def ping2(self, data):
        """GR_PING2: returns the 64 bytes echoed."""
        if len(data) != C.GR_PING2_LEN:
            raise ValueError(f"ping2 takes {C.GR_PING2_LEN} bytes, not {len(data)}")
        return await self.call(C.GR_PING2, data)

    async def subscribe(self, ev_type=C.GR_EVENT_ALL, suppress_self=False):
        """Subscribe to events; take them with next_event()."""
        req = EventSubscribeReq(suppress_self_events=suppress_self, ev_type=ev_type)
        if self._events is None:
            self._events = collections.deque()
            self._event_bytes = 0
            self._events_lost = 0
            self._failed = None
        await self.call(C.GR_EVENT_SUBSCRIBE, bytes(req))

    async def next_event(self):
        """The next event (an Event: (ev_type, payload), decoded), once
        subscribed.

        Once the connection failed (the daemon gone, say), this and every
        later call raise its error (a ConnectionError)."""
        if self._events is None:
            if self._failed is not None:
                raise self._failed
            raise RuntimeError("not subscribed")
        self._schedule()
        while not self._events:
            if self._failed is not None:
                # The events taken before the failure came first.
                self._events = None
                raise self._failed
            self._event_waiter = self._loop.create_future()
            try:
                await self._event_waiter
            finally:
                self._event_waiter = None
        ev = self._events.popleft()
        self._event_bytes -= _EVENT_HEADER_LEN + len(ev.payload)
        # Room again: the count of the dropped ones is told.
        if self._events_lost > 0:
            self._push_lost()
        return ev

    def _push_lost(self):
        lost = Event(C.GR_SHM_EVENT_LOST, bytes(EventLost(count=self._events_lost)))
        self._events.append(lost)
        self._event_bytes += _EVENT_HEADER_LEN + len(lost.payload)
        self._events_lost = 0

    def _wake_event_waiter(self):
        if self._event_waiter is not None and not self._event_waiter.done():
            self._event_waiter.set_result(None)

    def _queue_event(self, ev):
        # As the C handle does: past the bound an event is dropped and
        # counted (a GR_SHM_EVENT_LOST for its count, the daemon's own
        # drops), and the next event that fits comes after one
        # GR_SHM_EVENT_LOST with the total, so that the events taken and
        # the counts of the GR_SHM_EVENT_LOST add up to every event sent.
        size = _EVENT_HEADER_LEN + len(ev.payload)
        if len(self._events) >= EVENTS_MAX or self._event_bytes + size > EVENTS_MAX_BYTES:
            count = 1
            if ev.ev_type == C.GR_SHM_EVENT_LOST and len(ev.payload) >= ctypes.sizeof(EventLost):
                count = EventLost.from_buffer_copy(ev.payload).count
            # Saturated, not wrapped, as the C handle's count.
            self._events_lost = min(self._events_lost + count, _COUNT_MAX)
            return
        if self._events_lost > 0:
            self._push_lost()
        self._events.append(ev)
        self._event_bytes += size
        self._wake_event_waiter()

    def _fail_all(self, exc):
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(exc)
        self._pending.clear()
        if self._events is not None and self._failed is None:
            self._failed = exc
            self._wake_event_waiter()

    def _pump(self):
        self._scheduled = False
        client = self.client
        if client._handle is None:
            return
        try:
            if self._armed:
                self._armed = False
                client.poll_done()
            self._drain()
            if not self._pending and self._events is None:
                self._unwatch()
                return
            self._watch()
            if client.poll_prepare():
                self._schedule()
            else:
                self._armed = True
        except OSError as exc:
            self._unwatch()
            self._fail_all(exc)

    def _drain(self):
        client = self.client
        handle, rx = client._handle, client._rx
        uint32, rx_len = ctypes.c_uint32, ctypes.c_size_t(C.GR_API_MAX_MSG_LEN)
        full = self._full_scan
        taken = 0
        for rid in list(self._pending):
            n = fast.gr_api_client_try_recv_into(handle, uint32(rid), rx, rx_len)
            if n < 0 and ctypes.get_errno() == errno.EAGAIN:
                if full:
                    continue
                # In order in the common case: the later ids wait too.
                break
            taken += 1
            fut = self._pending.pop(rid)
            if fut.done():
                continue  # cancelled: the answer is dropped
            if n < 0:
                fut.set_exception(_error(f"request {rid}"))
            else:
                fut.set_result(client._rx_view[:n].tobytes())
        self._full_scan = taken == 0 and not full
        if self._events is not None:
            while True:
                ev = client.try_event()
                if ev is None:
                    break
                self._queue_event(ev)

