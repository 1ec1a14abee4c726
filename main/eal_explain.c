// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Telling who keeps a file prefix from the daemon: the primary that holds
// its EAL config lock, its live secondaries, or another user's folder that
// EAL cannot write in; and so why rte_eal_init() failed.

#include "eal_args.h"
#include "eal_explain.h"
#include "eal_files.h"

#include <rte_errno.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// The pid of the primary holding the EAL config lock of dir, 0 if none.
static pid_t eal_primary_pid(const char *dir) {
	struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	char path[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/config", dir) >= sizeof(path))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fcntl(fd, F_GETLK, &lock) < 0)
		lock.l_type = F_UNLCK;
	close(fd);
	return lock.l_type == F_UNLCK ? 0 : lock.l_pid;
}

unsigned eal_print_secondaries(const char *dir) {
	static const char mp_prefix[] = "mp_socket_";
	const struct dirent *entry;
	unsigned n = 0;
	DIR *d;
	int pid;

	d = opendir(dir);
	if (d == NULL)
		return 0;
	while ((entry = readdir(d)) != NULL) {
		if (strncmp(entry->d_name, mp_prefix, sizeof(mp_prefix) - 1) != 0)
			continue;
		pid = atoi(entry->d_name + sizeof(mp_prefix) - 1);
		if (pid <= 0 || pid == getpid() || (kill(pid, 0) < 0 && errno != EPERM))
			continue;
		fprintf(stderr, "%s %d", n == 0 ? "shmchand: live DPDK secondaries:" : ",", pid);
		n++;
	}
	closedir(d);
	if (n > 0)
		fprintf(stderr, "\n");
	return n;
}

// Whether the folder holding the runtime folder dir (<base>/dpdk) is
// another user's that this one cannot write: EAL makes it 0700, and in
// /tmp the first user's keeps every other user out. Says so.
static bool eal_runtime_parent_foreign(const char *dir) {
	char parent[PATH_MAX];
	struct stat st;
	char *slash;

	if ((size_t)snprintf(parent, sizeof(parent), "%s", dir) >= sizeof(parent))
		return false;
	slash = strrchr(parent, '/');
	if (slash == NULL)
		return false;
	*slash = '\0';
	if (stat(parent, &st) < 0 || st.st_uid == geteuid() || dir_writable(parent))
		return false;
	fprintf(stderr,
		"shmchand: %s belongs to uid %u and this user cannot write it: EAL cannot make"
		" its runtime folder there; set XDG_RUNTIME_DIR to a folder of this user's (a"
		" login session has one)\n",
		parent,
		(unsigned)st.st_uid);
	return true;
}

void eal_explain_failure(const char *prefix, bool hugepages_wanted) {
	char dir[PATH_MAX];
	unsigned secondaries;
	pid_t primary;

	if (rte_errno != 0)
		fprintf(stderr, "shmchand: EAL init failed: %s\n", rte_strerror(rte_errno));
	else
		fprintf(stderr, "shmchand: EAL init failed (see the EAL messages above)\n");

	eal_runtime_dir(prefix, dir, sizeof(dir));
	if (eal_runtime_parent_foreign(dir))
		return;
	primary = eal_primary_pid(dir);
	if (primary != 0)
		fprintf(stderr, "shmchand: process %d holds the EAL lock of %s\n", (int)primary, dir
		);
	secondaries = eal_print_secondaries(dir);
	if (primary != 0 || secondaries > 0) {
		fprintf(stderr,
			"shmchand: another shmchand, or a DPDK secondary of an old one, still uses"
			" file prefix %s; stop it or pick another --file-prefix\n",
			prefix);
	} else if (hugepages_wanted) {
		fprintf(stderr,
			"shmchand: if hugepages are short or not mounted, reserve some"
			" (scripts/hugepages.sh) or start with --hugepages off\n");
	}
}
