# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The arithmetic of make bench's report: which rounds held still, a goal's
# verdict against its target, the median
# of the steady rounds, the ring goal pair by pair, the occasional calls'
# goal, its stretch and table, the loaded host's rows, goals and table, and
# what a tool's JSON must hold.

import contextlib
import io
import json
import os
import tempfile
import unittest
from types import SimpleNamespace

import bench_report
import bench_tables
from bench_data import BadOutput, SCHEMAS, check
from bench_report import Goals


def a_round(name, calls_per_s=1.0, stable=True, ref_ns=100.0):
    """A round as Results reads it: its cell and references."""
    return {"name": name, "cell": {"calls_per_s": calls_per_s}, "ref_ns": ref_ns,
            "ref1_ns": 100.0, "ref2_ns": 100.0, "stable": stable, "spread": 0.0}


def write_json(d, name, value):
    with open(os.path.join(d, name), "w") as f:
        json.dump(value, f)


class RoundsTest(unittest.TestCase):
    def ref(self, ns):
        return {"test": "cacheline", "unit": "round_trip", "ns_per_op": ns, "ops_per_s": 1e9 / ns,
                "cpus": None, "size": None, "depth": None, "gap_us": None,
                "leader_cpu_ns_per_op": ns, "follower_cpu_ns_per_op": None}

    def test_a_round_moved_when_its_references_are_further_apart_than_the_tolerance(self):
        # Of a run whose tolerance is 20 %: round 1 within 20 % (steady),
        # round 2 just beyond, round 3 30 % apart.
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "meta.txt"), "w") as f:
                f.write("tolerance=0.2\n")
            for r, (a, b) in ((1, (100, 120)), (2, (100, 120.01)), (3, (100, 130))):
                write_json(d, f"goal-rtt-r{r}-ref1.json", self.ref(a))
                write_json(d, f"goal-rtt-r{r}-cell.json", loaded_cell(1e7))
                write_json(d, f"goal-rtt-r{r}-ref2.json", self.ref(b))
            rounds = bench_report.Results(d).goal_rounds("rtt")
        self.assertEqual([(r["name"], r["stable"], r["ref_ns"]) for r in rounds],
                         [("rtt-r1", True, 110.0), ("rtt-r2", False, 110.005),
                          ("rtt-r3", False, 115.0)])
        self.assertAlmostEqual(rounds[2]["spread"], 0.3)


class GoalTest(unittest.TestCase):
    def test_verdict_against_the_target(self):
        g = Goals()
        for name, value, op in (("a", 1.0, "<="), ("b", 1.1, "<="), ("c", 1.0, ">="),
                                ("d", 1.0, "<"), ("e", None, "<=")):
            g.goal(name, value, op, 1.0, "")
        self.assertEqual([x["met"] for x in g.goals], [True, False, True, False, None])

    def test_median_of_the_steady_rounds(self):
        g = Goals()
        rounds = [a_round("r1", stable=False), a_round("r2"), a_round("r3")]
        value, how = g.of_rounds([9.0, 2.0, 4.0], rounds)
        self.assertEqual(value, 3.0)
        self.assertTrue(how.startswith("median of the 2 steady rounds of 3 (1 with moved "
                                       "references left out)"))
        # Its rounds go to the noise table, once.
        g.of_rounds([9.0, 2.0, 4.0], rounds)
        self.assertEqual(g.rounds, rounds)

    def test_no_steady_round_says_so(self):
        value, how = Goals().of_rounds([1.0, 3.0], [a_round("r1", stable=False),
                                                    a_round("r2", stable=False)])
        self.assertEqual(value, 2.0)
        self.assertTrue(how.startswith("**no round with steady references**"))


class RingGoalTest(unittest.TestCase):
    def beside(self, p50):
        return {"pairs": 400, "ratio_p25": p50 - 0.1, "ratio_p50": p50, "ratio_p75": p50 + 0.1,
                "ring_ns": {"p50": 300.0, "min": 97.0, "max": 900.0},
                "shm_ns": {"p50": 330.0, "min": 176.0, "max": 990.0}}

    def test_pairs_decide_and_the_triples_follow(self):
        # Rounds of alternated blocks with medians 1.1, 1.8 and 1.0: the goal
        # is their median whatever the triple says (250 ns over a 250 ns
        # ring); each round is told, then the triple, which goes to the
        # noise table, then the cache-line ratio.
        rounds = [a_round("ring-r1", 1e9 / 250, ref_ns=250.0)]
        g = Goals()
        bench_report.ring_goal(g, rounds, [self.beside(v) for v in (1.1, 1.8, 1.0)], 2.5)
        (goal,) = g.goals
        self.assertEqual((goal["goal"], goal["measured"], goal["target"], goal["met"]),
                         ("shm ping2 busy round trip / raw rte_ring ping-pong", 1.1, 1.2, True))
        self.assertTrue(goal["detail"].startswith("median of 3 rounds of blocks alternated"))
        self.assertIn("1.80 over 400 pairs (p25 1.70, p75 1.90; ring p50 300 ns, 97 to 900; "
                      "shm p50 330 ns, 176 to 990)", goal["detail"])
        self.assertIn("the rounds of ring, cell, ring beside it: 1.00 (250 ns / 250;",
                      goal["detail"])
        self.assertTrue(goal["detail"].endswith("the cache-line ratio beside it: 2.50"))
        self.assertEqual(g.rounds, rounds)

    def test_no_pairs_no_goal(self):
        g = Goals()
        bench_report.ring_goal(g, [], [], None)
        self.assertEqual(g.goals, [])


def gap_run(ratios):
    """A gap run whose p50s give these shm / socket ratios after 1, 20, ... ms."""
    return {"gaps": [{"gap_ms": ms, "rounds": 8,
                      "shm": {"count": 8, "p50": int(100000 * r), "p99": 200000, "max": 200000},
                      "socket": {"count": 8, "p50": 100000, "p99": 200000, "max": 200000},
                      "p50_ratio": r} for ms, r in zip((1, 20, 300, 1000), ratios)]}


class OccasionalTest(unittest.TestCase):
    def test_verdict_of_a_ratio(self):
        rows = bench_report.occasional_rows({"c": gap_run([0.5, 0.8, 0.81, 1.0]),
                                             "python": gap_run([1.01])})
        self.assertEqual([r["verdict"] for r in rows],
                         ["stretch", "stretch", "met", "met", "missed"])

    def test_the_worst_gap_decides(self):
        rows = bench_report.occasional_rows({"c": gap_run([0.5, 0.7, 1.2, 0.9]), "python": None})
        g = Goals()
        bench_report.occasional_goals(g, rows)
        goal, stretch = g.goals
        self.assertEqual((goal["measured"], goal["target"], goal["met"]), (1.2, 1.0, False))
        self.assertIn("the worst, 300 ms, decides", goal["detail"])
        self.assertEqual((stretch["target"], stretch["met"]), (0.8, False))

    def test_met_at_every_gap_from_both_clients(self):
        rows = bench_report.occasional_rows({"c": gap_run([0.5, 0.7, 0.8, 0.6]),
                                             "python": gap_run([0.9, 1.0, 0.95, 0.7])})
        g = Goals()
        bench_report.occasional_goals(g, rows)
        self.assertEqual([(x["target"], x["met"]) for x in g.goals],
                         [(1.0, True), (0.8, True), (1.0, True), (0.8, False)])
        self.assertIn("Python", g.goals[2]["goal"])

    def test_table_has_a_row_per_client_and_gap(self):
        gaps = {"c": gap_run([0.5, 1.2]), "python": gap_run([1.0])}
        res = SimpleNamespace(gaps=gaps)
        lines = bench_tables.occasional_lines(res, bench_report.occasional_rows(gaps))
        body = [line for line in lines if line.startswith(("| C ", "| Python"))]
        self.assertEqual(len(body), 3)
        self.assertEqual(body[0], "| C (ping2_perf) | 1 ms | 8 | 50.0 us / 200.0 us | "
                                  "100.0 us / 200.0 us | 0.50 | met, stretch too |")
        self.assertEqual(body[1], "| C (ping2_perf) | 20 ms | 8 | 120.0 us / 200.0 us | "
                                  "100.0 us / 200.0 us | 1.20 | **no** |")
        self.assertEqual(bench_tables.occasional_lines(res, []), [])


def loaded_cell(rate, event_loop=False):
    """A ping2_perf cell at this rate, its latencies to match."""
    return {"mode": "calls", "calls_per_s": rate, "seconds": 1.0, "event_loop": event_loop,
            "latency_ns": {"p50": 1e9 / rate, "p99": 2e9 / rate, "p999": 3e9 / rate,
                           "max": 4e9 / rate},
            "client_cpu_ns_per_call": 1.0, "daemon_cpu_ns_per_call": 1.0,
            "client_syscalls_per_call": None, "daemon_syscalls_per_call": None,
            "client_vcsw_per_call": 0.0, "daemon_vcsw_per_call": 0.0,
            "fastest_over_slowest": 1.0}


def loaded_folder(d, scenario, order, shm, socket, gaps, others=None, processes=0,
                  evloop=None):
    """A loaded-host scenario as bench.sh writes it: two rounds of each
    transport (rates), of each with the event-loop client (evloop: (shm
    rates, socket rates), none when None), the occasional calls ({gap_ms:
    (shm p50, socket p50)}), the other servers' requests per second during
    each cell (the event-loop cells': none)."""
    def write(name, value):
        write_json(d, name, value)

    cells = [("shm", shm, False), ("socket", socket, False)]
    if evloop is not None:
        cells += [("shm-evloop", evloop[0], True), ("socket-evloop", evloop[1], True)]
    for t, rates, is_evloop in cells:
        for i, rate in enumerate(rates, 1):
            write(f"loaded-{scenario}-{t}-r{i}.json", loaded_cell(rate, is_evloop))
    write(f"loaded-{scenario}-gap.json", {"mode": "gap", "seconds": 1.0, "gaps": [
        {"gap_ms": ms, "rounds": 8, "p50_ratio": a / b,
         "shm": {"count": 8, "p50": a, "p99": a, "max": a},
         "socket": {"count": 8, "p50": b, "p99": b, "max": b}} for ms, (a, b) in gaps.items()]})
    write(f"loaded-{scenario}-host.json", {
        "scenario": scenario, "order": order, "cpus": 2, "load_processes": processes,
        "loadavg_start": "1 1 1", "loadavg_end": "2 2 2", "runnable": [1, 3, 2],
        "others": [{"transport": t, "event_loop": False, "round": 1,
                    "requests": int(others or 0), "seconds": 1.0} for t in ("shm", "socket")]
        + [{"transport": "shm", "event_loop": True, "round": 1, "requests": 0, "seconds": 1.0}]})


class LoadedTest(unittest.TestCase):
    def test_rows_goals_and_table(self):
        with tempfile.TemporaryDirectory() as d:
            loaded_folder(d, "busy-1x", 1, [3e5, 5e5], [4e4, 6e4], {20: (50e3, 100e3),
                                                                    300: (90e3, 100e3)},
                          evloop=([2e5, 4e5], [2e4, 4e4]))
            loaded_folder(d, "quiet", 0, [1e6, 1e6], [4e4, 4e4], {20: (40e3, 100e3)})
            loaded_folder(d, "servers-2", 2, [2e5, 2e5], [1e5, 1e5], {20: (120e3, 100e3)},
                          others=2e6, processes=2)
            rows = bench_report.Results(d).loaded
        self.assertEqual([r["scenario"] for r in rows], ["quiet", "busy-1x", "servers-2"])
        busy = rows[1]
        # The medians of the two rounds, their ratio, the samples' median.
        self.assertEqual((busy["shm"], busy["socket"], busy["busy_ratio"], busy["runnable"]),
                         (4e5, 5e4, 8.0, 2))
        self.assertIsNone(busy["share"])
        # The event-loop client's medians and their ratio; none where it
        # did not run.
        self.assertEqual((busy["evloop_shm"], busy["evloop_socket"], busy["evloop_ratio"]),
                         (3e5, 3e4, 10.0))
        self.assertEqual((rows[0]["evloop_shm"], rows[0]["evloop_ratio"]), (None, None))
        # Each other server's client, against ours: 1 M each, 200 k ours.
        self.assertEqual((rows[2]["others_per_server"], rows[2]["share"]), (1e6, 0.2))
        g = Goals()
        bench_report.loaded_goals(g, rows)
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
        lines = bench_tables.loaded_lines(rows)
        # p50s: the median of the rounds' (1e9 / rate each).
        self.assertIn("| a busy loop per CPU | 2 / 2 | 400.0 k | 50.0 k | 8.0x | "
                      "300.0 k / 30.0 k | 10.0x | 2667 ns / "
                      "20.8 us | 0.50 (50.0 us / 100.0 us) | 0.90 (90.0 us / 100.0 us) | - |",
                      lines)
        self.assertIn("| nothing | 2 / 2 | 1.00 M | 40.0 k | 25.0x | - / - | - | 1000 ns / "
                      "25.0 us | 0.40 (40.0 us / 100.0 us) | - | - |", lines)
        self.assertEqual(bench_tables.loaded_lines([]), [])

    def test_event_loop_cell_must_say_so(self):
        # A cell of the event-loop client that ran blocking (or the other
        # way round) is a bad output, named.
        for cell, event_loop in (("shm-evloop", False), ("socket", True)):
            with tempfile.TemporaryDirectory() as d:
                loaded_folder(d, "quiet", 0, [1e6], [4e4], {}, evloop=([1e6], [4e4]))
                write_json(d, f"loaded-quiet-{cell}-r1.json", loaded_cell(1e6, event_loop))
                err = io.StringIO()
                with self.assertRaises(SystemExit) as e, contextlib.redirect_stderr(err):
                    bench_report.Results(d)
                self.assertEqual(e.exception.code, 1)
                self.assertIn(f"loaded-quiet-{cell}-r1.json: 'event_loop' is not "
                              f"{'false' if event_loop else 'true'}", err.getvalue())

    def test_bad_host_file(self):
        host = {"scenario": "x", "order": 0, "cpus": 2, "load_processes": 1, "runnable": [1],
                "others": []}
        for bad in ({"scenario": "x"}, dict(host, runnable=1)):
            with tempfile.TemporaryDirectory() as d:
                write_json(d, "loaded-x-host.json", bad)
                with self.assertRaises(SystemExit) as e:
                    bench_report.Results(d)
                self.assertEqual(e.exception.code, 1)
        self.assertIs(check(host, SCHEMAS["host"]), host)


class CheckTest(unittest.TestCase):
    def test_a_field_missing_or_wrong_is_named(self):
        headline = {"rounds": 3, **{k: {"calls_per_s": 1.0} for k in ("shm", "socket", "c")}}
        with self.assertRaisesRegex(BadOutput, "^no 'c_socket'$"):
            check(headline, SCHEMAS["headline"])
        headline["c_socket"] = {"calls_per_s": 0}
        with self.assertRaisesRegex(BadOutput, "^'c_socket': 'calls_per_s' is 0$"):
            check(headline, SCHEMAS["headline"])
        headline["c_socket"] = {"calls_per_s": 2.0}
        self.assertIs(check(headline, SCHEMAS["headline"]), headline)
        with self.assertRaisesRegex(BadOutput, "^not a JSON object$"):
            check([], SCHEMAS["ref"])
        with self.assertRaisesRegex(BadOutput, "'gaps': not a non-empty list"):
            check({"mode": "gap", "seconds": 1.0, "gaps": []}, SCHEMAS["gap"])


if __name__ == "__main__":
    unittest.main()
