#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""The USDT probes of an ELF file, read from its notes (readelf -n), and the
line that puts a kernel uprobe on one of them (tracefs uprobe_events), for
test/probes.sh: what bpftrace and perf do to attach, with the kernel alone.

  probes_uprobe.py list FILE
      the names of the probes of provider shmchan, one a line, sorted
  probes_uprobe.py uprobe FILE PROBE GROUP/EVENT ARG...
      the uprobe_events line: a uprobe at PROBE's file offset that fetches
      the probe's arguments numbered ARG (from 1) as arg1, arg2, ...
"""

import re
import subprocess
import sys

PROVIDER = "shmchan"
# tracefs names of the x86-64 registers, for each name an SDT argument may
# use (64, 32, 16 and 8 bits).
REGS = {}
for r in ("ax", "bx", "cx", "dx"):
    for name in ("r" + r, "e" + r, r, r[0] + "l"):
        REGS[name] = "%" + r
for r in ("si", "di", "bp", "sp"):
    for name in ("r" + r, "e" + r, r, r + "l"):
        REGS[name] = "%" + r
for n in range(8, 16):
    for suffix in ("", "d", "w", "b"):
        REGS[f"r{n}{suffix}"] = f"%r{n}"


def probes(path):
    """{name: (location, [argument specs])} of the provider's probes."""
    out = subprocess.run(
        ["readelf", "-nW", path], capture_output=True, text=True, check=True
    ).stdout
    found, provider, name, loc = {}, None, None, None
    for line in out.splitlines():
        line = line.strip()
        m = re.search(r"Provider:\s*(\S+)", line)  # after the note's type with -W
        if m:
            provider = m.group(1)
        elif line.startswith("Name:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("Location:"):
            loc = int(line.split()[1].rstrip(","), 16)
        elif line.startswith("Arguments:") and provider == PROVIDER:
            found[name] = (loc, line.split(":", 1)[1].split())
    return found


def file_offset(path, vaddr):
    """The file offset of vaddr, from the LOAD segment that maps it."""
    out = subprocess.run(
        ["readelf", "-lW", path], capture_output=True, text=True, check=True
    ).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            off, va, memsz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
            if va <= vaddr < va + memsz:
                return vaddr - va + off
    raise SystemExit(f"probes_uprobe: {vaddr:#x} is in no LOAD segment of {path}")


def fetch(spec):
    """An SDT argument (8@%rbx, -4@52(%rbx), 4@(%rsi), $5) as a uprobe fetch arg."""
    size, operand = spec.split("@", 1)
    kind = ("s" if size.startswith("-") else "u") + str(8 * abs(int(size)))
    m = re.fullmatch(r"%(\w+)", operand)
    if m:
        return f"{REGS[m.group(1)]}:{kind}"
    m = re.fullmatch(r"(-?\d*)\(%(\w+)\)", operand)
    if m:
        disp = int(m.group(1) or "0")
        return f"{'+' if disp >= 0 else ''}{disp}({REGS[m.group(2)]}):{kind}"
    m = re.fullmatch(r"\$(-?\d+)", operand)
    if m:
        return f"\\{m.group(1)}:{kind}"
    raise SystemExit(f"probes_uprobe: cannot fetch the argument {spec}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "list":
        print("\n".join(sorted(probes(sys.argv[2]))))
        return
    if len(sys.argv) < 5 or sys.argv[1] != "uprobe":
        raise SystemExit(__doc__)
    path, probe, event = sys.argv[2:5]
    found = probes(path)
    if probe not in found:
        raise SystemExit(f"probes_uprobe: no probe {PROVIDER}:{probe} in {path}")
    loc, args = found[probe]
    fetched = [f"arg{i + 1}={fetch(args[int(n) - 1])}" for i, n in enumerate(sys.argv[5:])]
    print(f"p:{event} {path}:{file_offset(path, loc):#x} {' '.join(fetched)}".rstrip())


if __name__ == "__main__":
    main()
