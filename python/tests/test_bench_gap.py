# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""python/bench_gap.py, the occasional call from Python: the rounds it makes
after each gap, what it reports of them, and what it refuses. Never how
fast anything was."""

import json
import os
import subprocess
import sys

import pytest

import bench_gap

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench_gap.py")


def run_tool(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True,
                          timeout=60)


def test_rounds_fill_the_budget_within_bounds():
    # As ping2_perf's: 1 ms, 20 ms, 300 ms and 1 s gaps take 200, 100, 8, 8.
    assert [bench_gap.gap_rounds(ms) for ms in (1, 20, 300, 1000)] == [200, 100, 8, 8]
    assert bench_gap.gap_rounds(1000, 3) == 3


def test_percentile_is_the_sample_at_the_rank():
    ordered = list(range(1, 101))
    assert bench_gap.percentile(ordered, 0.50) == 50
    assert bench_gap.percentile(ordered, 0.99) == 99
    assert bench_gap.percentile([7, 9], 0.99) == 9
    assert bench_gap.percentile([7], 0.50) == 7


def test_both_transports_after_each_gap(daemon):
    out = run_tool("-s", daemon.sock, "--gap", "1,3", "--gap-rounds", "4", "-w", "5", "-q",
                   "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["mode"] == "gap" and r["backing"] == "memfd"
    assert [g["gap_ms"] for g in r["gaps"]] == [1, 3]
    for g in r["gaps"]:
        assert g["rounds"] == 4
        for t in ("shm", "socket"):
            assert g[t]["count"] == 4
            assert 0 < g[t]["p50"] <= g[t]["p99"] <= g[t]["max"]
        assert g["p50_ratio"] == pytest.approx(g["shm"]["p50"] / g["socket"]["p50"], abs=1e-3)
    # Each round sleeps its gap twice: the silences alone take this long.
    assert r["seconds"] >= 2 * 4 * (1 + 3) / 1000


def test_text_table_has_a_row_per_gap(daemon):
    out = run_tool("-s", daemon.sock, "--gap", "2", "--gap-rounds", "2", "-w", "1", "-q")
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("2 ms")]
    assert len(rows) == 1 and rows[0].split()[2] == "2"


@pytest.mark.parametrize("bad", [["--gap", "0"], ["--gap", "1,,2"], ["--gap", "1,2,3,4,5,6,7,8,9"],
                                 ["--gap", "1", "--gap-rounds", "0"], []])
def test_bad_options_are_refused(daemon, bad):
    out = run_tool("-s", daemon.sock, *bad)
    assert out.returncode == 2 and "bench_gap.py" in out.stderr


@pytest.mark.daemon_args("--no-shm")
def test_no_channel_says_why(own_daemon):
    out = run_tool("-s", own_daemon.sock, "--gap", "1", "--gap-rounds", "1", "-w", "0", "-q")
    assert out.returncode == 1
    assert out.stderr.startswith(f"bench_gap.py: connect {own_daemon.sock} (transport shm): ")
