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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint32_t next_id = 1;

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

	struct raw_attach_reply r;
	raw_attach(fd, next_id++, GR_SHM_BACKING_MEMZONE, SHMCHAN_LAYOUT_VERSION, &r);
	raw_close_fds(r.fds, r.n_fds);
	CHECK(r.resp.status == ENOTSUP,
	      "memzone only: status %u (%s), expected ENOTSUP",
	      r.resp.status,
	      strerror((int)r.resp.status));
	CHECK(r.resp.payload_len == 0 && r.n_fds == 0,
	      "memzone only: refused with %u bytes and %u descriptors",
	      r.resp.payload_len,
	      r.n_fds);
	printf("memzone only: ENOTSUP: ok\n");

	// The refusal left the connection usable: ask again, memfd allowed.
	raw_attach(
		fd,
		next_id++,
		GR_SHM_BACKING_MEMZONE | GR_SHM_BACKING_MEMFD,
		SHMCHAN_LAYOUT_VERSION,
		&r
	);
	CHECK(r.resp.status == 0,
	      "memzone or memfd: status %u (%s)",
	      r.resp.status,
	      strerror((int)r.resp.status));
	CHECK(r.resp.payload_len == sizeof(r.attach),
	      "attach response of %u bytes",
	      r.resp.payload_len);
	CHECK(r.attach.backing == GR_SHM_BACKING_MEMFD,
	      "memzone or memfd: backing %#x, expected memfd",
	      r.attach.backing);
	CHECK(r.attach.n_fds == RAW_MEMFD_ATTACH_FDS && r.n_fds == RAW_MEMFD_ATTACH_FDS,
	      "memfd attach: %u descriptors announced, %u received, expected %d",
	      r.attach.n_fds,
	      r.n_fds,
	      RAW_MEMFD_ATTACH_FDS);
	raw_expect_memfd_channel_fds(r.fds, r.attach.region_size);
	raw_close_fds(r.fds, r.n_fds);
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
