// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "raw_chan.h"
#include "check.h"
#include "raw_sock.h"

#include <gr_api.h>

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

// A wait looks at the ring again after this long asleep on the lease.
#define RAW_CHAN_POLL_MS 1
#define NSEC_PER_MSEC 1000000ull

void raw_chan_attach(struct raw_chan *rc, const char *sock_path) {
	struct raw_attach_reply reply;

	memset(rc, 0, sizeof(*rc));
	rc->sock = raw_connect(sock_path);
	raw_hello(rc->sock, 1);
	raw_attach(rc->sock, 2, GR_SHM_BACKING_MEMFD, SHMCHAN_LAYOUT_VERSION, &reply);
	CHECK(reply.resp.status == 0, "attach: %s", strerror((int)reply.resp.status));
	CHECK(reply.n_fds == RAW_MEMFD_ATTACH_FDS, "attach gave %u descriptors", reply.n_fds);
	raw_expect_memfd_channel_fds(reply.fds, reply.attach.region_size);
	rc->attach = reply.attach;

	const struct shmchan_geometry g = {
		.layout_version = rc->attach.layout_version,
		.cell_size = rc->attach.cell_size,
		.ring_cells = rc->attach.ring_cells,
		.region_size = rc->attach.region_size,
		.req_ring_off = rc->attach.req_ring_off,
		.resp_ring_off = rc->attach.resp_ring_off,
		.generation = rc->attach.generation,
	};
	CHECK(shmchan_geometry_check(&g) == 0, "geometry: %s", shmchan_last_error());
	CHECK(shmchan_client_open(&g, NULL, reply.fds[2], reply.fds[0], reply.fds[1], &rc->chan) ==
		      0,
	      "map the channel: %s",
	      shmchan_last_error());
	rc->next_id = 3;
}

uint32_t raw_chan_send(struct raw_chan *rc, uint32_t type, const void *payload, uint32_t len) {
	const struct gr_api_request hdr = {.id = rc->next_id++, .type = type, .payload_len = len};
	uint64_t deadline = monotonic_ns() + RAW_RECV_TIMEOUT_MS * NSEC_PER_MSEC;
	int ret;

	while ((ret = shmchan_client_send(rc->chan, &hdr, sizeof(hdr), payload, len)) == -ENOBUFS) {
		CHECK(monotonic_ns() < deadline,
		      "no room in the request ring for request %u",
		      hdr.id);
		CHECK(!raw_chan_lease_ended(rc, RAW_CHAN_POLL_MS),
		      "lease ended at request %u",
		      hdr.id);
	}
	CHECK(ret == 0, "send request %u: %s", hdr.id, strerror(-ret));
	return hdr.id;
}

int raw_chan_recv(struct raw_chan *rc, void *buf, size_t cap, int ms) {
	uint64_t deadline = monotonic_ns() + (uint64_t)ms * NSEC_PER_MSEC;
	int n;

	while ((n = shmchan_client_recv(rc->chan, buf, cap)) == 0) {
		if (monotonic_ns() >= deadline)
			return 0;
		CHECK(!raw_chan_lease_ended(rc, RAW_CHAN_POLL_MS), "lease ended during a receive");
	}
	CHECK(n > 0, "receive: %s", strerror(-n));
	// A daemon waiting for room learns of what we took, as the client
	// library tells it.
	shmchan_client_room_check(rc->chan);
	return n;
}

bool raw_chan_lease_ended(struct raw_chan *rc, int ms) {
	struct pollfd pfd = {.fd = rc->sock, .events = POLLIN};
	char byte;

	int n = poll(&pfd, 1, ms);
	CHECK(n >= 0 || errno == EINTR, "poll: %s", strerror(errno));
	if (n <= 0)
		return false;
	ssize_t got = recv(rc->sock, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
	if (got == 0 || (got < 0 && errno == ECONNRESET))
		return true;
	CHECK(got < 0 && errno == EAGAIN, "the daemon wrote on the socket of an attached channel");
	return false;
}

void raw_chan_close(struct raw_chan *rc) {
	shmchan_client_close(rc->chan);
	close(rc->sock);
	rc->chan = NULL;
	rc->sock = -1;
}
