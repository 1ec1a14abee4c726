// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Which Unix sockets exist, asked of the kernel (sock_diag, NETLINK_SOCK_DIAG
// with AF_UNIX: what ss -x reads; no privilege needed). A socket exists as
// long as any process holds a descriptor of it, or it is in flight in an
// SCM_RIGHTS message: so the peer of a connection exists while any process
// it was forked into or passed to still holds it. Any thread.

#pragma once

#include <stdint.h>

// One socket, for good: its inode and its cookie (a number the kernel never
// gives another socket).
struct unix_sock_id {
	uint32_t ino;
	uint32_t cookie[2];
};

// The peer of the connected Unix socket fd. Returns 0, -ENOTCONN (no peer
// any more), or another -errno (-EPROTONOSUPPORT: the kernel has no unix
// sock_diag).
int unix_diag_peer(int fd, struct unix_sock_id *peer);

// Whether the socket id still exists: 1, 0 (released, its inode given to
// another socket since, or never was), or -errno.
int unix_diag_exists(const struct unix_sock_id *id);
