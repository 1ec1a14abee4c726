// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// --hugepages auto chooses hugepages when enough are free, then EAL takes
// them: another DPDK process starting at the same time (a second
// application, a test suite) may take them in between, and EAL init fails.
// The daemon then starts again, the same process, with --hugepages off
// (docs/troubleshooting.md, "No hugepages").

#pragma once

#include "shmchand.h"

#include <stdbool.h>

// Whether an EAL init that tried hugepages (hugepages_tried) under mode and
// failed with rte_errno err failed for want of them: EAL found no free
// hugepage (EACCES, "Cannot get hugepage information") or could not get
// the memory it was told to (ENOMEM, "Cannot init memory").
bool eal_retry_wanted(enum hugepage_mode mode, bool hugepages_tried, int err);

// Replace the process by shmchand started again with main()'s argc and
// argv, --hugepages off added after its own options (own_argc of them,
// argv[0] included), the same PID and standard streams; every other
// descriptor closes. Returns -errno only if it cannot.
int eal_retry_exec(int argc, char *const argv[], int own_argc);
