// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The memfd backing: an anonymous file the daemon passes to the client. It is
// sealed against shrinking (a client truncating it would make the daemon's
// next access SIGBUS) and growing, and the seals themselves are sealed.

#include "region.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int shmchan_memfd_create(struct shmchan_mem *mem, const char *name, size_t size) {
	int fd, ret;
	void *base;

	if (size == 0)
		return shmchan_fail(-EINVAL, "memfd %s: empty region", name);
	if (strlen(name) >= sizeof(mem->name))
		return shmchan_fail(
			-ENAMETOOLONG,
			"memfd name %s longer than %zu characters",
			name,
			sizeof(mem->name) - 1
		);

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return shmchan_fail(-errno, "memfd_create %s: %s", name, strerror(errno));
	if (ftruncate(fd, (off_t)size) < 0) {
		ret = shmchan_fail(
			-errno,
			"memfd %s: ftruncate %zu: %s",
			name,
			size,
			strerror(errno)
		);
		goto err_close;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		ret = shmchan_fail(-errno, "memfd %s: F_ADD_SEALS: %s", name, strerror(errno));
		goto err_close;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		ret = shmchan_fail(-errno, "memfd %s: mmap %zu: %s", name, size, strerror(errno));
		goto err_close;
	}

	memset(mem, 0, sizeof(*mem));
	mem->backing = SHMCHAN_BACKING_MEMFD;
	mem->base = base;
	mem->size = size;
	mem->fd = fd;
	memcpy(mem->name, name, strlen(name) + 1);
	mem->cookie = NULL;
	return 0;

err_close:
	close(fd);
	return ret;
}

void shmchan_memfd_destroy(struct shmchan_mem *mem) {
	if (mem->base != NULL)
		munmap(mem->base, mem->size);
	if (mem->fd >= 0)
		close(mem->fd);
	mem->base = NULL;
	mem->fd = -1;
}
