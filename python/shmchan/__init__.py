# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Python client of shmchand, over the C client library libgr_api_client.

    import shmchan
    with shmchan.connect("/run/shmchand.sock") as c:
        print(c.transport)              # "shm" or "socket"
        c.ping2(bytes(64))

See docs/python.md. The library is loaded from SHMCHAN_LIBRARY (a path to
the .so) when it is set, else through the dynamic loader's path.
"""

from .aio import AsyncClient, connect_async
from .client import Client, connect
from .constants import *  # noqa: F401,F403 (the request and event types)

__all__ = ["AsyncClient", "Client", "connect", "connect_async"]
