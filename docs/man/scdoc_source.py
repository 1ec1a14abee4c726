# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""What the man page tests read of an scdoc source, and how they report."""

import sys


def sections(path):
    """The sections of an scdoc page: {"OPTIONS": [lines], ...}, each the
    lines after its "# NAME" heading up to the next one ("## " subsections
    stay inside)."""
    found, name = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines():
            if line.startswith("# "):
                name = line[2:].strip()
                found[name] = []
            elif name is not None:
                found[name].append(line)
    return found


def report(failures, ok):
    """Print each failure and exit 1, or print ok."""
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    if failures:
        sys.exit(1)
    print(ok)
