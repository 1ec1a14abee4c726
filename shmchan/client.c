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

#include "client_inline.h"
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

// Set up our view of a ring of ring_cells cells whose header is at shared.
static void client_ring_init(struct client_ring *r, struct rte_ring *shared, uint32_t ring_cells) {
	r->shared = shared;
	r->cells = shmchan_ring_cells(shared);
	r->size = ring_cells;
	r->mask = ring_cells - 1;
	r->capacity = ring_cells - 1;
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

int shmchan_client_lease_lost(const struct shmchan_client *c) {
	return shmchan_fail(
		-ECONNRESET,
		"channel detached by the daemon (state %" PRIu32 ", generation %" PRIu32
		", ours %" PRIu32 ")",
		__atomic_load_n(&c->ctrl->state, __ATOMIC_RELAXED),
		__atomic_load_n(&c->ctrl->generation, __ATOMIC_RELAXED),
		c->generation
	);
}

int shmchan_client_resp_frame_bad(uint32_t len) {
	return shmchan_fail(
		-EBADMSG,
		"response ring: frame length %" PRIu32 " outside [%u, %u]",
		len,
		SHMCHAN_MSG_MIN,
		SHMCHAN_MSG_MAX
	);
}

int shmchan_client_req_tail_bad(const struct shmchan_client *c, uint32_t cons_tail, uint32_t used) {
	return shmchan_fail(
		-EBADMSG,
		"request ring: consumer tail %" PRIu32 " is %" PRIu32
		" cells behind our index %" PRIu32 " (capacity %" PRIu32 ")",
		cons_tail,
		used,
		c->req.pos,
		c->req.capacity
	);
}

int shmchan_client_resp_too_long(uint32_t len, size_t hdr_len, size_t buf_len) {
	if (hdr_len == 0)
		return shmchan_fail(
			-EMSGSIZE,
			"response of %" PRIu32 " bytes, buffer of %zu",
			len,
			buf_len
		);
	return shmchan_fail(
		-EMSGSIZE,
		"response of %" PRIu32 " bytes, buffers of %zu + %zu",
		len,
		hdr_len,
		buf_len
	);
}

void shmchan_client_cpu_publish(struct shmchan_client *c, int cpu) {
	uint32_t hint = cpu >= 0 ? (uint32_t)cpu + 1 : SHMCHAN_CPU_UNKNOWN;

	// Compared with our own copy: the line is the daemon's to read at each
	// of its flushes, and a store only when the value changes keeps it in
	// the daemon's cache. Detached: the line may be another client's now.
	if (hint == c->cpu_published || !shmchan_client_lease_held(c))
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

bool shmchan_client_host_busy(
	const struct shmchan_client *c,
	uint64_t now_ms,
	uint32_t max_age_ms,
	bool *busy
) {
	// The daemon's line, read by the waits anyway; stored about once a
	// second.
	uint32_t word = __atomic_load_n(&c->ctrl->host_load, __ATOMIC_RELAXED);
	return shmchan_host_word_read(word, now_ms, max_age_ms, busy);
}

int shmchan_client_daemon_cpu(const struct shmchan_client *c) {
	uint32_t hint = __atomic_load_n(&c->ctrl->daemon_cpu, __ATOMIC_RELAXED);

	return hint != SHMCHAN_CPU_UNKNOWN && hint <= SHMCHAN_CPU_HINT_MAX ? (int)hint - 1 : -1;
}

void shmchan_client_daemon_ring(struct shmchan_client *c) {
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
	return shmchan_client_enqueue_inline(c, hdr, hdr_len, payload, payload_len);
}

bool shmchan_client_flush(struct shmchan_client *c) {
	return shmchan_client_flush_inline(c);
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
	if (!shmchan_client_lease_held(c))
		return true; // the caller's enqueue says why
	// Acquire, as in shmchan_client_enqueue().
	used = r->pos - __atomic_load_n(&r->shared->cons.tail, __ATOMIC_ACQUIRE);
	// A tail past our index: true, so that the caller's enqueue says why.
	return used > r->capacity || r->capacity - used >= SHMCHAN_MSG_CELLS(msg_len);
}

void shmchan_client_room_check(struct shmchan_client *c) {
	shmchan_client_room_check_inline(c);
}

void shmchan_client_room_made(struct shmchan_client *c) {
	shmchan_client_room_made_inline(c);
}

int shmchan_client_recv(struct shmchan_client *c, void *buf, size_t buf_len) {
	return shmchan_client_recv_inline(c, buf, buf_len);
}

int shmchan_client_peek_len(struct shmchan_client *c) {
	uint32_t len = 0, cells = 0;
	int ret;

	ret = shmchan_client_peek_inline(c, &len, &cells);
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
	return shmchan_client_recv_keyed_inline(
		c,
		hdr,
		hdr_len,
		key,
		payload,
		payload_len,
		stage,
		stage_len,
		to_payload
	);
}

static void doorbell_arm(struct shmchan_client *c, uint32_t asleep) {
	// Detached: the flag may be another client's now. The caller's re-check
	// (has_response, can_enqueue) says true and its next operation fails.
	if (!shmchan_client_lease_held(c))
		return;
	__atomic_store_n(&c->ctrl->client_sleeping, asleep, __ATOMIC_RELAXED);
	// Full fence between this flag store and the caller's re-check of the
	// response ring (a load of the length word at our index) or retried
	// enqueue (a load of the request ring's cons.tail): the daemon may have
	// published a response or freed cells between our last look and the
	// flag store, and read the flag as 0. The fence keeps our re-check from
	// completing before the flag is visible, so either the daemon sees the
	// flag and rings, or we see what it stored.
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	// The same fence orders our earlier stores of the response ring's
	// cons.tail (the room we freed) before this load of the daemon's flag:
	// the mirror of the daemon's arm for room (store flag, fence, load
	// cons.tail). Either it sees the room, or we see it waiting and ring.
	if (__atomic_load_n(&c->ctrl->daemon_sleeping, __ATOMIC_RELAXED) == SHMCHAN_WAIT_ROOM)
		shmchan_client_daemon_ring(c);
}

void shmchan_client_doorbell_arm(struct shmchan_client *c) {
	doorbell_arm(c, SHMCHAN_CLIENT_ASLEEP);
}

void shmchan_client_doorbell_arm_in_loop(struct shmchan_client *c) {
	doorbell_arm(c, SHMCHAN_CLIENT_ASLEEP_IN_LOOP);
}

void shmchan_client_doorbell_disarm(struct shmchan_client *c) {
	if (!shmchan_client_lease_held(c))
		return;
	__atomic_store_n(&c->ctrl->client_sleeping, 0, __ATOMIC_RELAXED);
}

bool shmchan_client_has_response(const struct shmchan_client *c) {
	return shmchan_client_has_response_inline(c);
}

unsigned shmchan_client_spin(const struct shmchan_client *c, unsigned polls) {
	const struct client_ring *r = &c->resp;
	unsigned empty = 0;

	// The length word of the cell at our index (shmchan_frame_len_load()):
	// a frame not taken yet ends the spin at its first look. Relaxed: the
	// receive that follows loads it again with acquire before it reads the
	// frame.
	const uint32_t *word = shmchan_cell_word(r->cells, r->pos & r->mask);
	while (__atomic_load_n(word, __ATOMIC_RELAXED) == 0) {
		if (++empty == polls)
			break;
		rte_pause();
	}
	return empty;
}

int shmchan_client_resp_fd(const struct shmchan_client *c) {
	return c->resp_fd;
}

uint32_t shmchan_client_rings_mark(const struct shmchan_client *c) {
	// The request cells the daemon has not freed yet: each message among
	// them may still free with a ring, and there are no more messages than
	// cells. Read now, not the tail the enqueue read last, which it reads
	// again only when a frame does not fit: by that one, a client that
	// never fills its ring would count every request it ever sent. A tail
	// the enqueue would not accept (past our index, or more than a ring
	// behind it) is not believed: the one read last is.
	uint32_t tail = __atomic_load_n(&c->req.shared->cons.tail, __ATOMIC_ACQUIRE);
	if (c->req.pos - tail > c->req.capacity)
		tail = c->req.peer;
	return c->req.msgs + c->resp.msgs - (c->req.pos - tail);
}

uint32_t shmchan_client_rings_since(const struct shmchan_client *c, uint32_t mark) {
	return c->req.msgs + c->resp.msgs - mark;
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
