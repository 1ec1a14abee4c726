# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""make test's summary (test_summary.py) names each skipped test with the
reason it printed, and counts the results."""

import json
import unittest

import test_summary


def log_line(name, result, stdout="", stderr=""):
    return json.dumps({"name": name, "result": result, "stdout": stdout, "stderr": stderr})


class SummaryTest(unittest.TestCase):
    def test_counts_and_no_skip(self):
        lines = [log_line("a", "OK"), log_line("b", "FAIL"), log_line("c", "EXPECTEDFAIL")]
        self.assertEqual(
            test_summary.summary(lines), ["skipped tests: none", "2 passed, 1 failed, 0 skipped"]
        )

    def test_reason_from_stderr_with_the_test_name_before(self):
        lines = [
            log_line(
                "shmchan:integration / sock_permissions",
                "SKIP",
                stdout="starting\n",
                stderr="sock_permissions: SKIP: needs root to run a client as another uid\n",
            )
        ]
        self.assertEqual(
            test_summary.summary(lines),
            [
                "skipped tests:",
                "  shmchan:integration / sock_permissions: needs root to run a client as "
                "another uid",
                "0 passed, 0 failed, 1 skipped",
            ],
        )

    def test_last_skip_line_wins(self):
        test = {"stdout": "SKIP: first\nmore\nSKIP: the real one\n", "stderr": ""}
        self.assertEqual(test_summary.skip_reason(test), "the real one")

    def test_reason_on_stdout(self):
        test = {"stdout": "SKIP: open files limited to 1024, need 2100\n", "stderr": None}
        self.assertEqual(test_summary.skip_reason(test), "open files limited to 1024, need 2100")

    def test_no_reason(self):
        self.assertEqual(
            test_summary.skip_reason({"stdout": "skipped\n", "stderr": ""}),
            test_summary.NO_REASON,
        )


if __name__ == "__main__":
    unittest.main()
