// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// GR_SHM_ATTACH refusals, on one raw connection: a layout version the daemon
// does not speak (EPROTO), no backing it offers (ENOTSUP), then a correct
// attach (exactly 3 descriptors: two eventfds and a sealed memfd holding the
// region), then a second attach on the same connection (EEXIST). No refusal
// may pass a descriptor. Another client, attached to a channel of its own,
// keeps being served after each step.
//
// usage: shm_attach_bad_version SOCK (under test/with_daemon.sh)

#include "check.h"
#include "raw_sock.h"

#include <region.h>

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *sock_path;
static struct gr_api_client *other;
static uint32_t next_id = 1;

static void fill_pattern(uint8_t *buf, size_t len, unsigned salt) {
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 13 + salt);
}

// The other client, on its own channel, still gets its echoes.
static void check_other_served(const char *after) {
	struct gr_ping2 req, resp;

	fill_pattern((uint8_t *)req.payload, sizeof(req.payload), next_id);
	long id = gr_api_client_send(other, GR_PING2, sizeof(req), &req);
	CHECK(id > 0, "other client after %s: send: %s", after, strerror(errno));
	long len = gr_api_client_recv_into(other, (uint32_t)id, &resp, sizeof(resp));
	CHECK(len == (long)sizeof(resp),
	      "other client after %s: %ld: %s",
	      after,
	      len,
	      strerror(errno));
	CHECK(memcmp(&req, &resp, sizeof(req)) == 0, "other client after %s: wrong echo", after);
	printf("%s: ok\n", after);
}

// A refused attach: status want, no payload, no descriptor.
static void expect_refused(int fd, uint32_t backings, uint32_t layout_version, uint32_t want) {
	struct raw_attach_reply r;

	raw_attach(fd, next_id++, backings, layout_version, &r);
	raw_close_fds(r.fds, r.n_fds);
	CHECK(r.resp.status == want,
	      "attach (backings %#x, layout %u): status %u (%s), expected %s",
	      backings,
	      layout_version,
	      r.resp.status,
	      strerror(r.resp.status),
	      strerror(want));
	CHECK(r.resp.payload_len == 0, "refused attach came with %u bytes", r.resp.payload_len);
	CHECK(r.n_fds == 0, "refused attach came with %u descriptors", r.n_fds);
}

// A correct attach: the geometry of this layout, an eventfd for each
// doorbell and a sealed memfd of region_size bytes holding the region.
static void expect_attached(int fd) {
	struct raw_attach_reply r;
	const struct gr_shm_attach_resp *a = &r.attach;

	raw_attach(fd, next_id++, GR_SHM_BACKING_MEMFD, SHMCHAN_LAYOUT_VERSION, &r);
	CHECK(r.resp.status == 0, "attach: status %u (%s)", r.resp.status, strerror(r.resp.status));
	CHECK(r.resp.payload_len == sizeof(*a), "attach response of %u bytes", r.resp.payload_len);
	CHECK(r.n_fds == RAW_MEMFD_ATTACH_FDS,
	      "attach came with %u descriptors, expected %d",
	      r.n_fds,
	      RAW_MEMFD_ATTACH_FDS);
	CHECK(a->n_fds == RAW_MEMFD_ATTACH_FDS, "attach response announces %u descriptors", a->n_fds
	);
	CHECK(a->layout_version == SHMCHAN_LAYOUT_VERSION, "layout version %u", a->layout_version);
	CHECK(a->backing == GR_SHM_BACKING_MEMFD, "backing %#x", a->backing);
	const struct shmchan_geometry g = {
		.layout_version = a->layout_version,
		.cell_size = a->cell_size,
		.ring_cells = a->ring_cells,
		.region_size = a->region_size,
		.req_ring_off = a->req_ring_off,
		.resp_ring_off = a->resp_ring_off,
	};
	CHECK(shmchan_geometry_check(&g) == 0, "geometry: %s", shmchan_last_error());

	raw_expect_memfd_channel_fds(r.fds, a->region_size);
	const struct shmchan_ctrl *ctrl =
		mmap(NULL, a->region_size, PROT_READ, MAP_SHARED, r.fds[2], 0);
	CHECK(ctrl != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(ctrl->magic == SHMCHAN_MAGIC && ctrl->layout_version == SHMCHAN_LAYOUT_VERSION &&
		      ctrl->state == SHMCHAN_STATE_UP,
	      "region: magic %#x, layout %u, state %u",
	      ctrl->magic,
	      ctrl->layout_version,
	      ctrl->state);
	// The region's generation is the one the attach response gives, and
	// not 0, the value of a wiped region.
	CHECK(ctrl->generation == a->generation && a->generation != 0,
	      "region of generation %u, the attach response says %u",
	      ctrl->generation,
	      a->generation);
	CHECK(ctrl->cache_line == RTE_CACHE_LINE_SIZE,
	      "region of %u-byte cache lines",
	      ctrl->cache_line);
	munmap((void *)ctrl, a->region_size);
	raw_close_fds(r.fds, r.n_fds);
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	sock_path = argv[1];
	watchdog_start(TEST_WATCHDOG_S);

	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SHM,
		.spin_us = -1,
		.version = "shm_attach_bad_version other",
	};
	other = gr_api_client_connect_opts(sock_path, &opts);
	CHECK(other != NULL, "other client: connect over shm: %s", strerror(errno));
	check_other_served("other client attached");

	int fd = raw_connect(sock_path);
	raw_hello(fd, next_id++);

	expect_refused(fd, GR_SHM_BACKING_MEMFD, SHMCHAN_LAYOUT_VERSION + 1, EPROTO);
	check_other_served("layout version + 1: EPROTO");
	expect_refused(fd, 0, SHMCHAN_LAYOUT_VERSION, ENOTSUP);
	check_other_served("no backing: ENOTSUP");
	// Refusals leave the connection usable.
	raw_ping(fd, next_id++, "ping after refusals");
	expect_attached(fd);
	check_other_served("correct attach: 3 fds");
	expect_refused(fd, GR_SHM_BACKING_MEMFD, SHMCHAN_LAYOUT_VERSION, EEXIST);
	check_other_served("second attach: EEXIST");
	close(fd);

	check_other_served("attached connection closed");
	CHECK(gr_api_client_disconnect(other) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
