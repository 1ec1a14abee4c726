#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""A fake shmchand on a Unix socket, for the tests of shmchanctl, of the
client library and of the Python package against daemons that answer
otherwise than the real one, a hostile one among them: it reads requests
(12-byte header and payload) from any number of connections and answers
each with an empty response of the status its type is given, until SIGTERM.
Prints "ready" once it listens.

  fake_ctl_daemon.py PATH [--status TYPE=ERRNO]... [--default ERRNO]
                     [--info PID LEN] [--grout VERSION [--max-ifaces N]]
                     [--endless TYPE [--endless-interval S] [--item-len N]]
                     [--hostile-text] [--unsent-ids]
                     [--events-before TYPE N LEN]

  --status TYPE=ERRNO  the status of requests of TYPE (a number, 0x... too);
                       ERRNO is a number or a name (EBADMSG). GR_HELLO is
                       answered 0 unless given here.
  --default ERRNO      the status of every other request (default ENOTSUP)
  --info PID LEN       answer GR_SHM_DAEMON_INFO with status 0 and the first
                       LEN bytes of an info of pid PID, 1 poller, spin 100,
                       memfd, file prefix "older", version "0.9", zeros
                       after: an older daemon's shorter response
  --grout VERSION      answer GR_HELLO as Grout's main/api.c does: status 0
                       for api_version VERSION, EBADMSG for any other, the
                       connection kept open either way; at Grout's main
                       version (10) the response is a struct gr_hello_resp
                       of max_ifaces N (--max-ifaces, default 0), at the
                       others it is empty. GR_EVENT_SUBSCRIBE is answered
                       0 and followed by one event of the type subscribed,
                       in Grout's framing (16-byte header: u32 type, 4
                       bytes of zero, u64 length), whose payload is
                       "grout event 0xTYPE"; GR_EVENT_UNSUBSCRIBE is
                       answered 0. Every other request gets the --status
                       or --default answers (Grout: ENOTSUP).

A hostile daemon, on cue:
  --endless TYPE       (repeatable) answer each request of TYPE with a
                       stream that does
                       not end: data responses of --item-len bytes (default
                       512, more than any list's struct) of 'x', one every
                       --endless-interval seconds (default 0: as fast as
                       the socket takes them), until the client closes the
                       connection or ENDLESS_MAX_S passed (then the
                       stream's end), so that a client that never gives up
                       fails its test rather than hangs it
  --hostile-text       answer GR_SHM_DAEMON_INFO, GR_SHM_CLIENT_LIST,
                       GR_SHM_CHANNEL_LIST and GR_LOG_LEVEL_LIST (one item,
                       then the stream's end) with every version, file
                       prefix and name made of HOSTILE_TEXT: escape
                       sequences that set the terminal's title and clear
                       its screen, a carriage return, a line break that
                       forges a line, DEL and a C1 CSI byte; a
                       GR_SHM_EVENT_SUBSCRIBE is answered 0 and followed by
                       a channel-attached event of that name and an event
                       of an unknown type whose payload is that text
  --unsent-ids         answer every request but hello with responses to
                       ids no client sent, without end (as --endless)
  --events-before TYPE N LEN
                       answer each request of TYPE only after N tagged
                       GR_SHM_EVENT_TEST events of LEN bytes (LEN >= 4:
                       each starts with its number, u32 little endian), the
                       events of a subscriber that piles them up
"""

import argparse
import errno
import os
import signal
import socket
import struct
import threading
import time

HEADER = struct.Struct("<III")  # id or for_id, type or status, payload length
GR_HELLO = 0xCAFE1981
GR_API_VERSION_GROUT_MAIN = 10  # the hello response is a struct gr_hello_resp
GR_EVENT_SUBSCRIBE = 0xCAFE1985
GR_EVENT_UNSUBSCRIBE = 0xCAFE1986
GROUT_EVENT = struct.Struct("<IIQ")  # ev_type, zero padding, payload length
GR_SHM_DAEMON_INFO = 0x53480004
GR_LOG_LEVEL_LIST = 0xCAFE1983
GR_SHM_CHANNEL_LIST = 0x53480003
GR_SHM_CLIENT_LIST = 0x53480006
GR_SHM_EVENT_SUBSCRIBE = 0x53480007
GR_SHM_EVENT_CHANNEL_ATTACHED = 0x53488001
GR_SHM_EVENT_TEST = 0x53488004
# An event type nobody knows, for the hostile text.
UNKNOWN_EVENT = 0x7E570001
# The longest an endless stream or a flood runs.
ENDLESS_MAX_S = 20
# Copies of a message sent with one sendall() when nothing paces them.
BATCH = 64
# An id no client sends (clients count from 1, and the tests send few).
UNSENT_ID = 0x7FFF0000
# Text a hostile daemon puts in every string field: set the terminal's
# title (OSC 0 ... BEL), clear the screen (CSI 2 J), go back to the start
# of the line, break the line to forge one, DEL, and a C1 CSI byte. 31
# bytes: it fits a channel name with its NUL.
HOSTILE_TEXT = b"\x1b]0;pwned\x07\x1b[2J\rX\nFORGED \x7f\x9b2J"
assert len(HOSTILE_TEXT) < 32
# struct gr_shm_counters: 12 u64.
COUNTERS = struct.Struct("<12Q")


def errno_value(text):
    if text.isdigit():
        return int(text)
    value = getattr(errno, text, None)
    if not isinstance(value, int):
        raise argparse.ArgumentTypeError(f"not an errno: {text}")
    return value


def status_rule(text):
    kind, _, err = text.partition("=")
    return int(kind, 0), errno_value(err)


def grout_hello(payload, version, max_ifaces):
    """Grout's answer to a hello: (status, response payload)."""
    (api_version,) = struct.unpack_from("<I", payload.ljust(4, b"\0"))
    if api_version != version:
        return errno.EBADMSG, b""
    if version == GR_API_VERSION_GROUT_MAIN:
        return 0, struct.pack("<H", max_ifaces)
    return 0, b""


def grout_event(ev_type):
    """One event of ev_type in Grout's socket framing."""
    payload = f"grout event {ev_type:#010x}".encode()
    return GROUT_EVENT.pack(ev_type, 0, len(payload)) + payload


def tagged_event(ev_type, payload):
    """A tagged event: a response to id 0 carrying the event header (u32
    type, 4 bytes of zero, u64 length) and the payload."""
    body = GROUT_EVENT.pack(ev_type, 0, len(payload)) + payload
    return HEADER.pack(0, 0, len(body)) + body


def send_for_a_while(conn, msg, interval):
    """Send msg again and again (paced by interval seconds, else in batches)
    until the client goes away or ENDLESS_MAX_S passed. True if the
    connection still stands."""
    end = time.monotonic() + ENDLESS_MAX_S
    chunk = msg if interval > 0 else msg * BATCH
    try:
        while time.monotonic() < end:
            conn.sendall(chunk)
            if interval > 0:
                time.sleep(interval)
    except OSError:
        return False
    return True


def hostile_answer(req_id, req_type):
    """The bytes of --hostile-text's answer to a request of req_type, or
    None for a type it does not answer."""
    t = HOSTILE_TEXT
    if req_type == GR_SHM_DAEMON_INFO:
        # pid, pollers, spin, backings, file prefix, version; zeros after.
        items = [struct.pack("<iIII64s32s", 1, 1, 100, 1, t, t).ljust(208, b"\0")]
    elif req_type == GR_SHM_CLIENT_LIST:
        # pid, uid, gid, transport (shm), age, 4 socket counters, channel,
        # backing (memfd), poller, state (up), reserved, channel counters.
        items = [struct.pack("<iIIIQ4Q32sIIII", 1, 0, 0, 2, 0, 0, 0, 0, 0, t, 1, 0, 1, 0)
                 + COUNTERS.pack(*[0] * 12)]
    elif req_type == GR_SHM_CHANNEL_LIST:
        # name, backing (memfd), poller, pid, state (up), counters.
        items = [struct.pack("<32sIIiI", t, 1, 0, 1, 1) + COUNTERS.pack(*[0] * 12)]
    elif req_type == GR_LOG_LEVEL_LIST:
        items = [struct.pack("<64sI", t, 6)]
    elif req_type == GR_SHM_EVENT_SUBSCRIBE:
        return (HEADER.pack(req_id, 0, 0)
                + tagged_event(GR_SHM_EVENT_CHANNEL_ATTACHED, struct.pack("<iI32s", 1, 1, t))
                + tagged_event(UNKNOWN_EVENT, t))
    else:
        return None
    out = b"".join(HEADER.pack(req_id, 0, len(i)) + i for i in items)
    if req_type != GR_SHM_DAEMON_INFO:
        out += HEADER.pack(req_id, 0, 0)  # the stream's end
    return out


def events_then(conn, count, length):
    """count tagged GR_SHM_EVENT_TEST events of length bytes, numbered."""
    pad = b"e" * (length - 4)
    for first in range(0, count, BATCH):
        conn.sendall(b"".join(tagged_event(GR_SHM_EVENT_TEST, struct.pack("<I", n) + pad)
                              for n in range(first, min(first + BATCH, count))))


def serve(conn, statuses, default, info, grout, hostile):
    buf = b""
    with conn:
        while True:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
            while len(buf) >= HEADER.size:
                req_id, req_type, plen = HEADER.unpack_from(buf)
                if len(buf) < HEADER.size + plen:
                    break
                payload = buf[HEADER.size:HEADER.size + plen]
                buf = buf[HEADER.size + plen:]
                if req_type in hostile.endless:
                    item = HEADER.pack(req_id, 0, hostile.item_len) + b"x" * hostile.item_len
                    if not send_for_a_while(conn, item, hostile.interval):
                        return
                    conn.sendall(HEADER.pack(req_id, 0, 0))
                    continue
                if hostile.unsent_ids and req_type != GR_HELLO:
                    send_for_a_while(conn, HEADER.pack(UNSENT_ID, 0, 0), 0)
                    return
                if hostile.text:
                    answer = hostile_answer(req_id, req_type)
                    if answer is not None:
                        conn.sendall(answer)
                        continue
                if hostile.events_before and req_type == hostile.events_before[0]:
                    events_then(conn, *hostile.events_before[1:])
                if grout is not None and req_type == GR_HELLO:
                    status, resp = grout_hello(payload, *grout)
                    conn.sendall(HEADER.pack(req_id, status, len(resp)) + resp)
                    continue
                if grout is not None and req_type == GR_EVENT_SUBSCRIBE:
                    (ev_type,) = struct.unpack_from("<I", payload.ljust(8, b"\0"), 4)
                    conn.sendall(HEADER.pack(req_id, 0, 0) + grout_event(ev_type))
                    continue
                if grout is not None and req_type == GR_EVENT_UNSUBSCRIBE:
                    conn.sendall(HEADER.pack(req_id, 0, 0))
                    continue
                if info is not None and req_type == GR_SHM_DAEMON_INFO:
                    conn.sendall(HEADER.pack(req_id, 0, len(info)) + info)
                    continue
                status = statuses.get(req_type, 0 if req_type == GR_HELLO else default)
                conn.sendall(HEADER.pack(req_id, status, 0))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("path")
    p.add_argument("--status", type=status_rule, action="append", default=[])
    p.add_argument("--default", type=errno_value, default=errno.ENOTSUP)
    p.add_argument("--info", nargs=2, type=int, metavar=("PID", "LEN"))
    p.add_argument("--grout", type=int, metavar="VERSION")
    p.add_argument("--max-ifaces", type=int, default=0)
    p.add_argument("--endless", type=lambda v: int(v, 0), action="append", default=[],
                   metavar="TYPE")
    p.add_argument("--endless-interval", type=float, default=0.0, metavar="S")
    p.add_argument("--item-len", type=int, default=512, metavar="N")
    p.add_argument("--hostile-text", action="store_true")
    p.add_argument("--unsent-ids", action="store_true")
    p.add_argument("--events-before", nargs=3, type=lambda v: int(v, 0),
                   metavar=("TYPE", "N", "LEN"))
    args = p.parse_args()
    hostile = argparse.Namespace(endless=set(args.endless), interval=args.endless_interval,
                                 item_len=args.item_len, text=args.hostile_text,
                                 unsent_ids=args.unsent_ids, events_before=args.events_before)
    grout = None if args.grout is None else (args.grout, args.max_ifaces)
    info = None
    if args.info:
        pid, length = args.info
        # pid, pollers, spin, backings, file prefix[64], version[32].
        info = struct.pack("<iIII64s32s", pid, 1, 100, 1, b"older", b"0.9").ljust(length, b"\0")
    statuses = dict(args.status)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(args.path)
    s.listen()
    print("ready", flush=True)
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, statuses, args.default, info, grout, hostile),
                         daemon=True).start()


if __name__ == "__main__":
    main()
