// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench's setup: the memfd both processes share (struct shared and two
// rte_rings), the frames, and what every test needs, made before the fork
// (ref_bench.h).

#include "ref_bench.h"

#include <gr_api.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

static size_t align_up(size_t v, size_t a) {
	return (v + a - 1) / a * a;
}

static struct rte_ring *ring_init(uint8_t *mem, const char *name) {
	struct rte_ring *r = (struct rte_ring *)mem;
	int ret = rte_ring_init(r, name, SHMCHAN_RING_CELLS, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ret < 0)
		fail("rte_ring_init: %s", strerror(-ret));
	return r;
}

uint8_t *frame_alloc(size_t bytes) {
	uint8_t *f = aligned_alloc(CACHE_LINE, align_up(bytes, CACHE_LINE));
	if (f == NULL)
		fail("%s", strerror(ENOMEM));
	memset(f, 0, bytes);
	return f;
}

void setup(struct ctx *c, const struct options *o) {
	ssize_t ring_size = rte_ring_get_memsize_elem(SHMCHAN_CELL_SIZE, SHMCHAN_RING_CELLS);
	size_t head = align_up(sizeof(struct shared), CACHE_LINE);
	size_t region;
	uint8_t *base;
	int fd;

	if (ring_size < 0)
		fail("rte_ring_get_memsize_elem: %s", strerror((int)-ring_size));
	region = head + 2 * align_up((size_t)ring_size, CACHE_LINE);
	fd = memfd_create("ref_bench", MFD_CLOEXEC);
	if (fd < 0)
		fail("memfd_create: %s", strerror(errno));
	if (ftruncate(fd, (off_t)region) < 0)
		fail("ftruncate: %s", strerror(errno));
	base = mmap(NULL, region, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		fail("mmap: %s", strerror(errno));
	close(fd);

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->sh = (struct shared *)base;
	c->sh->stream_warmup = o->warmup;
	c->req_ring = ring_init(base + head, "ref_req");
	c->resp_ring = ring_init(base + head + align_up((size_t)ring_size, CACHE_LINE), "ref_resp");

	// A frame as the channel builds it: u32 length, request header,
	// payload, zero padding to whole cells.
	size_t msg = sizeof(struct gr_api_request) + o->size;
	uint32_t len32 = (uint32_t)msg;
	struct gr_api_request hdr = {.id = 1, .type = GR_PING2, .payload_len = (uint32_t)o->size};
	c->cells = SHMCHAN_MSG_CELLS(msg);
	if (c->cells > SHMCHAN_RING_CELLS - 1)
		fail("-z %zu: a message of %u cells does not fit the ring", o->size, c->cells);
	// All the requests in flight, or all their answers, may sit in one
	// ring at once: if they do not fit, the leader and the follower both
	// wait for room that only the other can make.
	if ((uint64_t)o->depth * c->cells > SHMCHAN_RING_CELLS - 1)
		fail("--depth %u: %u messages of %u cells do not fit a ring of %u cells",
		     o->depth,
		     o->depth,
		     c->cells,
		     SHMCHAN_RING_CELLS - 1);
	size_t frame_bytes = (size_t)c->cells * SHMCHAN_CELL_SIZE;
	c->tx_frame = frame_alloc(frame_bytes);
	c->rx_frame = frame_alloc(frame_bytes);
	c->stop_frame = frame_alloc(frame_bytes);
	memcpy(c->tx_frame, &len32, sizeof(len32));
	memcpy(c->tx_frame + SHMCHAN_FRAME_HDR, &hdr, sizeof(hdr));
	payload_fill(c->tx_frame + SHMCHAN_FRAME_HDR + sizeof(hdr), o->size);

	c->efd_req = eventfd(0, EFD_CLOEXEC);
	c->efd_resp = eventfd(0, EFD_CLOEXEC);
	if (c->efd_req < 0 || c->efd_resp < 0)
		fail("eventfd: %s", strerror(errno));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->sock) < 0)
		fail("socketpair: %s", strerror(errno));
	c->msg_len = msg;
	c->msg = frame_alloc(msg);
	memcpy(c->msg, c->tx_frame + SHMCHAN_FRAME_HDR, msg);

	chan_setup(c);
	lines_setup(c);
}
