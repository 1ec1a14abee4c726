#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The report of a make bench run (smoke/bench.sh): reads the JSON of
# ref_bench and ping2_perf in a results folder, puts every cell beside its
# reference, computes the performance goals (docs/performance.md, "Goals"), and writes
#   summary.json   everything, machine-readable
#   report.md      the tables of docs/performance.md
#   *.dat          the data of smoke/plot.gp
# and prints the tables. Every JSON it reads is checked first
# (bench_check.py): a file that is not what a tool writes ends it with exit
# status 1 and a line naming the file. A goal round whose references moved is
# reported as such, with its spread: noise, never an error.
#
#   bench_report.py RESULTS_DIR STRACE_CALLS_SHORT STRACE_CALLS_LONG

import glob
import json
import os
import re
import sys

# No __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_check import BadOutput, load as load_checked, spread  # noqa: E402

if len(sys.argv) != 4:
    print(f"usage: {sys.argv[0]} RESULTS_DIR STRACE_CALLS_SHORT STRACE_CALLS_LONG", file=sys.stderr)
    sys.exit(2)
results = sys.argv[1]
strace_short, strace_long = int(sys.argv[2]), int(sys.argv[3])
if not os.path.isdir(results):
    print(f"bench_report: {results}: no such folder", file=sys.stderr)
    sys.exit(1)

SIZES = (64, 4096, 131072)
TRANSPORTS = ("socket", "memfd", "memzone")
MODES = ("spinning", "sleeping")
CONFIGS = [(1, 1), (1, 4), (1, 16), (32, 1), (32, 4), (32, 16)]
# Requests in flight of the echo reference (bench.sh ECHO_DEPTH).
ECHO_DEPTH = 32


def fail(msg):
    print(f"bench_report: {msg}", file=sys.stderr)
    sys.exit(1)


def load(name, kind):
    # The checked JSON of results/name, None if the run did not write it.
    path = os.path.join(results, name)
    if not os.path.exists(path):
        return None
    try:
        return load_checked(kind, path)
    except BadOutput as e:
        fail(f"bad output: {e}")


def load_meta():
    path = os.path.join(results, "meta.json")
    if not os.path.exists(path):
        return {}
    try:
        with open(path) as f:
            m = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"bad output: {path}: {e}")
    if not isinstance(m, dict):
        fail(f"bad output: {path}: not a JSON object")
    return m


meta = load_meta()
refs = {}
for path in glob.glob(os.path.join(results, "ref-*.json")):
    refs[os.path.basename(path)[4:-5]] = load(os.path.basename(path), "ref")

cells = {}
for path in glob.glob(os.path.join(results, "cell-*.json")):
    m = re.match(r"cell-(\w+)-(\w+)-d(\d+)-c(\d+)-z(\d+)\.json$", os.path.basename(path))
    if m is None:
        fail(f"bad output: {path}: not a cell's name (cell-TRANSPORT-MODE-dD-cC-zZ.json)")
    transport, mode, depth, clients, size = m.group(1), m.group(2), *map(int, m.groups()[2:])
    cells[(transport, mode, depth, clients, size)] = load(os.path.basename(path), "cell")
idle = load("idle.json", "idle")
# A busy client beside idle channels on its poller (bench.sh
# idle_channel_round): (round, idle channels) -> its cell.
idle_channel_cells = {}
for path in glob.glob(os.path.join(results, "idlech-*.json")):
    m = re.match(r"idlech-r(\d+)-n(\d+)\.json$", os.path.basename(path))
    if m is None:
        fail(f"bad output: {path}: not an idle channels cell's name (idlech-rR-nN.json)")
    idle_channel_cells[(int(m.group(1)), int(m.group(2)))] = load(os.path.basename(path), "cell")
memzone_skipped = None
if os.path.exists(os.path.join(results, "memzone-skipped.txt")):
    memzone_skipped = open(os.path.join(results, "memzone-skipped.txt")).read().strip()


def ref(name):
    # A reference measured at the start of the run and, for the goals', again
    # between the two daemons and at the end: the median of the three (one
    # disturbed measurement cannot move it), with their spread noted.
    runs = [r for r in (refs.get(name), refs.get(name + "-mid"), refs.get(name + "-end")) if r]
    if len(runs) < 2:
        return runs[0] if runs else None
    ns = sorted(r["ns_per_op"] for r in runs)
    med = dict(runs[0])
    med["ns_per_op"] = ns[len(ns) // 2] if len(ns) % 2 else (ns[len(ns) // 2 - 1] + ns[len(ns) // 2]) / 2
    med["ops_per_s"] = 1e9 / med["ns_per_op"]
    med["spread"] = (ns[0], ns[-1], len(ns))
    return med


def ref_detail(r):
    if r is None or "spread" not in r:
        return ""
    lo, hi, n = r["spread"]
    return f" (median of {n} measurements over the run: {lo:.0f} to {hi:.0f} ns)"


def cell(transport, mode, depth, clients, size):
    return cells.get((transport, mode, depth, clients, size))


def rtt_ns(r):
    # Mean round trip of one client with one request in flight.
    return 1e9 / r["calls_per_s"]


def reference(transport, mode, depth, size):
    # The raw mechanism a cell is built on: the socket on a Unix socket; a
    # pipelined channel on one ring streaming; a spinning channel on a ring
    # ping-pong; a sleeping daemon on an eventfd ping-pong.
    if transport == "socket":
        return f"unix-z{size}"
    if depth > 1:
        return f"ring-stream-z{size}"
    if mode in ("spinning", "pinned"):
        return f"ring-pingpong-z{size}"
    return "eventfd-nopin"


def strace_total(path):
    # The last line of strace -c: "100.00 SECONDS USECS/CALL CALLS [ERRORS] total"
    if not os.path.exists(path):
        return None
    with open(path) as f:
        totals = [l.split() for l in f if l.rstrip().endswith("total")]
    return int(totals[-1][3]) if totals else None


def strace_per_call(who):
    s = strace_total(os.path.join(results, f"strace-{who}-{strace_short}.txt"))
    l = strace_total(os.path.join(results, f"strace-{who}-{strace_long}.txt"))
    if s is None or l is None:
        return None
    return (l - s) / (strace_long - strace_short)


strace = {"client": strace_per_call("client"), "daemon": strace_per_call("daemon")}


def strace_text(v):
    # The difference of a short and a long run: below 0 when the longer run
    # happened to make fewer calls outside its loop (startup, exit), i.e.
    # none per call within what the two runs can tell.
    if v is None:
        return "n/a"
    if v < 0:
        return f"0 within the runs' difference ({v:.5f})"
    return f"{v:.5f}"

# ---- every cell beside its reference ----

cell_rows = []
for (transport, mode, depth, clients, size), r in sorted(cells.items()):
    ref_name = reference(transport, mode, depth, size)
    r_ref = ref(ref_name)
    lat = r["latency_ns"] or {}
    row = {
        "transport": transport,
        "daemon": mode,
        "depth": depth,
        "clients": clients,
        "size": size,
        "calls_per_s": r["calls_per_s"],
        "p50_ns": lat.get("p50"),
        "p99_ns": lat.get("p99"),
        "p999_ns": lat.get("p999"),
        "max_ns": lat.get("max"),
        "client_cpu_ns_per_call": r["client_cpu_ns_per_call"],
        "daemon_cpu_ns_per_call": r["daemon_cpu_ns_per_call"],
        "client_syscalls_per_call": r["client_syscalls_per_call"],
        "daemon_syscalls_per_call": r["daemon_syscalls_per_call"],
        "client_runq_wait_ns_per_call": r.get("client_runq_wait_ns_per_call"),
        "daemon_runq_wait_ns_per_call": r.get("daemon_runq_wait_ns_per_call"),
        "client_vcsw_per_call": r["client_vcsw_per_call"],
        "daemon_vcsw_per_call": r.get("daemon_vcsw_per_call"),
        "daemon_sleeps_per_call": r.get("daemon_sleeps_per_call"),
        "resp_ring_full_per_call": r.get("resp_ring_full_per_call"),
        "fastest_over_slowest": r["fastest_over_slowest"],
        "reference": ref_name,
        "vs_reference": r["calls_per_s"] / r_ref["ops_per_s"] if r_ref else None,
    }
    cell_rows.append(row)

# ---- goals ----


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


goals = []


# Measured beside the goals, for comparison, and judged by none: (what,
# value, detail).
info_rows = []


def goal(name, value, op, target, detail):
    ok = None
    if value is not None:
        ok = value <= target if op == "<=" else value >= target if op == ">=" else value < target
    goals.append({"goal": name, "measured": value, "op": op, "target": target, "met": ok,
                  "detail": detail})


shm1 = cell("memfd", "spinning", 1, 1, 64)
sock1 = cell("socket", "spinning", 1, 1, 64)
sleep1 = cell("memfd", "sleeping", 1, 1, 64)
both1 = cell("memfd", "bothsleep", 1, 1, 64)
shm32 = cell("memfd", "spinning", 32, 1, 64)
shm16 = cell("memfd", "spinning", 1, 16, 64)
# Two references of a triple further apart than this fraction of the lower
# one mean the vCPUs moved in between (bench.sh GOAL_REF_TOLERANCE); a run
# says which tolerance it used in goal-*-tries.json.
GOAL_REF_TOLERANCE = 0.2


def one_try(prefix):
    # One try of a triple: the reference, the cell, the reference again.
    r1, c, r2 = (load(f"{prefix}-{part}.json", kind)
                 for part, kind in (("ref1", "ref"), ("cell", "cell"), ("ref2", "ref")))
    if not (r1 and c and r2):
        return None
    a, b = r1["ns_per_op"], r2["ns_per_op"]
    return {"cell": c, "ref_ns": (a + b) / 2, "ref_ops_per_s": 2e9 / (a + b), "ref1_ns": a,
            "ref2_ns": b, "spread": spread(a, b)}


def triple(name, try_of=one_try, prefix="goal-"):
    # A goal measured side by side (bench.sh goal_triple), one try or more:
    # the first steady try, else the one whose references agree best, with
    # every try's spread. None if the run has no such round. try_of reads
    # one try from the path of its files (one_try; shared_try for bench.sh's
    # shared_round, whose files have no prefix).
    info_path = os.path.join(results, f"{prefix}{name}-tries.json")
    info = {}
    if os.path.exists(info_path):
        try:
            with open(info_path) as f:
                info = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            fail(f"bad output: {info_path}: {e}")
    tolerance = info.get("tolerance", GOAL_REF_TOLERANCE)
    tries = []
    for i in range(1, 100):
        t = try_of(os.path.join(results, f"{prefix}{name}-t{i}"))
        if t is None:
            break
        tries.append(t)
    if not tries:
        # A run of before the tries had files of their own: the last try only.
        t = try_of(os.path.join(results, f"{prefix}{name}"))
        if t is None:
            return None
        tries = [t]
    for t in tries:
        t["steady"] = t["spread"] <= tolerance
    steady = [t for t in tries if t["steady"]]
    chosen = dict(steady[0] if steady else min(tries, key=lambda t: t["spread"]))
    chosen.update({"name": name, "tries": len(tries), "stable": bool(steady),
                   "stopped": info.get("stopped"), "tolerance": tolerance,
                   "spreads": [t["spread"] for t in tries]})
    return chosen


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def rounds(name):
    # The goal's triples, one per round (bench.sh goal_round).
    return [t for t in (triple(f"{name}-r{i}") for i in (1, 2, 3)) if t]


def round_text(ratio_value, num, den, t):
    moved = ""
    if not t["stable"]:
        moved = (f"; **references moved** by {100 * t['spread']:.0f} % in the best of "
                 f"{t['tries']} tries")
    elif t["tries"] > 1:
        moved = f"; steady in try {t['tries']}"
    return (f"{ratio_value:.2f} ({num} / {den:.0f}; reference {t['ref1_ns']:.0f} ns before, "
            f"{t['ref2_ns']:.0f} ns after{moved})")


all_rounds = []


def goal_value(values, trs):
    # The median of the rounds whose references held still; of every round,
    # marked, when none did.
    all_rounds.extend(trs)
    steady = [v for v, t in zip(values, trs) if t["stable"]]
    if steady:
        left_out = len(values) - len(steady)
        return median(steady), (f"median of the {len(steady)} steady rounds of {len(values)}"
                                + (f" ({left_out} with moved references left out)" if left_out
                                   else "") + ", each beside its reference: ")
    return median(values), (f"**no round with steady references**: median of all "
                            f"{len(values)}, each beside its reference: ")


rtt_rounds = rounds("rtt")
cl = ref("cacheline")
if rtt_rounds:
    parts, values = [], []
    for t in rtt_rounds:
        c = t["cell"]
        values.append(rtt_ns(c) / t["ref_ns"])
        p50 = (f"p50 {c['latency_ns']['p50']} ns" if c.get("latency_ns")
               else "unstamped, as the reference")
        parts.append(round_text(values[-1], f"{rtt_ns(c):.0f} ns, {p50}", t["ref_ns"], t))
    value, how = goal_value(values, rtt_rounds)
    goal("shm ping2 round trip / raw cache-line ping-pong", value, "<=", 3.0,
         how + "; ".join(parts))
elif shm1 and cl:
    goal("shm ping2 round trip / raw cache-line ping-pong", ratio(rtt_ns(shm1), cl["ns_per_op"]),
         "<=", 3.0, f"{rtt_ns(shm1):.0f} ns / {cl['ns_per_op']:.0f} ns" + ref_detail(cl))

if shm1 and sock1:
    goal("shm ping2 calls/s / socket calls/s", ratio(shm1["calls_per_s"], sock1["calls_per_s"]),
         ">=", 25.0, f"{shm1['calls_per_s']:.0f} / {sock1['calls_per_s']:.0f}")
if shm1:
    c, d = shm1["client_syscalls_per_call"], shm1["daemon_syscalls_per_call"]
    worst = None if c is None or d is None else max(c, d)
    goal("syscalls per call, busy channel (client, daemon)", worst, "<", 0.01,
         f"client {c}, daemon {d} (tracepoint); strace: client {strace_text(strace['client'])}, "
         f"daemon {strace_text(strace['daemon'])}")
stream_rounds, echo_rounds = rounds("stream"), rounds("echo")
rs = ref("ring-stream-z64")
if stream_rounds:
    parts, values = [], []
    for t in stream_rounds:
        c = t["cell"]
        values.append(c["calls_per_s"] / t["ref_ops_per_s"])
        parts.append(round_text(values[-1], f"{c['calls_per_s']:.0f}", t["ref_ops_per_s"], t))
    value, how = goal_value(values, stream_rounds)
    detail = how + "; ".join(parts)
    if echo_rounds:
        echo_values = [t["cell"]["calls_per_s"] / t["ref_ops_per_s"] for t in echo_rounds]
        all_rounds.extend(echo_rounds)
        detail += (f". Against the raw ring echo with {ECHO_DEPTH} in flight, its ceiling: "
                   + ", ".join(f"{v:.2f}" + ("" if t["stable"] else " (references moved)")
                               for v, t in zip(echo_values, echo_rounds))
                   + f" (median {median(echo_values):.2f})")
    goal("shm depth 32 requests/s / raw ring streaming", value, ">=", 0.5, detail)
elif shm32 and rs:
    goal("shm depth 32 requests/s / raw ring streaming", ratio(shm32["calls_per_s"], rs["ops_per_s"]),
         ">=", 0.5, f"{shm32['calls_per_s']:.0f} / {rs['ops_per_s']:.0f}" + ref_detail(rs))
efd = ref("eventfd-nopin")
if sleep1 and efd:
    goal("sleeping-daemon round trip / raw eventfd round trip",
         ratio(rtt_ns(sleep1), efd["ns_per_op"]), "<=", 1.5,
         f"{rtt_ns(sleep1):.0f} ns / {efd['ns_per_op']:.0f} ns (unpinned)" + ref_detail(efd))
if idle:
    frac = idle["daemon_cpu_core_fraction"]
    goal("daemon CPU, 16 idle clients (fraction of a core)", frac, "<", 0.01,
         f"{idle['daemon_cpu_ns']} ns in {idle['idle_seconds']} s")
# The busy client's round trip beside the most idle channels over beside
# none, round by round (each round measures both within seconds), and the
# median of the rounds.
idle_channel_counts = sorted({n for (_, n) in idle_channel_cells})
idle_channel_rounds = []
for rnd in sorted({r for (r, _) in idle_channel_cells}):
    row = {"round": rnd, "cells": {n: idle_channel_cells.get((rnd, n))
                                   for n in idle_channel_counts}}
    none, most = row["cells"].get(0), row["cells"].get(idle_channel_counts[-1])
    row["rtt_ratio"] = ratio(rtt_ns(most), rtt_ns(none)) if none and most else None
    p50s = [((c or {}).get("latency_ns") or {}).get("p50") for c in (none, most)]
    row["p50_ratio"] = ratio(p50s[1], p50s[0]) if None not in p50s else None
    idle_channel_rounds.append(row)
# The goal takes the p50s: a mean round trip of one second's cell moves with
# every time the scheduler takes a CPU from either side, a median does not.
idle_channel_p50s = [r["p50_ratio"] for r in idle_channel_rounds if r["p50_ratio"] is not None]
idle_channel_means = [r["rtt_ratio"] for r in idle_channel_rounds if r["rtt_ratio"] is not None]
if idle_channel_p50s and idle_channel_counts[-1] > 0:
    goal(f"busy round trip (p50) beside {idle_channel_counts[-1]} idle channels / beside none",
         median(idle_channel_p50s), "<=", 1.1,
         f"median of {len(idle_channel_p50s)} alternated rounds: "
         + ", ".join(f"{v:.2f}" for v in idle_channel_p50s)
         + f"; of the mean round trips: {median(idle_channel_means):.2f}")
# The 16-client goals in both placements: the daemon on a CPU of its own
# with the clients on the others (the "pinned" cells), as a DPDK deployment
# places its poller; and everything wherever the scheduler puts it on the
# machine's CPUs (bench.sh shared_round: one client, 16, one client again;
# the daemon as it starts by default), beside one round with --poller-nice
# off, which no goal judges: it shows what the poller's nice value buys.
def poller_nices():
    # bench.sh's poller-nice.txt: "default N" and "off N", N the nice value
    # poller 0 had ("?" if it was not found).
    path = os.path.join(results, "poller-nice.txt")
    out = {}
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if len(parts) == 2:
                out[parts[0]] = parts[1]
    return out


nices = poller_nices()


def shared_try(prefix):
    # One try of a shared-CPU round: one client, 16, one client again.
    one1, many, one2 = (load(f"{prefix}-{part}.json", "cell") for part in ("one1", "many", "one2"))
    if not (one1 and many and one2):
        return None
    a, b = one1["calls_per_s"], one2["calls_per_s"]
    # As ref_bench references: time per call of the lone client.
    return {"cell": many, "one_calls_per_s": (a + b) / 2, "ref1_ns": 1e9 / a, "ref2_ns": 1e9 / b,
            "spread": spread(a, b)}


def shared_rounds(mode):
    # bench.sh shared_round: the chosen try of each round, as for a goal.
    return [t for t in (triple(f"shared-{mode}-r{r}", shared_try, "") for r in range(1, 10)) if t]


def shared_text(value, t, what):
    moved = ""
    if not t["stable"]:
        moved = (f"; **one client's rate moved** by {100 * t['spread']:.0f} % in the best of "
                 f"{t['tries']} tries")
    elif t["tries"] > 1:
        moved = f"; steady in try {t['tries']}"
    return f"{value:.2f} ({what}{moved})"


pin1 = cell("memfd", "pinned", 1, 1, 64)
pin16 = cell("memfd", "pinned", 1, 16, 64)
if pin16 and pin1:
    goal("16 clients aggregate / 1 client, poller on a CPU of its own",
         ratio(pin16["calls_per_s"], pin1["calls_per_s"]), ">=", 0.7,
         f"{pin16['calls_per_s']:.0f} / {pin1['calls_per_s']:.0f}")
if pin16:
    per_cpu = pin16.get("fastest_over_slowest_per_cpu")
    goal("16 clients fastest / slowest, poller on a CPU of its own", pin16["fastest_over_slowest"],
         "<=", 1.5, f"{pin16['seconds']:.0f} s window; per second of each client's CPU time: "
         + (f"{per_cpu:.2f}" if per_cpu else "n/a") + "; runnable but waiting for a CPU: "
         f"{pin16.get('client_runq_wait_ns_per_call')} ns per call")
for mode, judged in (("default", True), ("off", False)):
    trs = shared_rounds(mode)
    if not trs:
        continue
    where = f"all on shared CPUs, poller at nice {nices.get(mode, '?')}"
    if mode == "off":
        where += " (--poller-nice off; not a goal)"
    aggs = [t["cell"]["calls_per_s"] / t["one_calls_per_s"] for t in trs]
    fairs = [t["cell"]["fastest_over_slowest"] for t in trs]
    agg_parts = [shared_text(v, t, f"{t['cell']['calls_per_s']:.0f} / {t['one_calls_per_s']:.0f}, "
                             f"one client {t['ref1_ns']:.0f} ns per call before, "
                             f"{t['ref2_ns']:.0f} ns after") for v, t in zip(aggs, trs)]
    fair_parts = [shared_text(v, t, f"{t['cell']['seconds']:.0f} s window, per second of CPU "
                              f"{t['cell'].get('fastest_over_slowest_per_cpu') or 0:.2f}, "
                              f"{t['cell'].get('client_runq_wait_ns_per_call') or 0:.0f} ns per "
                              "call runnable without a CPU") for v, t in zip(fairs, trs)]
    if judged:
        value, how = goal_value(aggs, trs)
        goal(f"16 clients aggregate / 1 client, {where}", value, ">=", 0.5,
             how + "; ".join(agg_parts))
        steady = [v for v, t in zip(fairs, trs) if t["stable"]] or fairs
        goal(f"16 clients fastest / slowest, {where}", median(steady), "<=", 2.0,
             "median of the same rounds: " + "; ".join(fair_parts))
    else:
        info_rows.append((f"16 clients aggregate / 1 client, {where}", median(aggs),
                          "; ".join(agg_parts)))
        info_rows.append((f"16 clients fastest / slowest, {where}", median(fairs),
                          "; ".join(fair_parts)))

# Every goal round, with its tries and how far its references moved.
noise = [{"round": t["name"], "tries": t["tries"], "steady": t["stable"],
          "stopped": t["stopped"], "spread": t["spread"], "spreads": t["spreads"],
          "ref1_ns": t["ref1_ns"], "ref2_ns": t["ref2_ns"]} for t in all_rounds]

summary = {
    "meta": meta,
    "goal_rounds": noise,
    "references": refs,
    "cells": cell_rows,
    "bothsleep": both1,
    "idle": idle,
    "idle_channels": [{"round": r["round"], "rtt_ratio": r["rtt_ratio"],
                       "p50_ratio": r["p50_ratio"],
                       "calls_per_s": {str(n): (c or {}).get("calls_per_s")
                                       for n, c in r["cells"].items()}}
                      for r in idle_channel_rounds],
    "strace_syscalls_per_call": strace,
    "memzone_skipped": memzone_skipped,
    "goals": goals,
    "beside_goals": [{"what": w, "measured": v, "detail": d} for w, v, d in info_rows],
    "poller_nice": nices,
}
with open(os.path.join(results, "summary.json"), "w") as f:
    json.dump(summary, f, indent=1)

# ---- data of the plots ----


def num(v):
    return "NaN" if v is None else f"{v:.6g}"


# The sizes this run measured (BENCH_QUICK measures one), for plot.gp.
sizes_run = sorted({size for (_, _, _, _, size) in cells})
with open(os.path.join(results, "sizes.txt"), "w") as f:
    f.write(" ".join(map(str, sizes_run)) + "\n")
for mode in MODES:
    for size in sizes_run:
        with open(os.path.join(results, f"throughput-{mode}-z{size}.dat"), "w") as f:
            f.write("# config " + " ".join(TRANSPORTS) + "\n")
            for depth, clients in CONFIGS:
                vals = [cell(t, mode, depth, clients, size) for t in TRANSPORTS]
                f.write(f'"{depth}x{clients}" ' +
                        " ".join(num(v["calls_per_s"] if v else None) for v in vals) + "\n")
for transport in TRANSPORTS:
    for mode in MODES + ("bothsleep",):
        r = cell(transport, mode, 1, 1, 64)
        if r is None:
            continue
        with open(os.path.join(results, f"cdf-{transport}-{mode}.dat"), "w") as f:
            for ns, frac in r.get("latency_cdf", []):
                f.write(f"{ns} {frac}\n")
for depth in (1, 32):
    with open(os.path.join(results, f"cpu-d{depth}.dat"), "w") as f:
        f.write("# case client_cpu_ns daemon_cpu_ns\n")
        for mode in MODES:
            for transport in TRANSPORTS:
                r = cell(transport, mode, depth, 1, 64)
                f.write(f'"{transport} {mode}" ' +
                        f"{num(r['client_cpu_ns_per_call'] if r else None)} " +
                        f"{num(r['daemon_cpu_ns_per_call'] if r else None)}\n")

# ---- tables ----


def fmt_ns(ns):
    if ns is None:
        return "-"
    if ns < 0:
        return "-" + fmt_ns(-ns)
    if ns < 10000:
        return f"{ns:.0f} ns"
    if ns < 10e6:
        return f"{ns / 1e3:.1f} us"
    return f"{ns / 1e6:.1f} ms"


def signed_ns(ns):
    return ("+" if ns >= 0 else "") + fmt_ns(ns)


def fmt_rate(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.2f} M"
    if v >= 1e3:
        return f"{v / 1e3:.1f} k"
    return f"{v:.0f}"


def fmt_num(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


lines = []
lines.append(f"Run {meta.get('start')}, commit {meta.get('commit')}, {meta.get('cpus')} CPUs "
             f"({meta.get('cpu_model')}, {meta.get('hypervisor')}), kernel {meta.get('kernel')}; "
             f"load average {' '.join(meta.get('loadavg_start', []))} at the start, "
             f"{' '.join(meta.get('loadavg_end', []))} at the end; "
             f"{meta.get('cell_seconds')} s per cell; scheduler autogroup "
             f"{meta.get('autogroup')}.")
lines.append("")
lines.append("### Machine (lscpu)")
lines.append("")
cpu = meta.get("lscpu") or {}
if cpu:
    hyper = cpu.get("Hypervisor vendor")
    virt = cpu.get("Virtualization type")
    guest = (f"{hyper} guest" + (f" ({virt} virtualization)" if virt else "") if hyper
             else "none reported (bare metal, or a hypervisor that hides itself)")
    caches = ", ".join(f"{k.replace(' cache', '')} {cpu[k]}"
                       for k in ("L1d cache", "L1i cache", "L2 cache", "L3 cache") if k in cpu)
    machine = [
        ("model name", cpu.get("Model name")),
        ("vendor", cpu.get("Vendor ID")),
        ("CPUs", f"{cpu.get('CPU(s)')} ({cpu.get('Socket(s)', '?')} socket(s) x "
                 f"{cpu.get('Core(s) per socket', '?')} core(s) x "
                 f"{cpu.get('Thread(s) per core', '?')} thread(s))"),
        ("caches", caches or None),
        ("NUMA nodes", cpu.get("NUMA node(s)")),
        ("hypervisor", guest),
        ("container or VM (systemd-detect-virt)", meta.get("hypervisor")),
        ("kernel", meta.get("kernel")),
    ]
    lines.append("| | |")
    lines.append("|---|---|")
    for key, value in machine:
        lines.append(f"| {key} | {'-' if value is None else value} |")
else:
    lines.append(f"No lscpu output in this run: {meta.get('cpus')} CPUs, "
                 f"model {meta.get('cpu_model')}.")
lines.append("")
lines.append("### Noise: goal rounds")
lines.append("")
if noise:
    moved = [n for n in noise if not n["steady"]]
    lines.append(f"Each goal round is a triple (reference, cell, reference); its references "
                 f"farther apart than {100 * GOAL_REF_TOLERANCE:.0f} % mean that the vCPUs "
                 f"moved or other work took the CPUs, and the triple is measured again while "
                 f"the run's retry budget ({meta.get('retry_seconds', '?')} s) lasts. "
                 f"{len(noise) - len(moved)} of {len(noise)} rounds steady, "
                 f"{len(moved)} with moved references.")
    lines.append("")
    lines.append("| round | tries | references (before / after, chosen try) | spread of each try "
                 "| result |")
    lines.append("|---|---|---|---|---|")
    for n in noise:
        if n["steady"]:
            result = "steady"
        else:
            why = {"budget": "retry budget spent", "max-tries": "out of tries"}.get(
                n["stopped"], "not retried")
            result = f"**references moved** ({why})"
        lines.append(f"| {n['round']} | {n['tries']} | {n['ref1_ns']:.0f} / {n['ref2_ns']:.0f} ns "
                     f"| {', '.join(f'{100 * s:.0f} %' for s in n['spreads'])} | {result} |")
else:
    lines.append("No goal rounds in this run.")
lines.append("")
lines.append("### References (ref_bench)")
lines.append("")
lines.append("| reference | size | CPUs | per operation | operations/s | CPU per op (leader / follower) |")
lines.append("|---|---|---|---|---|---|")
ref_order = ["cacheline", "cacheline-mid", "cacheline-end", "ring-pingpong-z64",
             "ring-pingpong-z64-mid", "ring-pingpong-z64-end",
             "ring-pingpong-z4096", "ring-pingpong-z131072", "ring-stream-z64",
             "ring-stream-z64-mid", "ring-stream-z64-end", "ring-stream-z4096",
             "ring-stream-z131072", "ring-echo-z64", "ring-echo-z64-mid", "ring-echo-z64-end",
             "chan-pingpong-z64", "chan-pingpong-z64-mid", "chan-pingpong-z64-end",
             "chan-pingpong-z4096", "chan-pingpong-z131072", "chan-stream-z64",
             "chan-stream-z4096", "chan-stream-z131072", "chan-echo-z64", "lines-apart-z64",
             "ring-local",
             "chan-local", "eventfd", "eventfd-nopin", "eventfd-nopin-mid", "eventfd-nopin-end",
             "eventfd-gap",
             "eventfd-gap-nopin", "unix-z64", "unix-z4096", "unix-z131072", "clock", "syscall"]
for name in ref_order:
    r = refs.get(name)
    if r is None:
        continue
    cpus = "pinned " + ",".join(map(str, r["cpus"])) if r["cpus"] else "unpinned"
    size = "-" if r["size"] is None else str(r["size"])
    gap = f", after {r['gap_us'] // 1000} ms idle" if r.get("gap_us") else ""
    gap += f", {r['depth']} in flight" if r.get("depth") else ""
    gap += " (again, between the daemons)" if name.endswith("-mid") else ""
    gap += " (again, at the end)" if name.endswith("-end") else ""
    follower = r["follower_cpu_ns_per_op"]
    cpu = fmt_ns(r["leader_cpu_ns_per_op"]) + (f" / {fmt_ns(follower)}" if follower else "")
    lines.append(f"| {r['test']}{gap} | {size} | {cpus} | {fmt_ns(r['ns_per_op'])} "
                 f"per {r['unit'].replace('_', ' ')} | {fmt_rate(r['ops_per_s'])} | {cpu} |")
lines.append("")
lines.append("### Layers, 64 bytes, one request in flight")
lines.append("")
lines.append("Each row adds one layer to the row above: where the round trip goes.")
lines.append("")
lines.append("| layer | round trip | added | one process, both sides |")
lines.append("|---|---|---|---|")
layers = [
    ("cache line bounced between two processes (hardware)", ref("cacheline"), None),
    ("the rte_ring layout's cache lines alone (cells and index line, no code)",
     refs.get("lines-apart-z64"), None),
    ("raw rte_ring ping-pong, 5-cell messages", ref("ring-pingpong-z64"), refs.get("ring-local")),
    ("channel library alone (shmchan_client_*, shmchan_server_*)", ref("chan-pingpong-z64"),
     refs.get("chan-local")),
]
prev = None
for label, r, local in layers:
    if r is None:
        continue
    added = signed_ns(r["ns_per_op"] - prev) if prev is not None else ""
    loc = fmt_ns(local["ns_per_op"]) if local else ""
    lines.append(f"| {label} | {fmt_ns(r['ns_per_op'])} | {added} | {loc} |")
    prev = r["ns_per_op"]
if rtt_rounds:
    # Timed as the rows above are: the clock every 64 calls, none per call.
    unstamped = median([rtt_ns(t["cell"]) for t in rtt_rounds])
    added = signed_ns(unstamped - prev) if prev is not None else ""
    lines.append(f"| shmchand + client library (memfd, spinning daemon; goal rounds, median, "
                 f"no per-call stamps) | {fmt_ns(unstamped)} | {added} | |")
if shm1:
    added = signed_ns(rtt_ns(shm1) - prev) if prev is not None else ""
    lines.append(f"| the same, with ping2_perf's per-call stamps and checks (matrix cell) | "
                 f"{fmt_ns(rtt_ns(shm1))} | {added} | |")
lines.append("")
lines.append("| streaming, 64 bytes | messages/s |")
lines.append("|---|---|")
for label, r in (("raw rte_ring", ref("ring-stream-z64")),
                 ("channel library alone", refs.get("chan-stream-z64"))):
    if r is not None:
        lines.append(f"| {label} | {fmt_rate(r['ops_per_s'])} |")
for label, r in (("raw rte_ring echo", ref("ring-echo-z64")),
                 ("channel library alone, echo", refs.get("chan-echo-z64"))):
    if r is not None:
        lines.append(f"| {label}, {r['depth']} in flight (requests answered/s) | "
                     f"{fmt_rate(r['ops_per_s'])} |")
if shm32:
    lines.append(f"| shmchand, 32 in flight, 1 client (requests answered/s) | "
                 f"{fmt_rate(shm32['calls_per_s'])} |")
lines.append("")
lines.append("### Goals")
lines.append("")
lines.append("| goal | measured | target | met | from |")
lines.append("|---|---|---|---|---|")
for g in goals:
    met = "-" if g["met"] is None else ("yes" if g["met"] else "**no**")
    lines.append(f"| {g['goal']} | {fmt_num(g['measured'])} | {g['op']} {g['target']} | {met} | "
                 f"{g['detail']} |")
lines.append("")
if info_rows:
    lines.append("Beside the goals, for comparison:")
    lines.append("")
    lines.append("| what | measured | from |")
    lines.append("|---|---|---|")
    for what, value, detail in info_rows:
        lines.append(f"| {what} | {fmt_num(value)} | {detail} |")
    lines.append("")
for size in sizes_run:
    lines.append(f"### Matrix, {size} bytes")
    lines.append("")
    lines.append("calls/s (all clients), p50 / p99 latency, client + daemon CPU per call, "
                 "system calls and sleeps (voluntary context switches) per call, "
                 "throughput as a fraction of the cell's reference, and the ratio of the "
                 "fastest client's calls/s to the slowest's. The socket's cells count no "
                 "system calls (the counter's tracepoint slows every system call; strace "
                 "counts 2 client and 3 daemon calls per request, make bench-socket).")
    lines.append("")
    lines.append("| transport | daemon | depth | clients | calls/s | p50 | p99 | CPU client + daemon "
                 "| syscalls client / daemon | sleeps client / daemon | vs reference "
                 "| fastest / slowest |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in cell_rows:
        if row["size"] != size:
            continue
        cs, ds = row["client_syscalls_per_call"], row["daemon_syscalls_per_call"]
        lines.append(
            f"| {row['transport']} | {row['daemon']} | {row['depth']} | {row['clients']} | "
            f"{fmt_rate(row['calls_per_s'])} | {fmt_ns(row['p50_ns'])} | {fmt_ns(row['p99_ns'])} | "
            f"{fmt_ns(row['client_cpu_ns_per_call'])} + {fmt_ns(row['daemon_cpu_ns_per_call'])} | "
            f"{fmt_num(cs, 3)} / {fmt_num(ds, 3)} | "
            f"{fmt_num(row['client_vcsw_per_call'], 3)} / {fmt_num(row['daemon_vcsw_per_call'], 3)} | "
            f"{fmt_num(row['vs_reference'], 3)} of {row['reference']} | "
            f"{fmt_num(row['fastest_over_slowest'], 2)} |")
    lines.append("")
if both1:
    lines.append(f"Both ends sleeping (daemon -S 0, client spin 0), memfd, 64 B: "
                 f"{fmt_rate(both1['calls_per_s'])} calls/s, mean round trip "
                 f"{fmt_ns(rtt_ns(both1))}, p50 "
                 f"{fmt_ns((both1['latency_ns'] or {}).get('p50'))}; "
                 f"client {fmt_num(both1['client_syscalls_per_call'], 2)} and daemon "
                 f"{fmt_num(both1['daemon_syscalls_per_call'], 2)} system calls per call.")
    lines.append("")
if idle:
    lines.append(f"Idle: {idle['clients']} attached clients for {idle['idle_seconds']} s: daemon "
                 f"CPU {idle['daemon_cpu_ns'] / 1e6:.3f} ms "
                 f"({100 * idle['daemon_cpu_core_fraction']:.4f} % of a core), "
                 f"{idle['daemon_vcsw']} voluntary context switches, "
                 f"{idle['daemon_syscalls']} system calls. First request after idling: "
                 f"{fmt_ns(idle['first_request_ns'])}; after {idle['after_idle_ns']['gap_ms']} ms "
                 f"gaps ({idle['after_idle_ns']['rounds']} rounds): p50 "
                 f"{fmt_ns(idle['after_idle_ns']['p50'])}, max {fmt_ns(idle['after_idle_ns']['max'])}.")
    lines.append("")
if idle_channel_rounds:
    most = idle_channel_counts[-1]
    lines.append("### Idle channels beside a busy client")
    lines.append("")
    lines.append(f"One client, 64 B, one request in flight, spinning daemon with one poller, "
                 f"beside {', '.join(map(str, idle_channel_counts))} idle memfd channels "
                 f"attached on that poller; the order of the counts alternates from round to "
                 f"round. Load average at the start {' '.join(meta.get('loadavg_start') or [])}, "
                 f"at the end {' '.join(meta.get('loadavg_end') or [])}.")
    lines.append("")
    lines.append("| round | " + " | ".join(f"{n} idle: mean / p50" for n in idle_channel_counts)
                 + f" | {most} / 0, mean | {most} / 0, p50 |")
    lines.append("|---|" + "---|" * (len(idle_channel_counts) + 2))
    for r in idle_channel_rounds:
        parts = []
        for n in idle_channel_counts:
            c = r["cells"][n]
            parts.append("-" if c is None else
                         f"{fmt_ns(rtt_ns(c))} / {fmt_ns((c['latency_ns'] or {}).get('p50'))}")
        lines.append(f"| {r['round']} | " + " | ".join(parts) + f" | {fmt_num(r['rtt_ratio'], 2)} | "
                     f"{fmt_num(r['p50_ratio'], 2)} |")
    lines.append("")
if memzone_skipped:
    lines.append(f"memzone column skipped: {memzone_skipped}")
    lines.append("")

report = "\n".join(lines)
with open(os.path.join(results, "report.md"), "w") as f:
    f.write(report + "\n")
print(report)
