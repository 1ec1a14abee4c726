// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// USDT probes of the provider "shmchan" (docs/tracing.md lists them and
// their arguments). Each is one nop instruction and a note in the ELF file
// (readelf -n) until a tracer attaches: no call, and the arguments are
// values the code has at hand. Built without sys/sdt.h, or with
// -Dprobes=disabled, they are nothing.
//
// A file whose probes sit on every call's path in the client defines
// SHMCHAN_PROBES_SEMAPHORES before it includes this header, and guards each
// probe with SHMCHAN_PROBE_ON(name): the tracer raises the probe's
// semaphore while it is attached (bpftrace and perf do), and the code tests
// it, a load and a branch never taken. The receive path has no probe at
// all: one in its inlined core, even guarded, cost a fifth of a busy round
// trip (docs/tracing.md).

#pragma once

#if defined(SHMCHAN_PROBES) && SHMCHAN_PROBES
#ifdef SHMCHAN_PROBES_SEMAPHORES
#define _SDT_HAS_SEMAPHORES 1
#endif
// STAP_PROBEV needs it.
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
// SHMCHAN_PROBE(name, args...): up to 12 integer or pointer arguments.
#define SHMCHAN_PROBE(...) STAP_PROBEV(shmchan, __VA_ARGS__)
// The semaphore of probe name, defined once in the file of the probe: its
// name is what the probe's note refers to, so it must keep it (GCC's LTO
// too: externally_visible, which clang does not know and needs not).
#ifdef __clang__
#define SHMCHAN_PROBE_KEEP_NAME used
#else
#define SHMCHAN_PROBE_KEEP_NAME used, externally_visible
#endif
#define SHMCHAN_PROBE_SEMAPHORE(name)                                                              \
	volatile unsigned short shmchan_##name##_semaphore                                         \
		__attribute__((section(".probes"), SHMCHAN_PROBE_KEEP_NAME))
#define SHMCHAN_PROBE_ON(name) __builtin_expect(shmchan_##name##_semaphore != 0, 0)
#else
#define SHMCHAN_PROBE(...) ((void)0)
#define SHMCHAN_PROBE_SEMAPHORE(name) struct shmchan_probe_##name##_unused
#define SHMCHAN_PROBE_ON(name) 0
#endif
