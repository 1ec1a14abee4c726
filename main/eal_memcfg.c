// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "eal_memcfg.h"

#include <rte_eal.h>
#include <rte_eal_memconfig.h>
#include <rte_version.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EAL_MEMCFG_FILE "config"
// The bytes mapped: the head up to the lock, rounded to a page by mmap().
#define EAL_MEMCFG_MAP_LEN (EAL_MEMCFG_HOTPLUG_LOCK_OFF + sizeof(rte_rwlock_t))
// Tries of eal_memcfg_verify(): a secondary starting meanwhile may move the
// word too.
#define EAL_MEMCFG_VERIFY_TRIES 8
// How often eal_memcfg_hotplug_wait() tries the lock.
#define EAL_MEMCFG_POLL_MS 10

static uint32_t head_u32(const struct eal_memcfg *cfg, size_t off) {
	return __atomic_load_n((const uint32_t *)((const char *)cfg->head + off), __ATOMIC_RELAXED);
}

// Whether the head holds DPDK 22.11's magic and this build's version.
static int head_check(struct eal_memcfg *cfg) {
	if (head_u32(cfg, EAL_MEMCFG_MAGIC_OFF) == RTE_MAGIC &&
	    head_u32(cfg, EAL_MEMCFG_VERSION_OFF) == RTE_VERSION)
		return 0;
	eal_memcfg_close(cfg);
	return -EPROTO;
}

static int config_path(const char *runtime_dir, char *path, size_t len) {
	if ((size_t)snprintf(path, len, "%s/" EAL_MEMCFG_FILE, runtime_dir) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int eal_memcfg_find(const char *runtime_dir, struct eal_memcfg *cfg) {
	char given[PATH_MAX], path[PATH_MAX], line[PATH_MAX + 128], *name;
	unsigned long start, end;
	int ret, err;
	FILE *maps;

	cfg->head = NULL;
	cfg->len = 0;
	ret = config_path(runtime_dir, given, sizeof(given));
	if (ret < 0)
		return ret;
	// The maps name the file by its real path (/var/run is often /run).
	if (realpath(given, path) == NULL)
		return -errno;
	maps = fopen("/proc/self/maps", "re");
	if (maps == NULL)
		return -errno;
	// "START-END PERMS OFFSET DEV INODE   PATH": the mapping at offset 0.
	while (fgets(line, sizeof(line), maps) != NULL) {
		if (sscanf(line, "%lx-%lx %*s 0 ", &start, &end) != 2 ||
		    end - start < EAL_MEMCFG_MAP_LEN)
			continue;
		name = strchr(line, '/');
		if (name == NULL)
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, path) == 0) {
			cfg->head = (void *)start;
			break;
		}
	}
	err = ferror(maps) ? EIO : 0;
	fclose(maps);
	if (err != 0)
		return -err;
	if (cfg->head == NULL)
		return -ENOENT;
	return head_check(cfg);
}

int eal_memcfg_map(const char *runtime_dir, struct eal_memcfg *cfg) {
	char path[PATH_MAX];
	struct stat st;
	int fd, ret;

	cfg->head = NULL;
	cfg->len = 0;
	ret = config_path(runtime_dir, path, sizeof(path));
	if (ret < 0)
		return ret;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < EAL_MEMCFG_MAP_LEN) {
		ret = errno != 0 ? -errno : -EPROTO;
		close(fd);
		return ret;
	}
	cfg->head = mmap(NULL, EAL_MEMCFG_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ret = -errno;
	close(fd);
	if (cfg->head == MAP_FAILED) {
		cfg->head = NULL;
		return ret;
	}
	cfg->len = EAL_MEMCFG_MAP_LEN;
	return head_check(cfg);
}

void eal_memcfg_close(struct eal_memcfg *cfg) {
	if (cfg->head != NULL && cfg->len > 0)
		munmap(cfg->head, cfg->len);
	cfg->head = NULL;
	cfg->len = 0;
}

rte_rwlock_t *eal_memcfg_hotplug_lock(const struct eal_memcfg *cfg) {
	return (rte_rwlock_t *)((char *)cfg->head + EAL_MEMCFG_HOTPLUG_LOCK_OFF);
}

int eal_memcfg_verify(const struct eal_memcfg *cfg) {
	const rte_rwlock_t *lock = eal_memcfg_hotplug_lock(cfg);
	int32_t before, held;

	for (unsigned i = 0; i < EAL_MEMCFG_VERIFY_TRIES; i++) {
		before = __atomic_load_n(&lock->cnt, __ATOMIC_RELAXED);
		rte_mcfg_mem_read_lock();
		held = __atomic_load_n(&lock->cnt, __ATOMIC_RELAXED);
		rte_mcfg_mem_read_unlock();
		if (held - before == RTE_RWLOCK_READ)
			return 0;
	}
	return -EPROTO;
}

int eal_memcfg_hotplug_wait(const struct eal_memcfg *cfg, unsigned wait_ms, int32_t *word) {
	struct timespec poll = {.tv_nsec = EAL_MEMCFG_POLL_MS * 1000000L};
	rte_rwlock_t *lock = eal_memcfg_hotplug_lock(cfg);

	for (unsigned waited_ms = 0;; waited_ms += EAL_MEMCFG_POLL_MS) {
		// Taken and given back at once: only whether it can be taken
		// matters. Never rte_rwlock_write_lock(), which spins, and
		// sets the writer-waiting bit that stops every new reader.
		if (rte_rwlock_write_trylock(lock) == 0) {
			rte_rwlock_write_unlock(lock);
			return 0;
		}
		if (waited_ms >= wait_ms)
			break;
		nanosleep(&poll, NULL);
	}
	*word = __atomic_load_n(&lock->cnt, __ATOMIC_RELAXED);
	return -EBUSY;
}
