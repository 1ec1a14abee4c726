// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench's kernel wake-ups: eventfd (one each way) and unix, a message
// each way over a Unix stream socketpair, with a blocking follower or one
// that serves as an event loop does (unix-epoll) (ref_bench.h).

#include "ref_bench.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

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

void eventfd_leader_op(struct ctx *c) {
	efd_write(c->efd_req);
	efd_read(c->efd_resp);
}

void eventfd_leader_stop(struct ctx *c) {
	__atomic_store_n(&c->sh->stop, 1, __ATOMIC_RELEASE);
	efd_write(c->efd_req);
}

void eventfd_follower(struct ctx *c) {
	uint64_t n = 0;

	for (;;) {
		efd_read(c->efd_req);
		if (__atomic_load_n(&c->sh->stop, __ATOMIC_ACQUIRE))
			break;
		efd_write(c->efd_resp);
		n++;
	}
	c->sh->follower_ops = n;
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

void unix_leader_op(struct ctx *c) {
	sock_send_all(c->sock[0], c->msg, c->msg_len);
	if (!sock_recv_all(c->sock[0], c->msg, c->msg_len))
		fail("the follower closed the socket");
}

void unix_leader_stop(struct ctx *c) {
	shutdown(c->sock[0], SHUT_WR);
}

void unix_follower(struct ctx *c) {
	uint64_t n = 0;

	while (sock_recv_all(c->sock[1], c->msg, c->msg_len)) {
		sock_send_all(c->sock[1], c->msg, c->msg_len);
		n++;
	}
	c->sh->follower_ops = n;
}

// The follower of unix-epoll: each request read as it comes, one
// recv(MSG_DONTWAIT) after each epoll_wait, a request in more than one
// piece waiting for the next wake-up, as an event loop's reads do.
void unix_epoll_follower(struct ctx *c) {
	struct epoll_event ev = {.events = EPOLLIN};
	int fd = c->sock[1], ep = epoll_create1(EPOLL_CLOEXEC);
	size_t got = 0;
	uint64_t n = 0;

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		fail("epoll: %s", strerror(errno));
	for (;;) {
		int k = epoll_wait(ep, &ev, 1, -1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			fail("epoll_wait: %s", strerror(errno));
		ssize_t r = recv(fd, c->msg + got, c->msg_len - got, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			fail("recv: %s", strerror(errno));
		if (r == 0) {
			if (got != 0)
				fail("recv: end of file inside a message");
			break;
		}
		got += (size_t)r;
		if (got < c->msg_len)
			continue;
		got = 0;
		sock_send_all(fd, c->msg, c->msg_len);
		n++;
	}
	close(ep);
	c->sh->follower_ops = n;
}
