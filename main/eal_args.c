// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Building the EAL arguments, and deciding whether EAL runs with hugepages
// (--hugepages auto, on or off).

#include "eal_args.h"
#include "shmchand.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

// Where the kernel counts free 2 MB hugepages.
#define HUGEPAGES_FREE_PATH "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
// How long --hugepages auto waits for another DPDK process to release the
// hugepage directory's lock before it runs without hugepages, and how often
// it looks.
#define HUGEDIR_LOCK_WAIT_MS 1000
#define HUGEDIR_LOCK_POLL_MS 10
// Options shmchand may add to the EAL arguments, and the program name.
#define EAL_OWN_ARGS_MAX 14
// EAL base address in sanitized builds (see eal_args_build()).
#define ASAN_BASE_VIRTADDR "0x200000000000"

bool has_long_opt(int argc, char *const argv[], const char *name) {
	size_t len = strlen(name);

	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0 || strncmp(argv[i] + 2, name, len) != 0)
			continue;
		if (argv[i][2 + len] == '\0' || argv[i][2 + len] == '=')
			return true;
	}
	return false;
}

// True if args holds the short option -c, alone or with its value attached.
static bool has_short_opt(int argc, char *const argv[], char c) {
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1] == c)
			return true;
	}
	return false;
}

const char *long_opt_value(int argc, char *const argv[], const char *name, const char *def) {
	size_t len = strlen(name);
	const char *value = def;

	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0 || strncmp(argv[i] + 2, name, len) != 0)
			continue;
		if (argv[i][2 + len] == '\0' && i + 1 < argc)
			value = argv[++i];
		else if (argv[i][2 + len] == '=')
			value = argv[i] + 2 + len + 1;
	}
	return value;
}

bool last_telemetry_opt(int argc, char *const argv[]) {
	bool on = false;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--telemetry") == 0)
			on = true;
		else if (strcmp(argv[i], "--no-telemetry") == 0)
			on = false;
	}
	return on;
}

static long hugepages_free(void) {
	FILE *f = fopen(HUGEPAGES_FREE_PATH, "r");
	long free_pages = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld", &free_pages) != 1)
		free_pages = 0;
	fclose(f);
	return free_pages;
}

// Find the first hugetlbfs mount point. Returns false if there is none.
static bool hugetlbfs_mount(char *dir, size_t len) {
	char line[PATH_MAX + 128], mount_dir[PATH_MAX], fstype[64];
	bool found = false;
	FILE *f;

	f = fopen("/proc/mounts", "r");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%*s %4095s %63s", mount_dir, fstype) == 2 &&
		    strcmp(fstype, "hugetlbfs") == 0)
			found = (size_t)snprintf(dir, len, "%s", mount_dir) < len;
	}
	fclose(f);
	return found;
}

// Whether the hugepage directory's lock is free, waiting a little. EAL
// holds it while it maps pages; a wedged DPDK process that never drops it
// would make rte_eal_init() wait for ever.
static bool hugedir_lock_free(const char *dir) {
	bool lock_free = true;
	int fd, waited_ms;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return true; // EAL reports what is wrong with it
	for (waited_ms = 0;; waited_ms += HUGEDIR_LOCK_POLL_MS) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			flock(fd, LOCK_UN);
			break;
		}
		if (errno != EWOULDBLOCK || waited_ms >= HUGEDIR_LOCK_WAIT_MS) {
			lock_free = errno != EWOULDBLOCK;
			break;
		}
		usleep(HUGEDIR_LOCK_POLL_MS * 1000);
	}
	close(fd);
	return lock_free;
}

bool dir_writable(const char *dir) {
	return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0;
}

// Whether EAL should run without hugepages, per --hugepages. huge_dir is the
// user's --huge-dir, or NULL: then EAL takes the first hugetlbfs mount.
static bool want_no_huge(enum hugepage_mode mode, const char *huge_dir) {
	char dir[PATH_MAX];
	bool mounted, writable, lock_free;
	long free_pages;

	if (mode == HUGEPAGES_OFF) {
		LOG(INFO, "hugepages off: memfd channels only");
		return true;
	}
	if (huge_dir != NULL)
		mounted = (size_t)snprintf(dir, sizeof(dir), "%s", huge_dir) < sizeof(dir);
	else
		mounted = hugetlbfs_mount(dir, sizeof(dir));
	writable = mounted && dir_writable(dir);
	lock_free = !mounted || hugedir_lock_free(dir);
	if (mode == HUGEPAGES_ON) {
		if (mounted && !writable)
			LOG(WARNING,
			    "%s is not writable by uid %d: EAL cannot create its hugepage files"
			    " there",
			    dir,
			    (int)geteuid());
		if (!lock_free)
			LOG(WARNING,
			    "%s is locked by another DPDK process: EAL init waits until it is "
			    "released",
			    dir);
		return false;
	}
	free_pages = hugepages_free();
	if (free_pages > HUGEPAGES_AUTO_MIN_FREE && writable && lock_free) {
		LOG(INFO,
		    "hugepages auto: %ld free 2 MB hugepages in %s, using them",
		    free_pages,
		    dir);
		return false;
	}
	if (!mounted)
		LOG(NOTICE,
		    "hugepages auto: no hugetlbfs mount; running with --no-huge, memfd channels"
		    " only");
	else if (!writable)
		LOG(NOTICE,
		    "hugepages auto: hugetlbfs %s is not writable by uid %d (run as root, or mount"
		    " it with uid= or gid= of this user); running with --no-huge, memfd channels"
		    " only",
		    dir,
		    (int)geteuid());
	else if (!lock_free)
		LOG(NOTICE,
		    "hugepages auto: %s has been locked by another DPDK process for %d ms;"
		    " running with --no-huge, memfd channels only",
		    dir,
		    HUGEDIR_LOCK_WAIT_MS);
	else
		LOG(NOTICE,
		    "hugepages auto: %ld free 2 MB hugepages (need more than %d); running with"
		    " --no-huge, memfd channels only",
		    free_pages,
		    HUGEPAGES_AUTO_MIN_FREE);
	return true;
}

const char *default_file_prefix(void) {
	static char prefix[sizeof(DEFAULT_FILE_PREFIX "-4294967295")];

	if (getuid() == 0)
		return DEFAULT_FILE_PREFIX;
	snprintf(prefix, sizeof(prefix), DEFAULT_FILE_PREFIX "-%u", (unsigned)getuid());
	return prefix;
}

int eal_args_build(struct eal_args *eal, int user_argc, char **user_argv) {
	const struct shmchand_config *cfg = &shmchand_config;
	char **argv = calloc(EAL_OWN_ARGS_MAX + user_argc + 1, sizeof(*argv));
	bool user_mem;
	int argc = 0;

	if (argv == NULL)
		return -ENOMEM;
	argv[argc++] = "shmchand";
	if (!has_long_opt(user_argc, user_argv, "file-prefix")) {
		argv[argc++] = "--file-prefix";
		argv[argc++] = (char *)default_file_prefix();
	}
	if (!has_short_opt(user_argc, user_argv, 'l') &&
	    !has_short_opt(user_argc, user_argv, 'c') &&
	    !has_long_opt(user_argc, user_argv, "lcores")) {
		argv[argc++] = "-l";
		argv[argc++] = "0";
		eal->default_lcores = true;
	}
	if (!has_long_opt(user_argc, user_argv, "no-pci") &&
	    !has_short_opt(user_argc, user_argv, 'a') &&
	    !has_long_opt(user_argc, user_argv, "allow"))
		argv[argc++] = "--no-pci";
	if (!has_long_opt(user_argc, user_argv, "telemetry") &&
	    !has_long_opt(user_argc, user_argv, "no-telemetry"))
		argv[argc++] = cfg->server.telemetry ? "--telemetry" : "--no-telemetry";
	argv[argc++] = cfg->verbose ? "--log-level=shmchand:debug" : "--log-level=lib.eal:notice";
	user_mem = has_short_opt(user_argc, user_argv, 'm') ||
		   has_long_opt(user_argc, user_argv, "socket-mem");
	if (!has_long_opt(user_argc, user_argv, "no-huge") &&
	    !has_long_opt(user_argc, user_argv, "in-memory") &&
	    want_no_huge(cfg->hugepages, long_opt_value(user_argc, user_argv, "huge-dir", NULL))) {
		argv[argc++] = "--no-huge";
		if (!user_mem) {
			argv[argc++] = "-m";
			argv[argc++] = NO_HUGE_MEM_MB;
		}
	} else if (!user_mem) {
		argv[argc++] = "-m";
		argv[argc++] = HUGE_MEM_MB;
	}
#ifdef __SANITIZE_ADDRESS__
	// Under AddressSanitizer the EAL's memory lands wherever ASan's shadow
	// leaves room, and a secondary then often fails to map it at the same
	// address ("Cannot get a virtual area"). A fixed base address, far from
	// ASan's shadow and heap, lets secondaries attach in sanitized tests.
	if (!has_long_opt(user_argc, user_argv, "base-virtaddr"))
		argv[argc++] = "--base-virtaddr=" ASAN_BASE_VIRTADDR;
#endif
	for (int i = 0; i < user_argc; i++)
		argv[argc++] = user_argv[i];
	eal->argc = argc;
	eal->argv = argv;
	return 0;
}
