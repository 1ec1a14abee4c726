# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""The blocking client: one connection to shmchand, on its shared-memory
channel when it can have one, else on its Unix socket."""

import ctypes
import errno
import math
import os

from . import constants as C
from . import messages
from .events import Event
from ._lib import (
    ApiEvent,
    ClientOpts,
    EventSubscribeReq,
    TRANSPORT_AUTO,
    TRANSPORT_SHM,
    TRANSPORT_SOCKET,
    fast,
    lib,
    libc,
    stream_drain,
)

_TRANSPORTS = {"auto": TRANSPORT_AUTO, "socket": TRANSPORT_SOCKET, "shm": TRANSPORT_SHM}
_TRANSPORT_NAMES = {TRANSPORT_SOCKET: "socket", TRANSPORT_SHM: "shm"}

# Bytes of struct gr_api_event before the event payload.
_EVENT_HEADER_LEN = ctypes.sizeof(ApiEvent)
_PING2_LEN = C.GR_PING2_LEN
# Arguments of the calls of _lib.fast, which ctypes does not convert.
_uint32 = ctypes.c_uint32
_size = ctypes.c_size_t
_PING2_TYPE = C.GR_PING2
_PING2_TYPE_ARG = _uint32(C.GR_PING2)
_PING2_LEN_ARG = _size(_PING2_LEN)
_RX_LEN_ARG = _size(C.GR_API_MAX_MSG_LEN)
_TYPE_MAX = 0xFFFFFFFF


def _error(what):
    """The OSError (subclass chosen by errno) of a failed library call."""
    return _errno_error(ctypes.get_errno(), what)


def _errno_error(err, what):
    return OSError(err, f"{what}: {os.strerror(err)}")


def _load_cfast():
    """_shmchan_fast (python/shmchan_fast.c), bound to the library ctypes
    loaded, or None: not built (no Python headers), or SHMCHAN_PURE_PYTHON
    set. Client.call() and ping2() go through it when there is one, else
    through ctypes: the same library call, about 1 µs more per call."""
    if os.environ.get("SHMCHAN_PURE_PYTHON"):
        return None
    try:
        import _shmchan_fast
    except ImportError:
        return None
    _shmchan_fast.bind(ctypes.cast(fast.gr_api_client_send_recv_into, ctypes.c_void_p).value)
    return _shmchan_fast


_cfast = _load_cfast()


def _timeout_ms(timeout):
    if timeout is None:
        return 0  # the library's: GR_API_TIMEOUT_MS, else its default
    if timeout == math.inf:
        return -1  # GR_API_TIMEOUT_NONE
    if timeout <= 0:
        raise ValueError(f"timeout must be > 0 seconds, None or math.inf, not {timeout!r}")
    return max(1, round(timeout * 1000))


def _type_arg(req_type):
    if not 0 <= req_type <= _TYPE_MAX:
        raise ValueError(f"a request type is 32 bits, not {req_type!r}")
    return _uint32(req_type)


def _payload(data):
    # ctypes passes bytes to a void * parameter without a copy.
    if isinstance(data, bytes):
        return data
    return bytes(data)


def _response(msg, data):
    """The response struct of a registered request, made of its payload;
    OSError EMSGSIZE for a payload shorter than the struct, as Grout's
    gr_api_client_recv() answers."""
    if msg.response is None:
        return None
    size = ctypes.sizeof(msg.response)
    if len(data) < size:
        raise OSError(
            errno.EMSGSIZE,
            f"{msg.name}: a response of {len(data)} bytes, shorter than its {size}-byte struct",
        )
    return msg.response.from_buffer_copy(data[:size])


def connect(path=None, transport="auto", timeout=None, spin_us=None, version=None):
    """Connect to the daemon listening on the Unix socket path.

    path: the socket (None: GR_API_DEFAULT_SOCK_PATH, /run/shmchand.sock).
    transport: "auto" (the shared-memory channel when the daemon offers one,
    else the socket; the environment variable GR_API_TRANSPORT may decide),
    "shm" (the channel or fail) or "socket".
    timeout: seconds any call may wait before it raises TimeoutError (None:
    GR_API_TIMEOUT_MS from the environment, else 10 s; math.inf: forever).
    spin_us: microseconds a receive spins before it sleeps (None: the
    library's default). version: free text sent in the hello.

    Returns a Client. Raises OSError with the errno and the library's reason
    (gr_api_client_last_error()): FileNotFoundError or ConnectionRefusedError
    (no daemon), PermissionError, TimeoutError, OSError with errno ENOTSUP
    (shm asked for but not to be had), ...
    """
    try:
        kind = _TRANSPORTS[transport]
    except KeyError:
        raise ValueError(f"transport must be auto, shm or socket, not {transport!r}") from None
    opts = ClientOpts(
        transport=kind,
        spin_us=-1 if spin_us is None else int(spin_us),
        version=None if version is None else version.encode(),
        timeout_ms=_timeout_ms(timeout),
    )
    sock = None if path is None else os.fsencode(path)
    handle = lib.gr_api_client_connect_opts(sock, ctypes.byref(opts))
    if not handle:
        err = ctypes.get_errno()
        reason = lib.gr_api_client_last_error().decode(errors="replace")
        raise OSError(err, reason or os.strerror(err))
    return Client(handle)


class Client:
    """A connection to shmchand (see connect()).

    A Client belongs to one thread at a time. Every call that waits releases
    the GIL. When the daemon goes away, calls raise ConnectionResetError (or
    BrokenPipeError for a send); a call that waited past the timeout raises
    TimeoutError and the Client stays usable. Use it as a context manager, or
    call close().
    """

    def __init__(self, handle):
        self._handle = ctypes.c_void_p(handle)
        self._haddr = handle  # the same, as an int, for _cfast
        # One receive buffer for every response: the largest payload.
        self._rx = ctypes.create_string_buffer(C.GR_API_MAX_MSG_LEN)
        self._rx_view = memoryview(self._rx).cast("B")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # A Client dropped without close(): disconnect it. Nothing to raise
        # to from a finalizer.
        if getattr(self, "_handle", None) is not None:
            try:
                self.close()
            except OSError:
                pass

    def close(self):
        """Disconnect: detach the channel and close the socket. Idempotent."""
        handle, self._handle = self._handle, None
        self._haddr = None
        if handle is not None and lib.gr_api_client_disconnect(handle) < 0:
            raise _error("disconnect")

    def _h(self):
        handle = self._handle
        if handle is None:
            raise ValueError("the client is closed")
        return handle

    @property
    def transport(self):
        """"shm" or "socket": the transport in use."""
        return _TRANSPORT_NAMES[lib.gr_api_client_transport(self._h())]

    @property
    def transport_reason(self):
        """Why the client is not on the shared-memory channel ("" if it is)."""
        return lib.gr_api_client_transport_reason(self._h()).decode(errors="replace")

    def fileno(self):
        """The descriptor to wait on for readability (gr_api_client_fd()).

        Do not read, write or close it; see AsyncClient and docs/event-loop.md.
        """
        fd = lib.gr_api_client_fd(self._h())
        if fd < 0:
            raise _error("fd")
        return fd

    def send(self, req_type, payload=b""):
        """Send a request without waiting for its answer; returns its id.

        Take the answer with recv(id). Many requests may be in flight.
        """
        data = _payload(payload)
        h, kind = self._h(), _type_arg(req_type)
        rid = fast.gr_api_client_send(h, kind, _size(len(data)), data or None)
        if rid < 0:
            raise _error("send")
        return rid

    def send_more(self, req_type, payload=b""):
        """Like send(), in a batch: a sleeping daemon is woken by the next
        send(), flush() or receive. Returns the request's id."""
        data = _payload(payload)
        h, kind = self._h(), _type_arg(req_type)
        rid = fast.gr_api_client_send_more(h, kind, _size(len(data)), data or None)
        if rid < 0:
            raise _error("send")
        return rid

    def flush(self):
        """Wake the daemon for the requests sent with send_more()."""
        if lib.gr_api_client_flush(self._h()) < 0:
            raise _error("flush")

    def recv(self, rid):
        """Wait for the answer to request rid and return its payload.

        Raises OSError with the daemon's status (for example errno ENOTSUP
        for a type it does not serve, EMSGSIZE for a short payload).
        """
        n = fast.gr_api_client_recv_into(self._h(), _uint32(rid), self._rx, _RX_LEN_ARG)
        if n < 0:
            raise _error(f"request {rid}")
        return self._rx_view[:n].tobytes()

    def try_recv(self, rid):
        """The answer to request rid if it has arrived, else None. Never waits."""
        n = fast.gr_api_client_try_recv_into(self._h(), _uint32(rid), self._rx, _RX_LEN_ARG)
        if n < 0:
            if ctypes.get_errno() == errno.EAGAIN:
                return None
            raise _error(f"request {rid}")
        return self._rx_view[:n].tobytes()

    def call(self, req_type, payload=b""):
        """Send a request, wait for its answer and return the answer's payload.

        One call of the library (gr_api_client_send_recv_into()).
        """
        data = _payload(payload)
        if _cfast is not None:
            haddr = self._haddr
            if haddr is None:
                raise ValueError("the client is closed")
            if not 0 <= req_type <= _TYPE_MAX:
                raise ValueError(f"a request type is 32 bits, not {req_type!r}")
            out = _cfast.call(haddr, req_type, data, self._rx)
            if out.__class__ is int:
                raise _errno_error(-out, f"request of type {req_type:#x}")
            return out
        h, kind = self._h(), _type_arg(req_type)
        tx_len, rx = _size(len(data)), self._rx
        n = fast.gr_api_client_send_recv_into(h, kind, tx_len, data or None, rx, _RX_LEN_ARG)
        if n < 0:
            raise _error(f"request of type {req_type:#x}")
        return self._rx_view[:n].tobytes()

    def request(self, req_type, payload=None, **fields):
        """A request registered with shmchan.register_request(): its request
        struct is payload (an instance, or bytes) or is made of the keyword
        fields; returns the response struct (an instance; None for an empty
        response), or, for a stream request, an iterator over them (the
        stream's iterator: see stream()).

        ValueError for a type not registered; TypeError for both a payload
        and fields, or fields of a request without a struct.
        """
        msg = messages.request_message(req_type)
        if msg is None:
            raise ValueError(
                f"request {req_type!r} is not registered (shmchan.register_request())"
            )
        if payload is not None and fields:
            raise TypeError("request() takes a payload or its fields, not both")
        if payload is None:
            if msg.request is None and fields:
                raise TypeError(f"{msg.name} has no request struct: no fields")
            payload = msg.request(**fields) if msg.request is not None else b""
        if msg.stream:
            return (_response(msg, item) for item in self.stream(req_type, payload))
        return _response(msg, self.call(req_type, payload))

    def ping(self):
        """GR_PING: an empty request and answer."""
        self.call(C.GR_PING)

    def ping2(self, data):
        """GR_PING2: the daemon echoes the 64 bytes of data; returns them."""
        if len(data) != _PING2_LEN:
            raise ValueError(f"ping2 takes {_PING2_LEN} bytes, not {len(data)}")
        if type(data) is not bytes:
            data = bytes(data)
        if _cfast is not None:
            haddr = self._haddr
            if haddr is None:
                raise ValueError("the client is closed")
            out = _cfast.call(haddr, _PING2_TYPE, data, self._rx)
            if out.__class__ is int:
                raise _errno_error(-out, "ping2")
            return out
        handle = self._handle
        if handle is None:
            raise ValueError("the client is closed")
        n = fast.gr_api_client_send_recv_into(
            handle, _PING2_TYPE_ARG, _PING2_LEN_ARG, data, self._rx, _PING2_LEN_ARG
        )
        if n < 0:
            raise _error("ping2")
        return self._rx_view[:n].tobytes()

    def stream(self, req_type, payload=b""):
        """Send a stream request and iterate over the payloads of its answers.

        The iterator ends with the stream's empty closing answer. Abandoning
        it early receives and drops the rest of the stream within one
        timeout; a stream still going then is abandoned (its later answers
        are dropped as they come), so that leaving the loop never waits past
        the timeout whatever the daemon sends.
        """
        rid = self.send(req_type, payload)
        return self._stream(req_type, rid)

    def _stream(self, req_type, rid):
        data = ctypes.c_void_p()
        length = ctypes.c_size_t()
        done = False
        try:
            while True:
                rc = lib.gr_api_client_stream_next(
                    self._h(), rid, ctypes.byref(data), ctypes.byref(length)
                )
                if rc < 0:
                    done = True
                    raise _error(f"stream {rid}")
                if rc == 0:
                    done = True
                    return
                try:
                    item = ctypes.string_at(data, length.value) if data else b""
                finally:
                    libc.free(data)
                    data.value = None
                yield item
        finally:
            if not done and self._handle is not None:
                # The rest would stay in the handle for ever; its status
                # (-ETIMEDOUT: abandoned) is not this loop's to raise.
                stream_drain(self._handle, req_type, rid)

    def subscribe(self, ev_type=C.GR_EVENT_ALL, suppress_self=False):
        """Subscribe to events of ev_type (GR_EVENT_ALL: every type).

        suppress_self: no event caused by a request of this process.
        """
        req = EventSubscribeReq(suppress_self_events=suppress_self, ev_type=ev_type)
        self.call(C.GR_EVENT_SUBSCRIBE, bytes(req))

    def unsubscribe(self):
        """Drop every subscription of this client."""
        self.call(C.GR_EVENT_UNSUBSCRIBE)

    def _event(self, func, what):
        ev = ctypes.POINTER(ApiEvent)()
        rc = func(self._h(), ctypes.byref(ev))
        if rc < 0:
            if -rc == errno.EAGAIN and func is lib.gr_api_client_event_try_recv:
                return None
            raise OSError(-rc, f"{what}: {os.strerror(-rc)}")
        try:
            header = ev.contents
            payload = ctypes.string_at(
                ctypes.addressof(header) + _EVENT_HEADER_LEN, header.payload_len
            )
            return Event(header.ev_type, payload)
        finally:
            libc.free(ev)

    def next_event(self):
        """Wait for the next event; returns an Event: the tuple (ev_type,
        payload), with the payload of the shm module's events decoded (ev.type,
        ev.pid, ev.name, ...: shmchan.events).

        Raises TimeoutError when none came within the timeout.
        """
        return self._event(lib.gr_api_client_event_recv, "event")

    def try_event(self):
        """The next Event, if one waits, else None."""
        return self._event(lib.gr_api_client_event_try_recv, "event")

    def events(self, types=C.GR_EVENT_ALL, suppress_self=False):
        """Subscribe to types (one type, GR_EVENT_ALL, or an iterable of
        types) and iterate over the events (Event: (ev_type, payload) with
        decoded fields).

        Each step waits for the next event (TimeoutError past the timeout).
        """
        for ev_type in [types] if isinstance(types, int) else types:
            self.subscribe(ev_type, suppress_self)
        return self._events()

    def _events(self):
        while True:
            yield self.next_event()

    def poll_prepare(self):
        """Before waiting on fileno(): True when something waits already
        (take it with the try calls, do not sleep); False when it is safe to
        sleep until fileno() is readable (gr_api_client_poll_prepare())."""
        rc = lib.gr_api_client_poll_prepare(self._h())
        if rc < 0:
            raise _error("poll_prepare")
        return rc == 1

    def poll_done(self):
        """After a wait that followed poll_prepare() returning False."""
        if lib.gr_api_client_poll_done(self._h()) < 0:
            raise _error("poll_done")

