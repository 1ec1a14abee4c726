// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The memfd backing is sealed: a client holding the fd can neither shrink it
// (which would make the daemon's next access SIGBUS) nor grow it, nor change
// the seals; and shmchan_client_open() refuses a memfd that is not sealed or
// not of the geometry's size.

#include "region.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define SEALS_ALL (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

struct fixture {
	struct shmchan_geometry g;
	struct shmchan_mem mem;
};

static int fixture_setup(void **state) {
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(shmchan_geometry_init(&f->g, SHMCHAN_RING_CELLS), 0);
	assert_int_equal(shmchan_memfd_create(&f->mem, "seal_test", f->g.region_size), 0);
	*state = f;
	return 0;
}

static int fixture_teardown(void **state) {
	struct fixture *f = *state;

	shmchan_memfd_destroy(&f->mem);
	free(f);
	return 0;
}

static off_t fd_size(int fd) {
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_size;
}

// What a client can do with the fd it received (the same open file), or with
// a new open of the same file through /proc.
static void check_no_resize(int fd, size_t size) {
	char byte = 1;

	errno = 0;
	assert_int_equal(ftruncate(fd, (off_t)size / 2), -1);
	assert_int_equal(errno, EPERM);
	errno = 0;
	assert_int_equal(ftruncate(fd, 0), -1);
	assert_int_equal(errno, EPERM);
	errno = 0;
	assert_int_equal(ftruncate(fd, (off_t)size * 2), -1);
	assert_int_equal(errno, EPERM);
	// Writing past the end would grow it too.
	errno = 0;
	assert_int_equal(pwrite(fd, &byte, 1, (off_t)size), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fd_size(fd), size);
}

static void test_client_cannot_resize(void **state) {
	struct fixture *f = *state;
	char path[64];
	int fd;

	fd = dup(f->mem.fd);
	assert_true(fd >= 0);
	check_no_resize(fd, f->mem.size);
	close(fd);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->mem.fd);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	check_no_resize(fd, f->mem.size);
	close(fd);
}

static void test_seals_cannot_change(void **state) {
	struct fixture *f = *state;

	assert_int_equal(fcntl(f->mem.fd, F_GET_SEALS), SEALS_ALL);
	errno = 0;
	assert_int_equal(fcntl(f->mem.fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	assert_int_equal(errno, EPERM);
	errno = 0;
	assert_int_equal(fcntl(f->mem.fd, F_ADD_SEALS, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fcntl(f->mem.fd, F_GET_SEALS), SEALS_ALL);
	// The memfd is close-on-exec in the daemon.
	assert_true(fcntl(f->mem.fd, F_GETFD) & FD_CLOEXEC);
}

// Doorbell fds for a client_open call; the client owns them on success.
static void doorbells(int fds[2]) {
	fds[0] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	fds[1] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(fds[0] >= 0 && fds[1] >= 0);
}

// A memfd holding a valid region (laid out by the server), of size bytes,
// with seals (0 for none; -1: created without MFD_ALLOW_SEALING).
static int region_memfd(const struct shmchan_geometry *g, size_t size, int seals) {
	struct shmchan_server *srv;
	struct shmchan_mem mem = {.backing = SHMCHAN_BACKING_MEMFD, .size = size, .fd = -1};
	int fd;

	fd = memfd_create("unsealed", MFD_CLOEXEC | (seals >= 0 ? MFD_ALLOW_SEALING : 0));
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	mem.base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mem.base != MAP_FAILED);
	assert_int_equal(shmchan_server_create(&mem, g, &srv), 0);
	shmchan_server_destroy(srv);
	munmap(mem.base, size);
	if (seals > 0)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

static void assert_open_fails(const struct shmchan_geometry *g, int mem_fd, int err) {
	struct shmchan_client *cli = NULL;
	int fds[2];

	doorbells(fds);
	assert_int_equal(shmchan_client_open(g, NULL, mem_fd, fds[0], fds[1], &cli), err);
	assert_null(cli);
	close(fds[0]);
	close(fds[1]);
}

static void test_open_rejects_unsealed(void **state) {
	struct fixture *f = *state;
	size_t size = f->g.region_size;
	struct shmchan_client *cli = NULL;
	int fd, fds[2];

	fd = region_memfd(&f->g, size, 0);
	assert_open_fails(&f->g, fd, -EINVAL);
	close(fd);

	fd = region_memfd(&f->g, size, -1); // cannot be sealed at all
	assert_open_fails(&f->g, fd, -EINVAL);
	close(fd);

	fd = region_memfd(&f->g, size, F_SEAL_SHRINK); // could still grow
	assert_open_fails(&f->g, fd, -EINVAL);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW), 0);
	// Now sealed as needed: the same region opens.
	doorbells(fds);
	assert_int_equal(shmchan_client_open(&f->g, NULL, fd, fds[0], fds[1], &cli), 0);
	shmchan_client_close(cli);
}

static void test_open_rejects_wrong_size(void **state) {
	struct fixture *f = *state;
	size_t size = f->g.region_size;
	int fd;

	fd = region_memfd(&f->g, size + SHMCHAN_REGION_ALIGN, SEALS_ALL);
	assert_open_fails(&f->g, fd, -EINVAL);
	close(fd);

	// Too short for the geometry: sealed, but only the control block fits.
	fd = memfd_create("short", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(size - SHMCHAN_REGION_ALIGN)), 0);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, SEALS_ALL), 0);
	assert_open_fails(&f->g, fd, -EINVAL);
	close(fd);
}

// The normal case: the client maps its own view of the daemon's memfd.
static void test_open_sealed_region(void **state) {
	struct fixture *f = *state;
	struct shmchan_client *cli = NULL;
	struct shmchan_server *srv;
	char msg[SHMCHAN_MSG_MIN] = "hello sealed";
	char buf[SHMCHAN_MSG_MIN];
	int fds[2];

	assert_int_equal(shmchan_server_create(&f->mem, &f->g, &srv), 0);
	doorbells(fds);
	assert_int_equal(shmchan_client_open(&f->g, NULL, dup(f->mem.fd), fds[0], fds[1], &cli), 0);
	assert_int_equal(shmchan_client_send(cli, msg, sizeof(msg), NULL, 0), 0);
	assert_int_equal(shmchan_server_recv(srv, buf, sizeof(buf)), sizeof(msg));
	assert_memory_equal(buf, msg, sizeof(msg));
	shmchan_client_close(cli);
	shmchan_server_destroy(srv);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_client_cannot_resize,
			fixture_setup,
			fixture_teardown
		),
		cmocka_unit_test_setup_teardown(
			test_seals_cannot_change,
			fixture_setup,
			fixture_teardown
		),
		cmocka_unit_test_setup_teardown(
			test_open_rejects_unsealed,
			fixture_setup,
			fixture_teardown
		),
		cmocka_unit_test_setup_teardown(
			test_open_rejects_wrong_size,
			fixture_setup,
			fixture_teardown
		),
		cmocka_unit_test_setup_teardown(
			test_open_sealed_region,
			fixture_setup,
			fixture_teardown
		),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
