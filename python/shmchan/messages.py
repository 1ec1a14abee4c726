# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Request and event types of an application's own module, declared once in
Python as GR_REQ(), GR_REQ_STREAM() and GR_EVENT() declare them in C:

    class SetReq(ctypes.Structure):
        _fields_ = [("key", ctypes.c_char * 32), ("value", ctypes.c_uint64)]

    SET = shmchan.msg_type(0x4554, 1)
    shmchan.register_request(SET, "EMBED_TABLE_SET", request=SetReq)
    c.request(SET, key=b"k", value=5)      # sends SetReq(key=b"k", value=5)

A message type is 32 bits: the module in the high 16, the request's or
event's number in the low 16 (msg_type()). The main module (0xcafe) and the
shm module are the server's own: a type of theirs cannot be registered.

Registering a request also tells the C library its name and response size
(gr_api_message_register()), so that a response shorter than the response
struct fails with EMSGSIZE, as in a C client, and the library's log lines
name it. Registering an event gives shmchan.Event its name and decodes its
payload into fields. Needs no library until a client exists.
"""

import ctypes
import sys
import threading

from . import constants as C

_MODULES_RESERVED = {C.GR_MAIN_MODULE: "the main module", C.GR_SHM_MODULE: "the shm module"}
_TYPE_MAX = 0xFFFFFFFF
# GR_API_MESSAGES_MAX of the C library: names it keeps at most.
_NAME_MAX = 63


class Message:
    """A registered request type: type, name, request and response (ctypes
    Structure classes, or None for an empty payload), and whether it is
    answered by a stream of responses."""

    __slots__ = ("type", "name", "request", "response", "stream")

    def __init__(self, msg_type, name, request, response, stream):
        self.type = msg_type
        self.name = name
        self.request = request
        self.response = response
        self.stream = stream

    def __repr__(self):
        return f"Message({self.name}, {self.type:#010x})"


_lock = threading.Lock()
_requests = {}
_events = {}
# The C library, once loaded (_lib.py calls _attach()).
_clib = None


def _check_type(msg_type, what):
    if not isinstance(msg_type, int) or not 0 <= msg_type <= _TYPE_MAX:
        raise ValueError(f"a {what} type is 32 bits, not {msg_type!r}")
    module = msg_type >> 16
    if module in _MODULES_RESERVED:
        raise ValueError(
            f"{msg_type:#010x} is a type of {_MODULES_RESERVED[module]}, the server's own: "
            "give your requests and events a module of your own"
        )


def _check_name(name):
    if not isinstance(name, str) or not name or len(name.encode()) > _NAME_MAX:
        raise ValueError(f"a message's name is 1 to {_NAME_MAX} bytes, not {name!r}")


def _check_struct(struct, what):
    if struct is not None and not (
        isinstance(struct, type) and issubclass(struct, ctypes.Structure)
    ):
        raise TypeError(f"{what} is a ctypes.Structure subclass or None, not {struct!r}")


def _register_c(msg):
    size = ctypes.sizeof(msg.response) if msg.response is not None else 0
    ret = _clib.gr_api_message_register(msg.type, msg.name.encode(), size, msg.stream)
    if ret < 0:
        raise OSError(-ret, f"gr_api_message_register({msg.name})")


def register_request(msg_type, name, request=None, response=None, stream=False):
    """Declare request msg_type as name, with its request and response
    structs (ctypes.Structure subclasses; None: an empty payload). stream:
    answered by any number of responses, then an empty one. Returns the
    Message. Again with the same name and structs: returns the one there;
    with another: ValueError. ValueError too for a type of the server's own
    modules, or a name empty or over 63 bytes."""
    _check_type(msg_type, "request")
    _check_name(name)
    _check_struct(request, "request")
    _check_struct(response, "response")
    msg = Message(msg_type, name, request, response, bool(stream))
    with _lock:
        old = _requests.get(msg_type)
        if old is not None:
            if (old.name, old.request, old.response, old.stream) != (
                name,
                request,
                response,
                msg.stream,
            ):
                raise ValueError(f"{msg_type:#010x} is registered already, as {old.name}")
            return old
        if _clib is not None:
            _register_c(msg)
        _requests[msg_type] = msg
    return msg


def register_event(ev_type, name, payload=None, decoder=None):
    """Declare event ev_type as name: shmchan.Event then calls it so
    (ev.type) and decodes its payload into fields, each field of the
    payload struct (a ctypes.Structure subclass: char arrays become str, up
    to their first NUL), or what decoder(payload bytes) returns (a dict).
    A payload shorter than the struct stays undecoded. Again with the same
    arguments: nothing; with others: ValueError."""
    _check_type(ev_type, "event")
    _check_name(name)
    _check_struct(payload, "payload")
    if decoder is not None and not callable(decoder):
        raise TypeError(f"decoder is a callable or None, not {decoder!r}")
    entry = (name, payload, decoder)
    with _lock:
        old = _events.get(ev_type)
        if old is not None and old != entry:
            raise ValueError(f"event {ev_type:#010x} is registered already, as {old[0]}")
        _events[ev_type] = entry


def request_message(msg_type):
    """The Message registered for msg_type, or None."""
    return _requests.get(msg_type)


def _field_value(value):
    if isinstance(value, bytes):
        return value.split(b"\0", 1)[0].decode(errors="replace")
    if isinstance(value, ctypes.Array):
        return list(value)
    return value


def struct_fields(obj):
    """The fields of a ctypes structure instance, as a dict (char arrays as
    str up to their first NUL, other arrays as lists)."""
    return {f[0]: _field_value(getattr(obj, f[0])) for f in obj._fields_}


def event_name(ev_type):
    """The name of a registered event, or None."""
    entry = _events.get(ev_type)
    return entry[0] if entry is not None else None


def decode_event(ev_type, payload):
    """The fields of a registered event's payload, a dict (empty if the
    type is not registered, or the payload too short for its struct)."""
    entry = _events.get(ev_type)
    if entry is None:
        return {}
    _, struct, decoder = entry
    if decoder is not None:
        return dict(decoder(payload))
    if struct is None or len(payload) < ctypes.sizeof(struct):
        return {}
    return struct_fields(struct.from_buffer_copy(payload[: ctypes.sizeof(struct)]))


def _attach(clib):
    """The C library was loaded: tell it every request registered so far."""
    global _clib
    with _lock:
        _clib = clib
        for msg in _requests.values():
            _register_c(msg)


# Loaded before this module (a client was made first): attach now.
if "shmchan._lib" in sys.modules and hasattr(sys.modules["shmchan._lib"], "lib"):
    _attach(sys.modules["shmchan._lib"].lib)
