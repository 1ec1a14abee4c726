# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The data of make bench's plots (smoke/plot.gp, gnuplot), written into the
# results folder from its cells (bench_results.py): sizes.txt, the
# throughput of each daemon and size, the latency distribution of each
# transport, and the CPU time per call.

import os

TRANSPORTS = ("socket", "memfd", "memzone")
MODES = ("spinning", "sleeping")
CONFIGS = [(1, 1), (1, 4), (1, 16), (32, 1), (32, 4), (32, 16)]


def num(v):
    return "NaN" if v is None else f"{v:.6g}"


def sizes_run(res):
    # The sizes this run measured (BENCH_QUICK measures one).
    return sorted({size for (_, _, _, _, size) in res.cells})


def write_plot_data(res):
    sizes = sizes_run(res)
    with open(os.path.join(res.dir, "sizes.txt"), "w") as f:
        f.write(" ".join(map(str, sizes)) + "\n")
    for mode in MODES:
        for size in sizes:
            with open(os.path.join(res.dir, f"throughput-{mode}-z{size}.dat"), "w") as f:
                f.write("# config " + " ".join(TRANSPORTS) + "\n")
                for depth, clients in CONFIGS:
                    vals = [res.cell(t, mode, depth, clients, size) for t in TRANSPORTS]
                    f.write(f'"{depth}x{clients}" ' +
                            " ".join(num(v["calls_per_s"] if v else None) for v in vals) + "\n")
    for transport in TRANSPORTS:
        for mode in MODES + ("bothsleep",):
            r = res.cell(transport, mode, 1, 1, 64)
            if r is None:
                continue
            with open(os.path.join(res.dir, f"cdf-{transport}-{mode}.dat"), "w") as f:
                for ns, frac in r.get("latency_cdf", []):
                    f.write(f"{ns} {frac}\n")
    for depth in (1, 32):
        with open(os.path.join(res.dir, f"cpu-d{depth}.dat"), "w") as f:
            f.write("# case client_cpu_ns daemon_cpu_ns\n")
            for mode in MODES:
                for transport in TRANSPORTS:
                    r = res.cell(transport, mode, depth, 1, 64)
                    f.write(f'"{transport} {mode}" ' +
                            f"{num(r['client_cpu_ns_per_call'] if r else None)} " +
                            f"{num(r['daemon_cpu_ns_per_call'] if r else None)}\n")
