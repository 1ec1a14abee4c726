#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""ping2 calls/s from Python, in one run against one daemon:

  shm     shmchan.Client on the shared-memory channel
  socket  shmchan.Client on the Unix socket
  raw     the same loop over Python's socket module, speaking the wire format
          itself (12-byte headers packed with struct)
  c       smoke/ping2_perf -t shm (--no-stamps), the C client on the channel
  c_socket  smoke/ping2_perf -t socket (--no-stamps), the C client on the socket

Each is measured for --seconds, in turn, --rounds times; the median round is
reported, with the client CPU time per call (less sensitive to other load
than calls/s), and the median of the rounds' ratios shm / socket. The
Python overhead per call is the shm Client's time per call less
ping2_perf's. Prints a table, and JSON with --json.

  PYTHONPATH=python SHMCHAN_LIBRARY=build/client/libgr_api_client.so \\
      python3 python/bench.py SOCKET [--ping2-perf build/smoke/ping2_perf]
"""

import argparse
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import time

import shmchan

# struct gr_api_request / gr_api_response: three uint32_t, host order.
HEADER = struct.Struct("=III")
# struct gr_hello_req: uint32_t api_version, char version[GR_HELLO_VERSION_LEN].
HELLO_VERSION_LEN = 128
HELLO = struct.Struct(f"=I{HELLO_VERSION_LEN}s")
# Calls between two looks at the clock.
CLOCK_EVERY = 256


def timed(call, seconds):
    """Run call() in batches until seconds passed: (calls/s, CPU ns/call)."""
    calls = 0
    cpu0 = time.process_time_ns()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(CLOCK_EVERY):
            call()
        calls += CLOCK_EVERY
        now = time.perf_counter()
        if now >= deadline:
            break
    cpu = time.process_time_ns() - cpu0
    return calls / (now - start), cpu / calls


def bench_client(path, transport, seconds):
    with shmchan.connect(path, transport=transport) as c:
        assert c.transport == transport, c.transport_reason
        data = bytes(range(shmchan.GR_PING2_LEN))
        ping2 = c.ping2
        return timed(lambda: ping2(data), seconds)


class RawSocket:
    """A client of the wire format alone (docs/protocol.md) over a Unix socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.next_id = 1
        self.rx = bytearray(HEADER.size + shmchan.GR_API_MAX_MSG_LEN)
        self.view = memoryview(self.rx)
        hello = HELLO.pack(shmchan.GR_API_VERSION, b"shmchan-raw-python")
        self.call(shmchan.GR_HELLO, hello)

    def call(self, req_type, payload):
        rid = self.next_id
        self.next_id = rid % 0xFFFFFFFF + 1
        self.sock.sendall(HEADER.pack(rid, req_type, len(payload)) + payload)
        self._read(0, HEADER.size)
        for_id, status, length = HEADER.unpack_from(self.rx)
        self._read(HEADER.size, HEADER.size + length)
        if for_id != rid or status:
            raise OSError(status, f"answer {for_id} to request {rid}: status {status}")
        return bytes(self.view[HEADER.size : HEADER.size + length])

    def _read(self, start, end):
        while start < end:
            n = self.sock.recv_into(self.view[start:end])
            if n == 0:
                raise ConnectionResetError("daemon closed the socket")
            start += n

    def close(self):
        self.sock.close()


def bench_raw(path, seconds):
    raw = RawSocket(path)
    try:
        data = bytes(range(shmchan.GR_PING2_LEN))
        assert raw.call(shmchan.GR_PING2, data) == data
        return timed(lambda: raw.call(shmchan.GR_PING2, data), seconds)
    finally:
        raw.close()


def bench_c(path, seconds, ping2_perf, transport):
    # No per-call stamps and no system-call counter: the counter's tracepoint
    # would put every system call of the machine on the socket's path.
    out = subprocess.run(
        [ping2_perf, "-s", path, "-t", transport, "-T", str(seconds), "--no-stamps",
         "--no-syscall-count", "--json", "-q"],
        check=True,
        capture_output=True,
        text=True,
        timeout=seconds * 10 + 30,
    ).stdout
    result = json.loads(out)
    return result["calls_per_s"], result["client_cpu_ns_per_call"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("socket", help="the daemon's socket")
    parser.add_argument("--seconds", type=float, default=1.0, help="per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every measurement")
    parser.add_argument("--ping2-perf", help="smoke/ping2_perf, for the C reference")
    parser.add_argument("--json", action="store_true", help="print JSON, not a table")
    args = parser.parse_args()

    kinds = {
        "shm": lambda: bench_client(args.socket, "shm", args.seconds),
        "socket": lambda: bench_client(args.socket, "socket", args.seconds),
        "raw": lambda: bench_raw(args.socket, args.seconds),
    }
    if args.ping2_perf:
        kinds["c"] = lambda: bench_c(args.socket, args.seconds, args.ping2_perf, "shm")
        kinds["c_socket"] = lambda: bench_c(args.socket, args.seconds, args.ping2_perf, "socket")
    rounds = {k: [] for k in kinds}
    for _ in range(args.rounds):
        for kind, run in kinds.items():
            rounds[kind].append(run())
    # Which way Client.call() and ping2() went: the package's C module, or
    # ctypes (not built, or SHMCHAN_PURE_PYTHON set).
    call_path = "ctypes" if shmchan.client._cfast is None else "_shmchan_fast"
    result = {"load_avg_1min": os.getloadavg()[0], "cpus": os.cpu_count(), "rounds": args.rounds,
              "call_path": call_path}
    for kind, runs in rounds.items():
        result[kind] = {
            "calls_per_s": statistics.median(r[0] for r in runs),
            "cpu_ns_per_call": statistics.median(r[1] for r in runs),
            "rounds_calls_per_s": [round(r[0]) for r in runs],
        }
    # Each round's ratio, of measurements taken one after the other, under
    # much the same load; then their median.
    for other in ("socket", "raw"):
        ratios = [s[0] / o[0] for s, o in zip(rounds["shm"], rounds[other])]
        result[f"shm_over_{other}"] = statistics.median(ratios)
        result[f"shm_over_{other}_rounds"] = [round(r, 1) for r in ratios]
    if "c" in result:
        ns = 1e9 / result["shm"]["calls_per_s"] - 1e9 / result["c"]["calls_per_s"]
        result["python_overhead_ns_per_call"] = ns
        result["python_overhead_cpu_ns_per_call"] = (
            result["shm"]["cpu_ns_per_call"] - result["c"]["cpu_ns_per_call"]
        )
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
        return
    names = {
        "shm": "Python, shmchan, shm",
        "socket": "Python, shmchan, socket",
        "raw": "Python, socket module",
        "c": "C, ping2_perf, shm",
        "c_socket": "C, ping2_perf, socket",
    }
    print(f"ping2, median of {args.rounds} rounds of {args.seconds} s; "
          f"load average {result['load_avg_1min']:.1f} on {result['cpus']} CPUs; "
          f"the package's calls through {call_path}")
    print(f"{'client':26} {'calls/s':>10} {'CPU ns/call':>12}  rounds")
    for kind in kinds:
        r = result[kind]
        print(f"{names[kind]:26} {r['calls_per_s']:10.0f} {r['cpu_ns_per_call']:12.0f}  "
              f"{r['rounds_calls_per_s']}")
    print(f"shm / socket, median of the rounds' ratios: {result['shm_over_socket']:.1f}x "
          f"{result['shm_over_socket_rounds']}")
    print(f"shm / socket module: {result['shm_over_raw']:.1f}x {result['shm_over_raw_rounds']}")
    if "c" in result:
        print(f"Python overhead per call against C: {result['python_overhead_ns_per_call']:.0f} ns "
              f"(CPU: {result['python_overhead_cpu_ns_per_call']:.0f} ns)")


if __name__ == "__main__":
    main()
