// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Removing what a DPDK 22.11 primary leaves of its file prefix.
//
// EAL never removes these files itself: rte_eal_cleanup() unmaps the
// hugepages and closes their files but unlinks none of them, and leaves the
// runtime folder. Only --huge-unlink would unlink the hugepage files, right
// after mapping them, and then no secondary can open them to attach. So the
// daemon removes them at exit, once no other process uses them. "Uses" is
// EAL's own rule, the one it follows before it frees a page (free_seg()) or
// clears a hugepage folder at start (clear_hugedir()): every process that
// maps a hugepage file holds a shared flock on it, every process attached to
// a memseg or memzone list holds one on its fbarray file, and the primary
// holds a write lock (fcntl) on config. EAL tests this by taking an
// exclusive flock; the daemon cannot, as it still holds locks itself after
// rte_eal_cleanup() (the memzone list stays mapped, and a mapping keeps its
// file's flock). So it reads the kernel's table of locks, /proc/locks, and
// a file on which a process other than itself holds a lock is in use.
//
// The daemon touches only files of its own euid: another user's daemon may
// run on the same prefix (a hugetlbfs mount is shared by every user), and
// its files are neither the daemon's to remove nor a reason to keep its own.
// Without hugepages (--no-huge) EAL makes no hugepage file, and no
// hugetlbfs mount is looked at.

#include "eal_files.h"
#include "shmchand.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

// hugetlbfs mounts looked at: one per page size is the usual setup.
#define HUGE_DIRS_MAX 8
// Names EAL 22.11 gives the files of a prefix: <prefix>map_<n> in a hugepage
// folder (HUGEFILE_FMT), fbarray_<name> in the runtime folder.
#define HUGEFILE_INFIX "map_"
#define FBARRAY_PREFIX "fbarray_"
#define CONFIG_NAME "config"

struct huge_dirs {
	unsigned n;
	char path[HUGE_DIRS_MAX][PATH_MAX];
};

// The files on which another process holds a lock.
struct foreign_locks {
	size_t n, cap;
	struct locked_file {
		unsigned major, minor;
		unsigned long ino;
	} * files;
};

void eal_runtime_dir(const char *prefix, char *dir, size_t len) {
	const char *base = "/var/run";

	if (getuid() != 0) {
		base = getenv("XDG_RUNTIME_DIR");
		if (base == NULL)
			base = "/tmp";
	}
	snprintf(dir, len, "%s/dpdk/%s", base, prefix);
}

// Whether name is a hugepage file of prefix: <prefix>map_ and digits only,
// so that prefix "a" never matches the files of prefix "amap_1".
static bool is_hugefile(const char *name, const char *prefix) {
	size_t len = strlen(prefix);
	const char *n;

	if (strncmp(name, prefix, len) != 0 ||
	    strncmp(name + len, HUGEFILE_INFIX, sizeof(HUGEFILE_INFIX) - 1) != 0)
		return false;
	n = name + len + sizeof(HUGEFILE_INFIX) - 1;
	if (*n == '\0')
		return false;
	for (; *n != '\0'; n++) {
		if (!isdigit((unsigned char)*n))
			return false;
	}
	return true;
}

static void huge_dirs_add(struct huge_dirs *dirs, const char *dir) {
	if (dirs->n < HUGE_DIRS_MAX && realpath(dir, dirs->path[dirs->n]) != NULL)
		dirs->n++;
}

// --huge-dir, or every hugetlbfs mount: EAL picks one per page size.
static void huge_dirs_find(struct huge_dirs *dirs, const char *huge_dir) {
	const struct mntent *m;
	FILE *f;

	if (huge_dir != NULL) {
		huge_dirs_add(dirs, huge_dir);
		return;
	}
	f = setmntent("/proc/mounts", "r");
	if (f == NULL)
		return;
	while ((m = getmntent(f)) != NULL) {
		if (strcmp(m->mnt_type, "hugetlbfs") == 0)
			huge_dirs_add(dirs, m->mnt_dir);
	}
	endmntent(f);
}

// Read /proc/locks: each line is "N: CLASS MODE TYPE PID MAJ:MIN:INODE START
// END" (device numbers in hex). A waiter's line, "N: -> CLASS ...", does not
// parse: a waiter holds nothing. Returns 0 or -errno.
static int foreign_locks_read(struct foreign_locks *locks) {
	struct locked_file file, *grown;
	pid_t self = getpid();
	char line[256];
	int pid, err;
	FILE *f;

	*locks = (struct foreign_locks){0};
	f = fopen("/proc/locks", "re");
	if (f == NULL) {
		err = errno;
		LOG(ERR, "/proc/locks: %s", strerror(err));
		return -err;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line,
			   "%*d: %*s %*s %*s %d %x:%x:%lu",
			   &pid,
			   &file.major,
			   &file.minor,
			   &file.ino) != 4 ||
		    pid == self)
			continue;
		if (locks->n == locks->cap) {
			locks->cap = locks->cap == 0 ? 64 : 2 * locks->cap;
			grown = realloc(locks->files, locks->cap * sizeof(*grown));
			if (grown == NULL) {
				free(locks->files);
				fclose(f);
				LOG(ERR, "out of memory");
				return -ENOMEM;
			}
			locks->files = grown;
		}
		locks->files[locks->n++] = file;
	}
	fclose(f);
	return 0;
}

// Whether st is a file of this process's euid.
static bool is_own(const struct stat *st) {
	return st->st_uid == geteuid();
}

// 1 if another process holds a lock on dir_fd/name, 0 if not (or if it is
// gone, or not ours), or -errno.
static int file_in_use(int dir_fd, const char *name, const struct foreign_locks *locks) {
	struct stat st;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!is_own(&st))
		return 0;
	for (size_t i = 0; i < locks->n; i++) {
		const struct locked_file *file = &locks->files[i];
		if (file->ino == st.st_ino && file->major == major(st.st_dev) &&
		    file->minor == minor(st.st_dev))
			return 1;
	}
	return 0;
}

// Whether a file of d that match() accepts is in use. Returns 0, -EBUSY or
// another -errno.
static int any_in_use(
	DIR *d,
	bool (*match)(const char *name, const char *arg),
	const char *arg,
	const struct foreign_locks *locks
) {
	const struct dirent *e;
	int ret;

	rewinddir(d);
	while ((e = readdir(d)) != NULL) {
		if (!match(e->d_name, arg))
			continue;
		ret = file_in_use(dirfd(d), e->d_name, locks);
		if (ret != 0) {
			if (ret > 0)
				LOG(DEBUG, "%s is in use by another process", e->d_name);
			return ret > 0 ? -EBUSY : ret;
		}
	}
	return 0;
}

static bool is_fbarray(const char *name, const char *unused) {
	(void)unused;
	return strncmp(name, FBARRAY_PREFIX, sizeof(FBARRAY_PREFIX) - 1) == 0;
}

static bool is_entry(const char *name, const char *unused) {
	(void)unused;
	return strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

// Unlink dir_fd/name if it is ours. Returns 1 (removed), 0 (gone already),
// -EPERM (another user's: left alone) or -errno.
static int unlink_own(int dir_fd, const char *name) {
	struct stat st;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!is_own(&st)) {
		LOG(DEBUG, "leaving %s: it belongs to uid %u", name, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (unlinkat(dir_fd, name, 0) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 1;
}

// Unlink the files of d that match() accepts but skip, if they are ours,
// and count them.
static void unlink_matching(
	DIR *d,
	bool (*match)(const char *name, const char *arg),
	const char *arg,
	const char *skip,
	unsigned *n
) {
	const struct dirent *e;
	int ret;

	rewinddir(d);
	while ((e = readdir(d)) != NULL) {
		if (!match(e->d_name, arg) || (skip != NULL && strcmp(e->d_name, skip) == 0))
			continue;
		ret = unlink_own(dirfd(d), e->d_name);
		if (ret > 0)
			(*n)++;
		else if (ret < 0 && ret != -EPERM)
			LOG(WARNING, "cannot remove %s: %s", e->d_name, strerror(-ret));
	}
}

// Take the primary's lock on config, so that no primary starts on the prefix
// while its files go: sets *locked_fd to the locked fd, or to -1 if there is
// no config. Returns 0 or -errno (-EBUSY: a primary holds it).
static int config_lock(int runtime_fd, int *locked_fd) {
	struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	int fd, err;

	*locked_fd = -1;
	fd = openat(runtime_fd, CONFIG_NAME, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fcntl(fd, F_SETLK, &lock) < 0) {
		err = errno;
		close(fd);
		return err == EAGAIN || err == EACCES ? -EBUSY : -err;
	}
	*locked_fd = fd;
	return 0;
}

// After the runtime folder dir went: remove its parent, <base>/dpdk, if it
// is empty and this user's. EAL makes it 0700 for the first user who needs
// it, and in /tmp (no XDG_RUNTIME_DIR) one user's would keep every other
// user's DPDK out. Not as root: /var/run/dpdk is the system's.
static void runtime_parent_remove(const char *dir) {
	char parent[PATH_MAX];
	struct stat st;
	char *slash;

	if (getuid() == 0 || (size_t)snprintf(parent, sizeof(parent), "%s", dir) >= sizeof(parent))
		return;
	slash = strrchr(parent, '/');
	if (slash == NULL || slash == parent)
		return;
	*slash = '\0';
	// ENOTEMPTY: another prefix's folder, of this user, is there.
	if (lstat(parent, &st) == 0 && S_ISDIR(st.st_mode) && is_own(&st) && rmdir(parent) == 0)
		LOG(DEBUG, "removed the empty folder %s", parent);
}

int eal_files_remove(const struct eal_files *files) {
	DIR *runtime = NULL, *huge[HUGE_DIRS_MAX] = {NULL};
	char runtime_real[PATH_MAX] = "";
	unsigned n_huge = 0, n_runtime = 0;
	struct foreign_locks locks = {0};
	struct huge_dirs dirs;
	int config_fd = -1, ret = 0;

	if (!files->shared) {
		// Another primary may use the same prefix: leave its files.
		if (rmdir(files->runtime_dir) == 0) {
			LOG(DEBUG, "removed the empty runtime folder %s", files->runtime_dir);
			runtime_parent_remove(files->runtime_dir);
		}
		return 0;
	}
	dirs.n = 0;
	if (files->hugepages)
		huge_dirs_find(&dirs, files->huge_dir);
	if (realpath(files->runtime_dir, runtime_real) == NULL)
		runtime_real[0] = '\0';

	if (runtime_real[0] != '\0') {
		runtime = opendir(runtime_real);
		if (runtime == NULL && errno != ENOENT) {
			ret = -errno;
			LOG(ERR, "cannot open %s: %s", runtime_real, strerror(-ret));
			return ret;
		}
	}
	if (runtime != NULL) {
		ret = config_lock(dirfd(runtime), &config_fd);
		if (ret < 0) {
			if (ret != -EBUSY)
				LOG(ERR, "cannot lock %s/config: %s", runtime_real, strerror(-ret));
			goto out;
		}
	}
	// Read after taking the config lock: a primary that starts from now
	// on waits for it (or fails) before it locks any other file.
	ret = foreign_locks_read(&locks);
	if (ret < 0)
		goto out;
	if (runtime != NULL) {
		ret = any_in_use(runtime, is_fbarray, NULL, &locks);
		if (ret < 0)
			goto out;
	}
	for (unsigned i = 0; i < dirs.n; i++) {
		// A folder this user cannot read holds no file of ours.
		huge[i] = opendir(dirs.path[i]);
		if (huge[i] == NULL)
			continue;
		ret = any_in_use(huge[i], is_hugefile, files->prefix, &locks);
		if (ret < 0)
			goto out;
	}

	// Nobody else uses them: remove them all, config last (the lock we hold
	// on it keeps a new primary out until then).
	for (unsigned i = 0; i < dirs.n; i++) {
		if (huge[i] != NULL)
			unlink_matching(huge[i], is_hugefile, files->prefix, NULL, &n_huge);
	}
	if (runtime != NULL) {
		unlink_matching(runtime, is_entry, NULL, CONFIG_NAME, &n_runtime);
		ret = unlink_own(dirfd(runtime), CONFIG_NAME);
		if (ret > 0)
			n_runtime++;
		else if (ret < 0 && ret != -EPERM)
			LOG(WARNING, "cannot remove %s/config: %s", runtime_real, strerror(-ret));
		ret = 0;
		// ENOTEMPTY: a new primary came in once config was gone, and the
		// folder is its own now, or another user's file is there.
		if (rmdir(runtime_real) == 0)
			runtime_parent_remove(runtime_real);
		else if (errno != ENOTEMPTY)
			LOG(WARNING, "cannot remove %s: %s", runtime_real, strerror(errno));
	}
	if (n_huge > 0 || runtime != NULL)
		LOG(INFO,
		    "file prefix %s: removed %u hugepage files, and %u files and the runtime "
		    "folder %s",
		    files->prefix,
		    n_huge,
		    n_runtime,
		    runtime != NULL ? runtime_real : "(none)");
out:
	free(locks.files);
	for (unsigned i = 0; i < dirs.n; i++) {
		if (huge[i] != NULL)
			closedir(huge[i]);
	}
	if (config_fd >= 0)
		close(config_fd);
	if (runtime != NULL)
		closedir(runtime);
	return ret;
}
