#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The report of a make bench run (smoke/bench.sh): reads the JSON of
# ref_bench, ping2_perf, python/bench_gap.py and python/bench.py in a
# results folder, puts
# every cell beside its reference, computes the performance goals
# (docs/benchmark-method.md, "Goals"), and writes
#   summary.json   everything, machine-readable
#   report.md      every table of the run, the headline first
#   *.dat          the data of smoke/plot.gp
# and prints the tables. Every JSON it reads is checked first
# (bench_check.py): a file that is not what a tool writes ends it with exit
# status 1 and a line naming the file. A goal round whose references moved is
# reported as such, with its spread: noise, never an error.
#
#   bench_report.py RESULTS_DIR STRACE_CALLS_SHORT STRACE_CALLS_LONG
#
# The pieces: bench_results.py (loading), bench_rounds.py (the rounds
# measured side by side), bench_goals.py, bench_occasional.py and
# bench_loaded.py (the goals), bench_headline.py and bench_tables.py
# (report.md), bench_plots.py (the plots' data).

import json
import os
import sys
from types import SimpleNamespace

# No __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_goals  # noqa: E402
import bench_headline  # noqa: E402
import bench_loaded  # noqa: E402
import bench_routes  # noqa: E402
import bench_occasional  # noqa: E402
from bench_check import BadOutput  # noqa: E402
from bench_plots import sizes_run, write_plot_data  # noqa: E402
from bench_results import Results  # noqa: E402
from bench_tables import report_lines  # noqa: E402


def _section_rows(section, folder, g):
    """The rows of a section of its own (bench_loaded, bench_routes) read
    from folder, its goals into g; a file that is bad output ends the
    report, naming it."""
    try:
        rows = section.rows(folder)
    except BadOutput as e:
        print(f"bench_report: bad output: {e}", file=sys.stderr)
        sys.exit(1)
    section.goals(g, rows)
    return rows


def compute(res):
    """Every goal and row of the report, in the order of its tables."""
    g = bench_goals.Goals()
    rtt_rounds = res.goal_rounds("rtt")
    bench_goals.round_trip_goals(res, g, rtt_rounds)
    bench_goals.busy_goals(res, g)
    bench_goals.sleeping_goals(res, g)
    counts, idle_rounds = bench_goals.idle_channel_rounds(res)
    bench_goals.idle_channel_goal(g, counts, idle_rounds)
    bench_goals.sixteen_client_goals(res, g)
    occasional_rows = bench_occasional.rows(res.gaps)
    bench_occasional.goals(g, occasional_rows)
    loaded_rows = _section_rows(bench_loaded, res.dir, g)
    route_rows = _section_rows(bench_routes, res.dir, g)
    return SimpleNamespace(
        loaded_rows=loaded_rows, route_rows=route_rows,
        goals=g, noise=g.noise(), rtt_rounds=rtt_rounds, cell_rows=res.cell_rows(),
        sizes_run=sizes_run(res), idle_channel_counts=counts, idle_channel_rounds=idle_rounds,
        occasional_rows=occasional_rows,
        occasional_backing=(res.gaps.get("c") or res.gaps.get("python") or {}).get("backing"),
        shm1=res.cell("memfd", "spinning", 1, 1, 64),
        shm32=res.cell("memfd", "spinning", 32, 1, 64),
        both1=res.cell("memfd", "bothsleep", 1, 1, 64))


def summary(res, v):
    return {
        "meta": res.meta,
        "goal_rounds": v.noise,
        "references": res.refs,
        "cells": v.cell_rows,
        "bothsleep": v.both1,
        "idle": res.idle,
        "idle_channels": [{"round": r["round"], "rtt_ratio": r["rtt_ratio"],
                           "p50_ratio": r["p50_ratio"],
                           "calls_per_s": {str(n): (c or {}).get("calls_per_s")
                                           for n, c in r["cells"].items()}}
                          for r in v.idle_channel_rounds],
        "strace_syscalls_per_call": res.strace,
        "memzone_skipped": res.memzone_skipped,
        "goals": v.goals.goals,
        "beside_goals": [{"what": w, "measured": m, "detail": d}
                         for w, m, d in v.goals.info_rows],
        "poller_nice": res.nices,
        "headline": bench_headline.summary(res.headline, v.occasional_rows, res.idle),
        "occasional": [{k: r[k] for k in ("client", "gap_ms", "rounds", "shm", "socket",
                                          "p50_ratio", "verdict")} for r in v.occasional_rows],
        "loaded": [{k: r[k] for k in ("scenario", "what", "runnable", "shm", "socket",
                                      "busy_ratio", "others_per_server", "share")}
                   | {"occasional_p50_ratio": {str(ms): g["p50_ratio"]
                                               for ms, g in r["gaps"].items()}}
                   for r in v.loaded_rows],
        "routes": {name: {k: r[k] for k in ("count", "depth", "transport", "seconds",
                                              "routes_per_s")}
                   for name, r in v.route_rows.items()},
    }


def main(argv):
    if len(argv) != 4:
        print(f"usage: {argv[0]} RESULTS_DIR STRACE_CALLS_SHORT STRACE_CALLS_LONG",
              file=sys.stderr)
        return 2
    res = Results(argv[1], int(argv[2]), int(argv[3]))
    v = compute(res)
    with open(os.path.join(res.dir, "summary.json"), "w") as f:
        json.dump(summary(res, v), f, indent=1)
    write_plot_data(res)
    bench_loaded.write_plot_data(res.dir, v.loaded_rows)
    bench_routes.write_plot_data(res.dir, v.route_rows)
    report = "\n".join(report_lines(res, v))
    with open(os.path.join(res.dir, "report.md"), "w") as f:
        f.write(report + "\n")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
