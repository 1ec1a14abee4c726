#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Each tool's --help and its man page list the same options and exit
codes: shmchand(8), ping2_perf(1), and shmchanctl(1), whose commands, their
options and the event types of "events" are compared too. An option or a
code that one side has and the other lacks fails the test, naming it.

What is read, on each side:
- --help: the options are the lines of its "Options" block (from a line
  that starts with "Options" to the next empty line) that start, indented
  by at most 8 spaces, with "-x", "--name" or "-x, --name"; the exit codes
  are the numbers of its paragraph that starts with "Exit status".
- the man page (scdoc source): the options are those named in the term
  lines of its OPTIONS section (the lines that start with "*"); the exit
  codes are the numbers of its EXIT STATUS section.
A number right after "(" (sysexits(3)) is a section, not a code.

    help_test.py MAN_DIR SHMCHAND SHMCHANCTL PING2_PERF
"""

import os
import re
import subprocess
import sys

from scdoc_source import report, sections

# An option's name: -x or --long-name (a lone "--" is no option).
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9-]*)")
# An option line of --help: a short or long option, little indented.
HELP_OPTION_LINE = re.compile(r"^ {1,8}(-[A-Za-z0-9]|--[a-z][a-z0-9-]*)((, --[a-z][a-z0-9-]*)?)")
# An exit code: a number on its own, not a man section ("sysexits(3)").
EXIT_CODE = re.compile(r"(?<![\w(.])(\d+)(?![\w)])")
HELP_TIMEOUT_S = 10

failures = []


def fail(what):
    failures.append(what)


def run_help(argv):
    out = subprocess.run(
        argv + ["--help"],
        capture_output=True,
        text=True,
        timeout=HELP_TIMEOUT_S,
        check=False,
    )
    if out.returncode != 0:
        fail(f"{' '.join(argv)} --help: status {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def help_block(text, starts):
    """The lines of the block of text whose first line starts with starts,
    up to the next empty line."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(starts):
            block = []
            for more in lines[i:]:
                if not more.strip():
                    break
                block.append(more)
            return block
    return []


def help_options(text):
    found = set()
    for line in help_block(text, "Options"):
        m = HELP_OPTION_LINE.match(line)
        if m:
            found.update(OPTION.findall(m.group(0)))
    return found


def exit_codes(lines):
    return {int(n) for line in lines for n in EXIT_CODE.findall(line)}


def man_terms(lines):
    """The term lines of a section: those that start with "*"."""
    return [line for line in lines if line.startswith("*")]


def compare(what, help_side, man_side):
    for x in sorted(help_side - man_side, key=str):
        fail(f"{what}: {x} is in --help, not in the man page")
    for x in sorted(man_side - help_side, key=str):
        fail(f"{what}: {x} is in the man page, not in --help")
    if not help_side and not man_side:
        fail(f"{what}: found on neither side (the parser no longer matches the text)")


def check_tool(name, page, argv):
    text = run_help(argv)
    man = sections(page)
    man_options = {o for term in man_terms(man.get("OPTIONS", [])) for o in OPTION.findall(term)}
    compare(f"{name} options", help_options(text), man_options)
    compare(
        f"{name} exit codes",
        exit_codes(help_block(text, "Exit status")),
        exit_codes(man.get("EXIT STATUS", [])),
    )
    return text, man


def first_word(term):
    """The command a COMMANDS term names: its first word, without the stars."""
    return term.strip("*").split("*")[0].split()[0]


def event_types_help(text):
    """The names listed after "an event type:" up to "or a hex value"."""
    flat = " ".join(text.split())
    m = re.search(r"an event type: (.*?),? or a hex value", flat)
    return set(re.findall(r"[a-z][a-z-]*", m.group(1))) if m else set()


def event_types_man(lines):
    """The _names_ listed after "_TYPE_:" up to "or a hex value"."""
    flat = " ".join(" ".join(lines).split())
    m = re.search(r"_TYPE_: (.*?),? or a hex value", flat)
    return set(re.findall(r"_([a-z][a-z-]*)_", m.group(1))) if m else set()


def check_shmchanctl(page, ctl):
    text, man = check_tool("shmchanctl", page, [ctl])
    commands = man_terms(man.get("COMMANDS", []))
    help_commands = {
        line.split()[0] for line in help_block(text, "Commands")[1:] if line.startswith("  ")
    }
    compare("shmchanctl commands", help_commands, {first_word(t) for t in commands})
    for cmd in sorted(help_commands):
        cmd_help = run_help([ctl, cmd])
        usage = cmd_help.splitlines()[0] if cmd_help else ""
        # The command's own part of its usage line, and its option lines.
        own = usage.split(f" {cmd}", 1)[1] if f" {cmd}" in usage else ""
        help_side = set(OPTION.findall(own))
        for line in cmd_help.splitlines()[1:]:
            m = HELP_OPTION_LINE.match(line)
            if m:
                help_side.update(OPTION.findall(m.group(0)))
        man_side = set()
        entry, in_entry = [], False
        for line in man.get("COMMANDS", []):
            if line.startswith("*"):
                in_entry = first_word(line) == cmd
                if in_entry:
                    man_side.update(OPTION.findall(line))
            if in_entry:
                entry.append(line)
        for x in sorted(help_side - man_side):
            fail(f"shmchanctl {cmd}: {x} is in its --help, not in the man page")
        for x in sorted(man_side - help_side):
            fail(f"shmchanctl {cmd}: {x} is in the man page, not in its --help")
        if cmd == "events":
            compare("shmchanctl events types", event_types_help(cmd_help), event_types_man(entry))


def main():
    man_dir, shmchand, shmchanctl, ping2_perf = sys.argv[1:5]
    check_tool("shmchand", os.path.join(man_dir, "shmchand.8.scd"), [shmchand])
    check_tool("ping2_perf", os.path.join(man_dir, "ping2_perf.1.scd"), [ping2_perf])
    check_shmchanctl(os.path.join(man_dir, "shmchanctl.1.scd"), shmchanctl)
    report(
        failures,
        "--help and the man pages list the same options, exit codes, commands and event types",
    )


if __name__ == "__main__":
    main()
