// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench's tests through the kernel (ref_bench.h); what each measures:
// usage() in ref_bench.c. --gap-us times the wake-up of a peer idle that long.

#include "ref_bench.h"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>

static void efd_write(int fd) {
	static const uint64_t one = 1;
	if (write(fd, &one, sizeof(one)) != sizeof(one))
		fail("eventfd write: %s", strerror(errno));
}

static void efd_read(int fd) {
	uint64_t v;
	while (read(fd, &v, sizeof(v)) != sizeof(v)) {
		if (errno != EINTR)
			fail("eventfd read: %s", strerror(errno));
	}
}

static void eventfd_op(struct ctx *c) {
	efd_write(c->efd_req);
	efd_read(c->efd_resp);
}

// Release: the follower that wakes up reads the flag set (acquire below).
static void eventfd_stop(struct ctx *c) {
	__atomic_store_n(&c->sh->stop, 1, __ATOMIC_RELEASE);
	efd_write(c->efd_req);
}

static uint64_t eventfd_follower(struct ctx *c) {
	uint64_t n;
	for (n = 0; efd_read(c->efd_req), !__atomic_load_n(&c->sh->stop, __ATOMIC_ACQUIRE); n++)
		efd_write(c->efd_resp);
	return n;
}

static void sock_send_all(int fd, const uint8_t *buf, size_t len) {
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("send: %s", strerror(errno));
		buf += n;
		len -= (size_t)n;
	}
}

// Returns false at end of file before the first byte.
static bool sock_recv_all(int fd, uint8_t *buf, size_t len) {
	size_t got = 0;
	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("recv: %s", strerror(errno));
		if (n == 0) {
			if (got == 0)
				return false;
			fail("recv: end of file inside a message");
		}
		got += (size_t)n;
	}
	return true;
}

static void unix_op(struct ctx *c) {
	sock_send_all(c->sock[0], c->msg, c->msg_len);
	if (!sock_recv_all(c->sock[0], c->msg, c->msg_len))
		fail("the follower closed the socket");
}

static void unix_stop(struct ctx *c) {
	shutdown(c->sock[0], SHUT_WR);
}

static uint64_t unix_follower(struct ctx *c) {
	uint64_t n = 0;
	while (sock_recv_all(c->sock[1], c->msg, c->msg_len)) {
		sock_send_all(c->sock[1], c->msg, c->msg_len);
		n++;
	}
	return n;
}

static void clock_op(struct ctx *c) {
	struct timespec ts;
	(void)c;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	__asm__ volatile("" : : "r"(&ts) : "memory");
}

static void syscall_op(struct ctx *c) {
	(void)c;
	syscall(SYS_getppid);
}

const struct bench kernel_benches[] = {
	{"eventfd", "round_trip", SLEEPS, eventfd_op, eventfd_stop, eventfd_follower},
	{"unix", "round_trip", SIZED | SLEEPS, unix_op, unix_stop, unix_follower},
	{"clock", "call", 0, clock_op, NULL, NULL},
	{"syscall", "call", 0, syscall_op, NULL, NULL},
	{0},
};
