// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A daemon without hugepages (--hugepages off: EAL --no-huge) accepts no
// DPDK secondary, so it offers memfd channels only: GR_SHM_DAEMON_INFO says
// so, an attach asking for a memzone alone is refused with ENOTSUP and no
// descriptor, and an attach asking for memzone or memfd on the same
// connection gets a memfd channel (3 descriptors: two eventfds and a sealed
// memfd). No channel memzone is ever reserved.
//
// usage: shm_nohuge_memzone_refused SOCK
// (under test/with_daemon.sh --hugepages off)

#include "check.h"
#include "raw_sock.h"
#include "secondary.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>
#include <shmchan.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// Descriptors of a memfd attach, in gr_shm.h's order.
#define MEMFD_ATTACH_FDS 3

static uint32_t next_id = 1;

// Send an attach asking for backings; receive the response, its payload (if
// any) and its descriptors.
static void
attach(int fd,
       uint32_t backings,
       struct gr_api_response *resp,
       struct gr_shm_attach_resp *payload,
       int *fds,
       unsigned *n_fds) {
	struct gr_shm_attach_req req = {
		.backings = backings,
		.layout_version = SHMCHAN_LAYOUT_VERSION,
	};
	uint32_t id = next_id++;

	*n_fds = 0;
	memset(payload, 0, sizeof(*payload));
	CHECK(raw_send_request(fd, id, GR_SHM_ATTACH, sizeof(req), &req, sizeof(req)) == 0,
	      "attach: connection closed");
	int ret = raw_recv_response_fds(
		fd,
		resp,
		payload,
		sizeof(*payload),
		fds,
		SHMCHAN_FDS_MAX,
		n_fds
	);
	CHECK(ret == 1, "attach: %s", ret == 0 ? "connection closed" : "no response");
	CHECK(resp->for_id == id, "attach: response for id %u, expected %u", resp->for_id, id);
}

static bool fd_is_anon_inode(int fd) {
	struct stat st;
	// anon_inodefs inodes (eventfd) carry no file type bits.
	return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == 0;
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	const char *sock = argv[1];
	watchdog_start(TEST_WATCHDOG_S);

	struct gr_shm_daemon_info info;
	secondary_daemon_info(sock, &info);
	CHECK(info.backings == GR_SHM_BACKING_MEMFD,
	      "the daemon without hugepages offers backings %#x, expected memfd only (%#x)",
	      info.backings,
	      GR_SHM_BACKING_MEMFD);
	printf("daemon info: memfd only: ok\n");

	int fd = raw_connect(sock);
	raw_hello(fd, next_id++);

	struct gr_shm_attach_resp a;
	struct gr_api_response resp;
	int fds[SHMCHAN_FDS_MAX];
	unsigned n_fds;
	attach(fd, GR_SHM_BACKING_MEMZONE, &resp, &a, fds, &n_fds);
	for (unsigned i = 0; i < n_fds; i++)
		close(fds[i]);
	CHECK(resp.status == ENOTSUP,
	      "memzone only: status %u (%s), expected ENOTSUP",
	      resp.status,
	      strerror((int)resp.status));
	CHECK(resp.payload_len == 0 && n_fds == 0,
	      "memzone only: refused with %u bytes and %u descriptors",
	      resp.payload_len,
	      n_fds);
	printf("memzone only: ENOTSUP: ok\n");

	// The refusal left the connection usable: ask again, memfd allowed.
	attach(fd, GR_SHM_BACKING_MEMZONE | GR_SHM_BACKING_MEMFD, &resp, &a, fds, &n_fds);
	CHECK(resp.status == 0,
	      "memzone or memfd: status %u (%s)",
	      resp.status,
	      strerror((int)resp.status));
	CHECK(resp.payload_len == sizeof(a), "attach response of %u bytes", resp.payload_len);
	CHECK(a.backing == GR_SHM_BACKING_MEMFD,
	      "memzone or memfd: backing %#x, expected memfd",
	      a.backing);
	CHECK(a.n_fds == MEMFD_ATTACH_FDS && n_fds == MEMFD_ATTACH_FDS,
	      "memfd attach: %u descriptors announced, %u received, expected %d",
	      a.n_fds,
	      n_fds,
	      MEMFD_ATTACH_FDS);
	CHECK(fd_is_anon_inode(fds[0]) && fd_is_anon_inode(fds[1]), "a doorbell is not an eventfd");
	struct stat st;
	CHECK(fstat(fds[2], &st) == 0 && S_ISREG(st.st_mode) &&
		      (uint64_t)st.st_size == a.region_size,
	      "the memory descriptor is no memfd of %llu bytes",
	      (unsigned long long)a.region_size);
	int seals = fcntl(fds[2], F_GET_SEALS);
	CHECK(seals >= 0 &&
		      (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) == (F_SEAL_SHRINK | F_SEAL_GROW),
	      "memfd seals %#x",
	      seals);
	for (unsigned i = 0; i < n_fds; i++)
		close(fds[i]);
	printf("memzone or memfd: memfd channel, 3 descriptors: ok\n");

	// The daemon lists the channel as memfd and reserved no memzone.
	struct gr_api_client *mon = secondary_connect(sock, GR_API_TRANSPORT_SOCKET, "monitor");
	CHECK(secondary_channel_list(mon, getpid(), NULL) == GR_SHM_BACKING_MEMFD,
	      "the raw connection's channel is not listed as memfd");
	struct gr_shm_stats_resp stats;
	secondary_stats(mon, &stats);
	CHECK(stats.memzones == 0 && stats.channels == 1,
	      "%u memzones and %u channels, expected 0 and 1",
	      stats.memzones,
	      stats.channels);
	close(fd);
	secondary_wait_stats(mon, 0, 0, 5000, &stats);
	CHECK(gr_api_client_disconnect(mon) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
