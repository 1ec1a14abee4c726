// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Leaving EAL at exit: trying its memory hotplug lock before
// rte_eal_cleanup(), and releasing the file prefix's files.

#include "eal_exit.h"
#include "eal_explain.h"
#include "shmchand.h"

#include <rte_eal.h>
#include <rte_rwlock.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

// How often the daemon looks whether its DPDK secondaries let go of the
// file prefix's files (SECONDARY_EXIT_WAIT_MS).
#define SECONDARY_EXIT_POLL_MS 20

void eal_lock_find(struct eal_memcfg *memcfg) {
	const char *dir = rte_eal_get_runtime_dir();
	int ret;

	ret = eal_memcfg_find(dir, memcfg);
	if (ret == -ENOENT)
		return; // no shared config (--in-memory, --no-shconf): no secondary
	if (ret == 0 && eal_memcfg_verify(memcfg) < 0) {
		eal_memcfg_close(memcfg);
		ret = -EPROTO;
	}
	if (ret < 0)
		LOG(WARNING,
		    "cannot find EAL's memory hotplug lock in %s/config (%s): a DPDK secondary"
		    " that dies inside its EAL init would make the daemon's stop wait for ever",
		    dir,
		    ret == -EPROTO ? "not DPDK 22.11's layout" : strerror(-ret));
}

bool eal_cleanup_may_run(const struct eal_memcfg *memcfg) {
	int32_t word;

	if (memcfg->head == NULL ||
	    eal_memcfg_hotplug_wait(memcfg, EAL_LOCK_EXIT_WAIT_MS, &word) == 0)
		return true;
	LOG(WARNING,
	    "EAL's memory hotplug lock is still held %d ms after shutdown (%d readers%s): a DPDK"
	    " secondary died or stopped inside EAL (its init, or a walk of the memory);"
	    " skipping rte_eal_cleanup(), which would wait on it for ever",
	    EAL_LOCK_EXIT_WAIT_MS,
	    (int)(word / RTE_RWLOCK_READ),
	    word & RTE_RWLOCK_WRITE ? ", a writer" : "");
	return false;
}

void eal_files_release(const struct eal_files *files) {
	int ret, waited_ms;

	for (waited_ms = 0;; waited_ms += SECONDARY_EXIT_POLL_MS) {
		ret = eal_files_remove(files);
		if (ret != -EBUSY || waited_ms >= SECONDARY_EXIT_WAIT_MS)
			break;
		usleep(SECONDARY_EXIT_POLL_MS * 1000);
	}
	if (ret != -EBUSY)
		return;
	LOG(NOTICE,
	    "file prefix %s: still in use %d ms after shutdown; its hugepage files and %s stay"
	    " (the next start on the prefix reclaims them)",
	    files->prefix,
	    SECONDARY_EXIT_WAIT_MS,
	    files->runtime_dir);
	eal_print_secondaries(files->runtime_dir);
}
