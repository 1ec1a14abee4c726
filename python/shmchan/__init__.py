# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Python client of shmchand, over the C client library libgr_api_client.

    import shmchan
    with shmchan.connect("/run/shmchand.sock") as c:
        print(c.transport)              # "shm" or "socket"
        c.ping2(bytes(64))

See docs/python.md. The library is loaded from SHMCHAN_LIBRARY (a path to
the .so) when it is set, else through the dynamic loader's path, the first
time a name that needs it is used (connect, Client, AsyncClient, ...): the
constants (shmchan.GR_PING2, shmchan.constants) and the event decoding
(shmchan.Event) work without it. A library that cannot be loaded raises
ImportError there, saying where it looked and how to point at it.
"""

from .constants import *  # noqa: F401,F403 (the request and event types)
from .events import Event
from .messages import Message, register_event, register_request

# The names that need the library, and the module of each: imported when
# first used (PEP 562), so that "import shmchan" works without the library.
_NEEDS_LIBRARY = {
    "AsyncClient": "aio",
    "connect_async": "aio",
    "Client": "client",
    "connect": "client",
}

__all__ = [
    "AsyncClient",
    "Client",
    "Event",
    "Message",
    "connect",
    "connect_async",
    "msg_type",
    "register_event",
    "register_request",
]


def __getattr__(name):
    module = _NEEDS_LIBRARY.get(name)
    if module is None:
        raise AttributeError(f"module 'shmchan' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_NEEDS_LIBRARY))
