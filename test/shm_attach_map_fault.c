// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A channel the client was granted but cannot map is given back: with mmap
// failing in this process, an auto connect stays on the socket and the
// daemon holds no channel for it at once (GR_SHM_STATS); the channel is
// counted as given back, and a retry of the attach on the same connection
// gets a working channel. Also the request itself, on a raw connection:
// GR_SHM_DETACH without a channel answers ENOENT, and attach, detach,
// attach again works on one connection.
//
// usage: shm_attach_map_fault SOCK (under test/with_daemon.sh)

#include "check.h"
#include "client_priv.h"
#include "raw_sock.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *sock_path;

// The fault: while set, every mapping of a file fails as if the address
// space were full. This definition takes the place of libc's for the whole
// program, the client library (linked statically) included.
static bool mmap_fails;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
	if (mmap_fails && fd >= 0) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static struct gr_shm_stats_resp stats_of(struct gr_api_client *c, const char *what) {
	struct gr_shm_stats_resp stats;

	long id = gr_api_client_send(c, GR_SHM_STATS, 0, NULL);
	CHECK(id > 0, "%s: send GR_SHM_STATS: %s", what, strerror(errno));
	long len = gr_api_client_recv_into(c, (uint32_t)id, &stats, sizeof(stats));
	CHECK(len == (long)sizeof(stats), "%s: GR_SHM_STATS: %ld: %s", what, len, strerror(errno));
	return stats;
}

static void ping(struct gr_api_client *c, const char *what) {
	long len = gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL);
	CHECK(len == 0, "%s: GR_PING: %ld: %s", what, len, strerror(errno));
}

// The client library: a mapping that fails gives the channel back.
static void map_fault_gives_back(void) {
	struct gr_api_client_opts opts = {.spin_us = -1, .version = "shm_attach_map_fault"};

	mmap_fails = true;
	struct gr_api_client *c = gr_api_client_connect_opts(sock_path, &opts);
	mmap_fails = false;
	CHECK(c != NULL, "connect with mmap failing: %s", strerror(errno));
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SOCKET, "on shm although mmap failed");
	const char *reason = gr_api_client_transport_reason(c);
	CHECK(strstr(reason, "cannot map the channel") != NULL, "reason '%s'", reason);
	printf("mmap failing: on the socket ('%s')\n", reason);

	// Asked on the same connection, after the give-back was answered: no
	// wait, the daemon ended the channel before answering.
	struct gr_shm_stats_resp stats = stats_of(c, "after the failed attach");
	CHECK(stats.channels == 0, "the daemon still holds %u channels", stats.channels);
	CHECK(stats.total.detach_request == 1,
	      "%llu channels counted as given back, expected 1",
	      (unsigned long long)stats.total.detach_request);
	CHECK(stats.total.detaches == 1,
	      "%llu detaches, expected 1",
	      (unsigned long long)stats.total.detaches);
	printf("channel given back: channels=0 detach_request=1\n");

	// The same connection attaches again, now that mmap works.
	int ret = client_shm_attach(c);
	CHECK(ret == 0,
	      "retry of the attach: %s ('%s')",
	      strerror(-ret),
	      gr_api_client_transport_reason(c));
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SHM, "retry: not on shm");
	ping(c, "on the retried channel");
	stats = stats_of(c, "after the retry");
	CHECK(stats.channels == 1, "%u channels after the retry, expected 1", stats.channels);
	CHECK(stats.total.requests >= 2, "the channel served no request");
	printf("retry on the same connection: attached, served\n");
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
}

// The request, byte for byte.
static void detach_request_raw(void) {
	struct raw_attach_reply reply;
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	CHECK(raw_send_request(fd, 2, GR_SHM_DETACH, 0, NULL, 0) == 0, "detach: closed");
	raw_expect_status(fd, 2, ENOENT, "GR_SHM_DETACH without a channel");
	for (uint32_t round = 0; round < 2; round++) {
		uint32_t id = 3 + 2 * round;
		raw_attach(fd, id, GR_SHM_BACKING_MEMFD, SHMCHAN_LAYOUT_VERSION, &reply);
		CHECK(reply.resp.status == 0,
		      "attach %u on one connection: %s",
		      round + 1,
		      strerror((int)reply.resp.status));
		CHECK(reply.n_fds == RAW_MEMFD_ATTACH_FDS, "attach: %u fds", reply.n_fds);
		raw_close_fds(reply.fds, reply.n_fds);
		CHECK(raw_send_request(fd, id + 1, GR_SHM_DETACH, 0, NULL, 0) == 0,
		      "detach: closed");
		raw_expect_status(fd, id + 1, 0, "GR_SHM_DETACH of the channel");
	}
	raw_ping(fd, 7, "ping after two attach and detach rounds");
	close(fd);
	printf("raw: ENOENT without a channel, attach/detach twice on one connection\n");
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	sock_path = argv[1];
	watchdog_start(TEST_WATCHDOG_S);

	map_fault_gives_back();
	detach_request_raw();
	return EXIT_SUCCESS;
}
