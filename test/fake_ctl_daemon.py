#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""A fake shmchand on a Unix socket, for the tests of shmchanctl against
daemons that answer otherwise than the real one: it reads requests (12-byte
header and payload) from any number of connections and answers each with an
empty response of the status its type is given, until SIGTERM. Prints
"ready" once it listens.

  fake_ctl_daemon.py PATH [--status TYPE=ERRNO]... [--default ERRNO]
                     [--info PID LEN]

  --status TYPE=ERRNO  the status of requests of TYPE (a number, 0x... too);
                       ERRNO is a number or a name (EBADMSG). GR_HELLO is
                       answered 0 unless given here.
  --default ERRNO      the status of every other request (default ENOTSUP)
  --info PID LEN       answer GR_SHM_DAEMON_INFO with status 0 and the first
                       LEN bytes of an info of pid PID, 1 poller, spin 100,
                       memfd, file prefix "older", version "0.9", zeros
                       after: an older daemon's shorter response
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


def serve(conn, statuses, default, info):
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
                buf = buf[HEADER.size + plen:]
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
    args = p.parse_args()
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
        threading.Thread(target=serve, args=(conn, statuses, args.default, info),
                         daemon=True).start()


if __name__ == "__main__":
    main()
