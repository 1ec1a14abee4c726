#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The report of a make bench run (smoke/bench.sh). Reads the JSON of the
# tools in a results folder (each checked first: a file that is not what its
# tool writes ends the report with exit status 1, naming it), judges the
# goals (docs/benchmark-method.md, "Goals") and writes summary.json,
# report.md (bench_tables.py) and the plots' data.
#
#   bench_report.py RESULTS_DIR [STRACE_CALLS_SHORT STRACE_CALLS_LONG]

import glob
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_routes  # noqa: E402
import bench_tables  # noqa: E402
from bench_data import BadOutput, fmt_gap, fmt_ns, fmt_rate, load, median, ratio, spread  # noqa: E402,E501
from bench_tables import CLIENTS, idle_channel_rows, rtt_ns  # noqa: E402

# Occasional calls: shm p50 / socket p50 at the worst gap, and its stretch.
OCCASIONAL_GOAL, OCCASIONAL_STRETCH = 1.0, 0.8
# The loaded host's scenarios: what runs beside the daemon and its client.
LOADED_WHAT = {
    "quiet": "nothing",
    "busy-1": "1 busy loop",
    "busy-1x": "a busy loop per CPU",
    "busy-2x": "2 busy loops per CPU",
    "cc-1x": "a compiler loop per CPU",
    "cc-2x": "2 compiler loops per CPU",
    "servers-1": "1 other channel server, its client calling back to back",
    "servers-2": "2 other channel servers, each with such a client",
}
# Its goals by kind of scenario: (label, scenarios, busy shm / socket at
# least, its stretch, occasional shm p50 / socket p50 at most, its stretch).
LOADED_GOALS = (
    ("loaded host, nothing beside (this run's quiet)", ("quiet",), 25, None, 0.8, None),
    ("loaded host, busy and compiler loops", ("busy-1", "busy-1x", "busy-2x", "cc-1x", "cc-2x"),
     3, None, 1.0, 0.8),
    ("loaded host, beside other channel servers", ("servers-1", "servers-2"), 1.5, 3, 1.0, None),
)
# The loaded host's cells in each scenario: bench.sh's LOADED_CELLS.
LOADED_CELLS = ("shm", "socket", "shm-evloop", "socket-evloop")
# Beside other servers, the slowest busy client's calls/s over the fastest's
# (ours, and the others' mean): none starves.
LOADED_SHARE_MIN = 0.25


def fail(msg):
    print(f"bench_report: {msg}", file=sys.stderr)
    sys.exit(1)


# ---- the results folder ----


class Results:
    def __init__(self, folder, strace_short=None, strace_long=None):
        if not os.path.isdir(folder):
            fail(f"{folder}: no such folder")
        self.dir = folder
        self.meta = self._meta()
        self.refs = {self._name(p)[4:]: self.load(p, "ref") for p in self._glob("ref-*.json")}
        self.cells, self.idle_channel_cells = {}, {}
        for path in self._glob("cell-*.json"):
            m = re.fullmatch(r"cell-(\w+)-(\w+)-d(\d+)-c(\d+)-z(\d+)", self._name(path))
            if m is None:
                fail(f"bad output: {path}: not a cell's name (cell-TRANSPORT-MODE-dD-cC-zZ.json)")
            self.cells[(m[1], m[2], *map(int, m.groups()[2:]))] = self.load(path, "cell")
        for path in self._glob("idlech-*.json"):
            m = re.fullmatch(r"idlech-r(\d+)-n(\d+)", self._name(path))
            if m is None:
                fail(f"bad output: {path}: not an idle channels cell's name (idlech-rR-nN.json)")
            self.idle_channel_cells[(int(m[1]), int(m[2]))] = self.load(path, "cell")
        self.idle = self.load("idle.json", "idle")
        self.gaps = {key: self.load(f"gap-{key}.json", "gap") for key, _ in CLIENTS}
        self.headline = self.load("headline.json", "headline")
        self.memzone_skipped = self._text("memzone-skipped.txt")
        self.nices = dict(line.split() for line in (self._text("poller-nice.txt") or "").splitlines()
                          if len(line.split()) == 2)
        self.strace = {who: self._strace(who, strace_short, strace_long)
                       for who in ("client", "daemon")}
        try:
            self.routes = bench_routes.rows(folder)
            self.loaded = self._loaded_rows()
        except BadOutput as e:
            fail(f"bad output: {e}")

    def _glob(self, pattern):
        return sorted(glob.glob(os.path.join(self.dir, pattern)))

    @staticmethod
    def _name(path):
        return os.path.basename(path)[:-len(".json")]

    def _text(self, name):
        path = os.path.join(self.dir, name)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return f.read().strip()

    def load(self, name, kind):
        """The checked JSON of a file of the folder, None if the run did not
        write it."""
        path = os.path.join(self.dir, name)
        if not os.path.exists(path):
            return None
        try:
            return load(kind, path)
        except BadOutput as e:
            fail(f"bad output: {e}")

    def _meta(self):
        # bench.sh's meta.txt (KEY=VALUE lines) and lscpu.txt.
        meta = dict(line.split("=", 1) for line in (self._text("meta.txt") or "").splitlines()
                    if "=" in line)
        lscpu = {}
        for line in (self._text("lscpu.txt") or "").splitlines():
            key, sep, value = line.partition(":")
            if sep and not key.startswith("Vulnerability") and key != "Flags":
                lscpu[key.strip()] = value.strip()
        meta["lscpu"] = lscpu
        meta["cpu_model"] = lscpu.get("Model name")
        return meta

    def _strace(self, who, short, long):
        # The per-call part of two strace -c runs of different lengths: the
        # difference of their totals over the difference of their calls.
        totals = []
        for calls in (short, long):
            text = self._text(f"strace-{who}-{calls}.txt") or ""
            lines = [line.split() for line in text.splitlines() if line.endswith("total")]
            totals.append(int(lines[-1][3]) if lines else None)
        if None in totals:
            return None
        return (totals[1] - totals[0]) / (long - short)

    def ref(self, name):
        """A reference measured at the start and, for the goals', again
        between the two daemons and at the end: the median of the three,
        with their spread."""
        runs = [r for r in (self.refs.get(name), self.refs.get(name + "-mid"),
                            self.refs.get(name + "-end")) if r]
        if len(runs) < 2:
            return runs[0] if runs else None
        ns = sorted(r["ns_per_op"] for r in runs)
        return dict(runs[0], ns_per_op=median(ns), ops_per_s=1e9 / median(ns),
                    spread=(ns[0], ns[-1], len(ns)))

    def cell(self, transport, mode, depth, clients, size):
        return self.cells.get((transport, mode, depth, clients, size))

    def _rounds(self, prefix, parts, kinds, max_rounds):
        # Each round, PREFIX-rR-PART.json: a triple, its cell between two
        # measurements of its base (references, or one client's rate). Its
        # base moved when those are further apart than the run's tolerance.
        out = []
        for r in range(1, max_rounds + 1):
            files = [self.load(f"{prefix}-r{r}-{p}.json", k) for p, k in zip(parts, kinds)]
            if None in files:
                continue
            if kinds[0] == "ref":
                a, b = files[0]["ns_per_op"], files[2]["ns_per_op"]
                base_ns = (a + b) / 2
            else:
                # A lone client's time per call; the base, its mean rate's.
                a, b = (1e9 / files[i]["calls_per_s"] for i in (0, 2))
                base_ns = 2e9 / (files[0]["calls_per_s"] + files[2]["calls_per_s"])
            name = prefix[len("goal-"):] if prefix.startswith("goal-") else prefix
            out.append({"name": f"{name}-r{r}", "cell": files[1], "ref1_ns": a, "ref2_ns": b,
                        "ref_ns": base_ns, "spread": spread(a, b),
                        "stable": spread(a, b) <= float(self.meta["tolerance"])})
        return out

    def goal_rounds(self, name):
        """The goal's triples (bench.sh goal_round), one per round."""
        return self._rounds(f"goal-{name}", ("ref1", "cell", "ref2"), ("ref", "cell", "ref"), 3)

    def shared_rounds(self, mode):
        """The shared-CPU rounds (bench.sh shared_round): one client, 16, one."""
        return self._rounds(f"shared-{mode}", ("one1", "many", "one2"), ("cell",) * 3, 9)

    def beside_rounds(self):
        return [r for r in (self.load(f"goal-beside-r{i}.json", "beside") for i in (1, 2, 3))
                if r]

    def _loaded_cells(self, scenario, cell):
        """A loaded-host cell's rounds (CELL: TRANSPORT, or TRANSPORT-evloop
        for the event-loop client, whose JSON must say so)."""
        evloop = cell.endswith("-evloop")
        cells = []
        for i in range(1, 10):
            name = f"loaded-{scenario}-{cell}-r{i}.json"
            c = self.load(name, "cell")
            if c is None:
                continue
            if bool(c.get("event_loop")) != evloop:
                raise BadOutput(f"{os.path.join(self.dir, name)}: 'event_loop' is not "
                                f"{'true' if evloop else 'false'}")
            cells.append(c)
        return cells

    def _loaded_rows(self):
        """The loaded host: a row per scenario, in the order run; the
        event-loop client's rates None where it did not run."""
        hosts = [self.load(os.path.basename(p), "host") for p in self._glob("loaded-*-host.json")]
        rows = []
        for h in sorted(hosts, key=lambda h: h["order"]):
            s = h["scenario"]
            cells = {t: self._loaded_cells(s, t) for t in LOADED_CELLS}
            if not cells["shm"] or not cells["socket"]:
                continue
            rate = {t: median([c["calls_per_s"] for c in cells[t]]) if cells[t] else None
                    for t in cells}
            evloop = {"evloop_shm": rate["shm-evloop"], "evloop_socket": rate["socket-evloop"],
                      "evloop_ratio": ratio(rate["shm-evloop"], rate["socket-evloop"])}
            p50 = {t: median([(c["latency_ns"] or {}).get("p50") or 0 for c in cells[t]])
                   for t in ("shm", "socket")}
            gap = self.load(f"loaded-{s}-gap.json", "gap")
            others = share = None
            if s.startswith("servers-") and h["load_processes"]:
                during = [o["requests"] / o["seconds"] for o in h["others"]
                          if o.get("transport") == "shm" and not o.get("event_loop")]
                if during:
                    others = median(during) / h["load_processes"]
                    share = min(rate["shm"], others) / max(rate["shm"], others)
            rows.append({"scenario": s, "what": LOADED_WHAT.get(s, s), "cpus": h["cpus"],
                         "runnable": median(h["runnable"]) if h["runnable"] else None,
                         "shm": rate["shm"], "socket": rate["socket"],
                         "busy_ratio": rate["shm"] / rate["socket"], "shm_p50": p50["shm"],
                         "socket_p50": p50["socket"], **evloop,
                         "gaps": {g["gap_ms"]: g for g in gap["gaps"]} if gap else {},
                         "others_per_server": others, "share": share})
        return rows


# ---- the goals ----


class Goals:
    """The goals of a run, in the order of the report's table; the rows
    measured beside them and judged by none; every round they took."""

    def __init__(self):
        self.goals, self.info_rows, self.rounds = [], [], []

    def goal(self, name, value, op, target, detail):
        met = None if value is None else {"<=": value <= target, ">=": value >= target,
                                          "<": value < target}[op]
        self.goals.append({"goal": name, "measured": value, "op": op, "target": target,
                           "met": met, "detail": detail})

    def of_rounds(self, values, rounds, each="each beside its reference"):
        """The median of the rounds that held still (of every round, said
        so, when none did), and the start of the detail that says so."""
        self.rounds.extend(r for r in rounds if r not in self.rounds)
        steady = [v for v, r in zip(values, rounds) if r["stable"]]
        if not steady:
            return median(values), (f"**no round with steady references**: median of all "
                                    f"{len(values)}, {each}: ")
        left_out = len(values) - len(steady)
        return median(steady), (f"median of the {len(steady)} steady rounds of {len(values)}"
                                + (f" ({left_out} with moved references left out)"
                                   if left_out else "") + f", {each}: ")

    def noise(self):
        return [{"round": r["name"], "steady": r["stable"], "spread": r["spread"],
                 "ref1_ns": r["ref1_ns"], "ref2_ns": r["ref2_ns"]} for r in self.rounds]


def round_text(value, what, r, moved="references moved"):
    note = "" if r["stable"] else f"; **{moved}** by {100 * r['spread']:.0f} %"
    return f"{value:.2f} ({what}{note})"


def triple_text(value, num, r):
    return round_text(value, f"{num} / {r['ref_ns']:.0f}; reference {r['ref1_ns']:.0f} ns "
                      f"before, {r['ref2_ns']:.0f} ns after", r)


def rounds_goal(g, name, op, target, rounds, value_of, num_of, tail=""):
    """A goal measured in rounds of triples (bench.sh goal_triple)."""
    if rounds:
        values = [value_of(r) for r in rounds]
        value, how = g.of_rounds(values, rounds)
        g.goal(name, value, op, target, how + "; ".join(
            triple_text(v, num_of(r), r) for v, r in zip(values, rounds)) + tail(values))
        return value
    return None


def hardware_goals(res, g):
    # The busy round trip against the cache line it is bound by and against
    # the raw rte_ring ping-pong, its floor (pair by pair, the triples for
    # comparison); depth 32 against a raw ring stream, and its echo ceiling.
    cl = rounds_goal(g, "shm ping2 round trip / raw cache-line ping-pong", "<=", 3.0,
                     res.goal_rounds("rtt"), lambda r: rtt_ns(r["cell"]) / r["ref_ns"],
                     lambda r: f"{rtt_ns(r['cell']):.0f} ns, " + (
                         f"p50 {r['cell']['latency_ns']['p50']} ns" if r["cell"]["latency_ns"]
                         else "unstamped, as the reference"), lambda v: "")
    ring_goal(g, res.goal_rounds("ring"), res.beside_rounds(), cl)
    shm1 = res.cell("memfd", "spinning", 1, 1, 64)
    sock1 = res.cell("socket", "spinning", 1, 1, 64)
    if shm1 and sock1:
        g.goal("shm ping2 calls/s / socket calls/s",
               ratio(shm1["calls_per_s"], sock1["calls_per_s"]), ">=", 25.0,
               f"{shm1['calls_per_s']:.0f} / {sock1['calls_per_s']:.0f}")
    if shm1:
        c, d = shm1["client_syscalls_per_call"], shm1["daemon_syscalls_per_call"]
        g.goal("syscalls per call, busy channel (client, daemon)",
               None if c is None or d is None else max(c, d), "<", 0.01,
               f"client {c}, daemon {d} (tracepoint); strace: client "
               f"{strace_text(res.strace['client'])}, daemon {strace_text(res.strace['daemon'])}")
    echo = res.goal_rounds("echo")
    echo_values = [r["cell"]["calls_per_s"] * r["ref_ns"] / 1e9 for r in echo]
    rounds_goal(g, "shm depth 32 requests/s / raw ring streaming", ">=", 0.5,
                res.goal_rounds("stream"), lambda r: r["cell"]["calls_per_s"] * r["ref_ns"] / 1e9,
                lambda r: f"{r['cell']['calls_per_s']:.0f}", lambda v: (
                    ". Against the raw ring echo with 32 in flight, its ceiling: " + ", ".join(
                        f"{x:.2f}" + ("" if r["stable"] else " (references moved)")
                        for x, r in zip(echo_values, echo))
                    + f" (median {median(echo_values):.2f})") if echo else "")
    g.rounds.extend(echo)


def strace_text(v):
    # Below 0: the longer run made fewer calls outside its loop (startup,
    # exit), i.e. none per call within what the two runs can tell.
    if v is None:
        return "n/a"
    return f"0 within the runs' difference ({v:.5f})" if v < 0 else f"{v:.5f}"


def ring_goal(g, rounds, beside, cl_value):
    # Pair by pair (ping2_perf --beside-ring: blocks of each alternated, a
    # pair in one placement of the vCPUs): the median of the rounds'
    # medians. The triples (ring, cell, ring, a second each) follow for
    # comparison, with the cache-line ratio.
    values = [rtt_ns(r["cell"]) / r["ref_ns"] for r in rounds]
    triples = "; ".join(triple_text(v, f"{rtt_ns(r['cell']):.0f} ns", r)
                        for v, r in zip(values, rounds))
    tail = "" if cl_value is None else f"; the cache-line ratio beside it: {cl_value:.2f}"
    g.rounds.extend(rounds)
    if not beside:
        return
    g.goal("shm ping2 busy round trip / raw rte_ring ping-pong",
           median([b["ratio_p50"] for b in beside]), "<=", 1.2,
           f"median of {len(beside)} rounds of blocks alternated, each the median of its pairs' "
           "ratios: " + "; ".join(
               f"{b['ratio_p50']:.2f} over {b['pairs']} pairs (p25 {b['ratio_p25']:.2f}, p75 "
               f"{b['ratio_p75']:.2f}; ring p50 {b['ring_ns']['p50']:.0f} ns, "
               f"{b['ring_ns']['min']:.0f} to {b['ring_ns']['max']:.0f}; shm p50 "
               f"{b['shm_ns']['p50']:.0f} ns, {b['shm_ns']['min']:.0f} to "
               f"{b['shm_ns']['max']:.0f})" for b in beside)
           + (f"; the rounds of ring, cell, ring beside it: {triples}" if rounds else "") + tail)


def idle_goals(res, g):
    sleep1 = res.cell("memfd", "sleeping", 1, 1, 64)
    efd = res.ref("eventfd-nopin")
    if sleep1 and efd:
        spread_text = (" (median of {2} measurements over the run: {0:.0f} to {1:.0f} ns)"
                       .format(*efd["spread"]) if "spread" in efd else "")
        g.goal("sleeping-daemon round trip / raw eventfd round trip",
               ratio(rtt_ns(sleep1), efd["ns_per_op"]), "<=", 1.5,
               f"{rtt_ns(sleep1):.0f} ns / {efd['ns_per_op']:.0f} ns (unpinned){spread_text}")
    if res.idle:
        g.goal("daemon CPU, 16 idle clients (fraction of a core)",
               res.idle["daemon_cpu_core_fraction"], "<", 0.01,
               f"{res.idle['daemon_cpu_ns']} ns in {res.idle['idle_seconds']} s")
    # The busy client beside the most idle channels over beside none, round
    # by round, by the p50s (a mean of a one-second cell moves with every
    # time the scheduler takes a CPU from either side, a median does not).
    rows, counts = idle_channel_rows(res)
    p50s = [r["p50_ratio"] for r in rows if r["p50_ratio"] is not None]
    means = [r["rtt_ratio"] for r in rows if r["rtt_ratio"] is not None]
    if p50s and counts[-1] > 0:
        g.goal(f"busy round trip (p50) beside {counts[-1]} idle channels / beside none",
               median(p50s), "<=", 1.1, f"median of {len(p50s)} alternated rounds: "
               + ", ".join(f"{v:.2f}" for v in p50s) + f"; of the mean round trips: "
               f"{median(means):.2f}")


def sixteen_client_goals(res, g):
    # With the daemon on a CPU of its own ("pinned" cells), as a DPDK
    # deployment places its poller; and everything on the shared CPUs
    # (bench.sh shared_round), beside one round with --poller-nice off,
    # which no goal judges: it shows what the poller's nice value buys.
    pin1, pin16 = res.cell("memfd", "pinned", 1, 1, 64), res.cell("memfd", "pinned", 1, 16, 64)
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
    for mode in ("default", "off"):
        rounds = res.shared_rounds(mode)
        if not rounds:
            continue
        where = f"all on shared CPUs, poller at nice {res.nices.get(mode, '?')}"
        aggs = [r["cell"]["calls_per_s"] * r["ref_ns"] / 1e9 for r in rounds]
        fairs = [r["cell"]["fastest_over_slowest"] for r in rounds]
        moved = "one client's rate moved"
        agg_text = "; ".join(round_text(
            v, f"{r['cell']['calls_per_s']:.0f} / {1e9 / r['ref_ns']:.0f}, one client "
            f"{r['ref1_ns']:.0f} ns per call before, {r['ref2_ns']:.0f} ns after", r, moved)
            for v, r in zip(aggs, rounds))
        fair_text = "; ".join(round_text(
            v, f"{r['cell']['seconds']:.0f} s window, per second of CPU "
            f"{r['cell'].get('fastest_over_slowest_per_cpu') or 0:.2f}, "
            f"{r['cell'].get('client_runq_wait_ns_per_call') or 0:.0f} ns per call runnable "
            "without a CPU", r, moved) for v, r in zip(fairs, rounds))
        if mode == "off":
            where += " (--poller-nice off; not a goal)"
            g.info_rows.append((f"16 clients aggregate / 1 client, {where}", median(aggs),
                                agg_text))
            g.info_rows.append((f"16 clients fastest / slowest, {where}", median(fairs),
                                fair_text))
            continue
        value, how = g.of_rounds(aggs, rounds)
        g.goal(f"16 clients aggregate / 1 client, {where}", value, ">=", 0.5, how + agg_text)
        steady = [v for v, r in zip(fairs, rounds) if r["stable"]] or fairs
        g.goal(f"16 clients fastest / slowest, {where}", median(steady), "<=", 2.0,
               "median of the same rounds: " + fair_text)


def occasional_rows(gaps):
    """One row per client and gap of the occasional calls."""
    out = []
    for key, label in CLIENTS:
        for g in (gaps.get(key) or {}).get("gaps", []):
            value = g["shm"]["p50"] / g["socket"]["p50"]
            verdict = ("stretch" if value <= OCCASIONAL_STRETCH else
                       "met" if value <= OCCASIONAL_GOAL else "missed")
            out.append({"client": key, "label": label, "gap_ms": g["gap_ms"],
                        "rounds": g["rounds"], "shm": g["shm"], "socket": g["socket"],
                        "p50_ratio": value, "verdict": verdict})
    return out


def occasional_goals(g, rows):
    # Per client, the worst gap decides, against the goal and the stretch.
    for key, label in CLIENTS:
        mine = [r for r in rows if r["client"] == key]
        if not mine:
            continue
        worst = max(mine, key=lambda r: r["p50_ratio"])
        detail = ("shm p50 / socket p50 after " + ", ".join(
            f"{fmt_gap(r['gap_ms'])} {r['p50_ratio']:.2f} ({fmt_ns(r['shm']['p50'])} / "
            f"{fmt_ns(r['socket']['p50'])})" for r in mine)
            + f"; the worst, {fmt_gap(worst['gap_ms'])}, decides")
        name = f"occasional calls from {label}"
        g.goal(f"{name}: shm p50 / socket p50 at every gap", worst["p50_ratio"], "<=",
               OCCASIONAL_GOAL, detail)
        g.goal(f"{name}: the same, stretch", worst["p50_ratio"], "<=", OCCASIONAL_STRETCH,
               "as above")


def loaded_goals(g, rows):
    by = {r["scenario"]: r for r in rows}
    for label, names, busy_min, busy_stretch, occ_max, occ_stretch in LOADED_GOALS:
        rs = [by[n] for n in names if n in by]
        if not rs:
            continue
        worst = min(r["busy_ratio"] for r in rs)
        g.goal(f"{label}: busy shm calls/s / socket, the worst scenario", worst, ">=", busy_min,
               ", ".join(f"{r['scenario']} {r['busy_ratio']:.1f}" for r in rs))
        if busy_stretch:
            g.goal(f"{label}: the same, stretch", worst, ">=", busy_stretch, "as above")
        shares = [r for r in rs if r["share"] is not None]
        if shares:
            g.goal(f"{label}: slowest busy client / fastest (ours, the others' mean)",
                   min(r["share"] for r in shares), ">=", LOADED_SHARE_MIN, ", ".join(
                       f"{r['scenario']} {r['share']:.2f} (ours {fmt_rate(r['shm'])}, others "
                       f"{fmt_rate(r['others_per_server'])} each)" for r in shares))
        gaps = [(gp["p50_ratio"], r["scenario"], ms) for r in rs for ms, gp in r["gaps"].items()]
        if gaps:
            value, scenario, ms = max(gaps)
            g.goal(f"{label}: occasional shm p50 / socket p50, the worst scenario and gap",
                   value, "<=", occ_max, f"the worst: {scenario} after {fmt_gap(ms)}")
            if occ_stretch:
                g.goal(f"{label}: the same, stretch", value, "<=", occ_stretch, "as above")


def compute(res):
    """Every goal, in the order of the report's table, and the rows beside."""
    g = Goals()
    hardware_goals(res, g)
    idle_goals(res, g)
    sixteen_client_goals(res, g)
    occasional = occasional_rows(res.gaps)
    occasional_goals(g, occasional)
    loaded_goals(g, res.loaded)
    bench_routes.goals(g, res.routes)
    return g, occasional


def summary(res, g, occasional):
    idle_rows, _ = idle_channel_rows(res)
    return {
        "meta": res.meta, "goal_rounds": g.noise(), "references": res.refs,
        "cells": bench_tables.cell_rows(res), "idle": res.idle,
        "bothsleep": res.cell("memfd", "bothsleep", 1, 1, 64),
        "idle_channels": [{k: r[k] for k in ("round", "rtt_ratio", "p50_ratio")}
                          for r in idle_rows],
        "strace_syscalls_per_call": res.strace, "memzone_skipped": res.memzone_skipped,
        "goals": g.goals, "poller_nice": res.nices,
        "beside_goals": [{"what": w, "measured": m, "detail": d} for w, m, d in g.info_rows],
        "headline": {"rows": [dict(zip(("what", "shm", "socket", "socket_over_shm"), row))
                              for row in bench_tables.headline_rows(res, occasional)]},
        "occasional": [{k: r[k] for k in ("client", "gap_ms", "rounds", "shm", "socket",
                                          "p50_ratio", "verdict")} for r in occasional],
        "loaded": [dict(r, gaps={str(ms): gp["p50_ratio"] for ms, gp in r["gaps"].items()})
                   for r in res.loaded],
        "routes": {name: {k: r[k] for k in ("count", "depth", "transport", "seconds",
                                              "routes_per_s")}
                   for name, r in res.routes.items()},
    }


def main(argv):
    if len(argv) not in (2, 4):
        print(f"usage: {argv[0]} RESULTS_DIR [STRACE_CALLS_SHORT STRACE_CALLS_LONG]",
              file=sys.stderr)
        return 2
    res = Results(argv[1], *map(int, argv[2:]))
    g, occasional = compute(res)
    with open(os.path.join(res.dir, "summary.json"), "w") as f:
        json.dump(summary(res, g, occasional), f, indent=1)
    bench_tables.write_plot_data(res)
    report = "\n".join(bench_tables.report_lines(res, g, occasional))
    with open(os.path.join(res.dir, "report.md"), "w") as f:
        f.write(report + "\n")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
