#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A stand-in for ref_bench in the tests of make bench (BENCH_REF_BENCH): it
# takes ref_bench's options, measures nothing, and prints the JSON ref_bench
# would, with a fixed time per operation for each test, so that the tests
# decide when references move, crash or lie:
#
#   FAKE_STATE=DIR          where it counts the calls of each test (required)
#   FAKE_REF_MOVE_ONCE=T:K  call K of test T reports 1.5x its time
#   FAKE_REF_ALWAYS_MOVE=T  every even call of test T reports 1.5x its time
#   FAKE_REF_CRASH=T        a call of test T dies of SIGSEGV
#   FAKE_REF_BAD=T          a call of test T prints something that is not JSON

import json
import os
import signal
import sys

# A time per operation for every test, in ns: any positive value will do.
BASE_NS = {"cacheline": 80.0, "ring-pingpong": 200.0, "ring-stream": 32.0, "ring-echo": 62.0,
           "chan-pingpong": 230.0, "chan-stream": 60.0, "chan-echo": 60.0, "ring-local": 16.0,
           "chan-local": 60.0, "eventfd": 30000.0, "unix": 25000.0, "clock": 20.0,
           "syscall": 170.0, "lines-apart": 100.0}
# Moved: as far off as a vCPU that changed places (well past bench.sh's 20 %).
MOVED_FACTOR = 1.5
# Options of ref_bench that take a value.
VALUED = {"-z", "-n", "-T", "-w", "--depth", "--gap-us"}


def spec(var, test):
    # The value of test in "T:V" entries of var (comma separated), or None.
    for entry in filter(None, os.environ.get(var, "").split(",")):
        name, _, value = entry.partition(":")
        if name == test:
            return value
    return None


def main():
    opts, args, argv = {}, [], sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a in VALUED:
            opts[a] = argv.pop(0)
        elif a.startswith("-"):
            opts[a] = True
        else:
            args.append(a)
    if len(args) != 1 or args[0] not in BASE_NS:
        print(f"fake ref_bench: unknown test {args}", file=sys.stderr)
        return 2
    test = args[0]
    counter = os.path.join(os.environ["FAKE_STATE"], f"ref-{test}.calls")
    calls = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
    with open(counter, "w") as f:
        f.write(str(calls))

    if os.environ.get("FAKE_REF_CRASH") == test:
        print("fake ref_bench: crashing as asked", file=sys.stderr)
        os.kill(os.getpid(), signal.SIGSEGV)
    if os.environ.get("FAKE_REF_BAD") == test:
        print('{"test": "' + test + '", "ns_per_op": ')
        return 0
    ns = BASE_NS[test]
    if spec("FAKE_REF_MOVE_ONCE", test) == str(calls):
        ns *= MOVED_FACTOR
    if test in os.environ.get("FAKE_REF_ALWAYS_MOVE", "").split(",") and calls % 2 == 0:
        ns *= MOVED_FACTOR
    size = int(opts.get("-z", 64)) if test not in ("cacheline", "eventfd", "clock", "syscall") \
        else None
    two = not test.endswith("-local") and test not in ("clock", "syscall")
    r = {"test": test, "unit": "round_trip", "size": size, "cells": None,
         "depth": int(opts.get("--depth", 32)) if test.endswith("-echo") else None,
         "cpus": None if "--no-pin" in opts or not two else [0, 1],
         "gap_us": int(opts["--gap-us"]) if "--gap-us" in opts else None,
         "max_ns": ns if "--gap-us" in opts else None, "count": 1000, "seconds": 0.5,
         "ns_per_op": ns, "ops_per_s": 1e9 / ns, "leader_cpu_ns_per_op": ns,
         "leader_vcsw_per_op": 0.0, "follower_cpu_ns_per_op": ns if two else None,
         "follower_vcsw_per_op": 0.0 if two else None}
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
