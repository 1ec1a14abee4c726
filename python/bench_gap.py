#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""The occasional call from Python: ping2 after gaps of silence.

One shmchan.Client on the shared-memory channel and one on the Unix socket,
in this process, warmed up, then for each gap its rounds of: gap, shm
ping2, gap, socket ping2. The transports alternate call by call, so that
both see the same machine within milliseconds, and each call comes after
the same silence of the whole process. Reports per gap and transport the
p50, p99 and max round trip and the shm/socket ratio of the p50s, as
ping2_perf --gap does (the same options, the same JSON).

  PYTHONPATH=python SHMCHAN_LIBRARY=build/client/libgr_api_client.so \\
      python3 python/bench_gap.py -s SOCKET --gap 1,20,300,1000 [--json]
"""

import argparse
import json
import math
import sys
import time

import shmchan

# As ping2_perf's options (smoke/ping2_perf.h): the most gaps and the longest
# gap, and the rounds after a gap when not given: enough to fill
# ROUNDS_BUDGET_MS of silence (a round is two gaps), from ROUNDS_MIN to
# ROUNDS_MAX.
MAX_GAPS = 8
MAX_GAP_MS = 60000
ROUNDS_BUDGET_MS = 4000
ROUNDS_MIN = 8
ROUNDS_MAX = 200
DEFAULT_WARMUP = 1000
TRANSPORTS = ("shm", "socket")


def gap_rounds(gap_ms, rounds=None):
    """The calls per transport after a gap of gap_ms: rounds, else as the
    budget says."""
    if rounds:
        return rounds
    return max(ROUNDS_MIN, min(ROUNDS_MAX, ROUNDS_BUDGET_MS // (2 * gap_ms)))


def percentile(ordered, fraction):
    """The sample at rank ceil(fraction * n) of ordered (ascending)."""
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def summary(samples):
    ordered = sorted(samples)
    return {"count": len(ordered), "p50": percentile(ordered, 0.50),
            "p99": percentile(ordered, 0.99), "max": ordered[-1]}


def timed_ping2(client, data):
    """One checked ping2 on client: its round trip in ns."""
    start = time.perf_counter_ns()
    echo = client.ping2(data)
    ns = time.perf_counter_ns() - start
    if echo != data:
        raise RuntimeError(f"ping2 on {client.transport}: the echo differs from the request")
    return ns


def measure(clients, data, gap_ms, rounds, quiet):
    """The rounds of one gap: its entry of the JSON's "gaps"."""
    samples = {t: [] for t in TRANSPORTS}
    for _ in range(rounds):
        for t in TRANSPORTS:
            time.sleep(gap_ms / 1000)
            samples[t].append(timed_ping2(clients[t], data))
    out = {"gap_ms": gap_ms, "rounds": rounds}
    for t in TRANSPORTS:
        out[t] = summary(samples[t])
    out["p50_ratio"] = round(out["shm"]["p50"] / out["socket"]["p50"], 3)
    if not quiet:
        print(f"bench_gap: after {gap_ms} ms gaps, {rounds} rounds: p50 shm "
              f"{out['shm']['p50'] / 1e3:.1f} us, socket {out['socket']['p50'] / 1e3:.1f} us",
              file=sys.stderr)
    return out


def parse_gaps(text):
    gaps = []
    for part in text.split(","):
        if not part.isdigit() or not 1 <= int(part) <= MAX_GAP_MS:
            raise argparse.ArgumentTypeError(f"'{part}' is not a number from 1 to {MAX_GAP_MS}")
        gaps.append(int(part))
    if len(gaps) > MAX_GAPS:
        raise argparse.ArgumentTypeError(f"more than {MAX_GAPS} gaps in '{text}'")
    return gaps


def positive(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number above 0")
    return int(text)


def fmt_ns(ns):
    # As ping2_perf's text output.
    if ns < 10000:
        return f"{ns} ns"
    if ns < 10_000_000:
        return f"{ns / 1e3:.1f} us"
    return f"{ns / 1e6:.1f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-s", dest="socket", default=None, help="the daemon's socket")
    parser.add_argument("--gap", type=parse_gaps, required=True, metavar="MS[,MS...]",
                        help="the gaps of silence, in ms")
    parser.add_argument("--gap-rounds", type=positive, metavar="N",
                        help="calls on each transport after each gap (default: "
                             f"{ROUNDS_BUDGET_MS} ms of silence, {ROUNDS_MIN} to {ROUNDS_MAX})")
    parser.add_argument("-w", dest="warmup", type=int, default=DEFAULT_WARMUP,
                        help=f"calls on each connection before measuring ({DEFAULT_WARMUP})")
    parser.add_argument("--spin", type=int, metavar="US", help="the client spin budget")
    parser.add_argument("--json", action="store_true", help="print JSON, not a table")
    parser.add_argument("-q", dest="quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args()

    data = bytes(range(shmchan.GR_PING2_LEN))
    clients = {}
    try:
        for t in TRANSPORTS:
            clients[t] = shmchan.connect(args.socket, transport=t, spin_us=args.spin,
                                         version="bench_gap.py")
    except OSError as e:
        for c in clients.values():
            c.close()
        sys.exit(f"bench_gap.py: connect {args.socket or 'the default socket'} "
                 f"(transport {t}): {e}")
    try:
        for t in TRANSPORTS:
            for _ in range(args.warmup):
                clients[t].ping2(data)
        start = time.monotonic()
        gaps = [measure(clients, data, ms, gap_rounds(ms, args.gap_rounds), args.quiet)
                for ms in args.gap]
        seconds = time.monotonic() - start
        reason = clients["shm"].transport_reason
    finally:
        for c in clients.values():
            c.close()
    # A Python process is no DPDK secondary: its channel is in a memfd.
    result = {"mode": "gap", "client": "python", "transport": "shm+socket",
              "transport_reason": reason, "backing": "memfd", "request": "GR_PING2",
              "size": shmchan.GR_PING2_LEN, "spin_us": args.spin, "warmup": args.warmup,
              "seconds": round(seconds, 3), "gaps": gaps}
    if args.json:
        print(json.dumps(result))
        return
    print("shmchan.Client on shm and on the socket, one each, alternated call by call: ping2")
    print(f"{'after':10} {'rounds':>6}  {'shm p50 / p99':24} {'socket p50 / p99':24} "
          "shm/socket p50")
    for g in gaps:
        shm = f"{fmt_ns(g['shm']['p50'])} / {fmt_ns(g['shm']['p99'])}"
        sock = f"{fmt_ns(g['socket']['p50'])} / {fmt_ns(g['socket']['p99'])}"
        print(f"{str(g['gap_ms']) + ' ms':10} {g['rounds']:6}  {shm:24} {sock:24} "
              f"{g['p50_ratio']:.2f}")


if __name__ == "__main__":
    main()
