#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""The summary make test ends with, from meson's testlog.json: each skipped
test with the reason it gave, then "N passed, N failed, N skipped".

A test that skips (exit 77) says why on a line of its output that holds
"SKIP: " (test/lib.sh's shmt_log puts the test's name before it); the
last such line, on stdout or stderr, is its reason.

    test_summary.py TESTLOG_JSON
"""

import json
import sys

SKIP_MARK = "SKIP: "
NO_REASON = "no reason given (a skipping test prints a line with 'SKIP: why')"


def skip_reason(test):
    """The reason a skipped test gave: its last line holding SKIP_MARK."""
    reason = None
    for stream in ("stdout", "stderr"):
        for line in (test.get(stream) or "").splitlines():
            at = line.find(SKIP_MARK)
            if at >= 0 and line[at + len(SKIP_MARK):].strip():
                reason = line[at + len(SKIP_MARK):].strip()
    return reason if reason is not None else NO_REASON


def summary(lines):
    """The summary's lines, from the lines of testlog.json."""
    passed = failed = 0
    skipped = []
    for line in lines:
        if not line.strip():
            continue
        test = json.loads(line)
        result = test.get("result")
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped.append((test["name"], skip_reason(test)))
        else:
            failed += 1
    out = []
    if skipped:
        out.append("skipped tests:")
        out += [f"  {name}: {reason}" for name, reason in skipped]
    else:
        out.append("skipped tests: none")
    out.append(f"{passed} passed, {failed} failed, {len(skipped)} skipped")
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as log:
        print("\n".join(summary(log)))


if __name__ == "__main__":
    main()
