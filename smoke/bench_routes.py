# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The route table of make bench (smoke/bench.sh): routes/s of
# route_inject into examples/route_table at each depth over each transport,
# beside the same insertions into an rte_fib of its own process, and the
# list of every route on each transport; the goals, the report's table and
# the plot's data.

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_data import BadOutput, fmt_rate, load as load_checked  # noqa: E402

# Routes/s over shm / over the socket, one call at a time: the channel's
# round trip against the socket's, for a real request.
DEPTH1_MIN = 20
# Depth 32 over shm / the same insertions in route_inject's own process:
# what the control path leaves of the table's own speed (stretch 0.8).
DEPTH32_REF_MIN = 0.5
DEPTH32_REF_STRETCH = 0.8
# The list of every route: routes/s over shm / over the socket.
LIST_MIN = 10
# The runs side by side in the table and the plot: (label, shm run, socket run).
PAIRS = (("depth 1", "shm-d1", "socket-d1"), ("depth 32", "shm-d32", "socket-d32"),
         ("the list", "list-shm", "list-socket"))


def _load(folder, name):
    path = os.path.join(folder, f"routes-{name}.json")
    return load_checked("routes", path) if os.path.exists(path) else None


def rows(folder):
    """{"reference", "shm-d1", ..., "list-shm", "list-socket"}: each run's
    JSON, those that ran; {} when the route table was not run. A run that
    installed (or listed) fewer routes than it was asked is bad output."""
    out = {}
    for name in ["reference"] + [run for _, shm, sock in PAIRS for run in (shm, sock)]:
        r = _load(folder, name)
        if r is None:
            continue
        if r["installed"] < r["count"]:
            raise BadOutput(f"routes-{name}.json: {r['installed']} of {r['count']} routes")
        out[name] = r
    return out


def _rate(rs, name):
    return rs[name]["routes_per_s"] if name in rs else None


def goals(g, rs):
    """The route table's goals into g (bench_report.Goals)."""
    if not rs:
        return
    n = next(iter(rs.values()))["count"]
    shm1, sock1 = _rate(rs, "shm-d1"), _rate(rs, "socket-d1")
    if shm1 and sock1:
        g.goal(f"route table: {n} IPv4 routes at depth 1, shm routes/s / socket", shm1 / sock1,
               ">=", DEPTH1_MIN, f"{fmt_rate(shm1)} / {fmt_rate(sock1)}")
    shm32, ref = _rate(rs, "shm-d32"), _rate(rs, "reference")
    if shm32 and ref:
        detail = f"{fmt_rate(shm32)} / {fmt_rate(ref)} in route_inject's own rte_fib"
        g.goal(f"route table: {n} routes at depth 32, shm / in-process reference", shm32 / ref,
               ">=", DEPTH32_REF_MIN, detail)
        g.goal("route table: the same, stretch", shm32 / ref, ">=", DEPTH32_REF_STRETCH, "as above")
    lshm, lsock = _rate(rs, "list-shm"), _rate(rs, "list-socket")
    if lshm and lsock:
        g.goal(f"route table: the list of {n} routes, shm routes/s / socket", lshm / lsock, ">=",
               LIST_MIN, f"{fmt_rate(lshm)} / {fmt_rate(lsock)}")


def table_lines(rs):
    """The report's "Route table" section, [] when it was not run."""
    if not rs:
        return []
    n = next(iter(rs.values()))["count"]
    ref = _rate(rs, "reference")
    lines = ["### Route table", "",
             f"examples/route_table (routes in rte_fib, served with libgr_api_server) fed {n} "
             "IPv4 routes by route_inject, the prefix lengths of the BGP table, one request "
             "per route: one call at a time (depth 1, as a routing daemon's plugin installs "
             "them) and 32 in flight; a fresh table each time. The reference makes the same "
             "insertions into an rte_fib of route_inject's own process, with no server. The "
             "list is one stream request of every route.", "",
             "| run | shm routes/s | socket routes/s | shm / socket | shm / reference |",
             "|---|---|---|---|---|"]
    for label, shm, sock in PAIRS:
        a, b = _rate(rs, shm), _rate(rs, sock)
        ratio = f"{a / b:.1f}x" if a and b else "-"
        vs_ref = f"{a / ref:.2f}" if a and ref and not shm.startswith("list") else "-"
        lines.append(f"| {label} | {fmt_rate(a)} | {fmt_rate(b)} | {ratio} | {vs_ref} |")
    if ref:
        lines.append(f"| reference, in process | {fmt_rate(ref)} | | | 1 |")
    lines.append("")
    return lines


def write_plot_data(folder, rs):
    """routes.dat for smoke/plot.gp: run, shm and socket routes/s."""
    if not rs:
        return
    with open(os.path.join(folder, "routes.dat"), "w") as f:
        f.write("# run shm_routes_per_s socket_routes_per_s reference_routes_per_s\n")
        ref = _rate(rs, "reference") or "NaN"
        for label, shm, sock in PAIRS:
            f.write(f'"{label}" {_rate(rs, shm) or "NaN"} {_rate(rs, sock) or "NaN"} {ref}\n')
