// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A storm of short socket connections: COUNT times connect, GR_HELLO
// (answered 0) and close, one after the other, as fast as the daemon
// answers. With UID (as root), the process first takes that uid and its
// group. Prints one line of key=value: its pid and uid, the connections
// made and the time they took. test/sock_conn_log_bounded.sh runs it.
//
// usage: sock_conn_storm SOCK COUNT [UID]

#include "check.h"
#include "raw_sock.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSEC_PER_MSEC 1000000ull

int main(int argc, char **argv) {
	unsigned long count;
	uint64_t start;
	char *end;

	CHECK(argc == 3 || argc == 4, "usage: %s SOCK COUNT [UID]", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	count = strtoul(argv[2], &end, 10);
	CHECK(*end == '\0' && count > 0, "COUNT '%s' is not a positive number", argv[2]);
	if (argc == 4) {
		unsigned long uid = strtoul(argv[3], &end, 10);
		CHECK(*end == '\0', "UID '%s' is not a number", argv[3]);
		CHECK(setgroups(0, NULL) == 0 &&
			      setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) == 0 &&
			      setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) == 0,
		      "taking uid %lu: %s",
		      uid,
		      strerror(errno));
	}
	start = monotonic_ns();
	for (unsigned long i = 0; i < count; i++) {
		int fd = raw_connect(argv[1]);
		raw_hello(fd, 1);
		close(fd);
	}
	printf("pid=%d uid=%u connections=%lu elapsed_ms=%" PRIu64 "\n",
	       (int)getpid(),
	       (unsigned)getuid(),
	       count,
	       (uint64_t)((monotonic_ns() - start) / NSEC_PER_MSEC));
	return EXIT_SUCCESS;
}
