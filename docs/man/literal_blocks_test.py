#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""The man pages' examples render as written: in every page (scdoc source),
- an EXAMPLE or EXAMPLES section shows its commands and code in literal
  blocks (``` fences), one line each: a line indented outside a fence is
  filled into one paragraph with its neighbours;
- a literal block keeps each backslash it shows: scdoc takes a backslash in
  one as an escape of the next character, so a lone one is lost
  (printf("...\\n") would render as "...n"): "\\\\" shows one.
- every fence is closed.

    literal_blocks_test.py PAGE.scd...
"""

import re
import sys

from scdoc_source import report

FENCE = "```"
# A run of backslashes: scdoc shows half of an even run, and eats the last
# one of an odd run.
BACKSLASHES = re.compile(r"\\+")


def check(path):
    problems = []
    section, in_fence, fence_line = None, False, 0
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        if line.strip() == FENCE:
            in_fence, fence_line = not in_fence, n
            continue
        if in_fence:
            for run in BACKSLASHES.findall(line):
                if len(run) % 2:
                    problems.append(
                        f"{path}:{n}: a lone backslash in a literal block: {line.strip()}"
                    )
            continue
        if line.startswith("# "):
            section = line[2:].strip()
        elif section in ("EXAMPLE", "EXAMPLES") and line[:1] in ("\t", " ") and line.strip():
            problems.append(
                f"{path}:{n}: an indented example outside a literal block: {line.strip()}"
            )
    if in_fence:
        problems.append(f"{path}:{fence_line}: a literal block that is never closed")
    return problems


def main():
    problems = [p for path in sys.argv[1:] for p in check(path)]
    report(problems, f"{len(sys.argv) - 1} man pages: examples in literal blocks, backslashes kept")


if __name__ == "__main__":
    main()
