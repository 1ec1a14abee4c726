// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// EAL 22.11 (eal_common_proc.c) binds the primary's socket "mp_socket" and
// each secondary's "mp_socket_<pid>_<tsc>" (the pid in decimal, the TSC in
// hex) in the runtime folder, copying the path into sockaddr_un.sun_path
// with strlcpy() and snprintf(): a longer path is cut, and names another
// socket or none. A primary whose own path is cut fails its EAL init with
// an error that names no cause, or binds where no secondary looks; a
// secondary whose path is cut binds a name another secondary may take too,
// or the primary's. So the daemon checks the lengths before EAL starts.

#include "eal_mp_socket.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#define MP_SOCKET_NAME "mp_socket"
// The longest suffix of a secondary's socket: "_", the largest pid Linux
// gives (PID_MAX_LIMIT, 4194304 on 64 bits: 7 digits), "_", and a 64-bit TSC
// in hex (16 digits).
#define MP_SECONDARY_SUFFIX_MAX (1 + 7 + 1 + 16)
// Bytes a socket path may take, its NUL aside.
#define SOCK_PATH_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

int eal_mp_socket_check(const char *runtime_dir, const char *prefix, bool secondaries) {
	size_t suffix = secondaries ? MP_SECONDARY_SUFFIX_MAX : 0;
	size_t len = strlen(runtime_dir) + 1 + strlen(MP_SOCKET_NAME) + suffix;
	size_t over;

	if (len <= SOCK_PATH_MAX)
		return 0;
	over = len - SOCK_PATH_MAX;
	fprintf(stderr,
		"shmchand: EAL's multi-process socket %s/" MP_SOCKET_NAME "%s would take %zu"
		" bytes, more than the %zu of a Unix socket path: EAL would cut it without a word,"
		" and %s; shorten --file-prefix by %zu characters (to at most %zu), or the runtime"
		" folder (XDG_RUNTIME_DIR for a user other than root)\n",
		runtime_dir,
		secondaries ? "_PID_TSC (a DPDK secondary's)" : "",
		len,
		SOCK_PATH_MAX,
		secondaries ? "a secondary could fail to start or take another's socket"
			    : "EAL would fail to start or bind where no secondary looks",
		over,
		strlen(prefix) > over ? strlen(prefix) - over : 0);
	return -ENAMETOOLONG;
}
