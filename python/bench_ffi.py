#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""The cost of one call into libgr_api_client from Python, by binding: ctypes
with argtypes declared, ctypes with arguments passed as ctypes objects of
their C types (what the package does on the path of every request), and
cffi's ABI mode when cffi is installed (Debian: python3-cffi). Each calls
gr_api_client_send_recv_into() on a NULL handle, which returns at once with
EINVAL: the cost of the call alone, no daemon needed. Also the copy of a
64-byte answer to bytes, each binding's way. The minimum of --rounds runs of
--calls calls is kept, the least disturbed by other load (docs/python.md).

  SHMCHAN_LIBRARY=build/client/libgr_api_client.so python3 python/bench_ffi.py
"""

import argparse
import ctypes
import timeit

from shmchan import _lib
from shmchan.constants import GR_API_MAX_MSG_LEN, GR_PING2, GR_PING2_LEN


def variants():
    payload = bytes(GR_PING2_LEN)
    declared = _lib.lib.gr_api_client_send_recv_into
    fast = _lib.fast.gr_api_client_send_recv_into
    buf = ctypes.create_string_buffer(GR_API_MAX_MSG_LEN)
    view = memoryview(buf).cast("B")
    null = ctypes.c_void_p()
    kind, length = ctypes.c_uint32(GR_PING2), ctypes.c_size_t(GR_PING2_LEN)
    found = {
        "ctypes, argtypes declared": lambda: declared(
            None, GR_PING2, GR_PING2_LEN, payload, buf, GR_PING2_LEN
        ),
        "ctypes, C-typed arguments": lambda: fast(null, kind, length, payload, buf, length),
        "ctypes copy (memoryview)": lambda: view[:GR_PING2_LEN].tobytes(),
    }
    try:
        import cffi
    except ImportError:
        return found
    ffi = cffi.FFI()
    ffi.cdef(
        "long gr_api_client_send_recv_into(void *, uint32_t, size_t, const void *, void *, size_t);"
    )
    abi = ffi.dlopen(_lib.library_path()).gr_api_client_send_recv_into
    cbuf = ffi.new("char[]", GR_API_MAX_MSG_LEN)
    found["cffi ABI mode"] = lambda: abi(
        ffi.NULL, GR_PING2, GR_PING2_LEN, payload, cbuf, GR_PING2_LEN
    )
    found["cffi copy (ffi.buffer)"] = lambda: ffi.buffer(cbuf, GR_PING2_LEN)[:]
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    found = variants()
    best = {name: float("inf") for name in found}
    # Interleaved, so that every variant sees the same changes of load.
    for _ in range(args.rounds):
        for name, call in found.items():
            ns = timeit.timeit(call, number=args.calls) / args.calls * 1e9
            best[name] = min(best[name], ns)
    for name, ns in best.items():
        print(f"{name:28} {ns:7.0f} ns per call")


if __name__ == "__main__":
    main()
