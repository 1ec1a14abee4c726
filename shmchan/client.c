// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The client's end of a channel. The client trusts the daemon. It drives
// both rings by hand with rte_ring's single-producer (request ring) and
// single-consumer (response ring) sequences: the same loads and stores in
// the same order, but it keeps the peer's index it read last and reads the
// peer's cache line again only when the ring looks full (enqueue) or empty
// (dequeue), where rte_ring's functions read it on every call, and it writes
// a frame straight into its cells and reads it straight out of them, with no
// staging copy. Like the daemon, it keeps the ring geometry and its own index
// in private memory (struct client_ring): nothing written into the shared
// ring headers after the open can send its copies out of the cell array. It
// needs no EAL and links no DPDK library: built with the ring headers only.

#include "client.h"
#include "shmchan_probes.h"

#include <rte_pause.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

// Rings taken from the response doorbell per recv() of a drain: the daemon
// rings at most once per batch while we sleep, so one recv takes them all.
#define DOORBELL_DRAIN_BYTES 64
// recv() calls of one drain at most (SHMCHAN_DOORBELL_DRAIN_MAX rings): a
// daemon that writes the doorbell without end must not hold the drain (and
// the caller's deadline) in a loop. What is left keeps the doorbell
// readable: the next wait wakes at once, looks at the ring and at its
// deadline, and drains again.
#define DOORBELL_DRAIN_READS (SHMCHAN_DOORBELL_DRAIN_MAX / DOORBELL_DRAIN_BYTES)
_Static_assert(SHMCHAN_DOORBELL_DRAIN_MAX % DOORBELL_DRAIN_BYTES == 0, "whole reads");

// A frame's cells, as bytes: len1 bytes at p1 up to the end of the cell
// array, then the rest at p2.
struct zc_bytes {
	uint8_t *p1;
	size_t len1;
	uint8_t *p2;
};

// The bytes of n cells of r from index head on, split where the cell array
// wraps (n is at most the ring's capacity). Private geometry only.
static struct zc_bytes ring_bytes(const struct client_ring *r, uint32_t head, uint32_t n) {
	uint32_t idx = head & r->mask;
	uint32_t n1 = n < r->size - idx ? n : r->size - idx;

	return (struct zc_bytes){
		r->cells + (size_t)idx * SHMCHAN_CELL_SIZE,
		(size_t)n1 * SHMCHAN_CELL_SIZE,
		r->cells,
	};
}

// Set up our view of a ring of ring_cells cells whose header is at shared.
static void client_ring_init(struct client_ring *r, struct rte_ring *shared, uint32_t ring_cells) {
	r->shared = shared;
	r->cells = shmchan_ring_cells(shared);
	r->size = ring_cells;
	r->mask = ring_cells - 1;
	r->capacity = ring_cells - 1;
}

// Copy n bytes into a frame's cells at byte off (src NULL: zeros).
static void zc_write(const struct zc_bytes *z, size_t off, const void *src, size_t n) {
	size_t first = off < z->len1 ? z->len1 - off : 0;

	if (first > n)
		first = n;
	if (first > 0) {
		if (src != NULL)
			memcpy(z->p1 + off, src, first);
		else
			memset(z->p1 + off, 0, first);
	}
	if (n > first) {
		uint8_t *dst = z->p2 + (off + first - z->len1);
		if (src != NULL)
			memcpy(dst, (const uint8_t *)src + first, n - first);
		else
			memset(dst, 0, n - first);
	}
}

// Copy n bytes out of a frame's cells from byte off.
static void zc_read(const struct zc_bytes *z, size_t off, void *dst, size_t n) {
	size_t first = off < z->len1 ? z->len1 - off : 0;

	if (first > n)
		first = n;
	if (first > 0)
		memcpy(dst, z->p1 + off, first);
	if (n > first)
		memcpy((uint8_t *)dst + first, z->p2 + (off + first - z->len1), n - first);
}

static int map_memfd(const struct shmchan_geometry *g, int mem_fd, void **map) {
	const int seals_needed = F_SEAL_SHRINK | F_SEAL_GROW;
	struct stat st;
	int seals;

	if (fstat(mem_fd, &st) < 0)
		return shmchan_fail(-errno, "memfd: fstat: %s", strerror(errno));
	if (st.st_size < 0 || (uint64_t)st.st_size != g->region_size)
		return shmchan_fail(
			-EINVAL,
			"memfd of %jd bytes, the geometry says %" PRIu64,
			(intmax_t)st.st_size,
			g->region_size
		);
	// A daemon always seals; an unsealed region could shrink under the
	// daemon, so it is not one of ours.
	seals = fcntl(mem_fd, F_GET_SEALS);
	if (seals < 0)
		return shmchan_fail(-EINVAL, "memfd: F_GET_SEALS: %s", strerror(errno));
	if ((seals & seals_needed) != seals_needed)
		return shmchan_fail(-EINVAL, "memfd not sealed against shrinking and growing");
	*map = mmap(NULL, g->region_size, PROT_READ | PROT_WRITE, MAP_SHARED, mem_fd, 0);
	if (*map == MAP_FAILED) {
		*map = NULL;
		return shmchan_fail(-errno, "memfd: mmap: %s", strerror(errno));
	}
	return 0;
}

static int check_ring(const struct rte_ring *r, const char *which, uint32_t ring_cells) {
	if (r->size != ring_cells || r->capacity != ring_cells - 1 ||
	    r->prod.sync_type != RTE_RING_SYNC_ST || r->cons.sync_type != RTE_RING_SYNC_ST)
		return shmchan_fail(
			-EINVAL,
			"%s ring: not a single-producer single-consumer ring of %" PRIu32 " cells",
			which,
			ring_cells
		);
	return 0;
}

// The daemon is trusted; these checks catch a wrong fd or zone, or a daemon
// of another version, before any ring operation runs on garbage.
static int check_region(const struct shmchan_geometry *g, uint8_t *base) {
	const struct shmchan_ctrl *ctrl = (const struct shmchan_ctrl *)base;
	int ret;

	if (ctrl->magic != SHMCHAN_MAGIC)
		return shmchan_fail(
			-EINVAL,
			"no shmchan region here (magic %#" PRIx32 ")",
			ctrl->magic
		);
	if (ctrl->layout_version != SHMCHAN_LAYOUT_VERSION)
		return shmchan_fail(
			-EPROTO,
			"region of layout version %" PRIu32 ", this library speaks %u",
			ctrl->layout_version,
			SHMCHAN_LAYOUT_VERSION
		);
	if (ctrl->cache_line != SHMCHAN_CACHE_LINE)
		return shmchan_fail(
			-EPROTO,
			"region laid out for %" PRIu32 "-byte cache lines, this library for %u",
			ctrl->cache_line,
			SHMCHAN_CACHE_LINE
		);
	if (ctrl->cell_size != g->cell_size || ctrl->ring_cells != g->ring_cells ||
	    ctrl->region_size != g->region_size || ctrl->req_ring_off != g->req_ring_off ||
	    ctrl->resp_ring_off != g->resp_ring_off)
		return shmchan_fail(
			-EINVAL,
			"the region's geometry differs from the attach response's"
		);
	if (ctrl->state == SHMCHAN_STATE_DETACHED)
		return shmchan_fail(-ECONNRESET, "channel already detached by the daemon");
	if (ctrl->state != SHMCHAN_STATE_UP)
		return shmchan_fail(-EINVAL, "region not set up (state %" PRIu32 ")", ctrl->state);
	if (ctrl->generation != g->generation)
		return shmchan_fail(
			-ECONNRESET,
			"region of generation %" PRIu32 ", the attach response's is %" PRIu32
			": the daemon gave it to another channel",
			ctrl->generation,
			g->generation
		);

	ret = check_ring(
		(const struct rte_ring *)(base + g->req_ring_off),
		"request",
		g->ring_cells
	);
	if (ret == 0)
		ret = check_ring(
			(const struct rte_ring *)(base + g->resp_ring_off),
			"response",
			g->ring_cells
		);
	return ret;
}

// The request doorbell eventfd is created non-blocking by the daemon, and
// the flag lives in the open file that we share; set it again so that no
// ring of ours can block, whoever created it. (The response doorbell is only
// drained, with MSG_DONTWAIT.)
static int set_nonblock(int fd) {
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0))
		return shmchan_fail(-errno, "doorbell fd %d: fcntl: %s", fd, strerror(errno));
	return 0;
}

int shmchan_client_open(
	const struct shmchan_geometry *g,
	void *base,
	int mem_fd,
	int req_fd,
	int resp_fd,
	struct shmchan_client **out
) {
	struct shmchan_client *c;
	void *map = NULL;
	int ret;

	ret = shmchan_geometry_check(g);
	if (ret < 0)
		return ret;
	if ((base == NULL) == (mem_fd < 0))
		return shmchan_fail(
			-EINVAL,
			"give either a memfd or a mapped zone, not both or none"
		);
	if (req_fd < 0 || resp_fd < 0)
		return shmchan_fail(-EINVAL, "doorbell fds %d and %d", req_fd, resp_fd);
	ret = set_nonblock(req_fd);
	if (ret < 0)
		return ret;

	if (base == NULL) {
		ret = map_memfd(g, mem_fd, &map);
		if (ret < 0)
			return ret;
		base = map;
	} else if ((uintptr_t)base % SHMCHAN_CACHE_LINE != 0) {
		return shmchan_fail(-EINVAL, "zone at %p is not cache-line aligned", base);
	}
	ret = check_region(g, base);
	if (ret < 0)
		goto err_unmap;

	c = aligned_alloc(SHMCHAN_CACHE_LINE, sizeof(*c));
	if (c == NULL) {
		ret = shmchan_fail(-ENOMEM, "channel client: out of memory");
		goto err_unmap;
	}
	c->ctrl = base;
	client_ring_init(
		&c->req,
		(struct rte_ring *)((uint8_t *)base + g->req_ring_off),
		g->ring_cells
	);
	client_ring_init(
		&c->resp,
		(struct rte_ring *)((uint8_t *)base + g->resp_ring_off),
		g->ring_cells
	);
	// Our indices start where the daemon left them (0 after rte_ring_init()).
	c->req.pos = c->req.shared->prod.tail;
	c->req.peer = c->req.shared->cons.tail;
	c->resp.pos = c->resp.shared->cons.tail;
	c->resp.peer = c->resp.shared->prod.tail;
	c->room_rung_pos = c->resp.pos;
	c->map = map;
	c->map_len = g->region_size;
	c->mem_fd = mem_fd;
	c->req_fd = req_fd;
	c->resp_fd = resp_fd;
	c->unflushed = false;
	c->generation = g->generation;
	*out = c;
	return 0;

err_unmap:
	if (map != NULL)
		munmap(map, g->region_size);
	return ret;
}

void shmchan_client_close(struct shmchan_client *c) {
	if (c == NULL)
		return;
	if (c->map != NULL)
		munmap(c->map, c->map_len);
	if (c->mem_fd >= 0)
		close(c->mem_fd);
	close(c->req_fd);
	close(c->resp_fd);
	free(c);
}

// The lease check before each ring operation (shmchan.h): the daemon has not
// detached the channel, and the region is still of the generation we opened.
// Line 0 of the control block changes only at setup and detach, so this is a
// load from our own cache while the channel is busy.
static bool lease_held(const struct shmchan_client *c) {
	// Acquire pairs with the release store of UP in shmchan_server_create():
	// having seen UP in a zone laid out again for another client, we see
	// its new generation too, not ours from before the wipe.
	uint32_t state = __atomic_load_n(&c->ctrl->state, __ATOMIC_ACQUIRE);

	return state == SHMCHAN_STATE_UP &&
	       __atomic_load_n(&c->ctrl->generation, __ATOMIC_RELAXED) == c->generation;
}

static int lease_lost(const struct shmchan_client *c) {
	return shmchan_fail(
		-ECONNRESET,
		"channel detached by the daemon (state %" PRIu32 ", generation %" PRIu32
		", ours %" PRIu32 ")",
		__atomic_load_n(&c->ctrl->state, __ATOMIC_RELAXED),
		__atomic_load_n(&c->ctrl->generation, __ATOMIC_RELAXED),
		c->generation
	);
}

void shmchan_client_cpu_publish(struct shmchan_client *c, int cpu) {
	uint32_t hint = cpu >= 0 ? (uint32_t)cpu + 1 : SHMCHAN_CPU_UNKNOWN;

	// Compared with our own copy: the line is the daemon's to read at each
	// of its flushes, and a store only when the value changes keeps it in
	// the daemon's cache. Detached: the line may be another client's now.
	if (hint == c->cpu_published || !lease_held(c))
		return;
	c->cpu_published = hint;
	__atomic_store_n(&c->ctrl->client_cpu, hint, __ATOMIC_RELAXED);
}

bool shmchan_client_daemon_on(const struct shmchan_client *c, int cpu) {
	// Two loads of the daemon's line, which it writes when it sleeps, wakes
	// or migrates: in our cache the rest of the time. A hint: the poller may
	// have moved since, and the next look corrects it.
	return cpu >= 0 && __atomic_load_n(&c->ctrl->daemon_sleeping, __ATOMIC_RELAXED) == 0 &&
	       __atomic_load_n(&c->ctrl->daemon_cpu, __ATOMIC_RELAXED) == (uint32_t)cpu + 1;
}

int shmchan_client_daemon_cpu(const struct shmchan_client *c) {
	uint32_t hint = __atomic_load_n(&c->ctrl->daemon_cpu, __ATOMIC_RELAXED);

	return hint != SHMCHAN_CPU_UNKNOWN && hint <= SHMCHAN_CPU_HINT_MAX ? (int)hint - 1 : -1;
}

// Ring the daemon's doorbell, telling it first where we run: the poller
// woken may be put on our CPU, and then should not spin there. EAGAIN
// (counter saturated) means it is readable anyway.
static void daemon_doorbell_ring(struct shmchan_client *c) {
	static const uint64_t one = 1;
	shmchan_client_cpu_publish(c, sched_getcpu());
	ssize_t ret = write(c->req_fd, &one, sizeof(one));
	SHMCHAN_PROBE(daemon_doorbell, c, ret);
	(void)ret;
}

int shmchan_client_enqueue(
	struct shmchan_client *c,
	const void *hdr,
	size_t hdr_len,
	const void *payload,
	size_t payload_len
) {
	struct client_ring *r = &c->req;
	uint32_t head, cons_tail, used;
	struct zc_bytes z;
	size_t len, frame_len;
	unsigned cells;
	uint32_t len32;
	long msg_len;

	if (!lease_held(c))
		return lease_lost(c);
	if (!shmchan_msg_len_ok(hdr_len, payload_len)) {
		msg_len = shmchan_msg_len(hdr_len, payload_len, "request");
		return msg_len < 0 ? (int)msg_len : -EINVAL;
	}
	len = hdr_len + payload_len;
	cells = SHMCHAN_MSG_CELLS(len);
	frame_len = (size_t)cells * SHMCHAN_CELL_SIZE;

	// rte_ring's single-producer enqueue, by hand, as the dequeue in
	// shmchan_client_recv(): room by the consumer tail read last (checked
	// then), which is read again only when the frame does not fit by it.
	head = r->pos;
	if (cells > r->capacity - (head - r->peer)) {
		// Acquire pairs with the daemon's release of cons.tail: its copies
		// out of the cells it freed are done before we overwrite them.
		cons_tail = __atomic_load_n(&r->shared->cons.tail, __ATOMIC_ACQUIRE);
		used = head - cons_tail;
		if (used > r->capacity)
			return shmchan_fail(
				-EBADMSG,
				"request ring: consumer tail %" PRIu32 " is %" PRIu32
				" cells behind our index %" PRIu32 " (capacity %" PRIu32 ")",
				cons_tail,
				used,
				head,
				r->capacity
			);
		r->peer = cons_tail;
		if (cells > r->capacity - used)
			return -ENOBUFS;
	}
	// Write the frame straight into its cells, then publish it: prod.head,
	// then a release store of prod.tail, as rte_ring does.
	z = ring_bytes(r, head, cells);
	len32 = (uint32_t)len;
	if (hdr_len == SHMCHAN_MSG_MIN && z.len1 == frame_len) {
		shmchan_frame_write(z.p1, len32, hdr, payload, payload_len, frame_len);
	} else {
		zc_write(&z, 0, &len32, sizeof(len32));
		zc_write(&z, SHMCHAN_FRAME_HDR, hdr, hdr_len);
		zc_write(&z, SHMCHAN_FRAME_HDR + hdr_len, payload, payload_len);
		zc_write(&z, SHMCHAN_FRAME_HDR + len, NULL, frame_len - SHMCHAN_FRAME_HDR - len);
	}
	head += cells;
	r->pos = head;
	__atomic_store_n(&r->shared->prod.head, head, __ATOMIC_RELAXED);
	__atomic_store_n(&r->shared->prod.tail, head, __ATOMIC_RELEASE);
	c->unflushed = true;
	return 0;
}

bool shmchan_client_flush(struct shmchan_client *c) {
	if (!c->unflushed)
		return false;
	c->unflushed = false;
	// Full fence between the enqueues' stores of prod.tail and our load of
	// daemon_sleeping. The daemon arms with the mirror sequence: store
	// daemon_sleeping, fence, load prod.tail. Without this fence our load
	// could complete before our tail store is visible, the daemon's re-check
	// could miss the request while we miss its flag, and it would sleep with
	// a request in the ring (lost wake-up). A store then a load: needed on
	// x86 too. Once per batch: the fence waits for every store before it
	// (the cells too) to leave the store buffer.
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->ctrl->daemon_sleeping, __ATOMIC_RELAXED) == 0)
		return false;
	daemon_doorbell_ring(c);
	return true;
}

int shmchan_client_send(
	struct shmchan_client *c,
	const void *hdr,
	size_t hdr_len,
	const void *payload,
	size_t payload_len
) {
	int ret = shmchan_client_enqueue(c, hdr, hdr_len, payload, payload_len);

	if (ret == 0)
		shmchan_client_flush(c);
	return ret;
}

bool shmchan_client_can_enqueue(const struct shmchan_client *c, size_t msg_len) {
	const struct client_ring *r = &c->req;
	uint32_t used;

	if (msg_len > SHMCHAN_MSG_MAX)
		return false;
	if (!lease_held(c))
		return true; // the caller's enqueue says why
	// Acquire, as in shmchan_client_enqueue().
	used = r->pos - __atomic_load_n(&r->shared->cons.tail, __ATOMIC_ACQUIRE);
	// A tail past our index: true, so that the caller's enqueue says why.
	return used > r->capacity || r->capacity - used >= SHMCHAN_MSG_CELLS(msg_len);
}

void shmchan_client_room_check(struct shmchan_client *c) {
	if (__atomic_load_n(&c->ctrl->daemon_sleeping, __ATOMIC_RELAXED) == SHMCHAN_WAIT_ROOM)
		daemon_doorbell_ring(c);
}

// The share of the response ring a client takes between two rings of
// shmchan_client_room_made(): an eighth. A daemon woken for less room would
// fill it and wait again at once, and each ring is a write() of the client's
// while the daemon wakes (tens of microseconds: hundreds of responses taken
// meanwhile).
#define ROOM_RING_SHARE 8

void shmchan_client_room_made(struct shmchan_client *c) {
	if (__atomic_load_n(&c->ctrl->daemon_sleeping, __ATOMIC_RELAXED) != SHMCHAN_WAIT_ROOM)
		return;
	if (c->resp.pos - c->room_rung_pos < c->resp.capacity / ROOM_RING_SHARE)
		return;
	c->room_rung_pos = c->resp.pos;
	daemon_doorbell_ring(c);
}

// Look at the next frame without taking it. Returns 1 and its message length
// and cells, 0 if the ring is empty, -EBADMSG for a bad frame or producer
// index, -ECONNRESET if the lease is lost. Inlined: it is most of every
// receive, and of every empty poll of a spinning wait.
static inline __attribute__((always_inline)) int
peek_frame(struct shmchan_client *c, uint32_t *len, uint32_t *cells) {
	struct client_ring *r = &c->resp;
	uint32_t prod_tail, entries;

	if (!lease_held(c))
		return lease_lost(c);
	// Our own index: we are the ring's only consumer.
	entries = r->peer - r->pos;
	if (entries == 0) {
		// Acquire pairs with the daemon's release of prod.tail: the
		// frames up to it were written before it.
		prod_tail = __atomic_load_n(&r->shared->prod.tail, __ATOMIC_ACQUIRE);
		entries = prod_tail - r->pos;
		if (entries == 0)
			return 0;
		if (entries > r->capacity)
			return shmchan_fail(
				-EBADMSG,
				"response ring: producer tail %" PRIu32 " is %" PRIu32
				" cells from our index %" PRIu32 " (capacity %" PRIu32 ")",
				prod_tail,
				entries,
				r->pos,
				r->capacity
			);
		r->peer = prod_tail;
	}
	memcpy(len, r->cells + (size_t)(r->pos & r->mask) * SHMCHAN_CELL_SIZE, sizeof(*len));
	if (*len < SHMCHAN_MSG_MIN || *len > SHMCHAN_MSG_MAX)
		return shmchan_fail(-EBADMSG, "response ring: frame length %" PRIu32, *len);
	*cells = SHMCHAN_MSG_CELLS(*len);
	if (*cells > entries)
		return shmchan_fail(
			-EBADMSG,
			"response ring: frame of %" PRIu32 " cells, %" PRIu32 " published",
			*cells,
			entries
		);
	return 1;
}

int shmchan_client_recv(struct shmchan_client *c, void *buf, size_t buf_len) {
	struct client_ring *r = &c->resp;
	uint32_t len = 0, cells = 0, head;
	struct zc_bytes z;
	int ret;

	ret = peek_frame(c, &len, &cells);
	if (ret <= 0)
		return ret;
	if (len > buf_len)
		return shmchan_fail(
			-EMSGSIZE,
			"response of %" PRIu32 " bytes, buffer of %zu",
			len,
			buf_len
		);
	// rte_ring's single-consumer dequeue, by hand: its functions read the
	// producer tail again on every call, which is the one cache miss per
	// message that the peer index kept in r saves. Same stores, same order: the copy out of
	// the cells, then cons.head, then a release store of cons.tail.
	head = r->pos;
	z = ring_bytes(r, head, cells);
	zc_read(&z, SHMCHAN_FRAME_HDR, buf, len);
	head += cells;
	r->pos = head;
	__atomic_store_n(&r->shared->cons.head, head, __ATOMIC_RELAXED);
	__atomic_store_n(&r->shared->cons.tail, head, __ATOMIC_RELEASE);
	return (int)len;
}

int shmchan_client_peek_len(struct shmchan_client *c) {
	uint32_t len = 0, cells = 0;
	int ret;

	ret = peek_frame(c, &len, &cells);
	if (ret <= 0)
		return ret;
	return (int)len;
}

int shmchan_client_recv_keyed(
	struct shmchan_client *c,
	void *hdr,
	size_t hdr_len,
	uint32_t key,
	void *payload,
	size_t payload_len,
	void *stage,
	size_t stage_len,
	bool *to_payload
) {
	struct client_ring *r = &c->resp;
	uint32_t len = 0, cells = 0, head, first, idx;
	struct zc_bytes z;
	size_t rest;
	int ret;

	if (hdr_len < sizeof(first))
		return shmchan_fail(-EINVAL, "a header of %zu bytes holds no key", hdr_len);
	ret = peek_frame(c, &len, &cells);
	if (ret <= 0)
		return ret;
	if (len < hdr_len || len - hdr_len > stage_len)
		return shmchan_fail(
			-EMSGSIZE,
			"response of %" PRIu32 " bytes, buffers of %zu + %zu",
			len,
			hdr_len,
			stage_len
		);
	// As shmchan_client_recv(): the copies out of the cells, then
	// cons.head, then a release store of cons.tail, which hands the cells
	// back to the daemon only once every copy is done.
	head = r->pos;
	rest = len - hdr_len;
	idx = head & r->mask;
	if (hdr_len == SHMCHAN_MSG_MIN && cells <= r->size - idx) {
		// A response header and a frame that does not wrap, as nearly
		// every one: the header is the rest of the first cell, the
		// payload starts at the second.
		const uint8_t *frame = r->cells + (size_t)idx * SHMCHAN_CELL_SIZE;

		memcpy(hdr, frame + SHMCHAN_FRAME_HDR, SHMCHAN_MSG_MIN);
		memcpy(&first, hdr, sizeof(first));
		*to_payload = first == key && rest <= payload_len;
		memcpy(*to_payload ? payload : stage, frame + SHMCHAN_CELL_SIZE, rest);
	} else {
		z = ring_bytes(r, head, cells);
		zc_read(&z, SHMCHAN_FRAME_HDR, hdr, hdr_len);
		memcpy(&first, hdr, sizeof(first));
		*to_payload = first == key && rest <= payload_len;
		zc_read(&z, SHMCHAN_FRAME_HDR + hdr_len, *to_payload ? payload : stage, rest);
	}
	head += cells;
	r->pos = head;
	__atomic_store_n(&r->shared->cons.head, head, __ATOMIC_RELAXED);
	__atomic_store_n(&r->shared->cons.tail, head, __ATOMIC_RELEASE);
	return (int)len;
}

static void doorbell_arm(struct shmchan_client *c, uint32_t asleep) {
	// Detached: the flag may be another client's now. The caller's re-check
	// (has_response, can_enqueue) says true and its next operation fails.
	if (!lease_held(c))
		return;
	__atomic_store_n(&c->ctrl->client_sleeping, asleep, __ATOMIC_RELAXED);
	// Full fence between this flag store and the caller's re-check of the
	// response ring (a load of prod.tail) or retried enqueue (a load of the
	// request ring's cons.tail): the daemon may have moved its index between
	// our last look and the flag store, and read the flag as 0. The fence
	// keeps our re-check from completing before the flag is visible, so
	// either the daemon sees the flag and rings, or we see its index.
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	// The same fence orders our earlier stores of the response ring's
	// cons.tail (the room we freed) before this load of the daemon's flag:
	// the mirror of the daemon's arm for room (store flag, fence, load
	// cons.tail). Either it sees the room, or we see it waiting and ring.
	if (__atomic_load_n(&c->ctrl->daemon_sleeping, __ATOMIC_RELAXED) == SHMCHAN_WAIT_ROOM)
		daemon_doorbell_ring(c);
}

void shmchan_client_doorbell_arm(struct shmchan_client *c) {
	doorbell_arm(c, SHMCHAN_CLIENT_ASLEEP);
}

void shmchan_client_doorbell_arm_in_loop(struct shmchan_client *c) {
	doorbell_arm(c, SHMCHAN_CLIENT_ASLEEP_IN_LOOP);
}

void shmchan_client_doorbell_disarm(struct shmchan_client *c) {
	if (!lease_held(c))
		return;
	__atomic_store_n(&c->ctrl->client_sleeping, 0, __ATOMIC_RELAXED);
}

bool shmchan_client_has_response(const struct shmchan_client *c) {
	if (!lease_held(c))
		return true; // the caller's recv says why
	// Acquire, as in peek_frame().
	return c->resp.peer != c->resp.pos ||
	       __atomic_load_n(&c->resp.shared->prod.tail, __ATOMIC_ACQUIRE) != c->resp.pos;
}

unsigned shmchan_client_spin(const struct shmchan_client *c, unsigned polls) {
	const struct client_ring *r = &c->resp;
	unsigned empty = 0;

	// The index only moves forward from the one read last: messages known
	// and not taken yet end the spin at its first look. Relaxed: the
	// receive that follows loads the index again with acquire before it
	// reads a cell.
	while (__atomic_load_n(&r->shared->prod.tail, __ATOMIC_RELAXED) == r->pos) {
		if (++empty == polls)
			break;
		rte_pause();
	}
	return empty;
}

int shmchan_client_resp_fd(const struct shmchan_client *c) {
	return c->resp_fd;
}

void shmchan_client_doorbell_drain(struct shmchan_client *c) {
	uint8_t rings[DOORBELL_DRAIN_BYTES];
	unsigned reads = 0;
	ssize_t n;

	// Each ring is one byte. MSG_DONTWAIT: take what is queued, or fail with
	// EAGAIN if no one rang since the last drain; 0 is the daemon's end
	// closed (the lease tells the caller).
	do
		n = recv(c->resp_fd, rings, sizeof(rings), MSG_DONTWAIT);
	while ((n == (ssize_t)sizeof(rings) && ++reads < DOORBELL_DRAIN_READS) ||
	       (n < 0 && errno == EINTR));
}
