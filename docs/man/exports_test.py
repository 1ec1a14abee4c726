#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""gr_api_client(3) documents every function libgr_api_client exports, so
that a new call cannot go undocumented, and names no call that does not
exist:
- each function the shared library exports (nm -D) has an entry in the
  page's FUNCTIONS section (a term line "*name*(...)") and a prototype in
  its SYNOPSIS;
- each pattern of the version script (gr_api_client.map) matches an
  exported function;
- each name of the library's (gr_api_client_*, __gr_api_client_*,
  gr_api_message_*) that the page calls ("name(") is an exported function
  or a macro of the headers (#define name(...)).

    exports_test.py NM LIBGR_API_CLIENT.so GR_API_CLIENT.MAP MAN.scd HEADER...
"""

import fnmatch
import re
import subprocess
import sys

from scdoc_source import report, sections

# A call of the library's, in the page's text or in C ("\_" is scdoc's
# escape of a leading underscore).
CALL = re.compile(r"(?<![\w\\])((?:\\?_)*gr_api_(?:client|message)\w*)\*?\(")
TERM = re.compile(r"^\*((?:\\_)*gr_api_\w+)\*\(")
MACRO = re.compile(r"^#define\s+((?:__)?gr_api_\w+)\(", re.M)


def exported(nm, lib):
    out = subprocess.run(
        [nm, "-D", "--defined-only", lib], capture_output=True, text=True, check=True
    ).stdout
    # A versioned symbol is NAME@@NODE; each version node is a symbol of
    # its own, of type A.
    return {
        fields[2].split("@")[0]
        for fields in (line.split() for line in out.splitlines())
        if len(fields) == 3 and fields[1] != "A"
    }


def map_globals(path):
    """The patterns of the version script's global: block."""
    text = re.sub(r"#.*", "", open(path, encoding="utf-8").read())
    block = re.search(r"global:(.*?)local:", text, re.S)
    return [p.strip() for p in block.group(1).split(";") if p.strip()] if block else []


def unescape(name):
    return name.replace("\\", "")


def main():
    nm, lib, map_path, page = sys.argv[1:5]
    headers = sys.argv[5:]
    failures = []
    funcs = exported(nm, lib)
    macros = set()
    for header in headers:
        macros.update(MACRO.findall(open(header, encoding="utf-8").read()))
    man = sections(page)
    terms = (TERM.match(line) for line in man.get("FUNCTIONS", []))
    documented = {unescape(m.group(1)) for m in terms if m}
    synopsis = {unescape(n) for line in man.get("SYNOPSIS", []) for n in CALL.findall(line)}
    called = {unescape(n) for lines in man.values() for line in lines for n in CALL.findall(line)}

    if not funcs:
        failures.append(f"{lib} exports no function")
    for f in sorted(funcs - documented):
        failures.append(f"{f} is exported but has no entry in FUNCTIONS of {page}")
    for f in sorted(funcs - synopsis):
        failures.append(f"{f} is exported but not in the SYNOPSIS of {page}")
    for pattern in map_globals(map_path):
        if not fnmatch.filter(funcs, pattern):
            failures.append(f"{map_path}: {pattern} matches no exported function")
    for f in sorted(called - funcs - macros):
        failures.append(f"{page} names {f}(), which is neither exported nor a macro")
    report(failures, f"{page} documents the {len(funcs)} functions {lib} exports")


if __name__ == "__main__":
    main()
