# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The arithmetic of make bench's report (smoke/bench_report.py) on small results folders: rounds,
# ratios, strace, the worst gap and scenario, shares; a missing field ends it, named.

import contextlib
import io
import json
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "smoke"))
import bench_report  # noqa: E402


def ref(ns):
    return {"test": "t", "unit": "round_trip", "ns_per_op": ns, "ops_per_s": 1e9 / ns,
            "leader_cpu_ns_per_op": ns}


def cell(rate, p50=None, **more):
    return {"calls_per_s": rate, "seconds": 1.0, "client_cpu_ns_per_call": 1.0,
            "client_vcsw_per_call": 0.0, "fastest_over_slowest": 1.0,
            "latency_ns": {"p50": p50} if p50 else None, **more}


def gaps(**ratios):
    """A gap run: shm p50 / socket p50 after each gap (gap_MS=ratio), the socket's 100 us."""
    return {"gaps": [{"gap_ms": int(k[4:]), "rounds": 8, "p50_ratio": r, "shm": {"p50": 1e5 * r,
            "p99": 2e5}, "socket": {"p50": 1e5, "p99": 2e5}} for k, r in ratios.items()]}


class ReportTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def write(self, name, value):
        pathlib.Path(self.dir, name).write_text(value if isinstance(value, str) else
                                                json.dumps(value))

    def report(self, *argv):
        """{goal: (measured, met, detail)}, summary.json, report.md; or the status and stderr."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = bench_report.main(["bench_report.py", self.dir, *argv])
            except SystemExit as e:  # sys.exit(message): status 1
                status = print(e.code, file=sys.stderr) or 1
        if status:
            return status, err.getvalue()
        summary = json.loads(pathlib.Path(self.dir, "summary.json").read_text())
        return {g["goal"]: (g["measured"], g["met"], g["detail"]) for g in summary["goals"]
                }, summary, out.getvalue()

    def rounds(self, name, *rounds):
        """NAME's rounds, each (its base before, its cell, its base after)."""
        parts = (("one1", "many", "one2") if name == "pinned" or name.startswith("shared")
                 else ("ref1", "cell", "ref2"))
        for r, files in enumerate(rounds, 1):
            for part, value in zip(parts, files):
                self.write(f"{name}-r{r}-{part}.json", value)

    def test_rounds_median_of_each_cell_against_its_base(self):
        # A round trip over the mean of the references around it, whatever their spread.
        self.rounds("goal-rtt", *((ref(a), cell(1e9 / rtt), ref(b)) for a, rtt, b in (
            (100, 275, 120), (100, 200, 100), (50, 500, 150))))
        # Rates: depth 32 over the stream's; 16 clients over one client's, before and after.
        self.rounds("goal-stream", (ref(8), cell(6e7), ref(12)))
        self.rounds("shared-default", (cell(1e6), cell(1.8e6, fastest_over_slowest=1.5), cell(2e6)),
                    (cell(1e6), cell(1e6, fastest_over_slowest=3), cell(1e6)))
        self.write("poller-nice.txt", "default -20\n")
        goals, _, _ = self.report()
        value, met, detail = goals["shm ping2 round trip / raw cache-line ping-pong"]
        self.assertEqual((round(value, 9), met), (2.5, True))
        self.assertEqual(detail, "median of 3 rounds: 2.50 (275 ns / 110 ns); 2.00 (200 ns / 100 "
                                 "ns); 5.00 (500 ns / 100 ns)")
        shared = "16 clients aggregate / 1 client, all on shared CPUs, poller at nice -20"
        for name, value in (("shm depth 32 requests/s / raw ring streaming", 0.6), (shared, 1.1)):
            self.assertAlmostEqual(goals[name][0], value)
        self.assertEqual(goals[shared.replace("aggregate / 1 client", "fastest / slowest")][:2],
                         (2.25, False))

    def test_pinned_rounds_one_fast_second_decides_nothing(self):
        # The 16 clients with the poller on a CPU of its own against the one client measured
        # before and after them, the median of the rounds: a single client's one fast second
        # (round 1) is outvoted.
        self.rounds("pinned", (cell(4.4e6), cell(1.8e6, fastest_over_slowest=1.1), cell(1.8e6)),
                    (cell(1.8e6), cell(1.8e6, fastest_over_slowest=1.2), cell(1.8e6)),
                    (cell(2e6), cell(1.9e6, fastest_over_slowest=1.6), cell(1.8e6)))
        goals, _, _ = self.report()
        value, met, detail = goals["16 clients aggregate / 1 client, poller on a CPU of its own"]
        self.assertEqual((round(value, 9), met), (1.0, True))
        self.assertTrue(detail.startswith("median of 3 rounds: 0.58 (1.80 M / 3.10 M); 1.00"),
                        detail)
        fair = goals["16 clients fastest / slowest, poller on a CPU of its own"]
        self.assertEqual(fair[:2], (1.2, True))

    def test_ratios_and_the_strace_per_call_difference(self):
        self.write("cell-memfd-spinning-d1-c1-z64.json", cell(
            4e6, client_syscalls_per_call=0.002, daemon_syscalls_per_call=0.004))
        self.write("cell-socket-spinning-d1-c1-z64.json", cell(1e5))
        self.write("cell-memfd-sleeping-d1-c1-z64.json", cell(1e5))
        for again, ns in (("", 20000), ("-mid", 10000), ("-end", 30000)):
            self.write(f"ref-eventfd-nopin{again}.json", ref(ns))
        for who, short, long in (("client", 6000, 6100), ("daemon", 9000, 8990)):
            for calls, total in ((20000, short), (120000, long)):
                self.write(f"strace-{who}-{calls}.txt", f"100.00 0.1 1 {total} 2 total\n")
        goals, summary, report = self.report("20000", "120000")
        # 10 us over the median of the eventfd's three measurements, 20 us.
        self.assertEqual([goals[g][0] for g in ("shm ping2 calls/s / socket calls/s", (
            "sleeping-daemon round trip / raw eventfd round trip"))], [40, 0.5])
        self.assertEqual(summary["strace_syscalls_per_call"], {"client": 0.001, "daemon": -0.0001})
        self.assertEqual(goals["syscalls per call, busy channel (client, daemon)"][:2], (.004, 1))
        self.assertIn("strace: client 0.00100, daemon 0 within the runs' difference", report)

    def test_occasional_calls_the_worst_gap_decides(self):
        self.write("gap-c.json", gaps(gap_1=0.5, gap_20=0.7, gap_300=1.2, gap_1000=0.9))
        self.write("gap-python.json", gaps(gap_1=0.5, gap_20=0.75))
        goals, _, report = self.report()
        c = "occasional calls from C (ping2_perf): "
        every, stretch = (goals[c + g] for g in ("shm p50 / socket p50 at every gap", "the same, "
                                                 "stretch"))
        self.assertEqual((every[:2], stretch[:2]), ((1.2, False), (1.2, False)))
        self.assertTrue(every[2].endswith("; the worst: 300 ms"))
        self.assertEqual(goals["occasional calls from Python (shmchan): the same, stretch"][:2],
                         (0.75, True))
        for row in ("300 ms | 8 | 120.0 us / 200.0 us | 100.0 us / 200.0 us | 1.20 | **no** |",
                    "1 s | 8 | 90.0 us / 200.0 us | 100.0 us / 200.0 us | 0.90 | met |"):
            self.assertIn("| C (ping2_perf) | " + row, report)

    def loaded(self, scenario, order, shm, socket, gap, others=0, processes=0):
        for t, rates in (("shm", shm), ("socket", socket)):
            for i, rate in enumerate(rates, 1):
                self.write(f"loaded-{scenario}-{t}-r{i}.json", cell(rate, 1e9 / rate))
        self.write(f"loaded-{scenario}-gap.json", gap)
        self.write(f"loaded-{scenario}-host.json", {
            "scenario": scenario, "order": order, "cpus": 2, "load_processes": processes,
            "others": [{"transport": "shm", "requests": others, "seconds": 1}], "runnable": [1, 3]})

    def test_loaded_host_worst_scenario_and_shares(self):
        self.loaded("busy-1x", 1, [3e5, 5e5], [4e4, 6e4], gaps(gap_20=0.5, gap_300=0.9))
        self.loaded("cc-2x", 2, [2e5], [1e5], gaps(gap_20=0.7))
        self.loaded("servers-2", 3, [2e5, 2e5], [1e5, 1e5], gaps(gap_20=1.2), 2e6, 2)
        goals, _, report = self.report()
        # Each scenario the median of its rounds; the worst scenario (the lowest ratio) decides.
        loops = "loaded host, busy and compiler loops: "
        self.assertEqual(goals[loops + "busy shm calls/s / socket, the worst scenario"][0], 2.0)
        self.assertEqual(goals[loops + "occasional shm p50 / socket p50, the worst scenario and "
                               "gap"][2], "busy-1x after 20 ms 0.50, busy-1x after 300 ms 0.90, "
                         "cc-2x after 20 ms 0.70; the worst: busy-1x after 300 ms")
        # Each other server's client did 1 M calls/s during ours, which did 200 k: 0.2.
        self.assertEqual(goals["loaded host, beside other channel servers: slowest busy client "
                               "/ fastest (ours, the others' mean)"][:2], (0.2, False))
        self.assertIn("| a busy loop per CPU | 2 / 2 | 400.0 k | 50.0 k | 8.0x | - / - | - | "
                      "2667 ns / 20.8 us | 0.50 (50.0 us / 100.0 us) | 0.90 (90.0 us / 100.0 "
                      "us) | - |", report)

    def test_a_missing_field_ends_the_report_naming_it(self):
        headline = {"rounds": 3, **{k: {"calls_per_s": 1.0} for k in ("shm", "socket", "c")}}
        self.write("headline.json", headline)
        self.assertEqual(self.report(), (1, f"bench_report: bad output: {self.dir}/"
                                            "headline.json: no 'c_socket'\n"))
        self.write("headline.json", dict(headline, c_socket={}))
        self.assertIn("headline.json: no 'c_socket.calls_per_s'", self.report()[1])
        self.write("headline.json", '{"rounds": ')
        self.assertIn("headline.json: not JSON", self.report()[1])
        self.assertEqual(self.report("20000")[0], 2)


if __name__ == "__main__":
    unittest.main()
