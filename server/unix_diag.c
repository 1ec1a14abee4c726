// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "unix_diag.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

// A reply: one message of the socket with its attributes (a name is 108
// bytes at most), or an error.
#define UNIX_DIAG_REPLY_LEN 1024

// Ask for socket ino (cookie, or INET_DIAG_NOCOOKIE twice: any), showing
// show. Returns the reply's length in reply, or -errno (the kernel's answer:
// -ENOENT for no such socket, -ESTALE for another socket's cookie).
static int diag_query(const struct unix_sock_id *id, uint32_t show, char *reply, size_t len) {
	struct {
		struct nlmsghdr hdr;
		struct unix_diag_req req;
	} msg = {
		.hdr =
			{
				.nlmsg_len = sizeof(msg),
				.nlmsg_type = SOCK_DIAG_BY_FAMILY,
				.nlmsg_flags = NLM_F_REQUEST,
			},
		.req =
			{
				.sdiag_family = AF_UNIX,
				.udiag_states = ~0u,
				.udiag_ino = id->ino,
				.udiag_show = show,
				.udiag_cookie = {id->cookie[0], id->cookie[1]},
			},
	};
	ssize_t n;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	if (send(fd, &msg, sizeof(msg), 0) != (ssize_t)sizeof(msg)) {
		err = errno;
		close(fd);
		return -err;
	}
	n = recv(fd, reply, len, 0);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	const struct nlmsghdr *hdr = (const struct nlmsghdr *)reply;
	if (!NLMSG_OK(hdr, (unsigned)n))
		return -EPROTO;
	if (hdr->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(hdr);
		return hdr->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error < 0 ? e->error
										  : -EPROTO;
	}
	if (hdr->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    hdr->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
		return -EPROTO;
	return (int)hdr->nlmsg_len;
}

int unix_diag_peer(int fd, struct unix_sock_id *peer) {
	struct unix_sock_id self = {.cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE}};
	_Alignas(struct nlmsghdr) char reply[UNIX_DIAG_REPLY_LEN];
	struct stat st;
	int len;

	if (fstat(fd, &st) < 0)
		return -errno;
	self.ino = (uint32_t)st.st_ino;
	len = diag_query(&self, UDIAG_SHOW_PEER, reply, sizeof(reply));
	if (len < 0)
		return len == -EINVAL || len == -ENOENT ? -EPROTONOSUPPORT : len;
	const struct nlmsghdr *hdr = (const struct nlmsghdr *)reply;
	const struct unix_diag_msg *m = NLMSG_DATA(hdr);
	int left = (int)(hdr->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
	peer->ino = 0;
	for (const struct rtattr *a = (const void *)(m + 1); RTA_OK(a, left); a = RTA_NEXT(a, left))
		if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(uint32_t))
			memcpy(&peer->ino, RTA_DATA(a), sizeof(peer->ino));
	if (peer->ino == 0)
		return -ENOTCONN;
	// The peer's cookie, from its own entry: with it, a socket that takes
	// the inode later is another one.
	peer->cookie[0] = peer->cookie[1] = INET_DIAG_NOCOOKIE;
	len = diag_query(peer, 0, reply, sizeof(reply));
	if (len < 0)
		return len == -ENOENT ? -ENOTCONN : len;
	m = NLMSG_DATA((const struct nlmsghdr *)reply);
	memcpy(peer->cookie, m->udiag_cookie, sizeof(peer->cookie));
	return 0;
}

int unix_diag_exists(const struct unix_sock_id *id) {
	_Alignas(struct nlmsghdr) char reply[UNIX_DIAG_REPLY_LEN];
	int len = diag_query(id, 0, reply, sizeof(reply));

	if (len == -ENOENT || len == -ESTALE)
		return 0;
	return len < 0 ? len : 1;
}
