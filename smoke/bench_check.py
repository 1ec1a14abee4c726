#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# What make bench accepts as a tool's output: the JSON of one ref_bench run
# (a reference), one ping2_perf run (a cell, the idle cost, or the occasional
# calls of ping2_perf --gap and python/bench_gap.py), or python/bench.py's
# (the headline's calls one right after the other), checked for
# every field the report reads, and how far apart a goal's two references
# are. smoke/bench_report.py checks each file as it loads it; smoke/bench.sh
# checks the one field it needs of each as soon as its tool ends (in the
# shell: a Python process per step would cost a second on a loaded machine).

import json
import math


class BadOutput(Exception):
    pass


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _need(r, key, check, what):
    if key not in r:
        raise BadOutput(f"no '{key}'")
    if not check(r[key]):
        raise BadOutput(f"'{key}' is {r[key]!r}, not {what}")


def _positive(v):
    return _number(v) and v > 0


def _non_negative(v):
    return _number(v) and v >= 0


def _optional(check):
    return lambda v: v is None or check(v)


def _latency(v):
    return isinstance(v, dict) and all(_non_negative(v.get(k)) for k in ("p50", "p99", "p999", "max"))


def _cdf(v):
    return isinstance(v, list) and all(
        isinstance(p, list) and len(p) == 2 and _number(p[0]) and _number(p[1]) for p in v)


def _after_idle(v):
    return isinstance(v, dict) and all(_non_negative(v.get(k)) for k in ("rounds", "gap_ms", "p50", "max"))


def _gap_samples(v):
    return (isinstance(v, dict) and _positive(v.get("count"))
            and all(_positive(v.get(k)) for k in ("p50", "p99", "max")))


def _rate(v):
    # One client of python/bench.py's: its median round.
    return isinstance(v, dict) and _positive(v.get("calls_per_s"))


def _side_ns(v):
    return isinstance(v, dict) and all(_positive(v.get(k)) for k in ("p50", "min", "max"))


def _gaps(v):
    return isinstance(v, list) and v != [] and all(
        isinstance(g, dict) and _positive(g.get("gap_ms")) and _positive(g.get("rounds"))
        and _gap_samples(g.get("shm")) and _gap_samples(g.get("socket"))
        and _positive(g.get("p50_ratio")) for g in v)


# Per kind: (field, check, what the check wants).
SCHEMAS = {
    "ref": [
        ("test", lambda v: isinstance(v, str) and v != "", "a test name"),
        ("unit", lambda v: isinstance(v, str) and v != "", "a unit"),
        ("ns_per_op", _positive, "a time above 0"),
        ("ops_per_s", _positive, "a rate above 0"),
        ("cpus", lambda v: v is None or isinstance(v, list), "a CPU list or null"),
        ("size", _optional(_non_negative), "a size or null"),
        ("depth", _optional(_positive), "a depth or null"),
        ("gap_us", _optional(_non_negative), "a gap or null"),
        ("leader_cpu_ns_per_op", _non_negative, "a CPU time"),
        ("follower_cpu_ns_per_op", _optional(_non_negative), "a CPU time or null"),
    ],
    "cell": [
        ("mode", lambda v: v == "calls", "'calls'"),
        ("calls_per_s", _positive, "a rate above 0"),
        ("seconds", _positive, "a duration above 0"),
        ("latency_ns", _optional(_latency), "percentiles or null"),
        ("client_cpu_ns_per_call", _non_negative, "a CPU time"),
        ("daemon_cpu_ns_per_call", _optional(_non_negative), "a CPU time or null"),
        ("client_syscalls_per_call", _optional(_non_negative), "a count or null"),
        ("daemon_syscalls_per_call", _optional(_non_negative), "a count or null"),
        ("client_vcsw_per_call", _non_negative, "a count"),
        ("daemon_vcsw_per_call", _optional(_non_negative), "a count or null"),
        ("fastest_over_slowest", _positive, "a ratio"),
    ],
    "idle": [
        ("mode", lambda v: v == "idle", "'idle'"),
        ("clients", _positive, "a number of clients"),
        ("idle_seconds", _positive, "a duration above 0"),
        ("daemon_cpu_ns", _non_negative, "a CPU time"),
        ("daemon_cpu_core_fraction", _non_negative, "a fraction"),
        ("daemon_vcsw", _non_negative, "a count"),
        ("daemon_syscalls", _optional(_non_negative), "a count or null"),
        ("first_request_ns", _positive, "a time above 0"),
        ("after_idle_ns", _after_idle, "rounds, gap_ms, p50 and max"),
    ],
    "headline": [
        ("rounds", _positive, "a number of rounds"),
        ("shm", _rate, "calls_per_s above 0"),
        ("socket", _rate, "calls_per_s above 0"),
        ("c", _rate, "calls_per_s above 0"),
        ("c_socket", _rate, "calls_per_s above 0"),
    ],
    "beside": [
        ("mode", lambda v: v == "beside-ring", "'beside-ring'"),
        ("pairs", _positive, "a number of pairs"),
        ("ratio_p25", _positive, "a ratio above 0"),
        ("ratio_p50", _positive, "a ratio above 0"),
        ("ratio_p75", _positive, "a ratio above 0"),
        ("ring_ns", _side_ns, "p50, min and max above 0"),
        ("shm_ns", _side_ns, "p50, min and max above 0"),
    ],
    "routes": [
        ("tool", lambda v: v == "route_inject", "'route_inject'"),
        ("mode", lambda v: v in ("add", "list"), "'add' or 'list'"),
        ("count", _positive, "a number of routes"),
        ("installed", _non_negative, "a number of routes"),
        ("depth", _positive, "a depth"),
        ("transport", lambda v: v in ("shm", "socket", "reference"), "shm, socket or reference"),
        ("seconds", _positive, "a duration above 0"),
        ("routes_per_s", _positive, "a rate above 0"),
    ],
    "gap": [
        ("mode", lambda v: v == "gap", "'gap'"),
        ("seconds", _positive, "a duration above 0"),
        ("gaps", _gaps, "gaps, each with gap_ms, rounds, shm and socket percentiles, p50_ratio"),
    ],
}


def check(kind, r):
    # Raises BadOutput with the first field that is missing or wrong.
    if not isinstance(r, dict):
        raise BadOutput("not a JSON object")
    for key, test, what in SCHEMAS[kind]:
        _need(r, key, test, what)
    if kind == "cell" and "latency_cdf" in r and not _cdf(r["latency_cdf"]):
        raise BadOutput("'latency_cdf' is not a list of [ns, fraction] pairs")
    return r


def load(kind, path):
    # The checked JSON of path; BadOutput names the file and what is wrong.
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise BadOutput(f"{path}: {e.strerror}")
    if text.strip() == "":
        raise BadOutput(f"{path}: empty")
    try:
        return check(kind, json.loads(text))
    except json.JSONDecodeError as e:
        raise BadOutput(f"{path}: not JSON ({e.msg} at line {e.lineno})")
    except BadOutput as e:
        raise BadOutput(f"{path}: {e}")


def spread(a, b):
    # How far apart two measurements of one reference are, as a fraction of
    # the lower one.
    return abs(a - b) / min(a, b)
