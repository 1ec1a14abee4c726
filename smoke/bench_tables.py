# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The tables of make bench's report (report.md), from a
# loaded results folder (bench_results.py) and what the report computed of
# it (v: bench_report.py's summary of goals, rounds and rows). Each section
# appends its lines.

from bench_format import fmt_ns, fmt_num, fmt_rate, signed_ns
from bench_headline import table_lines as headline_lines
from bench_loaded import table_lines as loaded_lines
from bench_routes import table_lines as route_lines
from bench_occasional import table_lines as occasional_lines
from bench_results import median, rtt_ns
from bench_rounds import TOLERANCE


def head_lines(lines, res, v):
    # The run: when, on what, under which load.
    meta = res.meta
    lines.append(f"Run {meta.get('start')}, commit {meta.get('commit')}, {meta.get('cpus')} CPUs "
                 f"({meta.get('cpu_model')}, {meta.get('hypervisor')}), kernel "
                 f"{meta.get('kernel')}; load average {' '.join(meta.get('loadavg_start', []))} "
                 f"at the start, {' '.join(meta.get('loadavg_end', []))} at the end; "
                 f"{meta.get('cell_seconds')} s per cell; scheduler autogroup "
                 f"{meta.get('autogroup')}.")
    lines.append("")


def machine_lines(lines, res, v):
    # The machine as lscpu describes it.
    lines.append("### Machine (lscpu)")
    lines.append("")
    cpu = res.meta.get("lscpu") or {}
    if cpu:
        hyper = cpu.get("Hypervisor vendor")
        virt = cpu.get("Virtualization type")
        guest = (f"{hyper} guest" + (f" ({virt} virtualization)" if virt else "") if hyper
                 else "none reported (bare metal, or a hypervisor that hides itself)")
        caches = ", ".join(f"{k.replace(' cache', '')} {cpu[k]}"
                           for k in ("L1d cache", "L1i cache", "L2 cache", "L3 cache") if k in cpu)
        machine = [
            ("model name", cpu.get("Model name")),
            ("vendor", cpu.get("Vendor ID")),
            ("CPUs", f"{cpu.get('CPU(s)')} ({cpu.get('Socket(s)', '?')} socket(s) x "
                     f"{cpu.get('Core(s) per socket', '?')} core(s) x "
                     f"{cpu.get('Thread(s) per core', '?')} thread(s))"),
            ("caches", caches or None),
            ("NUMA nodes", cpu.get("NUMA node(s)")),
            ("hypervisor", guest),
            ("container or VM (systemd-detect-virt)", res.meta.get("hypervisor")),
            ("kernel", res.meta.get("kernel")),
        ]
        lines.append("| | |")
        lines.append("|---|---|")
        for key, value in machine:
            lines.append(f"| {key} | {'-' if value is None else value} |")
    else:
        lines.append(f"No lscpu output in this run: {res.meta.get('cpus')} CPUs, "
                     f"model {res.meta.get('cpu_model')}.")
    lines.append("")


def noise_lines(lines, res, v):
    # Every goal round, its tries and how far its references moved.
    lines.append("### Noise: goal rounds")
    lines.append("")
    if v.noise:
        moved = [n for n in v.noise if not n["steady"]]
        lines.append(f"Each goal round is a triple (reference, cell, reference); its references "
                     f"farther apart than {100 * TOLERANCE:.0f} % mean that the vCPUs "
                     f"moved or other work took the CPUs, and the triple is measured again while "
                     f"the run's retry budget ({res.meta.get('retry_seconds', '?')} s) lasts. "
                     f"{len(v.noise) - len(moved)} of {len(v.noise)} rounds steady, "
                     f"{len(moved)} with moved references.")
        lines.append("")
        lines.append("| round | tries | references (before / after, chosen try) "
                     "| spread of each try | result |")
        lines.append("|---|---|---|---|---|")
        for n in v.noise:
            if n["steady"]:
                result = "steady"
            else:
                why = {"budget": "retry budget spent", "max-tries": "out of tries"}.get(
                    n["stopped"], "not retried")
                result = f"**references moved** ({why})"
            spreads = ", ".join(f"{100 * s:.0f} %" for s in n["spreads"])
            lines.append(f"| {n['round']} | {n['tries']} | {n['ref1_ns']:.0f} / "
                         f"{n['ref2_ns']:.0f} ns | {spreads} | {result} |")
    else:
        lines.append("No goal rounds in this run.")
    lines.append("")


def references_lines(lines, res, v):
    # Every reference measured, in a fixed order.
    lines.append("### References (ref_bench)")
    lines.append("")
    lines.append("| reference | size | CPUs | per operation | operations/s "
                 "| CPU per op (leader / follower) |")
    lines.append("|---|---|---|---|---|---|")
    ref_order = ["cacheline", "cacheline-mid", "cacheline-end", "ring-pingpong-z64",
                 "ring-pingpong-z64-mid", "ring-pingpong-z64-end",
                 "ring-pingpong-z4096", "ring-pingpong-z131072", "ring-stream-z64",
                 "ring-stream-z64-mid", "ring-stream-z64-end", "ring-stream-z4096",
                 "ring-stream-z131072", "ring-echo-z64", "ring-echo-z64-mid", "ring-echo-z64-end",
                 "chan-pingpong-z64", "chan-pingpong-z64-mid", "chan-pingpong-z64-end",
                 "chan-pingpong-z4096", "chan-pingpong-z131072", "chan-stream-z64",
                 "chan-stream-z4096", "chan-stream-z131072", "chan-echo-z64", "lines-apart-z64",
                 "ring-local",
                 "chan-local", "eventfd", "eventfd-nopin", "eventfd-nopin-mid", "eventfd-nopin-end",
                 "eventfd-gap",
                 "eventfd-gap-nopin", "unix-z64", "unix-z4096", "unix-z131072", "clock", "syscall"]
    for name in ref_order:
        r = res.refs.get(name)
        if r is None:
            continue
        cpus = "pinned " + ",".join(map(str, r["cpus"])) if r["cpus"] else "unpinned"
        size = "-" if r["size"] is None else str(r["size"])
        gap = f", after {r['gap_us'] // 1000} ms idle" if r.get("gap_us") else ""
        gap += f", {r['depth']} in flight" if r.get("depth") else ""
        gap += " (again, between the daemons)" if name.endswith("-mid") else ""
        gap += " (again, at the end)" if name.endswith("-end") else ""
        follower = r["follower_cpu_ns_per_op"]
        cpu = fmt_ns(r["leader_cpu_ns_per_op"]) + (f" / {fmt_ns(follower)}" if follower else "")
        lines.append(f"| {r['test']}{gap} | {size} | {cpus} | {fmt_ns(r['ns_per_op'])} "
                     f"per {r['unit'].replace('_', ' ')} | {fmt_rate(r['ops_per_s'])} | {cpu} |")
    lines.append("")


def layers_lines(lines, res, v):
    # The round trip layer by layer, and the streaming rates.
    lines.append("### Layers, 64 bytes, one request in flight")
    lines.append("")
    lines.append("Each row adds one layer to the row above: where the round trip goes.")
    lines.append("")
    lines.append("| layer | round trip | added | one process, both sides |")
    lines.append("|---|---|---|---|")
    layers = [
        ("cache line bounced between two processes (hardware)", res.ref("cacheline"), None),
        ("the rte_ring layout's cache lines alone (cells and index line, no code)",
         res.refs.get("lines-apart-z64"), None),
        ("raw rte_ring ping-pong, 5-cell messages", res.ref("ring-pingpong-z64"),
         res.refs.get("ring-local")),
        ("channel library alone (shmchan_client_*, shmchan_server_*)",
         res.ref("chan-pingpong-z64"), res.refs.get("chan-local")),
    ]
    prev = None
    for label, r, local in layers:
        if r is None:
            continue
        added = signed_ns(r["ns_per_op"] - prev) if prev is not None else ""
        loc = fmt_ns(local["ns_per_op"]) if local else ""
        lines.append(f"| {label} | {fmt_ns(r['ns_per_op'])} | {added} | {loc} |")
        prev = r["ns_per_op"]
    if v.rtt_rounds:
        # Timed as the rows above are: the clock every 64 calls, none per call.
        unstamped = median([rtt_ns(t["cell"]) for t in v.rtt_rounds])
        added = signed_ns(unstamped - prev) if prev is not None else ""
        lines.append(f"| shmchand + client library (memfd, spinning daemon; goal rounds, median, "
                     f"no per-call stamps) | {fmt_ns(unstamped)} | {added} | |")
    if v.shm1:
        added = signed_ns(rtt_ns(v.shm1) - prev) if prev is not None else ""
        lines.append(f"| the same, with ping2_perf's per-call stamps and checks (matrix cell) | "
                     f"{fmt_ns(rtt_ns(v.shm1))} | {added} | |")
    lines.append("")
    lines.append("| streaming, 64 bytes | messages/s |")
    lines.append("|---|---|")
    for label, r in (("raw rte_ring", res.ref("ring-stream-z64")),
                     ("channel library alone", res.refs.get("chan-stream-z64"))):
        if r is not None:
            lines.append(f"| {label} | {fmt_rate(r['ops_per_s'])} |")
    for label, r in (("raw rte_ring echo", res.ref("ring-echo-z64")),
                     ("channel library alone, echo", res.refs.get("chan-echo-z64"))):
        if r is not None:
            lines.append(f"| {label}, {r['depth']} in flight (requests answered/s) | "
                         f"{fmt_rate(r['ops_per_s'])} |")
    if v.shm32:
        lines.append(f"| shmchand, 32 in flight, 1 client (requests answered/s) | "
                     f"{fmt_rate(v.shm32['calls_per_s'])} |")
    lines.append("")


def goals_lines(lines, res, v):
    # The goals, and what is measured beside them.
    lines.append("### Goals")
    lines.append("")
    lines.append("| goal | measured | target | met | from |")
    lines.append("|---|---|---|---|---|")
    for g in v.goals.goals:
        met = "-" if g["met"] is None else ("yes" if g["met"] else "**no**")
        lines.append(f"| {g['goal']} | {fmt_num(g['measured'])} | {g['op']} {g['target']} "
                     f"| {met} | {g['detail']} |")
    lines.append("")
    if v.goals.info_rows:
        lines.append("Beside the goals, for comparison:")
        lines.append("")
        lines.append("| what | measured | from |")
        lines.append("|---|---|---|")
        for what, value, detail in v.goals.info_rows:
            lines.append(f"| {what} | {fmt_num(value)} | {detail} |")
        lines.append("")


def matrix_lines(lines, res, v):
    # The matrix, one table per payload size.
    for size in v.sizes_run:
        lines.append(f"### Matrix, {size} bytes")
        lines.append("")
        lines.append("calls/s (all clients), p50 / p99 latency, client + daemon CPU per call, "
                     "system calls and sleeps (voluntary context switches) per call, "
                     "throughput as a fraction of the cell's reference, and the ratio of the "
                     "fastest client's calls/s to the slowest's. The socket's cells count no "
                     "system calls (the counter's tracepoint slows every system call; strace "
                     "counts 2 client and 3 daemon calls per request, make bench-socket).")
        lines.append("")
        lines.append("| transport | daemon | depth | clients | calls/s | p50 | p99 "
                     "| CPU client + daemon | syscalls client / daemon | sleeps client / daemon "
                     "| vs reference | fastest / slowest |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for row in v.cell_rows:
            if row["size"] != size:
                continue
            cs, ds = row["client_syscalls_per_call"], row["daemon_syscalls_per_call"]
            lines.append(
                f"| {row['transport']} | {row['daemon']} | {row['depth']} | {row['clients']} | "
                f"{fmt_rate(row['calls_per_s'])} | {fmt_ns(row['p50_ns'])} | "
                f"{fmt_ns(row['p99_ns'])} | {fmt_ns(row['client_cpu_ns_per_call'])} + "
                f"{fmt_ns(row['daemon_cpu_ns_per_call'])} | {fmt_num(cs, 3)} / {fmt_num(ds, 3)} | "
                f"{fmt_num(row['client_vcsw_per_call'], 3)} / "
                f"{fmt_num(row['daemon_vcsw_per_call'], 3)} | "
                f"{fmt_num(row['vs_reference'], 3)} of {row['reference']} | "
                f"{fmt_num(row['fastest_over_slowest'], 2)} |")
        lines.append("")


def tail_lines(lines, res, v):
    # Both ends sleeping, the idle cost, the idle channels, the memzone column.
    both1 = v.both1
    if both1:
        lines.append(f"Both ends sleeping (daemon -S 0, client spin 0), memfd, 64 B: "
                     f"{fmt_rate(both1['calls_per_s'])} calls/s, mean round trip "
                     f"{fmt_ns(rtt_ns(both1))}, p50 "
                     f"{fmt_ns((both1['latency_ns'] or {}).get('p50'))}; "
                     f"client {fmt_num(both1['client_syscalls_per_call'], 2)} and daemon "
                     f"{fmt_num(both1['daemon_syscalls_per_call'], 2)} system calls per call.")
        lines.append("")
    idle = res.idle
    if idle:
        after = idle["after_idle_ns"]
        lines.append(f"Idle: {idle['clients']} attached clients for {idle['idle_seconds']} s: "
                     f"daemon CPU {idle['daemon_cpu_ns'] / 1e6:.3f} ms "
                     f"({100 * idle['daemon_cpu_core_fraction']:.4f} % of a core), "
                     f"{idle['daemon_vcsw']} voluntary context switches, "
                     f"{idle['daemon_syscalls']} system calls. First request after idling: "
                     f"{fmt_ns(idle['first_request_ns'])}; after {after['gap_ms']} ms gaps "
                     f"({after['rounds']} rounds): p50 {fmt_ns(after['p50'])}, max "
                     f"{fmt_ns(after['max'])}.")
        lines.append("")
    counts = v.idle_channel_counts
    if v.idle_channel_rounds:
        most = counts[-1]
        lines.append("### Idle channels beside a busy client")
        lines.append("")
        lines.append(f"One client, 64 B, one request in flight, spinning daemon with one poller, "
                     f"beside {', '.join(map(str, counts))} idle memfd channels attached on that "
                     f"poller; the order of the counts alternates from round to round. Load "
                     f"average at the start {' '.join(res.meta.get('loadavg_start') or [])}, at "
                     f"the end {' '.join(res.meta.get('loadavg_end') or [])}.")
        lines.append("")
        lines.append("| round | " + " | ".join(f"{n} idle: mean / p50" for n in counts)
                     + f" | {most} / 0, mean | {most} / 0, p50 |")
        lines.append("|---|" + "---|" * (len(counts) + 2))
        for r in v.idle_channel_rounds:
            parts = []
            for n in counts:
                c = r["cells"][n]
                parts.append("-" if c is None else
                             f"{fmt_ns(rtt_ns(c))} / {fmt_ns((c['latency_ns'] or {}).get('p50'))}")
            lines.append(f"| {r['round']} | " + " | ".join(parts)
                         + f" | {fmt_num(r['rtt_ratio'], 2)} | {fmt_num(r['p50_ratio'], 2)} |")
        lines.append("")
    if res.memzone_skipped:
        lines.append(f"memzone column skipped: {res.memzone_skipped}")
        lines.append("")


def report_lines(res, v):
    """Every section of the report, in order."""
    lines = []
    head_lines(lines, res, v)
    lines.extend(headline_lines(res.headline, v.occasional_rows, res.idle))
    for section in (machine_lines, noise_lines, references_lines, layers_lines,
                    goals_lines):
        section(lines, res, v)
    lines.extend(occasional_lines(v.occasional_rows, v.occasional_backing))
    lines.extend(loaded_lines(v.loaded_rows))
    lines.extend(route_lines(v.route_rows))
    matrix_lines(lines, res, v)
    tail_lines(lines, res, v)
    return lines
