// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The clients of shm_restart_secondary.sh.
//
// hold SOCK: a DPDK secondary. It attaches to the daemon at SOCK on a
// memzone channel, checks some GR_PING2 and prints "attached". Then it waits
// for a line on stdin (the script killed the daemon with SIGKILL
// meanwhile), checks that its next call fails with ECONNRESET within a
// second, prints "reset", and lives on until stdin closes: while it lives,
// no new daemon can start on the same file prefix. It ends without
// rte_eal_cleanup(): its primary is gone, and the failed start of a new
// daemon on its file prefix rewrote the EAL configuration it maps; exiting
// drops its mappings all the same.
//
// memfd SOCK PREFIX: no secondary. The daemon at SOCK runs on file prefix
// PREFIX and serves this client on a memfd channel.
//
// usage: shm_restart_secondary hold SOCK | memfd SOCK PREFIX

#include "check.h"
#include "secondary.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// A dead daemon's lease ends at once; a second is far beyond any delay.
#define PROMPT_NS 1000000000ull
#define CALLS 1000

static int memfd_client(const char *sock, const char *prefix) {
	struct gr_shm_daemon_info info;

	secondary_daemon_info(sock, &info);
	CHECK(strcmp(info.file_prefix, prefix) == 0,
	      "the daemon runs on file prefix %s, expected %s",
	      info.file_prefix,
	      prefix);
	struct gr_api_client *c = secondary_connect(sock, GR_API_TRANSPORT_SHM, "memfd");
	uint32_t backing = secondary_channel_list(c, getpid(), NULL);
	CHECK(backing == GR_SHM_BACKING_MEMFD, "backing %#x, expected memfd", backing);
	secondary_pipeline(c, GR_PING2, GR_PING2_LEN, CALLS);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	printf("new daemon on file prefix %s serves a memfd client: ok\n", prefix);
	return EXIT_SUCCESS;
}

static int hold(const char *sock) {
	char line[16];

	setvbuf(stdout, NULL, _IOLBF, 0);

	secondary_eal_init(sock);
	struct gr_api_client *c = secondary_connect(sock, GR_API_TRANSPORT_SHM, "restart");
	uint32_t backing = secondary_channel_list(c, getpid(), NULL);
	CHECK(backing == GR_SHM_BACKING_MEMZONE, "backing %#x, expected memzone", backing);
	secondary_pipeline(c, GR_PING2, GR_PING2_LEN, CALLS);
	printf("attached\n");

	CHECK(fgets(line, sizeof(line), stdin) != NULL,
	      "stdin closed before the daemon was killed");
	uint64_t start = monotonic_ns();
	long ret = gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL);
	int err = errno;
	uint64_t took = monotonic_ns() - start;
	CHECK(ret < 0, "GR_PING succeeded after the daemon was killed");
	CHECK(err == ECONNRESET, "GR_PING: %s, expected ECONNRESET", strerror(err));
	CHECK(took < PROMPT_NS, "GR_PING took %llu ms to fail", (unsigned long long)(took / 1000000)
	);
	printf("reset after %llu us\n", (unsigned long long)(took / 1000));
	gr_api_client_disconnect(c);

	while (fgets(line, sizeof(line), stdin) != NULL)
		;
	return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
	watchdog_start(TEST_WATCHDOG_S);
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2]);
	CHECK(argc == 4 && strcmp(argv[1], "memfd") == 0,
	      "usage: %s hold SOCK | memfd SOCK PREFIX",
	      argv[0]);
	return memfd_client(argv[2], argv[3]);
}
