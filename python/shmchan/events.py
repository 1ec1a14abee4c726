# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Events as the package hands them out: an Event unpacks and compares as
the tuple (ev_type, payload), as before, and has the payload of the known
types decoded into named fields. Needs no library: it decodes bytes.

    ev = c.next_event()
    if ev.type == "channel-attached":
        print(ev.pid, ev.backing, ev.name)
    ev_type, payload = ev                  # the raw event, as before

The names are those of shmchanctl events -j: type, and pid, backing, name
(channel-attached), pid, reason, name (channel-detached), count (lost).
python/tests/test_layout.py checks the structs against gr_shm.h.
"""

import ctypes

from . import constants as C
from . import messages


class EventChannel(ctypes.Structure):
    """struct gr_shm_event_channel (gr_shm.h): GR_SHM_EVENT_CHANNEL_ATTACHED."""

    _fields_ = [
        ("pid", ctypes.c_int32),
        ("backing", ctypes.c_uint32),
        ("name", ctypes.c_char * C.GR_SHM_NAME_LEN),
    ]


class EventChannelDetached(ctypes.Structure):
    """struct gr_shm_event_channel_detached (gr_shm.h)."""

    _fields_ = [
        ("pid", ctypes.c_int32),
        ("reason", ctypes.c_uint32),
        ("name", ctypes.c_char * C.GR_SHM_NAME_LEN),
    ]


class EventLost(ctypes.Structure):
    """struct gr_shm_event_lost (gr_shm.h)."""

    _fields_ = [("count", ctypes.c_uint64)]


# Checked against the C headers by python/tests/test_layout.py.
STRUCTS = {
    "gr_shm_event_channel": EventChannel,
    "gr_shm_event_channel_detached": EventChannelDetached,
    "gr_shm_event_lost": EventLost,
}

# The name of each known type, as shmchanctl events names it.
TYPE_NAMES = {
    C.GR_SHM_EVENT_CHANNEL_ATTACHED: "channel-attached",
    C.GR_SHM_EVENT_CHANNEL_DETACHED: "channel-detached",
    C.GR_SHM_EVENT_LOST: "lost",
    C.GR_SHM_EVENT_TEST: "test",
}
BACKING_NAMES = {C.GR_SHM_BACKING_MEMFD: "memfd", C.GR_SHM_BACKING_MEMZONE: "memzone"}
REASON_NAMES = {
    C.GR_SHM_DETACH_LEASE: "lease",
    C.GR_SHM_DETACH_CORRUPT: "corrupt",
    C.GR_SHM_DETACH_SLOW: "slow",
    C.GR_SHM_DETACH_REQUEST: "request",
}
# What a code of the daemon's that this package does not know is named.
UNKNOWN = "unknown"


def _name(raw):
    return raw.split(b"\0", 1)[0].decode(errors="replace")


def _channel(payload):
    e = EventChannel.from_buffer_copy(payload[: ctypes.sizeof(EventChannel)])
    return {"pid": e.pid, "backing": BACKING_NAMES.get(e.backing, UNKNOWN), "name": _name(e.name)}


def _channel_detached(payload):
    e = EventChannelDetached.from_buffer_copy(payload[: ctypes.sizeof(EventChannelDetached)])
    return {"pid": e.pid, "reason": REASON_NAMES.get(e.reason, UNKNOWN), "name": _name(e.name)}


def _lost(payload):
    return {"count": EventLost.from_buffer_copy(payload[: ctypes.sizeof(EventLost)]).count}


# type: (struct its payload starts with, decoder).
_DECODERS = {
    C.GR_SHM_EVENT_CHANNEL_ATTACHED: (EventChannel, _channel),
    C.GR_SHM_EVENT_CHANNEL_DETACHED: (EventChannelDetached, _channel_detached),
    C.GR_SHM_EVENT_LOST: (EventLost, _lost),
}


def decode(ev_type, payload):
    """The named fields of an event's payload: a dict, empty for a type
    without fields (GR_SHM_EVENT_TEST: its payload is free), a type this
    package does not know, or a payload too short for its type's struct."""
    struct, decoder = _DECODERS.get(ev_type, (None, None))
    if decoder is None:
        # An application's own (shmchan.register_event()), or none.
        return messages.decode_event(ev_type, payload)
    if len(payload) < ctypes.sizeof(struct):
        return {}
    return decoder(payload)


class Event:
    """An event, which unpacks and compares as the tuple (ev_type, payload):

    - ev_type (int) and payload (bytes, the raw payload);
    - type: the name of a known type ("channel-attached", "channel-detached",
      "lost", "test"), of one registered with shmchan.register_event(), or
      the type in hex ("0x53488005") for another;
    - fields: a dict of the decoded payload (see decode()), each also an
      attribute (ev.pid, ev.name, ev.count, ...).
    """

    __slots__ = ("ev_type", "payload", "type", "fields")

    def __init__(self, ev_type, payload):
        self.ev_type = ev_type
        self.payload = payload
        self.type = (
            TYPE_NAMES.get(ev_type) or messages.event_name(ev_type) or f"{ev_type:#010x}"
        )
        self.fields = decode(ev_type, payload)

    def __getattr__(self, name):
        # Only for the names that are not attributes already: the fields.
        try:
            return object.__getattribute__(self, "fields")[name]
        except (KeyError, AttributeError):
            raise AttributeError(f"{self.type} event has no field {name!r}") from None

    def __iter__(self):
        return iter((self.ev_type, self.payload))

    def __len__(self):
        return 2

    def __getitem__(self, index):
        return (self.ev_type, self.payload)[index]

    def __eq__(self, other):
        if isinstance(other, (Event, tuple)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self):
        return hash((self.ev_type, self.payload))

    def __repr__(self):
        fields = "".join(f", {k}={v!r}" for k, v in self.fields.items())
        return f"Event({self.type}{fields}, payload={self.payload!r})"
