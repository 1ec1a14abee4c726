# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The verdicts of make bench's report: a goal's verdict against its target,
# the median of the steady rounds, the busy round trip against the ring
# ping-pong measured around each of its rounds, and the occasional calls' goal, its
# stretch and its table.

import unittest

import bench_goals
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


if __name__ == "__main__":
    unittest.main()
