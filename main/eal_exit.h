// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The daemon's exit from EAL: whether rte_eal_cleanup() may run, which it
// learns from EAL's memory hotplug lock (found after rte_eal_init()), and
// the removal of the file prefix's files once its DPDK secondaries let go
// of them. Main thread only.

#pragma once

#include "eal_files.h"
#include "eal_memcfg.h"

#include <stdbool.h>

// How long the daemon waits at exit for its DPDK secondaries to unmap the
// file prefix's files before it leaves them.
#define SECONDARY_EXIT_WAIT_MS 2000
// How long the daemon waits at exit for EAL's memory hotplug lock before it
// gives up on rte_eal_cleanup(): a secondary in its EAL init holds it for
// reading for milliseconds; one that died there holds it for ever. With
// SECONDARY_EXIT_WAIT_MS and the pollers' stop, SIGTERM ends within 5 s.
#define EAL_LOCK_EXIT_WAIT_MS 1000

// Find EAL's memory hotplug lock (eal_memcfg.h), to try it at exit. Without
// it (a DPDK whose layout differs), rte_eal_cleanup() is called blind.
void eal_lock_find(struct eal_memcfg *memcfg);

// Whether rte_eal_cleanup() may run: its memory detach takes EAL's memory
// hotplug lock for writing, and spins for ever if a process died holding
// it. Then the daemon leaves EAL's memory to the kernel, which unmaps it at
// exit, and removes the files as usual: a dead holder keeps none of them.
bool eal_cleanup_may_run(const struct eal_memcfg *memcfg);

// Remove the file prefix's hugepage files and runtime folder once EAL is
// done with them, waiting a little for the DPDK secondaries that still map
// them: each learns from its socket's EOF that the daemon is gone.
void eal_files_release(const struct eal_files *files);
