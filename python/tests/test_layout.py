# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""The package's structs and constants match the C headers (python/layout.c)."""

import ctypes
import os
import subprocess

import pytest

import shmchan
from shmchan import _lib, events


def _layout():
    prog = os.environ.get("SHMCHAN_LAYOUT")
    if not prog:
        pytest.skip("SHMCHAN_LAYOUT (the layout program meson builds) is not set")
    out = subprocess.run([prog], check=True, capture_output=True, text=True, timeout=30).stdout
    lines = [line.split() for line in out.splitlines()]
    return {(kind, name): int(value) for kind, name, value in lines}


def test_structs_match_the_headers():
    layout = _layout()
    checked = 0
    for cname, struct in {**_lib.STRUCTS, **events.STRUCTS}.items():
        assert ctypes.sizeof(struct) == layout[("sizeof", cname)], cname
        names = [f[0] for f in struct._fields_]
        c_fields = {
            name.split(".", 1)[1]
            for kind, name in layout
            if kind == "offsetof" and name.startswith(cname + ".")
        }
        assert set(names) == c_fields, cname
        for field in names:
            assert getattr(struct, field).offset == layout[("offsetof", f"{cname}.{field}")], field
            checked += 1
    assert checked == sum(1 for k in layout if k[0] == "offsetof")


def test_constants_match_the_headers():
    layout = _layout()
    consts = {name: value for (kind, name), value in layout.items() if kind == "const"}
    ours = {
        "GR_API_TRANSPORT_AUTO": _lib.TRANSPORT_AUTO,
        "GR_API_TRANSPORT_SOCKET": _lib.TRANSPORT_SOCKET,
        "GR_API_TRANSPORT_SHM": _lib.TRANSPORT_SHM,
    }
    for name in consts:
        value = ours[name] if name in ours else getattr(shmchan.constants, name)
        assert value == consts[name], name
    # Every type the package names is one the headers name.
    names = dir(shmchan.constants)
    types = {n for n in names if n.startswith("GR_") and n != "GR_API_DEFAULT_SOCK_PATH"}
    assert types <= set(consts)
