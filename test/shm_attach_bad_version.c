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

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// Descriptors of a successful attach, in gr_shm.h's order.
#define ATTACH_FDS 3
// Room for more descriptors than any attach passes, so that extra ones are
// counted, not refused by the receive.
#define ATTACH_FDS_ROOM SHMCHAN_FDS_MAX

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

	fill_pattern(req.data, sizeof(req.data), next_id);
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

static void close_fds(const int *fds, unsigned n) {
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
}

// Send an attach request and receive its response with any descriptors.
static void
attach(int fd,
       uint32_t backings,
       uint32_t layout_version,
       struct gr_api_response *resp,
       struct gr_shm_attach_resp *payload,
       int *fds,
       unsigned *n_fds) {
	struct gr_shm_attach_req req = {.backings = backings, .layout_version = layout_version};
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
		ATTACH_FDS_ROOM,
		n_fds
	);
	CHECK(ret == 1, "attach: %s", ret == 0 ? "connection closed" : "no response");
	CHECK(resp->for_id == id, "attach: response for id %u, expected %u", resp->for_id, id);
}

// A refused attach: status want, no payload, no descriptor.
static void expect_refused(int fd, uint32_t backings, uint32_t layout_version, uint32_t want) {
	struct gr_shm_attach_resp payload;
	struct gr_api_response resp;
	int fds[ATTACH_FDS_ROOM];
	unsigned n_fds;

	attach(fd, backings, layout_version, &resp, &payload, fds, &n_fds);
	close_fds(fds, n_fds);
	CHECK(resp.status == want,
	      "attach (backings %#x, layout %u): status %u (%s), expected %s",
	      backings,
	      layout_version,
	      resp.status,
	      strerror(resp.status),
	      strerror(want));
	CHECK(resp.payload_len == 0, "refused attach came with %u bytes", resp.payload_len);
	CHECK(n_fds == 0, "refused attach came with %u descriptors", n_fds);
}

static bool fd_is_anon_inode(int fd) {
	struct stat st;
	// anon_inodefs inodes (eventfd) carry no file type bits.
	return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == 0;
}

// A correct attach: the geometry of this layout, an eventfd for each
// doorbell and a sealed memfd of region_size bytes holding the region.
static void expect_attached(int fd) {
	struct gr_shm_attach_resp a;
	struct gr_api_response resp;
	int fds[ATTACH_FDS_ROOM];
	unsigned n_fds;
	struct stat st;

	attach(fd, GR_SHM_BACKING_MEMFD, SHMCHAN_LAYOUT_VERSION, &resp, &a, fds, &n_fds);
	CHECK(resp.status == 0, "attach: status %u (%s)", resp.status, strerror(resp.status));
	CHECK(resp.payload_len == sizeof(a), "attach response of %u bytes", resp.payload_len);
	CHECK(n_fds == ATTACH_FDS, "attach came with %u descriptors, expected %d", n_fds, ATTACH_FDS
	);
	CHECK(a.n_fds == ATTACH_FDS, "attach response announces %u descriptors", a.n_fds);
	CHECK(a.layout_version == SHMCHAN_LAYOUT_VERSION, "layout version %u", a.layout_version);
	CHECK(a.backing == GR_SHM_BACKING_MEMFD, "backing %#x", a.backing);
	const struct shmchan_geometry g = {
		.layout_version = a.layout_version,
		.cell_size = a.cell_size,
		.ring_cells = a.ring_cells,
		.region_size = a.region_size,
		.req_ring_off = a.req_ring_off,
		.resp_ring_off = a.resp_ring_off,
	};
	CHECK(shmchan_geometry_check(&g) == 0, "geometry: %s", shmchan_last_error());

	CHECK(fd_is_anon_inode(fds[0]), "request doorbell is not an eventfd");
	CHECK(fd_is_anon_inode(fds[1]), "response doorbell is not an eventfd");
	CHECK(fstat(fds[2], &st) == 0 && S_ISREG(st.st_mode), "memory fd is not a memfd");
	CHECK((uint64_t)st.st_size == a.region_size,
	      "memfd of %jd bytes, region of %llu",
	      (intmax_t)st.st_size,
	      (unsigned long long)a.region_size);
	int seals = fcntl(fds[2], F_GET_SEALS);
	CHECK(seals >= 0 &&
		      (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) == (F_SEAL_SHRINK | F_SEAL_GROW),
	      "memfd seals %#x",
	      seals);
	const struct shmchan_ctrl *ctrl =
		mmap(NULL, a.region_size, PROT_READ, MAP_SHARED, fds[2], 0);
	CHECK(ctrl != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(ctrl->magic == SHMCHAN_MAGIC && ctrl->layout_version == SHMCHAN_LAYOUT_VERSION &&
		      ctrl->state == SHMCHAN_STATE_UP,
	      "region: magic %#x, layout %u, state %u",
	      ctrl->magic,
	      ctrl->layout_version,
	      ctrl->state);
	munmap((void *)ctrl, a.region_size);
	close_fds(fds, n_fds);
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
