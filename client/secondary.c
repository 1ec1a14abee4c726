// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Is this process a DPDK secondary, and of which file prefix? The library
// links no DPDK library (programs without DPDK use it), so it looks the
// three EAL functions it needs up at run time with dlsym(RTLD_DEFAULT): they
// are found when the program links DPDK dynamically (or exports its symbols,
// -rdynamic, when it links DPDK statically). A process whose EAL functions
// cannot be found, or that did not initialise EAL as a secondary, is simply
// no secondary: it gets a memfd channel.

#include "client_priv.h"

#include <rte_eal.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef enum rte_proc_type_t (*process_type_fn)(void);
typedef const char *(*runtime_dir_fn)(void);

static void client_dpdk_probe_dlsym(struct client_dpdk *dpdk) {
	// POSIX guarantees that a function's address survives dlsym()'s void *.
	process_type_fn process_type = (process_type_fn)dlsym(RTLD_DEFAULT, "rte_eal_process_type");
	runtime_dir_fn runtime_dir = (runtime_dir_fn)dlsym(RTLD_DEFAULT, "rte_eal_get_runtime_dir");
	client_memzone_lookup_fn lookup =
		(client_memzone_lookup_fn)dlsym(RTLD_DEFAULT, "rte_memzone_lookup");

	memset(dpdk, 0, sizeof(*dpdk));
	// Before rte_eal_init() EAL says "primary": such a process is no
	// secondary either.
	if (process_type == NULL || runtime_dir == NULL || lookup == NULL ||
	    process_type() != RTE_PROC_SECONDARY)
		return;
	dpdk->secondary = true;
	dpdk->memzone_lookup = lookup;

	// The runtime directory is <base>/dpdk/<file prefix> (EAL 22.11). A
	// prefix too long for the wire is left empty: no daemon has it.
	const char *dir = runtime_dir();
	const char *slash = dir != NULL ? strrchr(dir, '/') : NULL;
	const char *prefix = slash != NULL ? slash + 1 : "";
	if ((size_t)snprintf(dpdk->file_prefix, sizeof(dpdk->file_prefix), "%s", prefix) >=
	    sizeof(dpdk->file_prefix))
		dpdk->file_prefix[0] = '\0';
}

void (*client_dpdk_probe)(struct client_dpdk *) = client_dpdk_probe_dlsym;
