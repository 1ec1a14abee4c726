// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// SCM_RIGHTS helpers: the daemon passes the doorbell eventfds and the memfd
// to the client with the attach response. Built into both libraries.

#include "region.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

// Control buffer big enough for SHMCHAN_FDS_MAX descriptors, aligned as
// struct cmsghdr wants (the union is the idiom of cmsg(3)).
union fd_cmsg_buf {
	char buf[CMSG_SPACE(sizeof(int) * SHMCHAN_FDS_MAX)];
	struct cmsghdr align;
};

long shmchan_send_fds(int sock, const void *buf, size_t len, const int *fds, unsigned n_fds) {
	union fd_cmsg_buf control;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cmsg;
	ssize_t n;

	if (n_fds > SHMCHAN_FDS_MAX)
		return shmchan_fail(-EINVAL, "%u fds to pass, at most %u", n_fds, SHMCHAN_FDS_MAX);
	if (n_fds > 0) {
		if (len == 0)
			return shmchan_fail(-EINVAL, "fds need at least one byte to ride on");
		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * n_fds);
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return shmchan_fail(-errno, "sendmsg with %u fds: %s", n_fds, strerror(errno));
	return n;
}

long shmchan_recv_fds(
	int sock,
	void *buf,
	size_t len,
	int *fds,
	unsigned max_fds,
	unsigned *n_fds
) {
	union fd_cmsg_buf control;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	bool too_many = false;
	struct cmsghdr *cmsg;
	unsigned count = 0;
	ssize_t n;

	*n_fds = 0;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return shmchan_fail(-errno, "recvmsg: %s", strerror(errno));

	for (cmsg = CMSG_FIRSTHDR(&msg); cmsg != NULL; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
		const unsigned char *data = CMSG_DATA(cmsg);
		size_t n_data;

		if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		n_data = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n_data; i++) {
			int fd;

			memcpy(&fd, data + i * sizeof(int), sizeof(int));
			if (count < max_fds)
				fds[count++] = fd;
			else {
				close(fd);
				too_many = true;
			}
		}
	}
	if (too_many || (msg.msg_flags & MSG_CTRUNC)) {
		for (unsigned i = 0; i < count; i++)
			close(fds[i]);
		return shmchan_fail(
			-EMSGSIZE,
			"more fds than the %u expected came with %zd bytes%s",
			max_fds,
			n,
			(msg.msg_flags & MSG_CTRUNC) ? " (control data truncated)" : ""
		);
	}
	*n_fds = count;
	return n;
}
