// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What the daemon tells on standard error about a file prefix it cannot
// have or cannot clear: why rte_eal_init() failed, and which DPDK processes
// still use the prefix. Main thread only.

#pragma once

#include <stdbool.h>

// Print the live secondaries of dir: each one has a socket named
// mp_socket_<pid>_<tsc> there. Returns how many.
unsigned eal_print_secondaries(const char *dir);

// Say why rte_eal_init() failed and what to do about it: prefix is EAL's
// file prefix, hugepages_wanted whether EAL was to map hugepages.
void eal_explain_failure(const char *prefix, bool hugepages_wanted);
