# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The occasional calls of make bench: GR_PING2 after gaps of silence, one
# shm and one socket connection in one process alternated call by call,
# from C (ping2_perf --gap) and from Python (python/bench_gap.py). The goal:
# at every gap, the channel's median round trip is no longer than the
# socket's; the stretch, no more than 0.8 of it. Rows, goals and the
# report's table.

from bench_format import fmt_gap, fmt_ns, fmt_num
from bench_results import GAP_CLIENTS

# shm p50 / socket p50 at every gap: the goal, and its stretch.
GOAL = 1.0
STRETCH = 0.8


def verdict(ratio_value):
    """"stretch" (<= STRETCH), "met" (<= GOAL) or "missed"."""
    if ratio_value <= STRETCH:
        return "stretch"
    return "met" if ratio_value <= GOAL else "missed"


def rows(gaps):
    """One row per client and gap, from the clients' gap runs (key -> the
    JSON of ping2_perf --gap or bench_gap.py, None if not measured)."""
    out = []
    for key, label in GAP_CLIENTS:
        r = gaps.get(key)
        if r is None:
            continue
        for g in r["gaps"]:
            value = g["shm"]["p50"] / g["socket"]["p50"]
            out.append({"client": key, "label": label, "gap_ms": g["gap_ms"],
                        "rounds": g["rounds"], "shm": g["shm"], "socket": g["socket"],
                        "p50_ratio": value, "verdict": verdict(value)})
    return out


def goals(g, occasional_rows):
    # Per client: the worst gap decides, against the goal and the stretch.
    for key, label in GAP_CLIENTS:
        mine = [r for r in occasional_rows if r["client"] == key]
        if not mine:
            continue
        worst = max(mine, key=lambda r: r["p50_ratio"])
        detail = ("shm p50 / socket p50 after " + ", ".join(
            f"{fmt_gap(r['gap_ms'])} {r['p50_ratio']:.2f} ({fmt_ns(r['shm']['p50'])} / "
            f"{fmt_ns(r['socket']['p50'])})" for r in mine)
            + f"; the worst, {fmt_gap(worst['gap_ms'])}, decides")
        g.goal(f"occasional calls from {label}: shm p50 / socket p50 at every gap",
               worst["p50_ratio"], "<=", GOAL, detail)
        g.goal(f"occasional calls from {label}: the same, stretch", worst["p50_ratio"], "<=",
               STRETCH, "as above")


def table_lines(occasional_rows, shm_backing):
    """The report's "Occasional calls" section, [] when nothing was measured."""
    if not occasional_rows:
        return []
    gaps = sorted({r["gap_ms"] for r in occasional_rows})
    lines = ["### Occasional calls", ""]
    names = [fmt_gap(ms) for ms in gaps]
    listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
    lines.append(f"GR_PING2 after {listed} of silence: one shm "
                 f"({shm_backing or 'memfd'}) and one socket connection in one process, "
                 "alternated call by call (gap, shm call, gap, socket call), on a daemon with "
                 f"its default options. Goal: shm p50 <= socket p50 at every gap (ratio <= "
                 f"{GOAL}); stretch: <= {STRETCH}. A p99 of fewer than 100 calls is the "
                 "slowest of them.")
    lines.append("")
    lines.append("| client | after | rounds | shm p50 / p99 | socket p50 / p99 | shm / socket p50 "
                 "| verdict |")
    lines.append("|---|---|---|---|---|---|---|")
    words = {"stretch": "met, stretch too", "met": "met", "missed": "**no**"}
    for r in occasional_rows:
        lines.append(f"| {r['label']} | {fmt_gap(r['gap_ms'])} | {r['rounds']} | "
                     f"{fmt_ns(r['shm']['p50'])} / {fmt_ns(r['shm']['p99'])} | "
                     f"{fmt_ns(r['socket']['p50'])} / {fmt_ns(r['socket']['p99'])} | "
                     f"{fmt_num(r['p50_ratio'], 2)} | {words[r['verdict']]} |")
    lines.append("")
    return lines
