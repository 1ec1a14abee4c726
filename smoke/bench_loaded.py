#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The loaded host of make bench (smoke/bench_loaded.sh): per scenario, the
# calls back to back on the channel and on the socket (the median of the
# alternated rounds), the occasional calls after 20 and 300 ms, the other
# servers' clients beside ours, and the runnable tasks seen; the goals, the
# report's table and the plot's data. Run alone, it prints the table and
# the goals of a results folder:
#
#   bench_loaded.py RESULTS_DIR

import glob
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_check import BadOutput, load as load_checked  # noqa: E402
from bench_format import fmt_gap, fmt_num, fmt_rate, fmt_ns  # noqa: E402
from bench_results import median  # noqa: E402

# What each scenario runs beside the daemon and its client.
WHAT = {
    "quiet": "nothing",
    "busy-1": "1 busy loop",
    "busy-1x": "a busy loop per CPU",
    "busy-2x": "2 busy loops per CPU",
    "cc-1x": "a compiler loop per CPU",
    "cc-2x": "2 compiler loops per CPU",
    "servers-1": "1 other channel server, its client calling back to back",
    "servers-2": "2 other channel servers, each with such a client",
}
# The goals, by kind of scenario: busy shm / socket at least, occasional
# shm p50 / socket p50 at most (at every gap), and its stretch.
LOOPS = ("busy-1", "busy-1x", "busy-2x", "cc-1x", "cc-2x")
SERVERS = ("servers-1", "servers-2")
GOALS = {"quiet": (25, 0.8, None), "loops": (3, 1.0, 0.8), "servers": (1.5, 1.0, None)}
SERVERS_BUSY_STRETCH = 3
# Beside other servers, the slowest busy client's calls/s over the fastest's
# (ours, and the others' mean): none starves.
SHARE_MIN = 0.25


def _host(r):
    ok = (isinstance(r, dict) and isinstance(r.get("scenario"), str)
          and isinstance(r.get("order"), int) and isinstance(r.get("cpus"), int)
          and isinstance(r.get("load_processes"), int) and isinstance(r.get("runnable"), list)
          and isinstance(r.get("others"), list)
          and all(isinstance(o, dict) and o.get("transport") in ("shm", "socket")
                  and isinstance(o.get("requests"), int) and isinstance(o.get("seconds"), float)
                  and o["seconds"] > 0 for o in r["others"]))
    if not ok:
        raise BadOutput("not a loaded-host description (scenario, order, cpus, "
                        "load_processes, runnable, others)")
    return r


def _load(folder, name, kind):
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return None
    if kind != "host":
        return load_checked(kind, path)
    import json
    try:
        with open(path) as f:
            return _host(json.load(f))
    except (OSError, ValueError) as e:
        raise BadOutput(f"{path}: {e}")
    except BadOutput as e:
        raise BadOutput(f"{path}: {e}")


def rows(folder):
    """One row per scenario run, in the order run. Raises BadOutput."""
    out = []
    hosts = [_load(folder, os.path.basename(p), "host")
             for p in glob.glob(os.path.join(folder, "loaded-*-host.json"))]
    for h in sorted(hosts, key=lambda h: h["order"]):
        s = h["scenario"]
        cells = {t: [c for c in (_load(folder, f"loaded-{s}-{t}-r{i}.json", "cell")
                                 for i in range(1, 10)) if c] for t in ("shm", "socket")}
        if not cells["shm"] or not cells["socket"]:
            continue
        rate = {t: median([c["calls_per_s"] for c in cells[t]]) for t in cells}
        p50 = {t: median([(c["latency_ns"] or {}).get("p50") or 0 for c in cells[t]])
               for t in cells}
        gap = _load(folder, f"loaded-{s}-gap.json", "gap")
        gaps = {g["gap_ms"]: g for g in gap["gaps"]} if gap else {}
        others = None
        n_servers = h["load_processes"] if s.startswith("servers-") else 0
        if n_servers:
            during = [o["requests"] / o["seconds"] for o in h["others"] if o["transport"] == "shm"]
            others = median(during) / n_servers if during else None
        share = None
        if others is not None:
            share = min(rate["shm"], others) / max(rate["shm"], others)
        out.append({"scenario": s, "what": WHAT.get(s, s), "cpus": h["cpus"],
                    "runnable": median(h["runnable"]) if h["runnable"] else None,
                    "loadavg": h.get("loadavg_end"), "shm": rate["shm"],
                    "socket": rate["socket"], "busy_ratio": rate["shm"] / rate["socket"],
                    "shm_p50": p50["shm"], "socket_p50": p50["socket"], "gaps": gaps,
                    "others_per_server": others, "share": share})
    return out


def _worst_gap(rs):
    ratios = [(g["p50_ratio"], r["scenario"], ms) for r in rs for ms, g in r["gaps"].items()]
    return max(ratios) if ratios else None


def goals(g, loaded_rows):
    """The loaded host's goals into g (bench_goals.Goals)."""
    by = {r["scenario"]: r for r in loaded_rows}
    for kind, names in (("quiet", ("quiet",)), ("loops", LOOPS), ("servers", SERVERS)):
        rs = [by[n] for n in names if n in by]
        if not rs:
            continue
        busy_min, occ_max, occ_stretch = GOALS[kind]
        label = {"quiet": "loaded host, nothing beside (this run's quiet)",
                 "loops": "loaded host, busy and compiler loops",
                 "servers": "loaded host, beside other channel servers"}[kind]
        worst = min(rs, key=lambda r: r["busy_ratio"])
        detail = ", ".join(f"{r['scenario']} {r['busy_ratio']:.1f}" for r in rs)
        g.goal(f"{label}: busy shm calls/s / socket, the worst scenario", worst["busy_ratio"],
               ">=", busy_min, detail)
        if kind == "servers":
            g.goal(f"{label}: the same, stretch", worst["busy_ratio"], ">=",
                   SERVERS_BUSY_STRETCH, "as above")
            shares = [r for r in rs if r["share"] is not None]
            if shares:
                least = min(shares, key=lambda r: r["share"])
                g.goal(f"{label}: slowest busy client / fastest (ours, the others' mean)",
                       least["share"], ">=", SHARE_MIN,
                       ", ".join(f"{r['scenario']} {r['share']:.2f} (ours "
                                 f"{fmt_rate(r['shm'])}, others "
                                 f"{fmt_rate(r['others_per_server'])} each)" for r in shares))
        w = _worst_gap(rs)
        if w:
            detail = f"the worst: {w[1]} after {fmt_gap(w[2])}"
            g.goal(f"{label}: occasional shm p50 / socket p50, the worst scenario and gap",
                   w[0], "<=", occ_max, detail)
            if occ_stretch:
                g.goal(f"{label}: the same, stretch", w[0], "<=", occ_stretch, "as above")


def table_lines(loaded_rows):
    """The report's "Loaded host" section, [] when it was not run."""
    if not loaded_rows:
        return []
    gap_ms = sorted({ms for r in loaded_rows for ms in r["gaps"]})
    lines = ["### Loaded host", "",
             "One client of a daemon with its default options, while the benchmark runs its "
             "own load beside them. Busy: GR_PING2 calls back to back, the median of the "
             "rounds (shm and socket alternated). Occasional: shm p50 / socket p50 after "
             "each gap of silence (the two alternated call by call). Runnable: the tasks "
             "ready to run besides the reader, the median of the samples taken before each "
             "cell (the CPUs are busy when it is above their number). Others: the calls/s "
             "of each other server's client while ours called on the channel.", ""]
    head = ("| beside | runnable / CPUs | shm calls/s | socket calls/s | shm / socket | "
            "shm p50 / socket p50 busy | "
            + " | ".join(f"after {fmt_gap(ms)}" for ms in gap_ms) + " | others, each |")
    lines += [head, "|" + "---|" * (7 + len(gap_ms))]
    for r in loaded_rows:
        occ = " | ".join(
            (f"{r['gaps'][ms]['p50_ratio']:.2f} ({fmt_ns(r['gaps'][ms]['shm']['p50'])} / "
             f"{fmt_ns(r['gaps'][ms]['socket']['p50'])})") if ms in r["gaps"] else "-"
            for ms in gap_ms)
        lines.append(f"| {r['what']} | {fmt_num(r['runnable'], 0)} / {r['cpus']} | "
                     f"{fmt_rate(r['shm'])} | {fmt_rate(r['socket'])} | "
                     f"{r['busy_ratio']:.1f}x | {fmt_ns(r['shm_p50'])} / "
                     f"{fmt_ns(r['socket_p50'])} | {occ} | {fmt_rate(r['others_per_server'])} |")
    lines.append("")
    return lines


def write_plot_data(folder, loaded_rows):
    """loaded.dat for smoke/plot.gp: scenario, busy ratio, occasional ratios."""
    if not loaded_rows:
        return
    gap_ms = sorted({ms for r in loaded_rows for ms in r["gaps"]})
    with open(os.path.join(folder, "loaded.dat"), "w") as f:
        f.write("# scenario busy_ratio " + " ".join(f"after_{ms}ms" for ms in gap_ms) + "\n")
        for r in loaded_rows:
            occ = " ".join(f"{r['gaps'][ms]['p50_ratio']:.4g}" if ms in r["gaps"] else "NaN"
                           for ms in gap_ms)
            f.write(f'"{r["scenario"]}" {r["busy_ratio"]:.4g} {occ}\n')


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} RESULTS_DIR", file=sys.stderr)
        return 2
    import bench_goals
    try:
        loaded_rows = rows(argv[1])
    except BadOutput as e:
        print(f"bench_loaded: bad output: {e}", file=sys.stderr)
        return 1
    g = bench_goals.Goals()
    goals(g, loaded_rows)
    write_plot_data(argv[1], loaded_rows)
    print("\n".join(table_lines(loaded_rows)))
    for x in g.goals:
        verdict = "met" if x["met"] else "missed" if x["met"] is not None else "n/a"
        print(f"{x['goal']}: {x['measured']:.2f} ({x['op']} {x['target']}): {verdict}; "
              f"{x['detail']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
