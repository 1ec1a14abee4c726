# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The data of a make bench run: what each tool's JSON must hold before the
# report reads it (a file that is not what a tool writes is BadOutput,
# naming the file and the field), and how the report writes its numbers.

import json
import math


class BadOutput(Exception):
    pass


# What a field must be: "+" a number above 0, "0" a number, 0 or above,
# "?" such a number or null, "s" a word, "[]" a list of anything; a dict,
# an object with those fields; a one-item list, a non-empty list of such
# items; a tuple, one of these values; None, anything.
_LATENCY = {"p50": "0", "p99": "0", "p999": "0", "max": "0"}
_GAP_SIDE = {"count": "+", "p50": "+", "p99": "+", "max": "+"}
_SIDE_NS = {"p50": "+", "min": "+", "max": "+"}
_RATE = {"calls_per_s": "+"}
SCHEMAS = {
    "ref": {"test": "s", "unit": "s", "ns_per_op": "+", "ops_per_s": "+", "cpus": None,
            "size": "?", "depth": "?", "gap_us": "?", "leader_cpu_ns_per_op": "0",
            "follower_cpu_ns_per_op": "?"},
    "cell": {"mode": ("calls",), "calls_per_s": "+", "seconds": "+", "latency_ns": None,
             "client_cpu_ns_per_call": "0", "daemon_cpu_ns_per_call": "?",
             "client_syscalls_per_call": "?", "daemon_syscalls_per_call": "?",
             "client_vcsw_per_call": "0", "daemon_vcsw_per_call": "?",
             "fastest_over_slowest": "+"},
    "idle": {"mode": ("idle",), "clients": "+", "idle_seconds": "+", "daemon_cpu_ns": "0",
             "daemon_cpu_core_fraction": "0", "daemon_vcsw": "0", "daemon_syscalls": "?",
             "first_request_ns": "+",
             "after_idle_ns": {"rounds": "0", "gap_ms": "0", "p50": "0", "max": "0"}},
    "headline": {"rounds": "+", "shm": _RATE, "socket": _RATE, "c": _RATE, "c_socket": _RATE},
    "beside": {"mode": ("beside-ring",), "pairs": "+", "ratio_p25": "+", "ratio_p50": "+",
               "ratio_p75": "+", "ring_ns": _SIDE_NS, "shm_ns": _SIDE_NS},
    "routes": {"tool": ("route_inject",), "mode": ("add", "list"), "count": "+",
               "installed": "0", "depth": "+", "transport": ("shm", "socket", "reference"),
               "seconds": "+", "routes_per_s": "+"},
    # bench.sh's description of a loaded-host scenario: the runnable tasks
    # seen, the other servers' requests during each cell.
    "host": {"scenario": "s", "order": "0", "cpus": "+", "load_processes": "0", "runnable": "[]",
             "others": "[]"},
    "gap": {"mode": ("gap",), "seconds": "+", "gaps": [{
        "gap_ms": "+", "rounds": "+", "shm": _GAP_SIDE, "socket": _GAP_SIDE, "p50_ratio": "+"}]},
}


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _valid(v, want):
    if want is None:
        return True
    if isinstance(want, tuple):
        return v in want
    if want == "s":
        return isinstance(v, str) and v != ""
    if want == "[]":
        return isinstance(v, list)
    if want == "?" and v is None:
        return True
    return _number(v) and (v > 0 if want == "+" else v >= 0)


def check(value, schema):
    """value, if it holds every field of schema; else BadOutput naming the
    first field missing or wrong."""
    if isinstance(schema, list):
        if not isinstance(value, list) or not value:
            raise BadOutput("not a non-empty list")
        for item in value:
            check(item, schema[0])
        return value
    if not isinstance(value, dict):
        raise BadOutput("not a JSON object")
    for key, want in schema.items():
        if key not in value:
            raise BadOutput(f"no '{key}'")
        if isinstance(want, (dict, list)):
            try:
                check(value[key], want)
            except BadOutput as e:
                raise BadOutput(f"'{key}': {e}")
        elif not _valid(value[key], want):
            raise BadOutput(f"'{key}' is {value[key]!r}")
    return value


def load(kind, path):
    """The checked JSON of path; BadOutput names the file and what is wrong."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise BadOutput(f"{path}: {e.strerror}")
    try:
        r = check(json.loads(text), SCHEMAS[kind])
    except json.JSONDecodeError as e:
        raise BadOutput(f"{path}: not JSON ({e.msg} at line {e.lineno})")
    except BadOutput as e:
        raise BadOutput(f"{path}: {e}")
    if kind == "cell" and not (r["latency_ns"] is None or _valid_latency(r["latency_ns"])):
        raise BadOutput(f"{path}: 'latency_ns' is not p50, p99, p999 and max")
    return r


def _valid_latency(v):
    return isinstance(v, dict) and all(_valid(v.get(k), w) for k, w in _LATENCY.items())


def spread(a, b):
    """How far apart two measurements of one thing are, a fraction of the lower."""
    return abs(a - b) / min(a, b)


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


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


def fmt_gap(ms):
    """A gap of silence: "20 ms", "1 s"."""
    return f"{ms // 1000} s" if ms >= 1000 and ms % 1000 == 0 else f"{ms} ms"
