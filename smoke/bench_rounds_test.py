# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# bench_rounds.py: when make bench measures a round again, what it spends of
# its retry budget, what it tells and records, and which try the report
# takes of a round.

import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import bench_rounds
from bench_rounds import judge


class JudgeTest(unittest.TestCase):
    def test_steady_first_try_is_done_and_free(self):
        again, record, left = judge(40, 1, 3, 5, 100.0, 110.0)
        self.assertFalse(again)
        self.assertEqual(record, {"tries": 1, "steady": True, "stopped": "steady",
                                  "tolerance": 0.2})
        self.assertEqual(left, 40)

    def test_spread_of_the_tolerance_is_steady(self):
        self.assertFalse(judge(40, 1, 3, 5, 100.0, 120.0)[0])
        self.assertTrue(judge(40, 1, 3, 5, 100.0, 120.1)[0])

    def test_moved_try_is_measured_again_while_the_budget_lasts(self):
        again, record, left = judge(40, 1, 3, 5, 100.0, 150.0)
        self.assertTrue(again)
        self.assertIsNone(record)
        self.assertEqual(left, 40)

    def test_a_retry_spends_its_seconds(self):
        again, record, left = judge(40, 2, 3, 7, 105.0, 100.0)
        self.assertFalse(again)
        self.assertEqual((record["tries"], record["stopped"]), (2, "steady"))
        self.assertEqual(left, 33)

    def test_moved_in_the_last_try_is_kept_as_moved(self):
        again, record, left = judge(40, 3, 3, 1, 100.0, 150.0)
        self.assertFalse(again)
        self.assertEqual(record, {"tries": 3, "steady": False, "stopped": "max-tries",
                                  "tolerance": 0.2})
        self.assertEqual(left, 39)

    def test_no_retry_once_the_budget_is_spent(self):
        self.assertEqual(judge(5, 2, 3, 6, 100.0, 150.0),
                         (False, {"tries": 2, "steady": False, "stopped": "budget",
                                  "tolerance": 0.2}, -1))
        # No budget at all: one try each, kept as moved.
        self.assertEqual(judge(0, 1, 3, 3, 100.0, 150.0)[1]["stopped"], "budget")


class CommandTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = bench_rounds.main(["bench_rounds.py", *map(str, args)])
        return rc, out.getvalue(), err.getvalue()

    def read(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return json.load(f)

    def test_a_goal_round_moved_then_steady(self):
        self.assertEqual(self.run_main("budget", self.dir, 40)[0], 0)
        rc, out, err = self.run_main("judge", self.dir, "goal", "rtt-r1", 1, 3, 2, 80, 120)
        self.assertEqual((rc, out), (0, "again\n"))
        self.assertEqual(err, "bench: goal rtt-r1: the references moved by 50.0 % (80 ns before "
                              "the cell, 120 ns after) in try 1 of 3; 40 s of retries left\n")
        self.assertFalse(os.path.exists(os.path.join(self.dir, "goal-rtt-r1-tries.json")))
        rc, out, err = self.run_main("judge", self.dir, "goal", "rtt-r1", 2, 3, 4, 80, 81)
        self.assertEqual((out, err), ("done\n", ""))
        self.assertEqual(self.read("goal-rtt-r1-tries.json")["tries"], 2)
        self.assertEqual(bench_rounds.budget_left(self.dir), 36)

    def test_a_shared_round_with_no_budget(self):
        self.run_main("budget", self.dir, 0)
        rc, out, err = self.run_main("judge", self.dir, "shared", "shared-default-r1", 1, 3, 9,
                                     5000.9, 2000.2)
        self.assertEqual(out, "done\n")
        self.assertEqual(err.splitlines(), [
            "bench: shared-default-r1: one client's rate moved by 150.0 % (5000 calls/s before, "
            "2000 after) in try 1 of 3",
            "bench: shared-default-r1: no retry budget left (0 s in all): kept as moved"])
        self.assertEqual(self.read("shared-default-r1-tries.json")["stopped"], "budget")

    def test_bad_usage(self):
        self.assertEqual(self.run_main("judge", self.dir, "nosuch", "x", 1, 3, 0, 1, 1)[0], 2)


class ReadRoundTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def round_of(self, spreads, info=None):
        # A round whose try i has the given spread; try_of reads them by name.
        for i, s in enumerate(spreads, 1):
            with open(os.path.join(self.dir, f"goal-x-t{i}.json"), "w") as f:
                json.dump({"spread": s, "try": i}, f)
        if info is not None:
            with open(os.path.join(self.dir, "goal-x-tries.json"), "w") as f:
                json.dump(info, f)

        def try_of(prefix):
            if not os.path.exists(prefix + ".json"):
                return None
            with open(prefix + ".json") as f:
                return json.load(f)

        return bench_rounds.read_round(self.dir, "x", try_of, "goal-", self.fail)

    def test_the_first_steady_try_is_taken(self):
        r = self.round_of([0.5, 0.1, 0.05], {"stopped": "steady", "tolerance": 0.2})
        self.assertEqual((r["try"], r["tries"], r["stable"], r["stopped"]), (2, 3, True, "steady"))
        self.assertEqual(r["spreads"], [0.5, 0.1, 0.05])

    def test_with_none_steady_the_closest_is_taken(self):
        r = self.round_of([0.5, 0.3, 0.9], {"stopped": "max-tries"})
        self.assertEqual((r["try"], r["stable"], r["spread"]), (2, False, 0.3))

    def test_the_tolerance_of_the_run_decides(self):
        self.assertTrue(self.round_of([0.25], {"tolerance": 0.3})["stable"])

    def test_no_round(self):
        self.assertIsNone(self.round_of([]))


if __name__ == "__main__":
    unittest.main()
