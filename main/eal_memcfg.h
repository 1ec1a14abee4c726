// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// EAL's memory hotplug lock, seen from outside EAL.
//
// DPDK 22.11 keeps a memory config shared by the primary and its
// secondaries (struct rte_mem_config, private to EAL) in the file "config"
// of the runtime folder. In it, an rte_rwlock guards the memory layout:
// EAL init of a secondary holds it for reading from rte_eal_memory_init()
// until its heap is set up, every memseg walk holds it for reading, and the
// primary's rte_eal_cleanup() takes it for writing (rte_eal_memory_detach()).
// It is a spinning lock in shared memory: a process that dies holding it
// never releases it, and a writer then spins for ever. EAL offers no way to
// try it, so the daemon maps the file itself and tries it with
// rte_rwlock_write_trylock(). The lock is found at its offset in 22.11's
// layout, which eal_memcfg_find() and eal_memcfg_map() check against the
// magic and version at the head of the file, and eal_memcfg_verify()
// against the lock itself.
//
// Main thread only (the daemon), or a test process.

#pragma once

#include <rte_rwlock.h>

#include <stddef.h>
#include <stdint.h>

// The file's head: magic and version (both uint32_t), the number of memory
// channels and ranks, the memzone, tailq and mempool rwlocks and the timer
// spinlock (4 bytes each), then the memory hotplug rwlock.
#define EAL_MEMCFG_MAGIC_OFF 0
#define EAL_MEMCFG_VERSION_OFF 4
#define EAL_MEMCFG_HOTPLUG_LOCK_OFF 32

// The head of a runtime folder's config file, in this process's memory.
struct eal_memcfg {
	void *head; // NULL: not found
	size_t len; // bytes mapped by eal_memcfg_map(), 0 if EAL's own mapping
};

// In the primary, after rte_eal_init(): find EAL's own mapping of the
// config file of runtime_dir (rte_eal_get_runtime_dir()) in /proc/self/maps,
// and check its magic and version against the DPDK this program was built
// with. It opens no descriptor of the file: closing one would drop EAL's
// lock on it (an fcntl lock: any close by the process drops it), which is
// what keeps a second primary off the prefix. Returns 0, -ENOENT (EAL maps
// no such file: --in-memory or --no-shconf keep none), -EPROTO (the magic or
// version differs: the layout is unknown) or another -errno.
int eal_memcfg_find(const char *runtime_dir, struct eal_memcfg *cfg);

// In a process that holds no lock on the file (not the primary): map the
// config file of runtime_dir, with the checks of eal_memcfg_find().
int eal_memcfg_map(const char *runtime_dir, struct eal_memcfg *cfg);

// Unmap what eal_memcfg_map() mapped; forget what eal_memcfg_find() found.
void eal_memcfg_close(struct eal_memcfg *cfg);

// The memory hotplug lock of a config found or mapped.
rte_rwlock_t *eal_memcfg_hotplug_lock(const struct eal_memcfg *cfg);

// In the primary itself, after rte_eal_init(): check that the lock found is
// the one EAL takes, by taking EAL's read lock through its own API and
// watching the word move. Returns 0 or -EPROTO.
int eal_memcfg_verify(const struct eal_memcfg *cfg);

// Whether the hotplug lock can be taken for writing, trying it for up to
// wait_ms (a secondary in its EAL init holds it for reading a little while).
// Returns 0 (it could: the lock is free again on return), or -EBUSY with the
// lock's word in *word (its readers times RTE_RWLOCK_READ, and the
// RTE_RWLOCK_WRITE and RTE_RWLOCK_WAIT bits). Never spins on the lock.
int eal_memcfg_hotplug_wait(const struct eal_memcfg *cfg, unsigned wait_ms, int32_t *word);
