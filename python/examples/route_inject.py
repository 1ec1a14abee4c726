#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""route_inject in Python: a table shaped like a real BGP table, one
request per route, into examples/route_table, through the shmchan package.
The same routes as the C route_inject (examples/route_table/route_gen.c)
for a family and a seed, so the two compare; the route table's requests
are declared once with ctypes, as its C header declares them.

    route_inject.py [-4|-6] [-s SOCK] [-n COUNT] [-d DEPTH]
                    [-t auto|shm|socket] [--seed N] [--json]
"""

import argparse
import ctypes
import errno
import json
import sys
import time

import shmchan

MODULE = 0x5254  # route_table_api.h: ROUTE_TABLE_MODULE
AF_IP4, AF_IP6 = 4, 6
NEXTHOPS = 2048  # route_gen.h: ROUTE_GEN_NEXTHOPS
SLOTS = 1000  # route_gen.h: ROUTE_GEN_SLOTS
# (prefix length, parts per thousand): route_gen.c's, a real BGP table's.
IPV4_DIST = [(16, 14), (17, 8), (18, 14), (19, 25), (20, 45), (21, 51), (22, 109), (23, 106),
             (24, 620), (32, 8)]
IPV6_DIST = [(32, 130), (36, 40), (40, 95), (44, 105), (48, 500), (128, 10), (46, 50),
             (42, 40), (38, 30)]
MASK64 = (1 << 64) - 1


class Addr(ctypes.Union):
    _fields_ = [("ip4", ctypes.c_uint32), ("ip6", ctypes.c_uint8 * 16)]


class Prefix(ctypes.Structure):
    _anonymous_ = ("addr",)
    _fields_ = [("family", ctypes.c_uint8), ("prefixlen", ctypes.c_uint8),
                ("reserved", ctypes.c_uint8 * 2), ("addr", Addr)]


class Route(ctypes.Structure):
    _fields_ = [("dest", Prefix), ("nh_id", ctypes.c_uint32)]


class NhAddReq(ctypes.Structure):
    _fields_ = [("nh_id", ctypes.c_uint32), ("port", ctypes.c_uint16),
                ("reserved", ctypes.c_uint16)]


class Stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint32) for n in ("routes4", "routes6", "max_routes4",
                                                "max_routes6", "nexthops", "workers")] + [
        (n, ctypes.c_uint64) for n in ("deletes_pending", "deletes_done", "nexthops_freed",
                                        "grace_checks", "replies_lost", "lookups",
                                        "lookup_hits", "nexthop_mismatches")]


NH_ADD = shmchan.msg_type(MODULE, 1)
ROUTE_ADD = shmchan.msg_type(MODULE, 2)
STATS = shmchan.msg_type(MODULE, 6)
shmchan.register_request(NH_ADD, "ROUTE_TABLE_NH_ADD", request=NhAddReq)
shmchan.register_request(ROUTE_ADD, "ROUTE_TABLE_ROUTE_ADD", request=Route)
shmchan.register_request(STATS, "ROUTE_TABLE_STATS", response=Stats)


def _splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def routes(family, seed, count):
    """The payloads (bytes of struct route_table_route) of route_gen.c."""
    dist = IPV4_DIST if family == AF_IP4 else IPV6_DIST
    slots = [b for b, (_, weight) in enumerate(dist) for _ in range(weight)]
    if seed:
        state = seed
        for i in range(SLOTS - 1, 0, -1):
            state, z = _splitmix64(state)
            j = z % (i + 1)
            slots[i], slots[j] = slots[j], slots[i]
    seq = [0] * len(dist)
    r = Route()
    for index in range(count):
        b = slots[index % SLOTS]
        seq[b] += 1
        length = dist[b][0]
        ctypes.memset(ctypes.addressof(r), 0, ctypes.sizeof(r))
        r.dest.family, r.dest.prefixlen = family, length
        if family == AF_IP4:
            v = (seq[b] << (32 - length)) & 0xFFFFFFFF
            r.dest.ip4 = int.from_bytes(v.to_bytes(4, "big"), sys.byteorder)
        else:
            net_bits = length - 8 if length > 8 else 1
            offset = net_bits - 32 if net_bits > 32 else 0
            shifted = (seq[b] << (32 - net_bits + offset)) & 0xFFFFFFFF
            start = offset // 8
            r.dest.ip6[0] = 0x20 + b
            for k, byte in enumerate(shifted.to_bytes(4, "big")):
                r.dest.ip6[1 + start + k] = byte
        r.nh_id = index % NEXTHOPS + 1
        yield bytes(r)


def inject(c, family, seed, count, depth):
    """Install count routes, depth in flight; returns the seconds taken."""
    for nh in range(1, NEXTHOPS + 1):
        try:
            c.request(NH_ADD, nh_id=nh, port=nh % 4)
        except FileExistsError:  # an earlier run's
            pass
    start = time.monotonic()
    if depth == 1:
        for payload in routes(family, seed, count):
            c.call(ROUTE_ADD, payload)
        return time.monotonic() - start
    inflight = []
    for payload in routes(family, seed, count):
        if len(inflight) == depth:
            c.recv(inflight.pop(0))
        inflight.append(c.send(ROUTE_ADD, payload))
    for rid in inflight:
        c.recv(rid)
    return time.monotonic() - start


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    fam = p.add_mutually_exclusive_group()
    fam.add_argument("-4", dest="family", action="store_const", const=AF_IP4, default=AF_IP4)
    fam.add_argument("-6", dest="family", action="store_const", const=AF_IP6)
    p.add_argument("-s", "--socket", default="/tmp/route_table.sock")
    p.add_argument("-n", "--count", type=int, default=100000)
    p.add_argument("-d", "--depth", type=int, default=1)
    p.add_argument("-t", "--transport", choices=("auto", "shm", "socket"), default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="one line of JSON")
    a = p.parse_args(argv)
    if a.count < 1 or not 1 <= a.depth <= 1024:
        p.error("COUNT is at least 1, DEPTH 1 to 1024")
    with shmchan.connect(a.socket, transport=a.transport) as c:
        before = c.request(STATS)
        try:
            seconds = inject(c, a.family, a.seed, a.count, a.depth)
        except OSError as e:
            print(f"route_inject.py: {errno.errorcode.get(e.errno, e.errno)}: {e}", file=sys.stderr)
            return 1
        after = c.request(STATS)
        field = "routes4" if a.family == AF_IP4 else "routes6"
        installed = getattr(after, field) - getattr(before, field)
        rate = a.count / seconds if seconds > 0 else 0.0
        if a.json:
            print(json.dumps({"tool": "route_inject.py", "mode": "add", "family": a.family,
                              "count": a.count, "depth": a.depth, "transport": c.transport,
                              "seed": a.seed, "installed": installed, "seconds": seconds,
                              "routes_per_s": rate}))
        else:
            print(f"{installed} of {a.count} IPv{a.family} routes over {c.transport}, depth "
                  f"{a.depth}: {seconds:.3f} s, {rate:,.0f} routes/s")
    return 0 if installed == a.count else 1


if __name__ == "__main__":
    sys.exit(main())
