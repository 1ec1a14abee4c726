# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Loading of libgr_api_client and the ctypes prototypes of gr_api_client.h.

The library is found through SHMCHAN_LIBRARY (a path to the .so) when it is
set, else through the dynamic loader's normal path (libgr_api_client.so.0).
Importing this module loads it, and raises ImportError saying where it
looked and how to point at it when it cannot (docs/python.md); the package
imports it only when a call needs the library.
Every call is made through a ctypes.CDLL, which releases the GIL for the time
of the call: a Client waiting for its daemon lets other threads run.
"""

import ctypes
import os

# The library's soname (client/meson.build: client_soversion; the package
# libgr-api-client0).
LIBRARY_SONAME = "libgr_api_client.so.0"

# gr_api_client_opts.transport (enum gr_api_transport).
TRANSPORT_AUTO = 0
TRANSPORT_SOCKET = 1
TRANSPORT_SHM = 2


class ClientOpts(ctypes.Structure):
    """struct gr_api_client_opts (gr_api_client.h)."""

    _fields_ = [
        ("transport", ctypes.c_int),
        ("spin_us", ctypes.c_int),
        ("version", ctypes.c_char_p),
        ("timeout_ms", ctypes.c_int),
    ]


class ApiEvent(ctypes.Structure):
    """struct gr_api_event (gr_api.h): the header of an event."""

    _fields_ = [
        ("ev_type", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("payload_len", ctypes.c_size_t),
    ]


class EventSubscribeReq(ctypes.Structure):
    """struct gr_event_subscribe_req (gr_api.h)."""

    _fields_ = [
        ("suppress_self_events", ctypes.c_bool),
        ("ev_type", ctypes.c_uint32),
    ]


class ApiRequest(ctypes.Structure):
    """struct gr_api_request (gr_api.h): the 12-byte request header."""

    _fields_ = [
        ("id", ctypes.c_uint32),
        ("type", ctypes.c_uint32),
        ("payload_len", ctypes.c_uint32),
    ]


class ApiResponse(ctypes.Structure):
    """struct gr_api_response (gr_api.h): the 12-byte response header."""

    _fields_ = [
        ("for_id", ctypes.c_uint32),
        ("status", ctypes.c_uint32),
        ("payload_len", ctypes.c_uint32),
    ]


# The structs whose layout python/tests/test_layout.py checks against the C
# compiler's (python/layout.c), by C name.
STRUCTS = {
    "gr_api_client_opts": ClientOpts,
    "gr_api_event": ApiEvent,
    "gr_event_subscribe_req": EventSubscribeReq,
    "gr_api_request": ApiRequest,
    "gr_api_response": ApiResponse,
}

_handle = ctypes.c_void_p
_buf = ctypes.c_void_p

# name: (restype, argtypes), as declared in gr_api_client.h.
PROTOTYPES = {
    "gr_api_client_connect_opts": (_handle, [ctypes.c_char_p, ctypes.POINTER(ClientOpts)]),
    "gr_api_client_last_error": (ctypes.c_char_p, []),
    "gr_api_client_disconnect": (ctypes.c_int, [_handle]),
    "gr_api_client_transport": (ctypes.c_int, [_handle]),
    "gr_api_client_transport_reason": (ctypes.c_char_p, [_handle]),
    "gr_api_client_send": (ctypes.c_long, [_handle, ctypes.c_uint32, ctypes.c_size_t, _buf]),
    "gr_api_client_send_more": (ctypes.c_long, [_handle, ctypes.c_uint32, ctypes.c_size_t, _buf]),
    "gr_api_client_flush": (ctypes.c_int, [_handle]),
    "gr_api_client_recv_into": (ctypes.c_long, [_handle, ctypes.c_uint32, _buf, ctypes.c_size_t]),
    "gr_api_client_try_recv_into": (
        ctypes.c_long,
        [_handle, ctypes.c_uint32, _buf, ctypes.c_size_t],
    ),
    "gr_api_client_send_recv_into": (
        ctypes.c_long,
        [_handle, ctypes.c_uint32, ctypes.c_size_t, _buf, _buf, ctypes.c_size_t],
    ),
    "gr_api_client_stream_next": (
        ctypes.c_int,
        [
            _handle,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    # What Grout's stream loop calls when its body breaks out: the rest of
    # the stream received and freed within one timeout, then abandoned.
    "__gr_api_client_stream_drain": (ctypes.c_int, [_handle, ctypes.c_uint32, ctypes.c_uint32]),
    "gr_api_client_event_recv": (
        ctypes.c_int,
        [_handle, ctypes.POINTER(ctypes.POINTER(ApiEvent))],
    ),
    "gr_api_client_event_try_recv": (
        ctypes.c_int,
        [_handle, ctypes.POINTER(ctypes.POINTER(ApiEvent))],
    ),
    "gr_api_message_register": (
        ctypes.c_int,
        [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_bool],
    ),
    "gr_api_message_name": (ctypes.c_char_p, [ctypes.c_uint32]),
    "gr_api_client_fd": (ctypes.c_int, [_handle]),
    "gr_api_client_poll_prepare": (ctypes.c_int, [_handle]),
    "gr_api_client_poll_done": (ctypes.c_int, [_handle]),
}


# The calls of every request, declared with their return type alone: ctypes
# then converts no argument, and each call costs half as much or less (the
# measurements are in docs/python.md). Only the package calls them, always
# with ctypes objects of the exact C types (c_void_p, c_uint32, c_size_t) or
# with bytes and ctypes arrays for the buffers.
FAST_CALLS = (
    "gr_api_client_send",
    "gr_api_client_send_more",
    "gr_api_client_recv_into",
    "gr_api_client_try_recv_into",
    "gr_api_client_send_recv_into",
)


def library_path():
    """The path or name the library is loaded from."""
    return os.environ.get("SHMCHAN_LIBRARY") or LIBRARY_SONAME


def _not_found(err):
    """The ImportError of a library that would not load: what was tried,
    why it failed, and the three ways to point at the library."""
    path = os.environ.get("SHMCHAN_LIBRARY")
    if path:
        tried = f"SHMCHAN_LIBRARY={path}"
    else:
        ld_path = os.environ.get("LD_LIBRARY_PATH")
        folders = f"LD_LIBRARY_PATH={ld_path}, " if ld_path else "LD_LIBRARY_PATH unset, "
        tried = (
            f"{LIBRARY_SONAME} through the dynamic loader ({folders}"
            "the ldconfig cache, /lib and /usr/lib)"
        )
    return ImportError(
        f"shmchan: cannot load libgr_api_client: tried {tried}: {err}. Set SHMCHAN_LIBRARY "
        "to the library's path (build/client/libgr_api_client.so in a build tree), run "
        "ldconfig after meson install, or add the library's folder to LD_LIBRARY_PATH",
        name="shmchan._lib",
        path=path or LIBRARY_SONAME,
    )


def _open():
    try:
        return ctypes.CDLL(library_path(), use_errno=True)
    except OSError as err:
        raise _not_found(err) from err


def load():
    """Load libgr_api_client and declare its functions; returns the CDLL.

    Raises ImportError (see _not_found()) when it cannot be loaded."""
    lib = _open()
    for name, (restype, argtypes) in PROTOTYPES.items():
        func = getattr(lib, name)
        func.restype = restype
        func.argtypes = argtypes
    return lib


def load_fast():
    """The same library, with the FAST_CALLS declared by return type only."""
    fast = _open()
    for name in FAST_CALLS:
        getattr(fast, name).restype = PROTOTYPES[name][0]
    return fast


lib = load()
fast = load_fast()
# The request types registered in Python before the library was loaded
# (shmchan.register_request()) now reach it too.
from . import messages  # noqa: E402 (after lib: it registers into it)

messages._attach(lib)
# Named at module level: inside a class, lib.__name would be mangled.
stream_drain = getattr(lib, "__gr_api_client_stream_drain")

# free(), for what gr_api_client_stream_next() and gr_api_client_event_recv()
# malloc: the one the process resolves first (CDLL(None): the global
# namespace), as the library's malloc() is. libc's own free() would not be
# that one under an allocator that is preloaded (jemalloc, AddressSanitizer).
libc = ctypes.CDLL(None, use_errno=True)
libc.free.restype = None
libc.free.argtypes = [ctypes.c_void_p]
