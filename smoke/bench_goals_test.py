# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The verdicts of make bench's report: a goal's verdict against its target,
# the median of the steady rounds, the busy round trip against the ring
# ping-pong measured around each of its rounds, the occasional calls' goal, its
# stretch and its table, and the loaded host's rows, goals and table.

import json
import os
import tempfile
import unittest

import bench_goals
import bench_loaded
import bench_occasional
from bench_goals import Goals


def rtt_round(name, calls_per_s, stable=True):
    # A round-trip round as bench_results.py reads it (its cell and its
    # cache-line references).
    return {"name": name, "cell": {"calls_per_s": calls_per_s}, "ref_ns": 100.0,
            "ref1_ns": 100.0, "ref2_ns": 100.0, "stable": stable, "tries": 1, "spread": 0.0,
            "spreads": [0.0], "stopped": "steady"}


class FakeResults:
    # What the goals read of a results folder: references by name, no cell.
    def __init__(self, refs):
        self.refs = refs

    def ref(self, name):
        return self.refs.get(name)

    def cell(self, *key):
        return None


class GoalTest(unittest.TestCase):
    def test_verdict_against_the_target(self):
        g = Goals()
        g.goal("a", 1.0, "<=", 1.0, "")
        g.goal("b", 1.1, "<=", 1.0, "")
        g.goal("c", 0.5, ">=", 0.5, "")
        g.goal("d", 0.01, "<", 0.01, "")
        g.goal("e", None, "<=", 1.0, "")
        self.assertEqual([x["met"] for x in g.goals], [True, False, True, False, None])

    def test_median_of_the_steady_rounds(self):
        g = Goals()
        trs = [rtt_round("r1", 1, stable=False), rtt_round("r2", 1), rtt_round("r3", 1)]
        value, how = g.value_of_rounds([9.0, 2.0, 4.0], trs)
        self.assertEqual(value, 3.0)
        self.assertTrue(how.startswith("median of the 2 steady rounds of 3 (1 with moved "
                                       "references left out)"))
        self.assertEqual(g.rounds, trs)

    def test_no_steady_round_says_so(self):
        g = Goals()
        trs = [rtt_round("r1", 1, stable=False), rtt_round("r2", 1, stable=False)]
        value, how = g.value_of_rounds([1.0, 3.0], trs, listed=False)
        self.assertEqual(value, 2.0)
        self.assertTrue(how.startswith("**no round with steady references**"))
        self.assertEqual(g.rounds, [])


class RingGoalTest(unittest.TestCase):
    def test_each_round_beside_its_own_ring(self):
        # Round trips of 300, 250 and 1000 ns over rings of 200, 250 and 500
        # ns measured around each (the last round's references moved): 1.5,
        # 1.0 and 2.0, the last left out.
        rounds = [dict(rtt_round("ring-r1", 1e9 / 300), ref_ns=200.0),
                  dict(rtt_round("ring-r2", 1e9 / 250), ref_ns=250.0),
                  dict(rtt_round("ring-r3", 1e6, stable=False), ref_ns=500.0)]
        g = Goals()
        bench_goals.ring_goal(FakeResults({}), g, rounds, [], None, 2.5)
        (goal,) = g.goals
        self.assertEqual(goal["goal"], "shm ping2 busy round trip / raw rte_ring ping-pong")
        self.assertAlmostEqual(goal["measured"], 1.25)
        self.assertEqual((goal["target"], goal["met"]), (1.2, False))
        self.assertIn("1.50 (300 ns / 200;", goal["detail"])
        self.assertIn("2.00 (1000 ns / 500; reference 100 ns before, 100 ns after; "
                      "**references moved**", goal["detail"])
        self.assertTrue(goal["detail"].endswith("the cache-line ratio beside it: 2.50"))
        # Its rounds go to the noise table.
        self.assertEqual(g.rounds, rounds)

    def test_pairs_decide_and_the_triples_follow(self):
        # Three rounds of alternated blocks, medians 1.1, 1.8 and 1.0: the
        # goal is their median, 1.1, whatever the triples say (1.0); each
        # round is told, then the triples, which still go to the noise table.
        def beside(p50):
            return {"pairs": 400, "ratio_p25": p50 - 0.1, "ratio_p50": p50,
                    "ratio_p75": p50 + 0.1, "ring_ns": {"p50": 300.0, "min": 97.0, "max": 900.0},
                    "shm_ns": {"p50": 330.0, "min": 176.0, "max": 990.0}}
        rounds = [dict(rtt_round("ring-r1", 1e9 / 250), ref_ns=250.0)]
        g = Goals()
        bench_goals.ring_goal(FakeResults({}), g, rounds, [beside(1.1), beside(1.8), beside(1.0)],
                              None, 2.5)
        (goal,) = g.goals
        self.assertAlmostEqual(goal["measured"], 1.1)
        self.assertTrue(goal["met"])
        self.assertTrue(goal["detail"].startswith("median of 3 rounds of blocks alternated"))
        self.assertIn("1.80 over 400 pairs (p25 1.70, p75 1.90; ring p50 300 ns, 97 to 900; "
                      "shm p50 330 ns, 176 to 990)", goal["detail"])
        self.assertIn("the rounds of ring, cell, ring beside it: 1.00 (250 ns / 250;",
                      goal["detail"])
        self.assertTrue(goal["detail"].endswith("the cache-line ratio beside it: 2.50"))
        self.assertEqual(g.rounds, rounds)

    def test_no_ring_no_goal(self):
        g = Goals()
        bench_goals.ring_goal(FakeResults({}), g, [], [], None, None)
        self.assertEqual(g.goals, [])


def gap_run(ratios):
    # A gap run whose p50s give these shm / socket ratios, after 1, 20, ... ms.
    return {"gaps": [{"gap_ms": ms, "rounds": 8,
                      "shm": {"count": 8, "p50": int(100000 * r), "p99": 200000, "max": 200000},
                      "socket": {"count": 8, "p50": 100000, "p99": 200000, "max": 200000},
                      "p50_ratio": r} for ms, r in zip((1, 20, 300, 1000), ratios)]}


class OccasionalTest(unittest.TestCase):
    def test_verdict_of_a_ratio(self):
        self.assertEqual([bench_occasional.verdict(r) for r in (0.5, 0.8, 0.81, 1.0, 1.01)],
                         ["stretch", "stretch", "met", "met", "missed"])

    def test_the_worst_gap_decides(self):
        rows = bench_occasional.rows({"c": gap_run([0.5, 0.7, 1.2, 0.9]), "python": None})
        self.assertEqual([r["verdict"] for r in rows], ["stretch", "stretch", "missed", "met"])
        g = Goals()
        bench_occasional.goals(g, rows)
        goal, stretch = g.goals
        self.assertEqual((goal["measured"], goal["target"], goal["met"]), (1.2, 1.0, False))
        self.assertIn("the worst, 300 ms, decides", goal["detail"])
        self.assertEqual((stretch["target"], stretch["met"]), (0.8, False))

    def test_met_at_every_gap_from_both_clients(self):
        rows = bench_occasional.rows({"c": gap_run([0.5, 0.7, 0.8, 0.6]),
                                      "python": gap_run([0.9, 1.0, 0.95, 0.7])})
        g = Goals()
        bench_occasional.goals(g, rows)
        self.assertEqual([(x["target"], x["met"]) for x in g.goals],
                         [(1.0, True), (0.8, True), (1.0, True), (0.8, False)])
        self.assertIn("Python", g.goals[2]["goal"])

    def test_table_has_a_row_per_client_and_gap(self):
        rows = bench_occasional.rows({"c": gap_run([0.5, 1.2]), "python": gap_run([1.0])})
        lines = bench_occasional.table_lines(rows, "memfd")
        body = [line for line in lines if line.startswith("| C ") or line.startswith("| Python")]
        self.assertEqual(len(body), 3)
        self.assertEqual(body[0], "| C (ping2_perf) | 1 ms | 8 | 50.0 us / 200.0 us | "
                                  "100.0 us / 200.0 us | 0.50 | met, stretch too |")
        self.assertEqual(body[1], "| C (ping2_perf) | 20 ms | 8 | 120.0 us / 200.0 us | "
                                  "100.0 us / 200.0 us | 1.20 | **no** |")
        self.assertEqual(bench_occasional.table_lines([], None), [])


def loaded_folder(d, scenario, order, shm, socket, gaps, others=None, processes=0):
    # A loaded-host scenario as bench_loaded.sh writes it: two rounds of
    # each transport (rates shm and socket, lists of two), the occasional
    # calls ({gap_ms: (shm p50, socket p50)}), the other servers' requests
    # during each cell (others: requests per second of all of them).
    def cell(rate):
        return {"mode": "calls", "calls_per_s": rate, "seconds": 1.0,
                "latency_ns": {"p50": 1e9 / rate, "p99": 2e9 / rate, "p999": 3e9 / rate,
                               "max": 4e9 / rate},
                "client_cpu_ns_per_call": 1.0, "daemon_cpu_ns_per_call": 1.0,
                "client_syscalls_per_call": None, "daemon_syscalls_per_call": None,
                "client_vcsw_per_call": 0.0, "daemon_vcsw_per_call": 0.0,
                "fastest_over_slowest": 1.0}
    for t, rates in (("shm", shm), ("socket", socket)):
        for i, rate in enumerate(rates, 1):
            with open(os.path.join(d, f"loaded-{scenario}-{t}-r{i}.json"), "w") as f:
                json.dump(cell(rate), f)
    with open(os.path.join(d, f"loaded-{scenario}-gap.json"), "w") as f:
        json.dump({"mode": "gap", "seconds": 1.0, "gaps": [
            {"gap_ms": ms, "rounds": 8, "p50_ratio": a / b,
             "shm": {"count": 8, "p50": a, "p99": a, "max": a},
             "socket": {"count": 8, "p50": b, "p99": b, "max": b}}
            for ms, (a, b) in gaps.items()]}, f)
    with open(os.path.join(d, f"loaded-{scenario}-host.json"), "w") as f:
        json.dump({"scenario": scenario, "order": order, "cpus": 2,
                   "load_processes": processes, "loadavg_start": "1 1 1",
                   "loadavg_end": "2 2 2", "runnable": [1, 3, 2],
                   "others": [{"transport": t, "round": 1, "requests": int(others or 0),
                               "seconds": 1.0} for t in ("shm", "socket")]}, f)


class LoadedTest(unittest.TestCase):
    def test_rows_goals_and_table(self):
        with tempfile.TemporaryDirectory() as d:
            loaded_folder(d, "busy-1x", 1, [3e5, 5e5], [4e4, 6e4], {20: (50e3, 100e3),
                                                                    300: (90e3, 100e3)})
            loaded_folder(d, "quiet", 0, [1e6, 1e6], [4e4, 4e4], {20: (40e3, 100e3)})
            loaded_folder(d, "servers-2", 2, [2e5, 2e5], [1e5, 1e5], {20: (120e3, 100e3)},
                          others=2e6, processes=2)
            rows = bench_loaded.rows(d)
        self.assertEqual([r["scenario"] for r in rows], ["quiet", "busy-1x", "servers-2"])
        busy = rows[1]
        # The medians of the two rounds, their ratio, the samples' median.
        self.assertEqual((busy["shm"], busy["socket"], busy["busy_ratio"], busy["runnable"]),
                         (4e5, 5e4, 8.0, 2))
        self.assertIsNone(busy["share"])
        # Each other server's client, against ours: 1 M each, 200 k ours.
        self.assertEqual((rows[2]["others_per_server"], rows[2]["share"]), (1e6, 0.2))
        g = Goals()
        bench_loaded.goals(g, rows)
        got = {x["goal"]: (x["measured"], x["target"], x["met"]) for x in g.goals}
        quiet = "loaded host, nothing beside (this run's quiet)"
        loops = "loaded host, busy and compiler loops"
        servers = "loaded host, beside other channel servers"
        self.assertEqual(got[f"{quiet}: busy shm calls/s / socket, the worst scenario"],
                         (25.0, 25, True))
        self.assertEqual(got[f"{loops}: busy shm calls/s / socket, the worst scenario"],
                         (8.0, 3, True))
        self.assertEqual(
            got[f"{loops}: occasional shm p50 / socket p50, the worst scenario and gap"],
            (0.9, 1.0, True))
        self.assertEqual(got[f"{loops}: the same, stretch"], (0.9, 0.8, False))
        self.assertEqual(got[f"{servers}: busy shm calls/s / socket, the worst scenario"],
                         (2.0, 1.5, True))
        self.assertEqual(got[f"{servers}: the same, stretch"], (2.0, 3, False))
        self.assertEqual(
            got[f"{servers}: slowest busy client / fastest (ours, the others' mean)"],
            (0.2, 0.25, False))
        self.assertEqual(
            got[f"{servers}: occasional shm p50 / socket p50, the worst scenario and gap"],
            (1.2, 1.0, False))
        lines = bench_loaded.table_lines(rows)
        # p50s: the median of the rounds' (1e9 / rate each).
        self.assertIn("| a busy loop per CPU | 2 / 2 | 400.0 k | 50.0 k | 8.0x | 2667 ns / "
                      "20.8 us | 0.50 (50.0 us / 100.0 us) | 0.90 (90.0 us / 100.0 us) | - |",
                      lines)
        self.assertEqual(bench_loaded.table_lines([]), [])

    def test_bad_host_file(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "loaded-x-host.json"), "w") as f:
                json.dump({"scenario": "x"}, f)
            with self.assertRaises(bench_loaded.BadOutput):
                bench_loaded.rows(d)


if __name__ == "__main__":
    unittest.main()
