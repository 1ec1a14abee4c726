# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The performance goals of make bench (docs/benchmark-method.md, "Goals"),
# computed from a loaded results folder (bench_results.py): each goal's
# value, target and verdict, with where the value comes from. Goals measured
# side by side in rounds take the median of the rounds whose references held
# still; the rounds themselves are listed for the noise table. The
# occasional calls' goals are bench_occasional.py's.

from bench_results import median, ratio, rtt_ns

# Requests in flight of the echo reference (bench.sh ECHO_DEPTH).
ECHO_DEPTH = 32


def met(value, op, target):
    if value is None:
        return None
    return value <= target if op == "<=" else value >= target if op == ">=" else value < target


def round_text(ratio_value, num, den, t):
    moved = ""
    if not t["stable"]:
        moved = (f"; **references moved** by {100 * t['spread']:.0f} % in the best of "
                 f"{t['tries']} tries")
    elif t["tries"] > 1:
        moved = f"; steady in try {t['tries']}"
    return (f"{ratio_value:.2f} ({num} / {den:.0f}; reference {t['ref1_ns']:.0f} ns before, "
            f"{t['ref2_ns']:.0f} ns after{moved})")


def shared_text(value, t, what):
    moved = ""
    if not t["stable"]:
        moved = (f"; **one client's rate moved** by {100 * t['spread']:.0f} % in the best of "
                 f"{t['tries']} tries")
    elif t["tries"] > 1:
        moved = f"; steady in try {t['tries']}"
    return f"{value:.2f} ({what}{moved})"


def ref_detail(r):
    if r is None or "spread" not in r:
        return ""
    lo, hi, n = r["spread"]
    return f" (median of {n} measurements over the run: {lo:.0f} to {hi:.0f} ns)"


def strace_text(v):
    # The difference of a short and a long run: below 0 when the longer run
    # happened to make fewer calls outside its loop (startup, exit), i.e.
    # none per call within what the two runs can tell.
    if v is None:
        return "n/a"
    if v < 0:
        return f"0 within the runs' difference ({v:.5f})"
    return f"{v:.5f}"


class Goals:
    """The goals of a run, in the order of the report's table, and what
    goes beside them."""

    def __init__(self):
        self.goals = []
        # Measured beside the goals, for comparison, and judged by none:
        # (what, value, detail).
        self.info_rows = []
        # Every round a goal took, for the noise table.
        self.rounds = []

    def goal(self, name, value, op, target, detail):
        self.goals.append({"goal": name, "measured": value, "op": op, "target": target,
                           "met": met(value, op, target), "detail": detail})

    def value_of_rounds(self, values, trs, listed=True, each="each beside its reference"):
        # The median of the rounds whose references held still; of every
        # round, marked, when none did; and the start of the detail that
        # says so, "..., EACH: ". listed: the rounds go to the noise table
        # (once: a second goal of the same rounds says False).
        if listed:
            self.rounds.extend(trs)
        steady = [v for v, t in zip(values, trs) if t["stable"]]
        if steady:
            left_out = len(values) - len(steady)
            return median(steady), (f"median of the {len(steady)} steady rounds of {len(values)}"
                                    + (f" ({left_out} with moved references left out)"
                                       if left_out else "") + f", {each}: ")
        return median(values), (f"**no round with steady references**: median of all "
                                f"{len(values)}, {each}: ")

    def noise(self):
        # Every goal round, with its tries and how far its references moved.
        return [{"round": t["name"], "tries": t["tries"], "steady": t["stable"],
                 "stopped": t["stopped"], "spread": t["spread"], "spreads": t["spreads"],
                 "ref1_ns": t["ref1_ns"], "ref2_ns": t["ref2_ns"]} for t in self.rounds]


def round_trip_goals(res, g, rtt_rounds):
    # The busy round trip against the cache line it is bound by, and against
    # the raw rte_ring ping-pong of the same run, its floor.
    shm1 = res.cell("memfd", "spinning", 1, 1, 64)
    cl = res.ref("cacheline")
    cl_value = None
    if rtt_rounds:
        parts, values = [], []
        for t in rtt_rounds:
            c = t["cell"]
            values.append(rtt_ns(c) / t["ref_ns"])
            p50 = (f"p50 {c['latency_ns']['p50']} ns" if c.get("latency_ns")
                   else "unstamped, as the reference")
            parts.append(round_text(values[-1], f"{rtt_ns(c):.0f} ns, {p50}", t["ref_ns"], t))
        cl_value, how = g.value_of_rounds(values, rtt_rounds)
        g.goal("shm ping2 round trip / raw cache-line ping-pong", cl_value, "<=", 3.0,
               how + "; ".join(parts))
    elif shm1 and cl:
        cl_value = ratio(rtt_ns(shm1), cl["ns_per_op"])
        g.goal("shm ping2 round trip / raw cache-line ping-pong", cl_value, "<=", 3.0,
               f"{rtt_ns(shm1):.0f} ns / {cl['ns_per_op']:.0f} ns" + ref_detail(cl))
    ring_goal(res, g, res.goal_rounds("ring"), res.beside_rounds(), shm1, cl_value)


def beside_text(r):
    return (f"{r['ratio_p50']:.2f} over {r['pairs']} pairs (p25 {r['ratio_p25']:.2f}, p75 "
            f"{r['ratio_p75']:.2f}; ring p50 {r['ring_ns']['p50']:.0f} ns, "
            f"{r['ring_ns']['min']:.0f} to {r['ring_ns']['max']:.0f}; shm p50 "
            f"{r['shm_ns']['p50']:.0f} ns, {r['shm_ns']['min']:.0f} to "
            f"{r['shm_ns']['max']:.0f})")


def ring_goal(res, g, ring_rounds, beside_rounds, shm1, cl_value):
    # The busy round trip over the raw ring ping-pong. Measured pair by pair
    # (ping2_perf --beside-ring: blocks of each a millisecond or two apiece,
    # alternated), each pair in one placement of the vCPUs; the goal is the
    # median of the rounds' medians. The triples (ring, cell, ring, a second
    # each) follow for comparison: a ring measured a second away from the
    # cell may be in another placement, and the ratio would say where the
    # hypervisor put them.
    name = "shm ping2 busy round trip / raw rte_ring ping-pong"
    beside = "" if cl_value is None else f"; the cache-line ratio beside it: {cl_value:.2f}"
    triples = ""
    if ring_rounds:
        values = [rtt_ns(t["cell"]) / t["ref_ns"] for t in ring_rounds]
        parts = [round_text(v, f"{rtt_ns(t['cell']):.0f} ns", t["ref_ns"], t)
                 for v, t in zip(values, ring_rounds)]
        triples = "; the rounds of ring, cell, ring beside it: " + "; ".join(parts)
    if beside_rounds:
        g.rounds.extend(ring_rounds)
        value = median([r["ratio_p50"] for r in beside_rounds])
        g.goal(name, value, "<=", 1.2,
               f"median of {len(beside_rounds)} rounds of blocks alternated, each the median "
               "of its pairs' ratios: " + "; ".join(beside_text(r) for r in beside_rounds)
               + triples + beside)
        return
    if ring_rounds:
        values = [rtt_ns(t["cell"]) / t["ref_ns"] for t in ring_rounds]
        value, how = g.value_of_rounds(values, ring_rounds)
        parts = [round_text(v, f"{rtt_ns(t['cell']):.0f} ns", t["ref_ns"], t)
                 for v, t in zip(values, ring_rounds)]
        g.goal(name, value, "<=", 1.2, how + "; ".join(parts) + beside)
        return
    rp = res.ref("ring-pingpong-z64")
    if shm1 and rp:
        g.goal(name, ratio(rtt_ns(shm1), rp["ns_per_op"]), "<=", 1.2,
               f"{rtt_ns(shm1):.0f} ns / {rp['ns_per_op']:.0f} ns" + ref_detail(rp) + beside)


def busy_goals(res, g):
    shm1 = res.cell("memfd", "spinning", 1, 1, 64)
    sock1 = res.cell("socket", "spinning", 1, 1, 64)
    shm32 = res.cell("memfd", "spinning", 32, 1, 64)
    if shm1 and sock1:
        g.goal("shm ping2 calls/s / socket calls/s",
               ratio(shm1["calls_per_s"], sock1["calls_per_s"]), ">=", 25.0,
               f"{shm1['calls_per_s']:.0f} / {sock1['calls_per_s']:.0f}")
    if shm1:
        c, d = shm1["client_syscalls_per_call"], shm1["daemon_syscalls_per_call"]
        worst = None if c is None or d is None else max(c, d)
        g.goal("syscalls per call, busy channel (client, daemon)", worst, "<", 0.01,
               f"client {c}, daemon {d} (tracepoint); strace: client "
               f"{strace_text(res.strace['client'])}, daemon {strace_text(res.strace['daemon'])}")
    stream_rounds, echo_rounds = res.goal_rounds("stream"), res.goal_rounds("echo")
    rs = res.ref("ring-stream-z64")
    if stream_rounds:
        parts, values = [], []
        for t in stream_rounds:
            c = t["cell"]
            values.append(c["calls_per_s"] / t["ref_ops_per_s"])
            parts.append(round_text(values[-1], f"{c['calls_per_s']:.0f}", t["ref_ops_per_s"], t))
        value, how = g.value_of_rounds(values, stream_rounds)
        detail = how + "; ".join(parts)
        if echo_rounds:
            echo_values = [t["cell"]["calls_per_s"] / t["ref_ops_per_s"] for t in echo_rounds]
            g.rounds.extend(echo_rounds)
            detail += (f". Against the raw ring echo with {ECHO_DEPTH} in flight, its ceiling: "
                       + ", ".join(f"{v:.2f}" + ("" if t["stable"] else " (references moved)")
                                   for v, t in zip(echo_values, echo_rounds))
                       + f" (median {median(echo_values):.2f})")
        g.goal("shm depth 32 requests/s / raw ring streaming", value, ">=", 0.5, detail)
    elif shm32 and rs:
        g.goal("shm depth 32 requests/s / raw ring streaming",
               ratio(shm32["calls_per_s"], rs["ops_per_s"]), ">=", 0.5,
               f"{shm32['calls_per_s']:.0f} / {rs['ops_per_s']:.0f}" + ref_detail(rs))


def sleeping_goals(res, g):
    sleep1 = res.cell("memfd", "sleeping", 1, 1, 64)
    efd = res.ref("eventfd-nopin")
    if sleep1 and efd:
        g.goal("sleeping-daemon round trip / raw eventfd round trip",
               ratio(rtt_ns(sleep1), efd["ns_per_op"]), "<=", 1.5,
               f"{rtt_ns(sleep1):.0f} ns / {efd['ns_per_op']:.0f} ns (unpinned)"
               + ref_detail(efd))
    if res.idle:
        frac = res.idle["daemon_cpu_core_fraction"]
        g.goal("daemon CPU, 16 idle clients (fraction of a core)", frac, "<", 0.01,
               f"{res.idle['daemon_cpu_ns']} ns in {res.idle['idle_seconds']} s")


def idle_channel_rounds(res):
    # The busy client's round trip beside the most idle channels over beside
    # none, round by round (each round measures both within seconds).
    counts = sorted({n for (_, n) in res.idle_channel_cells})
    rows = []
    for rnd in sorted({r for (r, _) in res.idle_channel_cells}):
        row = {"round": rnd, "cells": {n: res.idle_channel_cells.get((rnd, n)) for n in counts}}
        none, most = row["cells"].get(0), row["cells"].get(counts[-1])
        row["rtt_ratio"] = ratio(rtt_ns(most), rtt_ns(none)) if none and most else None
        p50s = [((c or {}).get("latency_ns") or {}).get("p50") for c in (none, most)]
        row["p50_ratio"] = ratio(p50s[1], p50s[0]) if None not in p50s else None
        rows.append(row)
    return counts, rows


def idle_channel_goal(g, counts, rows):
    # The goal takes the p50s: a mean round trip of one second's cell moves
    # with every time the scheduler takes a CPU from either side, a median
    # does not.
    p50s = [r["p50_ratio"] for r in rows if r["p50_ratio"] is not None]
    means = [r["rtt_ratio"] for r in rows if r["rtt_ratio"] is not None]
    if p50s and counts[-1] > 0:
        g.goal(f"busy round trip (p50) beside {counts[-1]} idle channels / beside none",
               median(p50s), "<=", 1.1,
               f"median of {len(p50s)} alternated rounds: " + ", ".join(f"{v:.2f}" for v in p50s)
               + f"; of the mean round trips: {median(means):.2f}")


def sixteen_client_goals(res, g):
    # The 16-client goals in both placements: the daemon on a CPU of its own
    # with the clients on the others (the "pinned" cells), as a DPDK
    # deployment places its poller; and everything wherever the scheduler
    # puts it on the machine's CPUs (bench.sh shared_round: one client, 16,
    # one client again; the daemon as it starts by default), beside one round
    # with --poller-nice off, which no goal judges: it shows what the
    # poller's nice value buys.
    pin1 = res.cell("memfd", "pinned", 1, 1, 64)
    pin16 = res.cell("memfd", "pinned", 1, 16, 64)
    if pin16 and pin1:
        g.goal("16 clients aggregate / 1 client, poller on a CPU of its own",
               ratio(pin16["calls_per_s"], pin1["calls_per_s"]), ">=", 0.7,
               f"{pin16['calls_per_s']:.0f} / {pin1['calls_per_s']:.0f}")
    if pin16:
        per_cpu = pin16.get("fastest_over_slowest_per_cpu")
        g.goal("16 clients fastest / slowest, poller on a CPU of its own",
               pin16["fastest_over_slowest"], "<=", 1.5,
               f"{pin16['seconds']:.0f} s window; per second of each client's CPU time: "
               + (f"{per_cpu:.2f}" if per_cpu else "n/a") + "; runnable but waiting for a CPU: "
               f"{pin16.get('client_runq_wait_ns_per_call')} ns per call")
    for mode, judged in (("default", True), ("off", False)):
        trs = res.shared_rounds(mode)
        if not trs:
            continue
        where = f"all on shared CPUs, poller at nice {res.nices.get(mode, '?')}"
        if mode == "off":
            where += " (--poller-nice off; not a goal)"
        aggs = [t["cell"]["calls_per_s"] / t["one_calls_per_s"] for t in trs]
        fairs = [t["cell"]["fastest_over_slowest"] for t in trs]
        agg_parts = [shared_text(v, t, f"{t['cell']['calls_per_s']:.0f} / "
                                 f"{t['one_calls_per_s']:.0f}, one client {t['ref1_ns']:.0f} ns "
                                 f"per call before, {t['ref2_ns']:.0f} ns after")
                     for v, t in zip(aggs, trs)]
        fair_parts = [shared_text(v, t, f"{t['cell']['seconds']:.0f} s window, per second of CPU "
                                  f"{t['cell'].get('fastest_over_slowest_per_cpu') or 0:.2f}, "
                                  f"{t['cell'].get('client_runq_wait_ns_per_call') or 0:.0f} ns "
                                  "per call runnable without a CPU") for v, t in zip(fairs, trs)]
        if judged:
            value, how = g.value_of_rounds(aggs, trs)
            g.goal(f"16 clients aggregate / 1 client, {where}", value, ">=", 0.5,
                   how + "; ".join(agg_parts))
            steady = [v for v, t in zip(fairs, trs) if t["stable"]] or fairs
            g.goal(f"16 clients fastest / slowest, {where}", median(steady), "<=", 2.0,
                   "median of the same rounds: " + "; ".join(fair_parts))
        else:
            g.info_rows.append((f"16 clients aggregate / 1 client, {where}", median(aggs),
                                "; ".join(agg_parts)))
            g.info_rows.append((f"16 clients fastest / slowest, {where}", median(fairs),
                                "; ".join(fair_parts)))
