#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# What the machine is and was doing during a make bench run, into
# RESULTS_DIR/meta.json: the report says what the run ran on and how noisy
# it was.
#
#   bench_meta.py start RESULTS_DIR CELL_S IDLE_S RETRY_S
#       the machine (lscpu, kernel, hypervisor), the commit, the load and
#       the run's settings, at its start
#   bench_meta.py end RESULTS_DIR
#       the load at the end, and the retry budget left (bench_rounds.py)

import json
import os
import platform
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rounds import budget_left  # noqa: E402


def first(cmd):
    """cmd's output, stripped; None if it cannot run."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return None


def lscpu_fields(text):
    """lscpu's "Key: value" lines, but for the long lists."""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and not key.startswith("Vulnerability") and key != "Flags":
            fields[key.strip()] = value.strip()
    return fields


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


def start(path, cell_s, idle_s, retry_s):
    lscpu = lscpu_fields(first(["env", "LC_ALL=C", "lscpu"]) or "")
    model = lscpu.get("Model name")
    if model is None:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")),
                         None)
    autogroup = None
    if os.path.exists("/proc/self/autogroup"):
        with open("/proc/self/autogroup") as f:
            autogroup = f.read().strip()
    meta = {
        "start": first(["date", "-Iseconds"]),
        "loadavg_start": loadavg(),
        "kernel": platform.release(),
        "cpu_model": model,
        "cpus": os.cpu_count(),
        "lscpu": lscpu or None,
        "hypervisor": first(["systemd-detect-virt"]),
        "commit": first(["git", "rev-parse", "--short", "HEAD"]),
        "cell_seconds": cell_s,
        "idle_seconds": idle_s,
        "retry_seconds": retry_s,
        "autogroup": autogroup,
    }
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)


def end(path, results):
    with open(path) as f:
        meta = json.load(f)
    meta["loadavg_end"] = loadavg()
    meta["end"] = first(["date", "-Iseconds"])
    meta["retry_seconds_left"] = budget_left(results)
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)


def main(argv):
    if len(argv) == 6 and argv[1] == "start":
        start(os.path.join(argv[2], "meta.json"), float(argv[3]), float(argv[4]), float(argv[5]))
        return 0
    if len(argv) == 3 and argv[1] == "end":
        end(os.path.join(argv[2], "meta.json"), argv[2])
        return 0
    print(f"usage: {argv[0]} start RESULTS_DIR CELL_S IDLE_S RETRY_S\n"
          f"       {argv[0]} end RESULTS_DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
