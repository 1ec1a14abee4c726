// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The client side of the socket server's unit tests (sock_test.c,
// sock_turn_test.c): raw requests and responses on a connection, each wait
// bounded by SOCK_TEST_WAIT_MS, every failure a cmocka assertion.

#pragma once

#include <gr_api.h>

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

// Every wait of the tests is bounded by this.
#define WAIT_MS 5000

static inline int client_connect(const char *path) {
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	strcpy(addr.sun_path, path);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

static inline void wait_fd(int fd, short events, int timeout_ms) {
	struct pollfd pfd = {.fd = fd, .events = events};
	assert_int_equal(poll(&pfd, 1, timeout_ms), 1);
}

static inline void write_all(int fd, const void *buf, size_t len) {
	const char *p = buf;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN) {
			wait_fd(fd, POLLOUT, WAIT_MS);
			continue;
		}
		assert_true(n > 0);
		p += n;
		len -= (size_t)n;
	}
}

static inline void read_all(int fd, void *buf, size_t len) {
	char *p = buf;

	while (len > 0) {
		ssize_t n;
		wait_fd(fd, POLLIN, WAIT_MS);
		n = recv(fd, p, len, 0);
		assert_true(n > 0);
		p += n;
		len -= (size_t)n;
	}
}

static inline void
send_request(int fd, uint32_t id, uint32_t type, const void *payload, uint32_t len) {
	struct gr_api_request req = {.id = id, .type = type, .payload_len = len};

	write_all(fd, &req, sizeof(req));
	if (len > 0)
		write_all(fd, payload, len);
}

static inline void expect_response(int fd, uint32_t id, uint32_t status, uint32_t len) {
	struct gr_api_response resp;

	read_all(fd, &resp, sizeof(resp));
	assert_int_equal(resp.for_id, id);
	assert_int_equal(resp.status, status);
	assert_int_equal(resp.payload_len, len);
}

static inline void hello(int fd) {
	struct gr_hello_req req = {.api_version = GR_API_VERSION, .version = "sock_test"};

	send_request(fd, 1, GR_HELLO, &req, sizeof(req));
	expect_response(fd, 1, 0, 0);
}

static inline void expect_eof(int fd) {
	char byte;

	wait_fd(fd, POLLIN, WAIT_MS);
	assert_int_equal(recv(fd, &byte, 1, 0), 0);
}
