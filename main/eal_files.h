// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The files a DPDK primary keeps for its file prefix, and their removal when
// the daemon exits. Main thread only.

#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

// Where EAL keeps the files of one file prefix.
struct eal_files {
	const char *prefix;
	// The runtime folder: config, fbarray_*, hugepage_info, mp_socket*.
	char runtime_dir[PATH_MAX];
	// EAL maps hugepage files (not with --no-huge): only then are they
	// looked for.
	bool hugepages;
	// --huge-dir, or NULL: then every hugetlbfs mount holds the prefix's
	// hugepage files (<dir>/<prefix>map_<n>) if any.
	const char *huge_dir;
	// EAL shares its files with secondaries: not with --in-memory or
	// --no-shconf, where another primary may run with the same prefix.
	bool shared;
};

// The runtime folder of prefix as EAL 22.11 computes it: /var/run/dpdk/PREFIX
// as root, $XDG_RUNTIME_DIR/dpdk/PREFIX (or /tmp/dpdk/PREFIX) otherwise.
void eal_runtime_dir(const char *prefix, char *dir, size_t len);

// Remove the prefix's hugepage files and its runtime folder, unless another
// process still uses them (files of another euid are left alone, and never
// count as in use), and the runtime folder's parent if it is empty and
// not root's: a primary that holds the config lock, or a
// secondary that maps a hugepage file or holds an fbarray file. Call it only
// once EAL is done (after rte_eal_cleanup(), or a failed rte_eal_init()).
// With files.shared false, only removes the runtime folder if it is empty. Returns 0 (also when
// there was nothing to remove), -EBUSY (another process uses them: nothing removed) or another
// -errno after logging why; logs what it removed at debug level.
int eal_files_remove(const struct eal_files *files);
