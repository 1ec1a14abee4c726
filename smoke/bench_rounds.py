#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The retried rounds of make bench: a goal measured side by side (a
# reference, its cell, the reference again; or, for the shared-CPU rounds,
# one client, 16, one client again) is judged by how far apart its two
# outer measurements are; a round whose two moved apart is measured again,
# up to a number of tries, while the run's retry budget (all retries
# together) lasts. smoke/bench.sh runs the tools and asks this file, after
# each try, whether to try again; smoke/bench_report.py reads the rounds
# back and picks each round's try.
#
#   bench_rounds.py budget RESULTS_DIR SECONDS
#       the run's retry budget, in RESULTS_DIR/retries.json
#   bench_rounds.py judge RESULTS_DIR KIND NAME TRY TRIES SECONDS A B
#       try TRY (of TRIES at most; it took SECONDS) of round NAME measured A
#       and B, the references (KIND goal: ns per operation) or the single
#       clients' rates (KIND shared: calls/s) around its cell. Prints
#       "again" (measure it again) or "done"; once done, writes
#       RESULTS_DIR/[goal-]NAME-tries.json, which the report reads. Says on
#       stderr why a round is measured again or kept as moved.

import json
import os
import sys

# No __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_check import spread  # noqa: E402

# Two measurements of a round further apart than this fraction of the lower
# one mean that the vCPUs moved in between, or that other work took the
# CPUs from one of them.
TOLERANCE = 0.2
BUDGET_FILE = "retries.json"
# The files of a round's tries, per kind (bench.sh names them).
PREFIX = {"goal": "goal-", "shared": ""}


def verdict(a, b, tolerance=TOLERANCE):
    """(steady, spread): whether a and b agree within tolerance."""
    s = spread(a, b)
    return s <= tolerance, s


def read_budget(results):
    path = os.path.join(results, BUDGET_FILE)
    with open(path) as f:
        return json.load(f)


def write_budget(results, budget):
    with open(os.path.join(results, BUDGET_FILE), "w") as f:
        json.dump(budget, f)


def budget_left(results):
    """The seconds of retries left (0 when spent); None without a budget."""
    try:
        return max(0, int(read_budget(results)["left_s"]))
    except (OSError, ValueError, KeyError):
        return None


def moved_message(kind, name, pct, a, b, attempt, tries, left_s):
    if kind == "goal":
        return (f"goal {name}: the references moved by {pct:.1f} % ({a:.0f} ns before the cell, "
                f"{b:.0f} ns after) in try {attempt} of {tries}; {max(left_s, 0)} s of retries "
                "left")
    # As the shell printed them: the rates cut to whole calls/s.
    return (f"{name}: one client's rate moved by {pct:.1f} % ({int(a)} calls/s before, "
            f"{int(b)} after) in try {attempt} of {tries}")


def judge(left_s, attempt, tries, seconds, a, b, tolerance=TOLERANCE):
    """The decision after try attempt of a round: (again, record, left_s).

    left_s is the retry budget before this try; a retry (attempt > 1) spends
    its seconds. record is None while the round goes on, else what its
    tries.json holds. A moved try is measured again unless it was the last
    allowed, or the budget is spent.
    """
    if attempt > 1:
        left_s -= seconds
    steady, _ = verdict(a, b, tolerance)
    if steady:
        stopped = "steady"
    elif attempt >= tries:
        stopped = "max-tries"
    elif left_s <= 0:
        stopped = "budget"
    else:
        return True, None, left_s
    return False, {"tries": attempt, "steady": steady, "stopped": stopped,
                   "tolerance": tolerance}, left_s


def cmd_judge(results, kind, name, attempt, tries, seconds, a, b):
    budget = read_budget(results)
    again, record, budget["left_s"] = judge(budget["left_s"], attempt, tries, seconds, a, b)
    write_budget(results, budget)
    steady, s = verdict(a, b)
    if not steady:
        message = moved_message(kind, name, 100 * s, a, b, attempt, tries, budget["left_s"])
        print(f"bench: {message}", file=sys.stderr)
    if record is not None and record["stopped"] == "budget":
        print(f"bench: {'goal ' if kind == 'goal' else ''}{name}: no retry budget left "
              f"({budget['seconds']} s in all): kept as moved", file=sys.stderr)
    if record is not None:
        with open(os.path.join(results, f"{PREFIX[kind]}{name}-tries.json"), "w") as f:
            json.dump(record, f)
    return "again" if again else "done"


# ---- reading the rounds back (bench_report.py) ----


def read_round(results, name, try_of, prefix, fail):
    """A round measured side by side, one try or more: the first steady try,
    else the one whose outer measurements agree best, with every try's
    spread. None if the run has no such round. try_of reads one try from
    the path of its files, less "-PART.json" (None if they are not all
    there), as a dict with its "spread"; fail(message) is called on a
    tries.json that is not JSON."""
    info_path = os.path.join(results, f"{prefix}{name}-tries.json")
    info = {}
    if os.path.exists(info_path):
        try:
            with open(info_path) as f:
                info = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            fail(f"bad output: {info_path}: {e}")
    tolerance = info.get("tolerance", TOLERANCE)
    tries = []
    for i in range(1, 100):
        t = try_of(os.path.join(results, f"{prefix}{name}-t{i}"))
        if t is None:
            break
        tries.append(t)
    if not tries:
        # A run of before the tries had files of their own: the last try only.
        t = try_of(os.path.join(results, f"{prefix}{name}"))
        if t is None:
            return None
        tries = [t]
    for t in tries:
        t["steady"] = t["spread"] <= tolerance
    steady = [t for t in tries if t["steady"]]
    chosen = dict(steady[0] if steady else min(tries, key=lambda t: t["spread"]))
    chosen.update({"name": name, "tries": len(tries), "stable": bool(steady),
                   "stopped": info.get("stopped"), "tolerance": tolerance,
                   "spreads": [t["spread"] for t in tries]})
    return chosen


def main(argv):
    if len(argv) == 4 and argv[1] == "budget":
        seconds = int(argv[3])
        write_budget(argv[2], {"seconds": seconds, "left_s": seconds})
        return 0
    if len(argv) == 10 and argv[1] == "judge" and argv[3] in PREFIX:
        print(cmd_judge(argv[2], argv[3], argv[4], int(argv[5]), int(argv[6]), int(argv[7]),
                        float(argv[8]), float(argv[9])))
        return 0
    print(f"usage: {argv[0]} budget RESULTS_DIR SECONDS\n"
          f"       {argv[0]} judge RESULTS_DIR goal|shared NAME TRY TRIES SECONDS A B",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
