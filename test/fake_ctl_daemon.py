#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""A fake shmchand on a Unix socket, for the tests of shmchanctl and of the
client library against daemons that answer otherwise than the real one: it
reads requests (12-byte header and payload) from any number of connections
and answers each with an empty response of the status its type is given,
until SIGTERM. Prints "ready" once it listens.

  fake_ctl_daemon.py PATH [--status TYPE=ERRNO]... [--default ERRNO]
                     [--info PID LEN] [--grout VERSION [--max-ifaces N]]

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
"""

import argparse
import errno
import os
import signal
import socket
import struct
import threading

HEADER = struct.Struct("<III")  # id or for_id, type or status, payload length
GR_HELLO = 0xCAFE1981
GR_API_VERSION_GROUT_MAIN = 10  # the hello response is a struct gr_hello_resp
GR_EVENT_SUBSCRIBE = 0xCAFE1985
GR_EVENT_UNSUBSCRIBE = 0xCAFE1986
GROUT_EVENT = struct.Struct("<IIQ")  # ev_type, zero padding, payload length
GR_SHM_DAEMON_INFO = 0x53480004


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


def serve(conn, statuses, default, info, grout):
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
    args = p.parse_args()
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
        threading.Thread(target=serve, args=(conn, statuses, args.default, info, grout),
                         daemon=True).start()


if __name__ == "__main__":
    main()
