# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The headline of make bench's report: what one client gets from a daemon
# started with its default options, on each transport, from C and from
# Python. Calls one right after the other (python/bench.py, which runs
# ping2_perf for C: headline.json), the occasional call after 20 ms of
# silence (the occasional calls' rows), and the idle daemon's CPU (the idle
# run). The README's first table is this one.

from bench_format import fmt_gap, fmt_ns, fmt_rate
from bench_results import GAP_CLIENTS

# The gap of silence the headline quotes: a controller's call every few tens
# of milliseconds is the common case.
HEADLINE_GAP_MS = 20
# python/bench.py's keys of the calls one right after the other, (shm,
# socket), for each client of the occasional calls (GAP_CLIENTS).
BUSY_KEYS = {"c": ("c", "c_socket"), "python": ("shm", "socket")}


def busy_cell(r):
    # A median round of python/bench.py: its mean round trip and rate.
    return f"{fmt_ns(1e9 / r['calls_per_s'])} ({fmt_rate(r['calls_per_s'])} calls/s)"


def rows(headline, occasional_rows):
    """[(what, shm text, socket text, socket / shm)]: the rows measured."""
    out = []
    if headline is not None:
        for key, label in GAP_CLIENTS:
            shm, sock = BUSY_KEYS[key]
            s, o = headline[shm], headline[sock]
            out.append((f"{label}, one call right after the other: round trip (calls/s)",
                        busy_cell(s), busy_cell(o), s["calls_per_s"] / o["calls_per_s"]))
    for key, label in GAP_CLIENTS:
        for r in occasional_rows:
            if r["client"] == key and r["gap_ms"] == HEADLINE_GAP_MS:
                out.append((f"{label}, one call after {fmt_gap(HEADLINE_GAP_MS)} of silence: "
                            "round trip, p50", fmt_ns(r["shm"]["p50"]),
                            fmt_ns(r["socket"]["p50"]), r["socket"]["p50"] / r["shm"]["p50"]))
    return out


def summary(headline, occasional_rows, idle):
    """The headline's rows for summary.json."""
    out = {"rows": [{"what": w, "shm": s, "socket": o, "socket_over_shm": x}
                    for w, s, o, x in rows(headline, occasional_rows)]}
    if idle is not None:
        out["idle_daemon_cpu_core_fraction"] = idle["daemon_cpu_core_fraction"]
    return out


def table_lines(headline, occasional_rows, idle):
    """The report's "Headline" section, [] when nothing of it was measured."""
    measured = rows(headline, occasional_rows)
    if not measured and idle is None:
        return []
    lines = ["### Headline", ""]
    lines.append("One client, GR_PING2 (64 bytes each way), on a daemon with its default "
                 "options; shared memory is a memfd channel. One call right after the other: "
                 "the median of "
                 f"{headline['rounds'] if headline else 0} rounds (python/bench.py, which runs "
                 "ping2_perf for C). After a silence: the occasional calls below.")
    lines.append("")
    if measured:
        lines.append("| | shared memory | Unix socket | shared memory is faster by |")
        lines.append("|---|---|---|---|")
        for what, shm, sock, ratio in measured:
            lines.append(f"| {what} | {shm} | {sock} | {ratio:.1f}x |")
        lines.append("")
    if idle is not None:
        lines.append(f"Idle daemon: {idle['clients']} clients attached for "
                     f"{idle['idle_seconds']:.0f} s cost it "
                     f"{idle['daemon_cpu_core_fraction'] * 100:.4f} % of a core.")
        lines.append("")
    return lines
