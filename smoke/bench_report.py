#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The report of a make bench run (smoke/bench.sh, docs/benchmark-running.md): judges the goals of
# GOALS, writes summary.json, report.md and the data of smoke/plot.gp from what the run measured.
#   bench_report.py RESULTS_DIR [STRACE_CALLS_SHORT STRACE_CALLS_LONG]

import glob
import json
import os
import pathlib
import re
import sys
from statistics import median

# The fields read from each kind of file and never null ("a.b": b in a; "a[].b": b in each of a).
FIELDS = {
    "ref": "test unit ns_per_op ops_per_s leader_cpu_ns_per_op",
    "cell": "calls_per_s seconds client_cpu_ns_per_call client_vcsw_per_call fastest_over_slowest",
    "idle": "clients idle_seconds daemon_cpu_core_fraction daemon_cpu_ns daemon_vcsw",
    "headline": "rounds shm.calls_per_s socket.calls_per_s c.calls_per_s c_socket.calls_per_s",
    "beside": "pairs ratio_p25 ratio_p50 ratio_p75", "routes": "count routes_per_s",
    "host": "scenario order cpus load_processes runnable others[].requests others[].seconds",
    "gap": "gaps[].gap_ms gaps[].rounds gaps[].shm.p50 gaps[].shm.p99 gaps[].socket.p50 "
           "gaps[].socket.p99 gaps[].p50_ratio"}
TRANSPORTS, MODES = ("socket", "memfd", "memzone"), ("spinning", "sleeping")
# Cells by (transport, daemon, depth, clients, size), as cell-*.json names them.
SHM1, SOCK1, SLEEP1 = (
    ("memfd", "spinning", 1, 1, 64), ("socket", "spinning", 1, 1, 64),
    ("memfd", "sleeping", 1, 1, 64))
# The clients (gap-KEY.json); the headline's gap of silence, a controller's common case.
CLIENTS, HEADLINE_GAP_MS = (("c", "C (ping2_perf)"), ("python", "Python (shmchan)")), 20
# The loaded host's scenarios (bench.sh): what runs beside the daemon.
LOADED_WHAT = dict(zip("quiet busy-1 busy-1x busy-2x cc-1x cc-2x servers-1 servers-2".split(), (
    "nothing", "1 busy loop", "a busy loop per CPU", "2 busy loops per CPU", "a compiler loop per "
    "CPU", "2 compiler loops per CPU", "1 other channel server, its client calling back to back",
    "2 other channel servers, each with such a client")))
# The route table's runs side by side: (label, shm run, socket run).
ROUTE_PAIRS = (("depth 1", "shm-d1", "socket-d1"), ("depth 32", "shm-d32", "socket-d32"),
               ("the list", "list-shm", "list-socket"))


def lacks(value, path):
    """The first field of PATH that VALUE lacks or has null, None if none."""
    values, seen = [value], []
    for part in path.split("."):
        seen.append(part.removesuffix("[]"))
        if not all(isinstance(v, dict) and v.get(seen[-1]) is not None for v in values):
            return ".".join(seen)
        values = [i for v in values for i in (v[seen[-1]] if part != seen[-1] else [v[seen[-1]]])]


def p50(cell):
    return ((cell or {}).get("latency_ns") or {}).get("p50")


def fmt(v, unit="", digits=3):
    """V as the report writes it: a time ("ns"), a rate ("/s"), a gap ("ms"), or a number."""
    if v is None:
        return "-"
    if unit == "ns":
        return ("-" + fmt(-v, unit) if v < 0 else f"{v:.0f} ns" if v < 1e4
                else f"{v / 1e3:.1f} us" if v < 1e7 else f"{v / 1e6:.1f} ms")
    if unit == "/s":
        return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.1f} k" if v >= 1e3 else f"{v:.0f}"
    return (f"{v // 1000} s" if v % 1000 == 0 else f"{v} ms") if unit else f"{v:.{digits}f}"


def pair(a, b, unit="", sep=" / "):
    return f"{fmt(a, unit)}{sep}{fmt(b, unit)}"


def section(title, head, rows):
    """A section of report.md, its title and table (head: "a|b|c"); none without rows."""
    return [f"### {title}", "", f"| {head.replace('|', ' | ')} |", "|---" * (head.count("|") + 1)
            + "|", *("| " + " | ".join(map(str, r)) + " |" for r in rows), ""] if rows else []


class Run:
    """A results folder: what its files say, checked, and the rows the report makes of it."""

    def __init__(self, folder, strace_short=None, strace_long=None):
        if not os.path.isdir(folder):
            sys.exit(f"bench_report: {folder}: no such folder")
        self.dir = folder
        self.files = sorted(os.path.basename(p)[:-5] for p in glob.glob(f"{folder}/*.json"))
        self.meta = dict(kv.split("=", 1) for kv in self.text("meta.txt").splitlines() if "=" in kv)
        self.meta["lscpu"] = {k.strip(): v.strip() for k, sep, v in (
            line.partition(":") for line in self.text("lscpu.txt").splitlines())
            if sep and not k.startswith("Vulnerability") and k != "Flags"}
        self.refs = {m[1]: self.load(m[0], "ref") for m in self.matches(r"ref-(.+)")}
        self.cells = {(m[1], m[2], *map(int, m.groups()[2:])): self.load(m[0], "cell")
                      for m in self.matches(r"cell-(\w+)-(\w+)-d(\d+)-c(\d+)-z(\d+)")}
        self.matrix = [self.matrix_row(key, c) for key, c in sorted(self.cells.items())]
        self.rounds = {name: self.read_rounds(name) for name in (
            "goal-rtt", "goal-ring", "goal-stream", "goal-echo", "pinned", "shared-default",
            "shared-off")}
        self.beside = [b for i in (1, 2, 3) if (b := self.load(f"goal-beside-r{i}", "beside"))]
        self.idle, self.headline = self.load("idle", "idle"), self.load("headline", "headline")
        self.occasional = [dict(g, client=key, label=label, p50_ratio=g["shm"]["p50"]
                                / g["socket"]["p50"]) for key, label in CLIENTS
                           for g in (self.load(f"gap-{key}", "gap") or {}).get("gaps", [])]
        self.headline_rows = self.headline_busy() + [
            self.headline_after_gap(r) for r in self.occasional if r["gap_ms"] == HEADLINE_GAP_MS]
        self.memzone_skipped = self.text("memzone-skipped.txt") or None
        self.nices = dict(x.split(" ", 1) for x in self.text("poller-nice.txt").splitlines() if x)
        self.loaded = [row for host in sorted((self.load(m[0], "host") for m in self.matches(
            r"loaded-.+-host")), key=lambda h: h["order"]) for row in self.loaded_row(host)]
        self.routes = {name: r for name in ["reference", *(n for p in ROUTE_PAIRS for n in p[1:])]
                       if (r := self.load(f"routes-{name}", "routes"))}
        # Two strace -c runs of different lengths: the difference of their totals over the
        # difference of their calls. Below 0: the longer made fewer calls outside its loop.
        totals = {who: [[line.split() for line in self.text(f"strace-{who}-{n}.txt").splitlines()
                         if line.endswith("total")] for n in (strace_short, strace_long)]
                  for who in ("client", "daemon")}
        self.strace = {who: (int(t[1][-1][3]) - int(t[0][-1][3])) / (strace_long - strace_short)
                       if all(t) else None for who, t in totals.items()}
        # The busy client beside idle channels, round by round: beside the most over none.
        idlech = {(int(m[1]), int(m[2])): self.load(m[0], "cell")
                  for m in self.matches(r"idlech-r(\d+)-n(\d+)")}
        self.idle_counts = sorted({n for _, n in idlech})
        self.idle_rows = []
        for rnd in sorted({r for r, _ in idlech}):
            cells = {n: idlech.get((rnd, n)) for n in self.idle_counts}
            none, most = cells.get(0), cells[self.idle_counts[-1]]
            self.idle_rows.append({"round": rnd, "cells": cells, "rtt_ratio": none and most and (
                none["calls_per_s"] / most["calls_per_s"]), "p50_ratio": p50(none) and p50(most)
                and p50(most) / p50(none)})

    def matches(self, pattern):
        return [m for name in self.files if (m := re.fullmatch(pattern, name))]

    def text(self, name):
        path = pathlib.Path(self.dir, name)
        return path.read_text().strip() if path.exists() else ""

    def write(self, name, lines):
        pathlib.Path(self.dir, name).write_text("".join(line + "\n" for line in lines))

    def load(self, name, kind, event_loop=None):
        """NAME.json of the folder, checked; None if the run did not write it."""
        if name not in self.files:
            return None
        bad = f"bench_report: bad output: {self.dir}/{name}.json:"
        try:
            value = json.loads(self.text(name + ".json"))
        except json.JSONDecodeError as e:
            sys.exit(f"{bad} not JSON ({e.msg} at line {e.lineno})")
        if (gone := next(filter(None, (lacks(value, f) for f in FIELDS[kind].split())), None)):
            sys.exit(f"{bad} no '{gone}'")
        if event_loop is not None and bool(value.get("event_loop")) != event_loop:
            sys.exit(f"{bad} 'event_loop' is not {str(event_loop).lower()}")
        return value

    def read_rounds(self, name):
        # NAME-rR-{ref1,cell,ref2} (pinned, shared-*: {one1,many,one2}): each round's cell
        # against the mean of its base measured before and after it; a round trip's, per call.
        shared = name == "pinned" or name.startswith("shared-")
        per_call, out = name in ("goal-rtt", "goal-ring"), []
        for r in range(1, 10):
            files = [self.load(f"{name}-r{r}-{p}", "cell" if shared or p == "cell" else "ref")
                     for p in (("one1", "many", "one2") if shared else ("ref1", "cell", "ref2"))]
            if None in files:
                continue
            before, after = (1e9 / f["calls_per_s"] if shared else f["ns_per_op"]
                             for f in files[::2])
            rate, base = files[1]["calls_per_s"], (files[0]["calls_per_s"] + files[2][
                "calls_per_s"]) / 2 if shared else 2e9 / (before + after)
            out.append({"round": f"{name.removeprefix('goal-')}-r{r}", "cell": files[1],
                        "ref1_ns": before, "ref2_ns": after,
                        "value": base / rate if per_call else rate / base,
                        "of": pair(1e9 / rate, 1e9 / base, "ns") if per_call
                        else pair(rate, base, "/s")})
        return out

    def matrix_row(self, key, cell):
        """A cell beside its raw mechanism: the socket, a ring stream (pipelined), a ring
        ping-pong, or an eventfd (the sleeping daemon)."""
        transport, mode, depth, clients, size = key
        ref = (f"unix-z{size}" if transport == "socket" else f"ring-stream-z{size}" if depth > 1
               else "eventfd-nopin" if "sleep" in mode else f"ring-pingpong-z{size}")
        vs = self.ref(ref) and cell["calls_per_s"] / self.ref(ref)["ops_per_s"]
        return dict(cell, latency_cdf=None, transport=transport, daemon=mode, depth=depth,
                    clients=clients, size=size, reference=ref, vs_reference=vs)

    def headline_busy(self):
        """One client of a default daemon back to back, from C (ping2_perf, which
        python/bench.py runs) and from Python: (what, shm, socket, shm faster by)."""
        rows = []
        for (_, label), keys in zip(CLIENTS, (("c", "c_socket"), ("shm", "socket"))):
            if not self.headline:
                continue
            rates = [self.headline[k]["calls_per_s"] for k in keys]
            rows.append((f"{label}, one call right after the other: round trip (calls/s)",
                         *(f"{fmt(1e9 / x, 'ns')} ({fmt(x, '/s')} calls/s)" for x in rates),
                         rates[0] / rates[1]))
        return rows

    @staticmethod
    def headline_after_gap(r):
        """The same client's call after a silence, by the p50s."""
        return (f"{r['label']}, one call after {fmt(r['gap_ms'], 'ms')} of silence: round trip, "
                "p50", *(fmt(r[t]["p50"], "ns") for t in ("shm", "socket")),
                r["socket"]["p50"] / r["shm"]["p50"])

    def ref(self, name):
        """A reference, the median of NAME, NAME-mid and NAME-end, those measured."""
        runs = [r for r in (self.refs.get(name + s) for s in ("", "-mid", "-end")) if r]
        ns = median([r["ns_per_op"] for r in runs]) if len(runs) > 1 else None
        return runs and dict(runs[0], runs=len(runs), **(
            {"ns_per_op": ns, "ops_per_s": 1e9 / ns} if ns else {})) or None

    def loaded_row(self, host):
        """A loaded-host scenario, the medians of its cells' rounds; none without shm and socket."""
        s, rate, p50s = host["scenario"], {}, {}
        for t in ("shm", "socket", "shm-evloop", "socket-evloop"):
            cells = [c for i in range(1, 10)
                     if (c := self.load(f"loaded-{s}-{t}-r{i}", "cell", t.endswith("-evloop")))]
            rate[t], p50s[t] = (median([c["calls_per_s"] for c in cells]),
                                median([p50(c) or 0 for c in cells])) if cells else (None, None)
        gap = self.load(f"loaded-{s}-gap", "gap")
        during = [o["requests"] / o["seconds"] for o in host["others"]
                  if o.get("transport") == "shm" and not o.get("event_loop")]
        others = (median(during) / host["load_processes"]
                  if s.startswith("servers-") and host["load_processes"] and during else None)
        return [{"scenario": s, "what": LOADED_WHAT.get(s, s), "cpus": host["cpus"],
                 "runnable": median(host["runnable"] or [None]), "shm": rate["shm"],
                 "socket": rate["socket"], "busy_ratio": rate["shm"] / rate["socket"],
                 "shm_p50": p50s["shm"], "socket_p50": p50s["socket"],
                 "evloop_shm": rate["shm-evloop"], "evloop_socket": rate["socket-evloop"],
                 "evloop_ratio": rate["socket-evloop"] and rate["shm-evloop"] / rate[
                     "socket-evloop"],
                 "gaps": {g["gap_ms"]: g for g in gap["gaps"]} if gap else {},
                 "others_per_server": others, "share": None if others is None
                 else min(rate["shm"], others) / max(rate["shm"], others)}
                ] if rate["shm"] and rate["socket"] else []


def measure(run, what, *args):
    """The (value, label) pairs a goal rests on (GOALS), none if the run did not measure it."""
    cell, idle = args and run.cells.get(args[0]), run.idle
    if what == "rounds":
        return [(r["cell"][args[1]], "") if args[1:] else (r["value"], r["of"])
                for r in run.rounds[args[0]]]
    if what in ("cells", "routes"):
        got = [((run.cells if what == "cells" else run.routes).get(k) or {}).get(
            "calls_per_s" if what == "cells" else "routes_per_s") for k in args]
        return [(got[0] / got[1], pair(*got, "/s"))] if all(got) else []
    if what == "loaded":
        rows = [r for r in run.loaded if r["scenario"] in args[0].split()]
        return [(g["p50_ratio"], f"{r['scenario']} after {fmt(ms, 'ms')}") for r in rows
                for ms, g in r["gaps"].items()] if args[1] == "gaps" else [
            (r[args[1]], r["scenario"]) for r in rows if r[args[1]] is not None]
    if what == "occasional":
        return [(r["p50_ratio"], fmt(r["gap_ms"], "ms")) for r in run.occasional
                if r["client"] == args[0]]
    if what == "beside":
        return [(b["ratio_p50"], f"--beside-ring, median of {b['pairs']} pairs, p25 "
                 f"{b['ratio_p25']:.2f}, p75 {b['ratio_p75']:.2f}") for b in run.beside]
    if what == "idlech" and run.idle_counts[-1:] != [0]:
        return [(r["p50_ratio"], "") for r in run.idle_rows if r["p50_ratio"] is not None]
    if what == "idle" and idle:
        return [(idle["daemon_cpu_core_fraction"],
                 f"{idle['daemon_cpu_ns']} ns in {idle['idle_seconds']} s")]
    if what == "eventfd" and cell and (efd := run.ref("eventfd-nopin")):
        return [(1e9 / cell["calls_per_s"] / efd["ns_per_op"], pair(1e9 / cell["calls_per_s"],
                 efd["ns_per_op"], "ns") + f" (unpinned, the median of {efd['runs']})")]
    if what == "syscalls" and cell:
        calls = [cell.get(f"{who}_syscalls_per_call") for who in ("client", "daemon")]
        strace = ["n/a" if v is None else f"0 within the runs' difference ({v:.5f})" if v < 0
                  else f"{v:.5f}" for v in run.strace.values()]
        return [(None if None in calls else max(calls), f"client {calls[0]}, daemon {calls[1]} "
                 f"(tracepoint); strace: client {strace[0]}, daemon {strace[1]}")]
    return []


# The goals in the order of the report's table: (name, op, target, stretch, measure, its args),
# judged on the median of the rounds, the worst gap or scenario, or the one value; a row without
# op is shown beside them. Names take {n}, {most}, {nice}, {nice_off} (judge()'s facts).
AGG, FAIR = "16 clients aggregate / 1 client", "16 clients fastest / slowest"
SHARED, OFF = "all on shared CPUs, poller at nice", "(--poller-nice off; not a goal)"
GOALS = (
    ("shm ping2 round trip / raw cache-line ping-pong", "<=", 3.0, None, "rounds", "goal-rtt"),
    ("shm ping2 busy round trip / raw rte_ring ping-pong", "<=", 1.2, None, "beside"),
    ("the same, rounds of ring, cell, ring", None, None, None, "rounds", "goal-ring"),
    ("shm ping2 calls/s / socket calls/s", ">=", 25.0, None, "cells", SHM1, SOCK1),
    ("syscalls per call, busy channel (client, daemon)", "<", 0.01, None, "syscalls", SHM1),
    ("shm depth 32 requests/s / raw ring streaming", ">=", 0.5, None, "rounds", "goal-stream"),
    ("sleeping-daemon round trip / raw eventfd round trip", "<=", 1.5, None, "eventfd", SLEEP1),
    ("daemon CPU, 16 idle clients (fraction of a core)", "<", 0.01, None, "idle"),
    ("busy round trip (p50) beside {most} idle channels / beside none", "<=", 1.1, None, "idlech"),
    (f"{AGG}, poller on a CPU of its own", ">=", 0.7, None, "rounds", "pinned"),
    (f"{FAIR}, poller on a CPU of its own", "<=", 1.5, None, "rounds", "pinned",
     "fastest_over_slowest"),
    *((f"{what}, {SHARED} {{{nice}}}{off}", op, target, None, "rounds", f"shared-{mode}", *field)
      for mode, nice, off, ops in (("default", "nice", "", ((">=", 0.5), ("<=", 2.0))),
                                   ("off", "nice_off", " " + OFF, ((None, None),) * 2))
      for what, (op, target), field in zip((AGG, FAIR), ops, ((), ("fastest_over_slowest",)))),
    *((f"occasional calls from {label}: shm p50 / socket p50 at every gap", "<=", 1.0, 0.8,
       "occasional", key) for key, label in CLIENTS),
    # The loaded host by kind of scenario: busy shm / socket, at least (stretch); beside other
    # servers none starves; occasional shm p50 / socket p50, at most (stretch).
    *(goal for kind, names, busy, busy_stretch, occ, occ_stretch in (
        ("nothing beside (this run's quiet)", "quiet", 25, None, 0.8, None),
        ("busy and compiler loops", "busy-1 busy-1x busy-2x cc-1x cc-2x", 3, None, 1.0, 0.8),
        ("beside other channel servers", "servers-1 servers-2", 1.5, 3, 1.0, None))
      for goal in (
          (f"loaded host, {kind}: busy shm calls/s / socket, the worst scenario", ">=", busy,
           busy_stretch, "loaded", names, "busy_ratio"),
          (f"loaded host, {kind}: slowest busy client / fastest (ours, the others' mean)", ">=",
           0.25, None, "loaded", names, "share"),
          (f"loaded host, {kind}: occasional shm p50 / socket p50, the worst scenario and gap",
           "<=", occ, occ_stretch, "loaded", names, "gaps"))),
    *((f"route table: {what}", ">=", target, stretch, "routes", shm, other)
      for what, target, stretch, shm, other in (
          ("{n} IPv4 routes at depth 1, shm routes/s / socket", 20, None, "shm-d1", "socket-d1"),
          ("{n} routes at depth 32, shm / in-process reference", 0.5, 0.8, "shm-d32", "reference"),
          ("the list of {n} routes, shm routes/s / socket", 10, None, "list-shm", "list-socket"))),
)


def judge(run):
    """The goals the run measured, a stretch goal a row of its own; the rows beside them."""
    facts = {"n": next(iter(run.routes.values()), {}).get("count"), "most": (run.idle_counts or [
        0])[-1], "nice": run.nices.get("default", "?"), "nice_off": run.nices.get("off", "?")}
    goals, beside = [], []
    for name, op, target, stretch, *spec in GOALS:
        if not (got := measure(run, *spec)):
            continue
        if spec[0] in ("rounds", "beside", "idlech"):
            value, detail = median([v for v, _ in got]), f"median of {len(got)} rounds: " + (
                "; ".join(f"{v:.2f}" + (f" ({label})" if label else "") for v, label in got))
        elif spec[0] in ("occasional", "loaded"):
            value, label = (max if op == "<=" else min)(got)
            detail = ", ".join(f"{lb} {v:.2f}" for v, lb in got) + f"; the worst: {label}"
        else:
            value, detail = got[0]
        name = name.format(**facts)
        beside += [{"what": name, "measured": value, "detail": detail}] if op is None else []
        for goal, want, why in ((name, target, detail),
                                (name.split(":")[0] + ": the same, stretch", stretch, "as above")):
            met = None if value is None or want is None else (
                value <= want if op == "<=" else value >= want if op == ">=" else value < want)
            goals += [{"goal": goal, "measured": value, "op": op, "target": want, "met": met,
                       "detail": why}] if want is not None else []
    return goals, beside


def report_lines(run, goals, beside):
    """report.md, its sections in order; docs/benchmark-running.md tells what each shows."""
    m, idle, rate = run.meta, run.idle, {name: r["routes_per_s"] for name, r in run.routes.items()}
    ns, rtt = {name: (run.ref(name) or {}).get("ns_per_op") for name in (
        "cacheline", "lines-apart-z64", "ring-pingpong-z64", "chan-pingpong-z64")}, [
        1e9 / r["cell"]["calls_per_s"] for r in run.rounds["goal-rtt"]]
    layers = [(label, v) for label, v in (
        ("cache line bounced between two processes (hardware)", ns["cacheline"]),
        ("the rte_ring layout's cache lines alone (no code)", ns["lines-apart-z64"]),
        ("raw rte_ring ping-pong, 5-cell messages", ns["ring-pingpong-z64"]),
        ("channel library alone", ns["chan-pingpong-z64"]),
        ("shmchand + client library (goal rounds, no per-call stamps)", rtt and median(rtt)),
        ("the same, with ping2_perf's per-call stamps (matrix cell)",
         SHM1 in run.cells and 1e9 / run.cells[SHM1]["calls_per_s"])) if v]
    gap_ms, counts = sorted({ms for r in run.loaded for ms in r["gaps"]}), run.idle_counts
    lines = [f"Run {m['start']}, commit {m.get('commit')}, kernel {m.get('kernel')}; load average "
             f"{m.get('loadavg_start')} at the start, {m.get('loadavg_end')} at the end; "
             f"{m.get('cell_seconds')} s per cell; autogroup {m.get('autogroup')}.", ""
             ] if "start" in m else []
    lines += section("Headline", "|shared memory|Unix socket|shared memory is faster by", [
        (*row[:3], f"{row[3]:.1f}x") for row in run.headline_rows])
    lines += [f"Idle daemon: {idle['clients']} clients attached for {idle['idle_seconds']:.0f} s "
              f"cost it {idle['daemon_cpu_core_fraction'] * 100:.4f} % of a core.", ""
              ] if idle else []
    lines += section("Machine (lscpu)", "|", [*m["lscpu"].items(), ("kernel", m.get("kernel")), (
        "container or VM (systemd-detect-virt)", m.get("hypervisor"))])
    lines += section("References (ref_bench)", "reference|CPUs|per operation|operations/s|CPU per "
                     "op (leader / follower)", [
        (name, "pinned " + ",".join(map(str, r["cpus"])) if r.get("cpus") else "unpinned",
         f"{fmt(r['ns_per_op'], 'ns')} per {r['unit'].replace('_', ' ')}",
         fmt(r["ops_per_s"], "/s"), " / ".join(fmt(r[k], "ns") for k in (
             "leader_cpu_ns_per_op", "follower_cpu_ns_per_op") if r.get(k)))
        for name, r in sorted(run.refs.items(), key=lambda ref: (ref[1]["test"], ref[1].get(
            "size") or 0, ref[0].replace("-mid", "~1").replace("-end", "~2")))])
    lines += section("Layers, 64 bytes, one request in flight, each adding one to the row above",
                     "layer|round trip|added", [(label, fmt(v, "ns"), "" if i == 0 else "+" * (
                         v >= layers[i - 1][1]) + fmt(v - layers[i - 1][1], "ns"))
                                               for i, (label, v) in enumerate(layers)])
    lines += section("Goals", "|goal|measured|target|met", [
        (i, g["goal"], fmt(g["measured"]), f"{g['op']} {g['target']}",
         "-" if g["met"] is None else "yes" if g["met"] else "**no**")
        for i, g in enumerate(goals, 1)])
    lines += [f"{i}. {g['detail']}" for i, g in enumerate(goals, 1) if g["detail"] != "as above"]
    lines += [""] + section("Beside the goals, for comparison", "what|measured|from", [
        (b["what"], fmt(b["measured"]), b["detail"]) for b in beside])
    lines += section("Occasional calls", "client|after|rounds|shm p50 / p99|socket p50 / p99|shm "
                     "/ socket p50|verdict", [
        (r["label"], fmt(r["gap_ms"], "ms"), r["rounds"], *(
            pair(r[t]["p50"], r[t]["p99"], "ns") for t in ("shm", "socket")),
         f"{r['p50_ratio']:.2f}", "met, stretch too" if r["p50_ratio"] <= 0.8 else "met"
         if r["p50_ratio"] <= 1.0 else "**no**") for r in run.occasional])
    lines += section("Loaded host", "|".join([
        "beside|runnable / CPUs|shm calls/s|socket calls/s|shm / socket|event loop shm / socket "
        "calls/s|event loop shm / socket|shm p50 / socket p50 busy",
        *(f"after {fmt(ms, 'ms')}" for ms in gap_ms), "others, each"]), [
        (r["what"], f"{fmt(r['runnable'], '', 0)} / {r['cpus']}", fmt(r["shm"], "/s"),
         fmt(r["socket"], "/s"), f"{r['busy_ratio']:.1f}x",
         pair(r["evloop_shm"], r["evloop_socket"], "/s"), fmt(r["evloop_ratio"], "", 1) + "x"
         * (r["evloop_ratio"] is not None), pair(r["shm_p50"], r["socket_p50"], "ns"), *(
             f"{g['p50_ratio']:.2f} (" + pair(g["shm"]["p50"], g["socket"]["p50"], "ns") + ")"
             if (g := r["gaps"].get(ms)) else "-" for ms in gap_ms),
         fmt(r["others_per_server"], "/s")) for r in run.loaded])
    lines += section("Route table", "run|shm routes/s|socket routes/s|shm / socket|shm / "
                     "reference", [
        (label, fmt(a := rate.get(shm), "/s"), fmt(b := rate.get(sock), "/s"),
         f"{a / b:.1f}x" if a and b else "-", f"{a / rate['reference']:.2f}"
         if a and "reference" in rate and label != "the list" else "-")
        for label, shm, sock in ROUTE_PAIRS] + [("reference, in process", fmt(
            rate.get("reference"), "/s"), "", "", 1)] * ("reference" in rate) if rate else [])
    for size in sorted({r["size"] for r in run.matrix}):
        lines += section(f"Matrix, {size} bytes", "transport|daemon|depth|clients|calls/s|p50|p99|"
                         "CPU client + daemon|syscalls client / daemon|sleeps client / daemon|vs "
                         "reference|fastest / slowest", [
            (r["transport"], r["daemon"], r["depth"], r["clients"], fmt(r["calls_per_s"], "/s"),
             *(fmt((r.get("latency_ns") or {}).get(p), "ns") for p in ("p50", "p99")), *(
                 pair(*(r.get(f"{who}_{what}_per_call") for who in ("client", "daemon")), unit,
                      sep) for what, unit, sep in (("cpu_ns", "ns", " + "), ("syscalls", "", " / "),
                                                   ("vcsw", "", " / "))),
             f"{fmt(r['vs_reference'])} of {r['reference']}",
             fmt(r["fastest_over_slowest"], "", 2)) for r in run.matrix if r["size"] == size])
    lines += section("Idle channels beside a busy client", "|".join([
        "round", *(f"{n} idle: mean / p50" for n in counts), *(
            f"{counts[-1]} / 0, {what}" for what in ("mean", "p50"))]) if counts else "", [
        (r["round"], *("-" if c is None else pair(1e9 / c["calls_per_s"], p50(c), "ns")
                       for c in r["cells"].values()),
         fmt(r["rtt_ratio"], "", 2), fmt(r["p50_ratio"], "", 2)) for r in run.idle_rows])
    return lines + [f"memzone column skipped: {run.memzone_skipped}", ""] * (
        run.memzone_skipped is not None)


def write_plot_data(run):
    """sizes.txt and the .dat files of smoke/plot.gp."""
    def num(row, field, form=".6g"):
        return "NaN" if (row or {}).get(field) is None else format(row[field], form)

    # The matrix's plots want both daemons' cells.
    sizes = sorted(set.intersection(*({k[4] for k in run.cells if k[1] == m} for m in MODES)))
    run.write("sizes.txt", [" ".join(map(str, sizes))])
    for mode, size in ((mode, size) for mode in MODES for size in sizes):
        run.write(f"throughput-{mode}-z{size}.dat", ["# config " + " ".join(TRANSPORTS)] + [
            f'"{d}x{c}" ' + " ".join(num(run.cells.get((t, mode, d, c, size)), "calls_per_s")
                                     for t in TRANSPORTS) for d in (1, 32) for c in (1, 4, 16)])
    for t, mode in ((t, mode) for t in TRANSPORTS for mode in MODES + ("bothsleep",)):
        if (c := run.cells.get((t, mode, 1, 1, 64))):
            run.write(f"cdf-{t}-{mode}.dat", [f"{ns} {f}" for ns, f in c.get("latency_cdf", [])])
    for depth in (1, 32):
        run.write(f"cpu-d{depth}.dat", ["# case client_cpu_ns daemon_cpu_ns"] + [
            f'"{t} {mode}" ' + " ".join(num(run.cells.get((t, mode, depth, 1, 64)), f"{who}_cpu_"
                                            "ns_per_call") for who in ("client", "daemon"))
            for mode in MODES for t in TRANSPORTS])
    gap_ms = sorted({ms for r in run.loaded for ms in r["gaps"]})
    if run.loaded:
        run.write("loaded.dat", [" ".join(["# scenario busy_ratio evloop_ratio", *(
            f"after_{ms}ms" for ms in gap_ms)])] + [" ".join([
                f'"{r["scenario"]}" {r["busy_ratio"]:.4g}', num(r, "evloop_ratio"), *(
                    num(r["gaps"].get(ms), "p50_ratio", ".4g") for ms in gap_ms)])
                for r in run.loaded])
    if run.routes:
        run.write("routes.dat", ["# run shm_routes_per_s socket_routes_per_s reference_routes_"
                                 "per_s"] + [f'"{label}" ' + " ".join(str(run.routes.get(n, {}).get(
                                     "routes_per_s", "NaN")) for n in (shm, sock, "reference"))
                                             for label, shm, sock in ROUTE_PAIRS])


def main(argv):
    if len(argv) not in (2, 4):
        sys.stderr.write(f"usage: {argv[0]} RESULTS_DIR [STRACE_CALLS_SHORT STRACE_CALLS_LONG]\n")
        return 2
    run = Run(argv[1], *map(int, argv[2:]))
    goals, beside = judge(run)
    run.write("summary.json", [json.dumps({
        "meta": run.meta, "goal_rounds": [dict(r, cell=None) for r in sum(run.rounds.values(), [])],
        "references": run.refs, "cells": run.matrix, "idle": run.idle,
        "bothsleep": run.cells.get(("memfd", "bothsleep", 1, 1, 64)),
        "idle_channels": [dict(r, cells=None) for r in run.idle_rows],
        "strace_syscalls_per_call": run.strace, "memzone_skipped": run.memzone_skipped,
        "goals": goals, "poller_nice": run.nices, "beside_goals": beside, "headline": {"rows": [
            dict(zip(("what", "shm", "socket", "socket_over_shm"), r)) for r in run.headline_rows]},
        "occasional": run.occasional, "loaded": [dict(r, gaps={ms: g["p50_ratio"] for ms, g in r[
            "gaps"].items()}) for r in run.loaded], "routes": run.routes}, indent=1)])
    write_plot_data(run)
    run.write("report.md", report := report_lines(run, goals, beside))
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
