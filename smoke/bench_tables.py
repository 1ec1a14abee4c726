# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The tables of make bench's report (report.md) and the data of its plots
# (smoke/plot.gp), from a loaded results folder and its goals
# (bench_report.py). A section that was not measured is left out.

import os

import bench_routes
from bench_data import fmt_gap, fmt_ns, fmt_num, fmt_rate, median, ratio

TRANSPORTS = ("socket", "memfd", "memzone")
MODES = ("spinning", "sleeping")
# The clients of the headline and the occasional calls, and the file of each
# of their gap runs (gap-KEY.json, bench.sh).
CLIENTS = (("c", "C (ping2_perf)"), ("python", "Python (shmchan)"))
# The headline quotes the occasional call after this much silence: a
# controller's call every few tens of milliseconds is the common case.
HEADLINE_GAP_MS = 20
# The references in the order of their table.
REF_ORDER = [f"{name}{again}" for name in ("cacheline", "ring-pingpong-z64")
             for again in ("", "-mid", "-end")] + [
    "ring-pingpong-z4096", "ring-pingpong-z131072", "ring-stream-z64", "ring-stream-z64-mid",
    "ring-stream-z64-end", "ring-stream-z4096", "ring-stream-z131072", "ring-echo-z64",
    "ring-echo-z64-mid", "ring-echo-z64-end", "chan-pingpong-z64", "chan-pingpong-z64-mid",
    "chan-pingpong-z64-end", "chan-pingpong-z4096", "chan-pingpong-z131072", "chan-stream-z64",
    "chan-stream-z4096", "chan-stream-z131072", "chan-echo-z64", "lines-apart-z64", "ring-local",
    "chan-local", "eventfd", "eventfd-nopin", "eventfd-nopin-mid", "eventfd-nopin-end",
    "eventfd-gap", "eventfd-gap-nopin", "unix-z64", "unix-z4096", "unix-z131072", "clock",
    "syscall"]


def rtt_ns(cell):
    """The mean round trip of one client with one request in flight."""
    return 1e9 / cell["calls_per_s"]


def idle_channel_rows(res):
    """The busy client beside idle channels, a row per round: the ratios of
    its round trip beside the most over beside none; and the counts."""
    counts = sorted({n for (_, n) in res.idle_channel_cells})
    rows = []
    for rnd in sorted({r for (r, _) in res.idle_channel_cells}):
        cells = {n: res.idle_channel_cells.get((rnd, n)) for n in counts}
        none, most = cells.get(0), cells.get(counts[-1])
        p50s = [((c or {}).get("latency_ns") or {}).get("p50") for c in (none, most)]
        rows.append({"round": rnd, "cells": cells,
                     "rtt_ratio": ratio(rtt_ns(most), rtt_ns(none)) if none and most else None,
                     "p50_ratio": ratio(p50s[1], p50s[0]) if None not in p50s else None})
    return rows, counts


def table(head, rows):
    """A markdown table, and the blank line after it."""
    return (["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            + ["| " + " | ".join(map(str, row)) + " |" for row in rows] + [""])


def reference(transport, mode, depth, size):
    """The raw mechanism a cell is built on: a Unix socket; a ring stream
    for a pipeline; a ring ping-pong for a spinning channel; an eventfd
    ping-pong for a sleeping daemon."""
    if transport == "socket":
        return f"unix-z{size}"
    if depth > 1:
        return f"ring-stream-z{size}"
    return f"ring-pingpong-z{size}" if mode in ("spinning", "pinned") else "eventfd-nopin"


def cell_rows(res):
    """Every cell beside its reference."""
    rows = []
    for (transport, mode, depth, clients, size), r in sorted(res.cells.items()):
        ref_name = reference(transport, mode, depth, size)
        r_ref = res.ref(ref_name)
        lat = r["latency_ns"] or {}
        rows.append(dict(
            {k: r.get(k) for k in (
                "calls_per_s", "client_cpu_ns_per_call", "daemon_cpu_ns_per_call",
                "client_syscalls_per_call", "daemon_syscalls_per_call",
                "client_runq_wait_ns_per_call", "daemon_runq_wait_ns_per_call",
                "client_vcsw_per_call", "daemon_vcsw_per_call", "daemon_sleeps_per_call",
                "resp_ring_full_per_call", "fastest_over_slowest")},
            transport=transport, daemon=mode, depth=depth, clients=clients, size=size,
            p50_ns=lat.get("p50"), p99_ns=lat.get("p99"), p999_ns=lat.get("p999"),
            max_ns=lat.get("max"), reference=ref_name,
            vs_reference=r["calls_per_s"] / r_ref["ops_per_s"] if r_ref else None))
    return rows


def headline_rows(res, occasional):
    """[(what, shm, socket, socket / shm)]: one client of a daemon with its
    default options, calls one right after the other (python/bench.py,
    which runs ping2_perf for C) and after HEADLINE_GAP_MS of silence."""
    out = []
    busy_keys = {"c": ("c", "c_socket"), "python": ("shm", "socket")}
    labels = dict(CLIENTS)
    if res.headline:
        for key, (shm, sock) in busy_keys.items():
            s, o = res.headline[shm], res.headline[sock]
            out.append((f"{labels[key]}, one call right after the other: round trip (calls/s)",
                        *(f"{fmt_ns(1e9 / x['calls_per_s'])} ({fmt_rate(x['calls_per_s'])} "
                          "calls/s)" for x in (s, o)), s["calls_per_s"] / o["calls_per_s"]))
    for key in busy_keys:
        for r in occasional:
            if r["client"] == key and r["gap_ms"] == HEADLINE_GAP_MS:
                out.append((f"{labels[key]}, one call after {fmt_gap(HEADLINE_GAP_MS)} of "
                            "silence: round trip, p50", fmt_ns(r["shm"]["p50"]),
                            fmt_ns(r["socket"]["p50"]), r["socket"]["p50"] / r["shm"]["p50"]))
    return out


def headline_lines(res, occasional):
    rows = headline_rows(res, occasional)
    if not rows and res.idle is None:
        return []
    lines = ["### Headline", "",
             "One client, GR_PING2 (64 bytes each way), on a daemon with its default options; "
             "shared memory is a memfd channel. One call right after the other: the median of "
             f"{res.headline['rounds'] if res.headline else 0} rounds (python/bench.py, which "
             "runs ping2_perf for C). After a silence: the occasional calls below.", ""]
    if rows:
        lines += table(("", "shared memory", "Unix socket", "shared memory is faster by"),
                       [(w, s, o, f"{x:.1f}x") for w, s, o, x in rows])
    if res.idle is not None:
        lines += [f"Idle daemon: {res.idle['clients']} clients attached for "
                  f"{res.idle['idle_seconds']:.0f} s cost it "
                  f"{res.idle['daemon_cpu_core_fraction'] * 100:.4f} % of a core.", ""]
    return lines


def head_lines(res):
    m = res.meta
    if not m.get("start"):
        return []
    return [f"Run {m.get('start')}, commit {m.get('commit')}, {m.get('cpus')} CPUs "
            f"({m.get('cpu_model')}, {m.get('hypervisor')}), kernel {m.get('kernel')}; load "
            f"average {m.get('loadavg_start')} at the start, {m.get('loadavg_end')} at the end; "
            f"{m.get('cell_seconds')} s per cell; scheduler autogroup {m.get('autogroup')}.", ""]


def machine_lines(res):
    cpu = res.meta["lscpu"]
    if not cpu:
        return ["### Machine (lscpu)", "", f"No lscpu output in this run: "
                f"{res.meta.get('cpus')} CPUs.", ""]
    hyper, virt = cpu.get("Hypervisor vendor"), cpu.get("Virtualization type")
    guest = (f"{hyper} guest" + (f" ({virt} virtualization)" if virt else "") if hyper
             else "none reported (bare metal, or a hypervisor that hides itself)")
    caches = ", ".join(f"{k.replace(' cache', '')} {cpu[k]}"
                       for k in ("L1d cache", "L1i cache", "L2 cache", "L3 cache") if k in cpu)
    rows = [("model name", cpu.get("Model name")), ("vendor", cpu.get("Vendor ID")),
            ("CPUs", f"{cpu.get('CPU(s)')} ({cpu.get('Socket(s)', '?')} socket(s) x "
                     f"{cpu.get('Core(s) per socket', '?')} core(s) x "
                     f"{cpu.get('Thread(s) per core', '?')} thread(s))"),
            ("caches", caches or None), ("NUMA nodes", cpu.get("NUMA node(s)")),
            ("hypervisor", guest),
            ("container or VM (systemd-detect-virt)", res.meta.get("hypervisor")),
            ("kernel", res.meta.get("kernel"))]
    return ["### Machine (lscpu)", ""] + table(("", ""), [
        (k, "-" if v is None else v) for k, v in rows])


def noise_lines(res, noise):
    lines = ["### Noise: goal rounds", ""]
    if not noise:
        return lines + ["No goal rounds in this run.", ""]
    moved = [n for n in noise if not n["steady"]]
    lines += [f"Each goal round is a triple (reference, cell, reference); its references farther "
              f"apart than {100 * float(res.meta['tolerance']):.0f} % mean that the vCPUs moved "
              "or other work took the CPUs, and a goal leaves such a round out of its median. "
              f"{len(noise) - len(moved)} of {len(noise)} rounds steady, {len(moved)} with moved "
              "references.", ""]
    return lines + table(
        ("round", "references (before / after)", "spread", "result"),
        [(n["round"], f"{n['ref1_ns']:.0f} / {n['ref2_ns']:.0f} ns", f"{100 * n['spread']:.0f} %",
          "steady" if n["steady"] else "**references moved**") for n in noise])


def references_lines(res):
    rows = []
    for name in REF_ORDER:
        r = res.refs.get(name)
        if r is None:
            continue
        what = r["test"] + (f", after {r['gap_us'] // 1000} ms idle" if r.get("gap_us") else "")
        what += f", {r['depth']} in flight" if r.get("depth") else ""
        what += {"-mid": " (again, between the daemons)", "-end": " (again, at the end)"}.get(
            name[-4:], "")
        follower = r["follower_cpu_ns_per_op"]
        rows.append((what, "-" if r["size"] is None else r["size"],
                     "pinned " + ",".join(map(str, r["cpus"])) if r["cpus"] else "unpinned",
                     f"{fmt_ns(r['ns_per_op'])} per {r['unit'].replace('_', ' ')}",
                     fmt_rate(r["ops_per_s"]), fmt_ns(r["leader_cpu_ns_per_op"])
                     + (f" / {fmt_ns(follower)}" if follower else "")))
    return ["### References (ref_bench)", ""] + table(
        ("reference", "size", "CPUs", "per operation", "operations/s",
         "CPU per op (leader / follower)"), rows)


def layers_lines(res, rtt_rounds):
    # The round trip layer by layer, each row adding one to the row above.
    rows, prev = [], None

    def add(label, ns, local=""):
        nonlocal prev
        if ns is None:
            return
        added = "" if prev is None else ("+" if ns >= prev else "") + fmt_ns(ns - prev)
        rows.append((label, fmt_ns(ns), added, local))
        prev = ns

    for label, r, local in (
            ("cache line bounced between two processes (hardware)", res.ref("cacheline"), None),
            ("the rte_ring layout's cache lines alone (cells and index line, no code)",
             res.refs.get("lines-apart-z64"), None),
            ("raw rte_ring ping-pong, 5-cell messages", res.ref("ring-pingpong-z64"),
             res.refs.get("ring-local")),
            ("channel library alone (shmchan_client_*, shmchan_server_*)",
             res.ref("chan-pingpong-z64"), res.refs.get("chan-local"))):
        add(label, r and r["ns_per_op"], fmt_ns(local["ns_per_op"]) if local else "")
    if rtt_rounds:
        add("shmchand + client library (memfd, spinning daemon; goal rounds, median, no per-call "
            "stamps)", median([rtt_ns(t["cell"]) for t in rtt_rounds]))
    shm1 = res.cell("memfd", "spinning", 1, 1, 64)
    if shm1:
        add("the same, with ping2_perf's per-call stamps and checks (matrix cell)", rtt_ns(shm1))
    stream = [(label, r) for label, r in (
        ("raw rte_ring", res.ref("ring-stream-z64")),
        ("channel library alone", res.refs.get("chan-stream-z64")),
        ("raw rte_ring echo", res.ref("ring-echo-z64")),
        ("channel library alone, echo", res.refs.get("chan-echo-z64"))) if r]
    stream = [(label + (f", {r['depth']} in flight (requests answered/s)" if r.get("depth")
                        else ""), fmt_rate(r["ops_per_s"])) for label, r in stream]
    shm32 = res.cell("memfd", "spinning", 32, 1, 64)
    if shm32:
        stream.append(("shmchand, 32 in flight, 1 client (requests answered/s)",
                       fmt_rate(shm32["calls_per_s"])))
    return (["### Layers, 64 bytes, one request in flight", "",
             "Each row adds one layer to the row above: where the round trip goes.", ""]
            + table(("layer", "round trip", "added", "one process, both sides"), rows)
            + table(("streaming, 64 bytes", "messages/s"), stream))


def goals_lines(g):
    """The goals as a short table, then what each was computed from."""
    lines = ["### Goals", ""] + table(("", "goal", "measured", "target", "met"), [
        (i, x["goal"], fmt_num(x["measured"]), f"{x['op']} {x['target']}",
         "-" if x["met"] is None else "yes" if x["met"] else "**no**")
        for i, x in enumerate(g.goals, 1)])
    lines += [f"{i}. {x['detail']}" for i, x in enumerate(g.goals, 1)
              if x["detail"] != "as above"] + [""]
    if g.info_rows:
        lines += ["Beside the goals, for comparison:", ""] + table(
            ("what", "measured", "from"), [(w, fmt_num(v), d) for w, v, d in g.info_rows])
    return lines


def occasional_lines(res, rows):
    if not rows:
        return []
    names = [fmt_gap(ms) for ms in sorted({r["gap_ms"] for r in rows})]
    listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
    backing = (res.gaps.get("c") or res.gaps.get("python") or {}).get("backing") or "memfd"
    words = {"stretch": "met, stretch too", "met": "met", "missed": "**no**"}
    return ["### Occasional calls", "",
            f"GR_PING2 after {listed} of silence: one shm ({backing}) and one socket connection "
            "in one process, alternated call by call (gap, shm call, gap, socket call), on a "
            "daemon with its default options. Goal: shm p50 <= socket p50 at every gap (ratio "
            "<= 1.0); stretch: <= 0.8. A p99 of fewer than 100 calls is the slowest of them.",
            ""] + table(("client", "after", "rounds", "shm p50 / p99", "socket p50 / p99",
                         "shm / socket p50", "verdict"), [
        (r["label"], fmt_gap(r["gap_ms"]), r["rounds"],
         f"{fmt_ns(r['shm']['p50'])} / {fmt_ns(r['shm']['p99'])}",
         f"{fmt_ns(r['socket']['p50'])} / {fmt_ns(r['socket']['p99'])}",
         fmt_num(r["p50_ratio"], 2), words[r["verdict"]]) for r in rows])


def loaded_lines(rows):
    if not rows:
        return []
    gap_ms = sorted({ms for r in rows for ms in r["gaps"]})

    def occ(r, ms):
        g = r["gaps"].get(ms)
        return "-" if g is None else (f"{g['p50_ratio']:.2f} ({fmt_ns(g['shm']['p50'])} / "
                                      f"{fmt_ns(g['socket']['p50'])})")

    return ["### Loaded host", "",
            "One client of a daemon with its default options, while the benchmark runs its own "
            "load beside them. Busy: GR_PING2 calls back to back, the median of the rounds (shm "
            "and socket alternated). Occasional: shm p50 / socket p50 after each gap of silence "
            "(the two alternated call by call). Event loop: the same calls back to back from "
            "a client that waits in its own epoll loop (ping2_perf --event-loop), alternated "
            "with the blocking ones. Runnable: the tasks ready to run besides the "
            "reader, the median of the samples taken before each cell (the CPUs are busy when "
            "it is above their number). Others: the calls/s of each other server's client "
            "while ours called on the channel.", ""] + table(
        ("beside", "runnable / CPUs", "shm calls/s", "socket calls/s", "shm / socket",
         "event loop shm / socket calls/s", "event loop shm / socket",
         "shm p50 / socket p50 busy", *(f"after {fmt_gap(ms)}" for ms in gap_ms),
         "others, each"),
        [(r["what"], f"{fmt_num(r['runnable'], 0)} / {r['cpus']}", fmt_rate(r["shm"]),
          fmt_rate(r["socket"]), f"{r['busy_ratio']:.1f}x",
          f"{fmt_rate(r.get('evloop_shm'))} / {fmt_rate(r.get('evloop_socket'))}",
          "-" if r.get("evloop_ratio") is None else f"{r['evloop_ratio']:.1f}x",
          f"{fmt_ns(r['shm_p50'])} / {fmt_ns(r['socket_p50'])}",
          *(occ(r, ms) for ms in gap_ms), fmt_rate(r["others_per_server"])) for r in rows])


def matrix_lines(res):
    lines = []
    rows = cell_rows(res)
    for size in sorted({r["size"] for r in rows}):
        lines += [f"### Matrix, {size} bytes", "",
                  "calls/s (all clients), p50 / p99 latency, client + daemon CPU per call, "
                  "system calls and sleeps (voluntary context switches) per call, throughput as "
                  "a fraction of the cell's reference, and the ratio of the fastest client's "
                  "calls/s to the slowest's. The socket's cells count no system calls (the "
                  "counter's tracepoint slows every system call; strace counts 2 client and 3 "
                  "daemon calls per request, make bench-socket).", ""]
        lines += table(("transport", "daemon", "depth", "clients", "calls/s", "p50", "p99",
                        "CPU client + daemon", "syscalls client / daemon",
                        "sleeps client / daemon", "vs reference", "fastest / slowest"), [
            (r["transport"], r["daemon"], r["depth"], r["clients"], fmt_rate(r["calls_per_s"]),
             fmt_ns(r["p50_ns"]), fmt_ns(r["p99_ns"]),
             f"{fmt_ns(r['client_cpu_ns_per_call'])} + {fmt_ns(r['daemon_cpu_ns_per_call'])}",
             f"{fmt_num(r['client_syscalls_per_call'])} / "
             f"{fmt_num(r['daemon_syscalls_per_call'])}",
             f"{fmt_num(r['client_vcsw_per_call'])} / {fmt_num(r['daemon_vcsw_per_call'])}",
             f"{fmt_num(r['vs_reference'])} of {r['reference']}",
             fmt_num(r["fastest_over_slowest"], 2)) for r in rows if r["size"] == size])
    return lines


def tail_lines(res, idle_rows, counts):
    # Both ends sleeping, the idle cost, the idle channels, the memzone column.
    lines = []
    both = res.cell("memfd", "bothsleep", 1, 1, 64)
    if both:
        lines += [f"Both ends sleeping (daemon -S 0, client spin 0), memfd, 64 B: "
                  f"{fmt_rate(both['calls_per_s'])} calls/s, mean round trip "
                  f"{fmt_ns(rtt_ns(both))}, p50 {fmt_ns((both['latency_ns'] or {}).get('p50'))}; "
                  f"client {fmt_num(both['client_syscalls_per_call'], 2)} and daemon "
                  f"{fmt_num(both['daemon_syscalls_per_call'], 2)} system calls per call.", ""]
    idle = res.idle
    if idle:
        after = idle["after_idle_ns"]
        lines += [f"Idle: {idle['clients']} attached clients for {idle['idle_seconds']} s: "
                  f"daemon CPU {idle['daemon_cpu_ns'] / 1e6:.3f} ms "
                  f"({100 * idle['daemon_cpu_core_fraction']:.4f} % of a core), "
                  f"{idle['daemon_vcsw']} voluntary context switches, {idle['daemon_syscalls']} "
                  f"system calls. First request after idling: {fmt_ns(idle['first_request_ns'])}; "
                  f"after {after['gap_ms']} ms gaps ({after['rounds']} rounds): p50 "
                  f"{fmt_ns(after['p50'])}, max {fmt_ns(after['max'])}.", ""]
    if idle_rows:
        most = counts[-1]

        def cell_text(c):
            return "-" if c is None else (f"{fmt_ns(rtt_ns(c))} / "
                                          f"{fmt_ns((c['latency_ns'] or {}).get('p50'))}")

        lines += ["### Idle channels beside a busy client", "",
                  "One client, 64 B, one request in flight, spinning daemon with one poller, "
                  f"beside {', '.join(map(str, counts))} idle memfd channels attached on that "
                  "poller; the order of the counts alternates from round to round. Load average "
                  f"at the start {res.meta.get('loadavg_start')}, at the end "
                  f"{res.meta.get('loadavg_end')}.", ""]
        lines += table(("round", *(f"{n} idle: mean / p50" for n in counts), f"{most} / 0, mean",
                        f"{most} / 0, p50"),
                       [(r["round"], *(cell_text(r["cells"][n]) for n in counts),
                         fmt_num(r["rtt_ratio"], 2), fmt_num(r["p50_ratio"], 2))
                        for r in idle_rows])
    if res.memzone_skipped:
        lines += [f"memzone column skipped: {res.memzone_skipped}", ""]
    return lines


def report_lines(res, g, occasional):
    """Every section of the report, in order, the headline first."""
    idle_rows, counts = idle_channel_rows(res)
    lines = head_lines(res) + headline_lines(res, occasional) + machine_lines(res)
    if res.cells or g.rounds:
        lines += noise_lines(res, g.noise()) + references_lines(res)
        lines += layers_lines(res, res.goal_rounds("rtt"))
    lines += goals_lines(g) + occasional_lines(res, occasional) + loaded_lines(res.loaded)
    lines += bench_routes.table_lines(res.routes) + matrix_lines(res)
    return lines + tail_lines(res, idle_rows, counts)


def write_plot_data(res):
    """sizes.txt and the .dat files of smoke/plot.gp."""
    def num(v):
        return "NaN" if v is None else f"{v:.6g}"

    def write(name, lines):
        with open(os.path.join(res.dir, name), "w") as f:
            f.write("".join(line + "\n" for line in lines))

    # The matrix's plots want both daemons' cells: a run of some of its
    # parts (bench.sh PART...) without them has none.
    sizes = sorted({k[4] for k in res.cells if k[1] == MODES[0]}
                   & {k[4] for k in res.cells if k[1] == MODES[1]})
    write("sizes.txt", [" ".join(map(str, sizes))])
    for mode in MODES:
        for size in sizes:
            write(f"throughput-{mode}-z{size}.dat", ["# config " + " ".join(TRANSPORTS)] + [
                f'"{d}x{c}" ' + " ".join(num((res.cell(t, mode, d, c, size) or {}).get(
                    "calls_per_s")) for t in TRANSPORTS) for d in (1, 32) for c in (1, 4, 16)])
    for transport in TRANSPORTS:
        for mode in MODES + ("bothsleep",):
            r = res.cell(transport, mode, 1, 1, 64)
            if r is not None:
                write(f"cdf-{transport}-{mode}.dat",
                      [f"{ns} {frac}" for ns, frac in r.get("latency_cdf", [])])
    for depth in (1, 32):
        write(f"cpu-d{depth}.dat", ["# case client_cpu_ns daemon_cpu_ns"] + [
            f'"{t} {mode}" ' + " ".join(num((res.cell(t, mode, depth, 1, 64) or {}).get(k))
                                        for k in ("client_cpu_ns_per_call",
                                                  "daemon_cpu_ns_per_call"))
            for mode in MODES for t in TRANSPORTS])
    if res.loaded:
        gap_ms = sorted({ms for r in res.loaded for ms in r["gaps"]})
        write("loaded.dat", ["# scenario busy_ratio evloop_ratio " + " ".join(
            f"after_{ms}ms" for ms in gap_ms)] + [
            f'"{r["scenario"]}" {r["busy_ratio"]:.4g} {num(r["evloop_ratio"])} ' + " ".join(
                f"{r['gaps'][ms]['p50_ratio']:.4g}" if ms in r["gaps"] else "NaN"
                for ms in gap_ms) for r in res.loaded])
    if res.routes:
        bench_routes.write_plot_data(res.dir, res.routes)
