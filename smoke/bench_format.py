# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# How make bench's report writes its numbers: times, rates and ratios, "-"
# for what was not measured.


def fmt_ns(ns):
    if ns is None:
        return "-"
    if ns < 0:
        return "-" + fmt_ns(-ns)
    if ns < 10000:
        return f"{ns:.0f} ns"
    if ns < 10e6:
        return f"{ns / 1e3:.1f} us"
    return f"{ns / 1e6:.1f} ms"


def signed_ns(ns):
    return ("+" if ns >= 0 else "") + fmt_ns(ns)


def fmt_rate(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.2f} M"
    if v >= 1e3:
        return f"{v / 1e3:.1f} k"
    return f"{v:.0f}"


def fmt_num(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def fmt_gap(ms):
    # A gap of silence: "20 ms", "1 s".
    return f"{ms // 1000} s" if ms >= 1000 and ms % 1000 == 0 else f"{ms} ms"
