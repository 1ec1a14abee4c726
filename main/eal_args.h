// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The arguments shmchand gives rte_eal_init(): its defaults (file prefix,
// lcores, PCI, telemetry, log level, memory, with or without hugepages),
// then the user's; and the look-ups of options in them. Main thread only,
// before EAL init.

#pragma once

#include <stdbool.h>

// Default EAL file prefix, so the daemon never collides with another DPDK
// application's default "rte": root's, and, with the uid appended, another
// user's (default_file_prefix()).
#define DEFAULT_FILE_PREFIX "shmchand"
// How many free 2 MB hugepages --hugepages auto wants to see before it uses
// them: EAL itself maps a few, and each memzone channel needs one.
#define HUGEPAGES_AUTO_MIN_FREE 16
// EAL memory without hugepages, in MB: the daemon's own heap only (memfd
// channels live outside EAL memory).
#define NO_HUGE_MEM_MB "64"
// Hugepage memory EAL reserves at startup, in MB, and never gives back: the
// pool of memzone channels (32 of 0.5 MB, server/channel_memzone.c) and the DPDK heap
// that secondaries allocate from (EAL init of a secondary takes about 60 KB
// of it, which a secondary killed with -9 never gives back). Beyond it EAL
// grows its memory at run time, which waits for every secondary to map the
// new pages (up to 5 s when one is starting or dying).
#define HUGE_MEM_MB "128"

// The EAL's argument vector: shmchand's defaults, then the user's.
struct eal_args {
	int argc;
	char **argv;
	bool default_lcores; // we added -l 0: the user chose no lcores
};

// True if args holds --name or --name=value.
bool has_long_opt(int argc, char *const argv[], const char *name);

// The value of the last --name in args (as --name VALUE or --name=VALUE),
// or def: EAL takes the last one.
const char *long_opt_value(int argc, char *const argv[], const char *name, const char *def);

// Whether EAL runs telemetry: true if the last of --telemetry and
// --no-telemetry in args is --telemetry. Read before rte_eal_init(), which
// reorders argv.
bool last_telemetry_opt(int argc, char *const argv[]);

// Whether this process may create files in dir, as EAL creates its hugepage
// files there (with the effective ids, as open() checks).
bool dir_writable(const char *dir);

// The default file prefix: DEFAULT_FILE_PREFIX as root, DEFAULT_FILE_PREFIX-UID
// for any other user. Hugepage files are named after the prefix alone, in a
// hugetlbfs mount every user shares: two users' daemons on one prefix would
// share their names, and each would find the other's files in use at exit.
// The real uid decides, as it decides where EAL puts its runtime folder.
const char *default_file_prefix(void);

// Build the EAL arguments: program name, our defaults unless the user gave
// the same option, then the user's arguments. Returns 0 or -ENOMEM.
int eal_args_build(struct eal_args *eal, int user_argc, char **user_argv);
