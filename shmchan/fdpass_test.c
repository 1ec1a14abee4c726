// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Passing descriptors over the socket (SCM_RIGHTS): shmchan_send_fds() and
// shmchan_recv_fds(), as the attach response uses them.

#include "region.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static int socks_setup(void **state) {
	static int socks[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, socks), 0);
	*state = socks;
	return 0;
}

static int socks_teardown(void **state) {
	int *socks = *state;

	for (unsigned i = 0; i < 2; i++)
		if (socks[i] >= 0)
			close(socks[i]);
	return 0;
}

static unsigned open_fd_count(void) {
	DIR *dir = opendir("/proc/self/fd");
	unsigned n = 0;

	assert_non_null(dir);
	while (readdir(dir) != NULL)
		n++;
	closedir(dir);
	return n;
}

static void assert_same_file(int a, int b) {
	struct stat sa, sb;

	assert_int_equal(fstat(a, &sa), 0);
	assert_int_equal(fstat(b, &sb), 0);
	assert_int_equal(sa.st_dev, sb.st_dev);
	assert_int_equal(sa.st_ino, sb.st_ino);
}

static void test_pass_three_fds(void **state) {
	int *socks = *state;
	int fds[3], got[SHMCHAN_FDS_MAX];
	char msg[] = "attach response", buf[64];
	uint64_t count;
	unsigned n_got;

	fds[0] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	fds[1] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	fds[2] = memfd_create("fdpass_test", MFD_CLOEXEC);
	assert_true(fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0);

	assert_int_equal(shmchan_send_fds(socks[0], msg, sizeof(msg), fds, 3), sizeof(msg));
	assert_int_equal(
		shmchan_recv_fds(socks[1], buf, sizeof(buf), got, SHMCHAN_FDS_MAX, &n_got),
		sizeof(msg)
	);
	assert_memory_equal(buf, msg, sizeof(msg));
	assert_int_equal(n_got, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_true(got[i] != fds[i]);
		assert_same_file(got[i], fds[i]);
		assert_true(fcntl(got[i], F_GETFD) & FD_CLOEXEC);
	}
	// In order: a ring on the received doorbell is seen on the original.
	count = 1;
	assert_int_equal(write(got[1], &count, sizeof(count)), sizeof(count));
	assert_int_equal(read(fds[1], &count, sizeof(count)), sizeof(count));
	assert_int_equal(count, 1);
	errno = 0;
	assert_int_equal(read(fds[0], &count, sizeof(count)), -1);
	assert_int_equal(errno, EAGAIN);

	for (unsigned i = 0; i < 3; i++) {
		close(fds[i]);
		close(got[i]);
	}
}

static void test_no_fds(void **state) {
	int *socks = *state;
	char msg[] = "plain", buf[16];
	unsigned n_got = 99;
	int got[1];

	assert_int_equal(shmchan_send_fds(socks[0], msg, sizeof(msg), NULL, 0), sizeof(msg));
	assert_int_equal(shmchan_recv_fds(socks[1], buf, sizeof(buf), got, 1, &n_got), sizeof(msg));
	assert_int_equal(n_got, 0);
	assert_memory_equal(buf, msg, sizeof(msg));
}

static void test_send_rejects(void **state) {
	int *socks = *state;
	int fds[SHMCHAN_FDS_MAX + 1];
	char byte = 0;

	for (unsigned i = 0; i < SHMCHAN_FDS_MAX + 1; i++)
		fds[i] = socks[0];
	assert_int_equal(shmchan_send_fds(socks[0], &byte, 1, fds, SHMCHAN_FDS_MAX + 1), -EINVAL);
	assert_int_equal(shmchan_send_fds(socks[0], &byte, 0, fds, 1), -EINVAL);
}

// More descriptors than the receiver expects: all are closed, none leak.
static void test_recv_too_many(void **state) {
	int *socks = *state;
	unsigned before, n_got = 99;
	int fds[3], got[2];
	char buf[8];

	for (unsigned i = 0; i < 3; i++)
		fds[i] = socks[0];
	assert_int_equal(shmchan_send_fds(socks[0], "x", 1, fds, 3), 1);
	before = open_fd_count();
	assert_int_equal(shmchan_recv_fds(socks[1], buf, sizeof(buf), got, 2, &n_got), -EMSGSIZE);
	assert_int_equal(n_got, 0);
	assert_int_equal(open_fd_count(), before);
}

// The peer is gone: an error, not SIGPIPE (which would kill the test).
static void test_send_to_closed_peer(void **state) {
	int *socks = *state;

	close(socks[1]);
	socks[1] = -1;
	assert_int_equal(shmchan_send_fds(socks[0], "x", 1, &socks[0], 1), -EPIPE);
	assert_true(strlen(shmchan_last_error()) > 0);
}

static void test_recv_eof(void **state) {
	int *socks = *state;
	unsigned n_got = 99;
	char buf[4];
	int got[1];

	close(socks[0]);
	socks[0] = -1;
	assert_int_equal(shmchan_recv_fds(socks[1], buf, sizeof(buf), got, 1, &n_got), 0);
	assert_int_equal(n_got, 0);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pass_three_fds, socks_setup, socks_teardown),
		cmocka_unit_test_setup_teardown(test_no_fds, socks_setup, socks_teardown),
		cmocka_unit_test_setup_teardown(test_send_rejects, socks_setup, socks_teardown),
		cmocka_unit_test_setup_teardown(test_recv_too_many, socks_setup, socks_teardown),
		cmocka_unit_test_setup_teardown(
			test_send_to_closed_peer,
			socks_setup,
			socks_teardown
		),
		cmocka_unit_test_setup_teardown(test_recv_eof, socks_setup, socks_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
