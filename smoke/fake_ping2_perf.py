#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A stand-in for ping2_perf in the tests of make bench (BENCH_PING2_PERF): it
# takes ping2_perf's options, sends nothing, and prints the JSON ping2_perf
# would (a cell, the idle cost with --idle, the occasional calls with --gap;
# a line of text without --json), so that the tests decide which run fails
# and how. It stands in for python/bench_gap.py too (BENCH_GAP_PY), whose
# options and JSON are ping2_perf --gap's, and for python/bench.py
# (BENCH_PY_BENCH: the run with --rounds prints its JSON). Each variable
# holds a piece of the command line (say "-t socket -d 1 -c 16"); the runs
# whose arguments contain it:
#
#   FAKE_PERF_CRASH=ARGS        die of SIGSEGV
#   FAKE_PERF_KILL_DAEMON=ARGS  kill the daemon (SHMT_PID) with SIGKILL, then fail
#   FAKE_PERF_BAD=ARGS          print JSON without calls_per_s

import json
import os
import signal
import sys
import time

# Options of ping2_perf that take a value.
VALUED = {"-s", "-t", "-d", "-c", "-z", "-T", "-w", "-n", "--idle", "--idle-rounds", "--spin",
          "--idle-channels", "--gap", "--gap-rounds", "--beside-ring", "--ping2-perf", "--rounds", "--seconds"}
# A rate for every cell: any positive value will do.
CALLS_PER_S = 1e6
# --gap: the round trips after every gap, shm and socket (ns): any positive
# values will do.
GAP_SHM_NS = {"p50": 90000, "p99": 150000, "max": 150000}
GAP_SOCKET_NS = {"p50": 100000, "p99": 160000, "max": 160000}


def wait_gone(pid, seconds=5.0):
    """Wait until pid has ended (a zombie or reaped), at most seconds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return
        except OSError:
            return
        time.sleep(0.01)


def matches(var, cmdline):
    piece = os.environ.get(var)
    return bool(piece) and f" {piece} " in f" {cmdline} "


def main():
    cmdline = " ".join(sys.argv[1:])
    opts, argv = {}, sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--":
            break
        opts[a] = argv.pop(0) if a in VALUED else True
    if matches("FAKE_PERF_CRASH", cmdline):
        print("fake ping2_perf: crashing as asked", file=sys.stderr)
        os.kill(os.getpid(), signal.SIGSEGV)
    if matches("FAKE_PERF_KILL_DAEMON", cmdline):
        pid = int(os.environ["SHMT_PID"])
        os.kill(pid, signal.SIGKILL)
        # As a real client, see the reset only once the daemon is gone (its
        # sockets close at the end of its exit).
        wait_gone(pid)
        print("fake ping2_perf: connection reset by peer", file=sys.stderr)
        return 1
    if "--rounds" in opts:
        # python/bench.py: each client's median round, as it prints them.
        one = {"calls_per_s": CALLS_PER_S, "cpu_ns_per_call": 1000.0,
               "rounds_calls_per_s": [int(CALLS_PER_S)] * int(opts["--rounds"])}
        r = {"load_avg_1min": 0.5, "cpus": 2, "rounds": int(opts["--rounds"]),
             "call_path": "_shmchan_fast"}
        r.update({k: dict(one) for k in ("shm", "socket", "raw", "c", "c_socket")})
        if matches("FAKE_PERF_BAD", cmdline):
            del r["c_socket"]
        print(json.dumps(r))
        return 0
    clients = int(opts.get("-c", 1))
    base = {"transport": "socket" if opts.get("-t") == "socket" else "shm",
            "transport_reason": "", "backing": "memzone" if "--secondary" in opts else "memfd",
            "request": "GR_PING2", "clients": clients,
            "idle_channels": int(opts.get("--idle-channels", 0)), "depth": int(opts.get("-d", 1)),
            "size": int(opts.get("-z", 64))}
    if "--json" not in opts:
        print("fake ping2_perf: 1000000 calls/s")
        return 0
    if "--idle" in opts:
        r = dict(base, mode="idle", idle_seconds=float(opts["--idle"]), daemon_cpu_ns=40000,
                 daemon_cpu_core_fraction=4e-6, daemon_vcsw=1, daemon_syscalls=None,
                 first_request_ns=100000, client0_vcsw=5, client0_syscalls=None,
                 after_idle_ns={"rounds": 20, "gap_ms": 20, "p50": 200000, "p99": 250000,
                                "max": 250000})
        print(json.dumps(r))
        return 0
    if "--gap" in opts:
        rounds = int(opts.get("--gap-rounds", 8))
        gaps = [{"gap_ms": int(ms), "rounds": rounds, "shm": dict(GAP_SHM_NS, count=rounds),
                 "socket": dict(GAP_SOCKET_NS, count=rounds),
                 "p50_ratio": GAP_SHM_NS["p50"] / GAP_SOCKET_NS["p50"]}
                for ms in opts["--gap"].split(",")]
        print(json.dumps(dict(base, mode="gap", transport="shm+socket", spin_us=None, warmup=0,
                              seconds=1.0, gaps=gaps)))
        return 0
    if "--beside-ring" in opts:
        print(json.dumps(dict(base, mode="beside-ring", warmup=0, seconds=1.0, pairs=400,
                              block_calls=2000, block_warmup_us=500, ratio_p25=1.0,
                              ratio_p50=1.1, ratio_p75=1.2,
                              ring_ns={"p50": 300.0, "min": 100.0, "max": 900.0},
                              shm_ns={"p50": 330.0, "min": 180.0, "max": 990.0})))
        return 0
    stamps = "--no-stamps" not in opts
    r = dict(base, mode="calls", count=int(CALLS_PER_S), seconds=1.0, calls_per_s=CALLS_PER_S,
             latency_ns={"p50": 900, "p99": 1500, "p999": 3000, "max": 9000} if stamps else None,
             client_cpu_ns_per_call=1000.0, daemon_cpu_ns_per_call=1000.0,
             client_vcsw_per_call=0.0, client_syscalls_per_call=None, daemon_vcsw_per_call=0.0,
             daemon_syscalls_per_call=None, client_runq_wait_ns_per_call=1.0,
             daemon_runq_wait_ns_per_call=1.0, daemon_sleeps_per_call=0.0,
             daemon_doorbells_per_call=0.0, resp_ring_full_per_call=0.0,
             per_client_calls_per_s=[CALLS_PER_S / clients] * clients, fastest_over_slowest=1.0,
             per_client_calls_per_cpu_s=[CALLS_PER_S / clients] * clients,
             fastest_over_slowest_per_cpu=1.0)
    if "--cdf" in opts:
        r["latency_cdf"] = [[500, 0.1], [900, 0.5], [1500, 0.99], [9000, 1.0]]
    if matches("FAKE_PERF_BAD", cmdline):
        del r["calls_per_s"]
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
