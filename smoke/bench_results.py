# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The results folder of a make bench run (smoke/bench.sh), loaded for the
# report (smoke/bench_report.py): every file checked as it is read
# (bench_check.py), the references with their medians over the run, the
# cells, the idle cost, the idle channels, the occasional calls, the strace
# counts, and the rounds measured side by side (bench_rounds.py). A file
# that is not what a tool writes ends the report (fail()).

import glob
import json
import os
import re
import sys

from bench_check import BadOutput, load as load_checked, spread
from bench_rounds import read_round

# The clients whose occasional calls make bench measures, and the file of
# each (bench.sh): ping2_perf --gap and python/bench_gap.py.
GAP_CLIENTS = (("c", "C (ping2_perf)"), ("python", "Python (shmchan)"))


def fail(msg):
    print(f"bench_report: {msg}", file=sys.stderr)
    sys.exit(1)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


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


class Results:
    def __init__(self, folder, strace_short, strace_long):
        if not os.path.isdir(folder):
            fail(f"{folder}: no such folder")
        self.dir = folder
        self.meta = self._load_meta()
        self.refs = {os.path.basename(p)[4:-5]: self.load(os.path.basename(p), "ref")
                     for p in glob.glob(os.path.join(folder, "ref-*.json"))}
        self.cells = {}
        for path in glob.glob(os.path.join(folder, "cell-*.json")):
            m = re.match(r"cell-(\w+)-(\w+)-d(\d+)-c(\d+)-z(\d+)\.json$", os.path.basename(path))
            if m is None:
                fail(f"bad output: {path}: not a cell's name (cell-TRANSPORT-MODE-dD-cC-zZ.json)")
            key = (m.group(1), m.group(2), *map(int, m.groups()[2:]))
            self.cells[key] = self.load(os.path.basename(path), "cell")
        self.idle = self.load("idle.json", "idle")
        # A busy client beside idle channels on its poller (bench.sh
        # idle_channel_round): (round, idle channels) -> its cell.
        self.idle_channel_cells = {}
        for path in glob.glob(os.path.join(folder, "idlech-*.json")):
            m = re.match(r"idlech-r(\d+)-n(\d+)\.json$", os.path.basename(path))
            if m is None:
                fail(f"bad output: {path}: not an idle channels cell's name (idlech-rR-nN.json)")
            self.idle_channel_cells[(int(m.group(1)), int(m.group(2)))] = self.load(
                os.path.basename(path), "cell")
        # The occasional calls of each client (ping2_perf --gap, bench_gap.py).
        self.gaps = {key: self.load(f"gap-{key}.json", "gap") for key, _ in GAP_CLIENTS}
        # The headline's calls one right after the other (python/bench.py).
        self.headline = self.load("headline.json", "headline")
        self.memzone_skipped = None
        if os.path.exists(os.path.join(folder, "memzone-skipped.txt")):
            with open(os.path.join(folder, "memzone-skipped.txt")) as f:
                self.memzone_skipped = f.read().strip()
        self.strace = {"client": self._strace_per_call("client", strace_short, strace_long),
                       "daemon": self._strace_per_call("daemon", strace_short, strace_long)}
        self.nices = self._poller_nices()

    def load(self, name, kind):
        # The checked JSON of results/name, None if the run did not write it.
        path = os.path.join(self.dir, name)
        if not os.path.exists(path):
            return None
        try:
            return load_checked(kind, path)
        except BadOutput as e:
            fail(f"bad output: {e}")

    def _load_meta(self):
        path = os.path.join(self.dir, "meta.json")
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

    def _strace_per_call(self, who, short, long):
        s = strace_total(os.path.join(self.dir, f"strace-{who}-{short}.txt"))
        l = strace_total(os.path.join(self.dir, f"strace-{who}-{long}.txt"))
        if s is None or l is None:
            return None
        return (l - s) / (long - short)

    def _poller_nices(self):
        # bench.sh's poller-nice.txt: "default N" and "off N", N the nice
        # value poller 0 had ("?" if it was not found).
        path = os.path.join(self.dir, "poller-nice.txt")
        out = {}
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 2:
                        out[parts[0]] = parts[1]
        return out

    def ref(self, name):
        # A reference measured at the start of the run and, for the goals',
        # again between the two daemons and at the end: the median of the
        # three (one disturbed measurement cannot move it), with their
        # spread noted.
        runs = [r for r in (self.refs.get(name), self.refs.get(name + "-mid"),
                            self.refs.get(name + "-end")) if r]
        if len(runs) < 2:
            return runs[0] if runs else None
        med = dict(runs[0])
        ns = sorted(r["ns_per_op"] for r in runs)
        med["ns_per_op"] = median(ns)
        med["ops_per_s"] = 1e9 / med["ns_per_op"]
        med["spread"] = (ns[0], ns[-1], len(ns))
        return med

    def cell(self, transport, mode, depth, clients, size):
        return self.cells.get((transport, mode, depth, clients, size))

    def one_try(self, prefix):
        # One try of a goal triple: the reference, the cell, the reference
        # again.
        r1, c, r2 = (self.load(f"{prefix}-{part}.json", kind)
                     for part, kind in (("ref1", "ref"), ("cell", "cell"), ("ref2", "ref")))
        if not (r1 and c and r2):
            return None
        a, b = r1["ns_per_op"], r2["ns_per_op"]
        return {"cell": c, "ref_ns": (a + b) / 2, "ref_ops_per_s": 2e9 / (a + b), "ref1_ns": a,
                "ref2_ns": b, "spread": spread(a, b)}

    def shared_try(self, prefix):
        # One try of a shared-CPU round: one client, 16, one client again.
        one1, many, one2 = (self.load(f"{prefix}-{part}.json", "cell")
                            for part in ("one1", "many", "one2"))
        if not (one1 and many and one2):
            return None
        a, b = one1["calls_per_s"], one2["calls_per_s"]
        # As ref_bench references: time per call of the lone client.
        return {"cell": many, "one_calls_per_s": (a + b) / 2, "ref1_ns": 1e9 / a,
                "ref2_ns": 1e9 / b, "spread": spread(a, b)}

    def goal_rounds(self, name):
        # The goal's triples, one per round (bench.sh goal_round).
        return [t for t in (read_round(self.dir, f"{name}-r{i}", self.one_try, "goal-", fail)
                            for i in (1, 2, 3)) if t]

    def beside_rounds(self):
        # bench.sh goal_round's ping2_perf --beside-ring, one per round.
        return [r for r in (self.load(f"goal-beside-r{i}.json", "beside") for i in (1, 2, 3))
                if r]

    def shared_rounds(self, mode):
        # bench.sh shared_round: the chosen try of each round, as for a goal.
        return [t for t in (read_round(self.dir, f"shared-{mode}-r{r}", self.shared_try, "",
                                       fail) for r in range(1, 10)) if t]

    def cell_rows(self):
        # Every cell beside its reference.
        rows = []
        for (transport, mode, depth, clients, size), r in sorted(self.cells.items()):
            ref_name = reference(transport, mode, depth, size)
            r_ref = self.ref(ref_name)
            lat = r["latency_ns"] or {}
            rows.append({
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
            })
        return rows
