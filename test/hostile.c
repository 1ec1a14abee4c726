// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A hostile shared-memory client: it attaches over a raw socket, maps its
// region itself and drives the rings with its own code (never the client
// library, which would refuse to misbehave), then breaks one rule of the
// channel per run. The daemon must survive, detach the culprit when its
// region is corrupt, and keep serving everyone else.
//
// usage: hostile SOCK CASE
//
// Cases that corrupt the request ring; each expects the daemon to end the
// lease (EOF on the socket) within HOSTILE_EOF_BOUND_MS:
//   frame_short          a frame length below SHMCHAN_MSG_MIN
//   frame_long           a frame length over SHMCHAN_MSG_MAX, as long as the ring
//   frame_huge           a frame length near 2^32 (its cell count wraps)
//   payload_len_mismatch a request whose payload_len disagrees with its frame
//   payload_over_max     a whole frame whose payload_len exceeds GR_API_MAX_MSG_LEN
//                        (answered EMSGSIZE first)
//   tail_backwards       unpublished pings over the whole request ring, and
//                        its prod.tail moved back by more than the longest
//                        frame (caught when the daemon is about to sleep)
//   tail_past_capacity   the same, prod.tail moved past the capacity
// A case after which the daemon must serve nothing, and keep the lease:
//   frame_unpublished    a valid request written whole but for its length
//                        (which publishes a frame), prod.tail moved past it
// Cases after which the daemon may serve on or detach, but never crash:
//   ring_header          huge size/mask/capacity in both ring headers, then
//                        valid requests that wrap the rings
//   sleep_flags          odd values in the need-wakeup flags and the CPU
//                        hint before each of many valid requests (must all
//                        be answered)
// Cases of test/shm_hostile.sh:
//   write_after_detach   detached for a corrupt frame, it waits until the
//                        daemon unmapped its region, then writes valid and
//                        garbage frames into its mapping and rings the
//                        doorbell: nothing may be served, nothing may break
//   truncate_memfd       ftruncate (shrink, grow), fallocate past the end and
//                        F_ADD_SEALS must fail with EPERM (the seals), the
//                        channel still serves; then it punches a hole over
//                        the whole region (allowed: it zeroes the pages) and
//                        must be detached
//   never_reads          128 KiB echoes sent, responses never read: detached
//                        for it (the daemon's slow-client limit, about 2 s)
//   doorbell_flood       tries to fill its response doorbell (a write must fail:
//                        only the daemon writes there), then
//                        writes its request doorbell in a tight loop until
//                        the file STOP_FILE (its third argument) exists, or
//                        for HOSTILE_FLOOD_MAX_MS (it prints "flooding" first,
//                        and the rate at the end); must still be served after it
//   ring_empty_20us      writes its request doorbell every 20 us (300 us) for
//   ring_empty_300us     HOSTILE_RING_EMPTY_MS, sending no request; prints "ringing"
//                        first, then "ringer cpu_s S rings N", its own CPU time
//                        (test/shm_empty_wakes.sh compares the poller's with it)
//   host_hint            writes the daemon's host_load word (the daemon only
//                        writes it), makes one call, then waits for the
//                        daemon, idle, to tell a fresh word within
//                        HOSTILE_HOST_HINT_MS (prints "host hint told after
//                        MS ms: busy|quiet"); must still be served after it
//   sock_never_reads     no channel: 128 KiB echoes on the socket, responses
//                        never read: the daemon closes the connection after
//                        its output stall limit (5 s)
//   log_forge            no channel: a hello whose version string, and a log
//                        level pattern that, hold a newline and then a line
//                        of the daemon's own shape ("shmchand: forged ..."),
//                        and an escape sequence: both answered 0; the
//                        script checks that the log shows them escaped
// And a helper for scripts:
//   stats                print the daemon's GR_SHM_STATS as key=value
//
// It prints "channel NAME pid PID" once attached (sock_never_reads and
// log_forge: "socket pid PID") and "outcome detached" or "outcome served" at the end; any other
// behaviour of the daemon fails it.

#include "check.h"
#include "raw_sock.h"

#include <region.h>

#include <gr_api.h>
#include <gr_shm.h>

#include <rte_ring_core.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// The daemon detaches a corrupt client as soon as its poller reads the ring:
// microseconds, or milliseconds on a loaded machine.
#define HOSTILE_EOF_BOUND_MS 3000
// Bound of a wait for a response (or for room in the request ring).
#define HOSTILE_RESP_BOUND_MS 3000
// A wait sleeps this long on the socket between looks at the ring.
#define HOSTILE_POLL_MS 1
// How long an unpublished request must stay unserved (frame_unpublished):
// many poller passes and sleeps.
#define HOSTILE_UNSERVED_MS 300
// Valid requests after the ring headers were rewritten: 128 KiB echoes, so
// that both 256 KiB rings wrap, and pings around them.
#define HOSTILE_BIG_ECHOES 3
#define HOSTILE_PINGS 4
// Requests sent with odd need-wakeup flags.
#define HOSTILE_FLAG_ROUNDS 200
// How long an idle daemon may take to tell the host's load after a call:
// its first look comes 2 ms into its sleep
// (POLLER_HOST_DEFER_NS), far less on any host than this, below the
// watchdog.
#define HOSTILE_HOST_HINT_MS 10000
// A host_load word fresh for the client library (CLIENT_HOST_HINT_MAX_MS).
#define HOSTILE_HOST_HINT_AGE_MS 2000
#define HOSTILE_HOST_HINT_POLL_US 10000
// What the ring headers' size, mask and capacity become.
#define HOSTILE_HUGE_RING_FIELD 0xfffffff0u
// Bound of the daemon's unmapping of a detached channel: one RCU grace period.
#define HOSTILE_UNMAP_BOUND_MS 3000
// Frames written and doorbells rung into a detached channel.
#define HOSTILE_AFTER_DETACH_ROUNDS 10000
// A client that stops reading is detached once its response ring stayed full
// for 2 s (CHANNEL_SLOW_LIMIT_MS in server/channel.h); leave room for a loaded
// machine.
#define HOSTILE_SLOW_BOUND_MS 8000
// The same for a socket client: SOCK_OUTPUT_STALL_SEC (5 s, server/sock.h).
#define HOSTILE_SOCK_STALL_BOUND_MS 12000
// The doorbell flood lasts until its caller, which runs two latency probes
// of 1 s during it, creates the stop file; at most this long, below the
// watchdog (TEST_WATCHDOG_S), for a caller that never does.
#define HOSTILE_FLOOD_MAX_MS 15000
// Doorbell writes between two looks for the stop file.
#define HOSTILE_FLOOD_BURST 1024
// Length of each empty-ringing case: 4 s at 300 us is 13,000 empty wake-ups,
// whose poller CPU a spin after each (the default 100 us budget: 1.3 s) puts
// far above the bound test/shm_empty_wakes.sh allows (about 0.6 s); longer
// only makes a test that runs alone longer.
#define HOSTILE_RING_EMPTY_MS 2000
// An eventfd counter's largest value: a write of it would saturate an eventfd
// counter, and block a blocking writer.
#define HOSTILE_EVENTFD_MAX 0xfffffffffffffffeull

enum outcome {
	OUTCOME_DETACHED,
	OUTCOME_SERVED,
};

struct hostile {
	const char *sock_path;
	int sock;
	struct gr_shm_attach_resp attach;
	int req_doorbell, resp_doorbell, mem_fd;
	uint8_t *base;
	struct shmchan_ctrl *ctrl;
	struct rte_ring *req_ring, *resp_ring;
	uint8_t *req_cells, *resp_cells;
	// Private copies of the geometry (from the attach response) and of our
	// own indices: what we write into the shared headers never fools us.
	uint32_t mask, capacity;
	uint32_t req_pos; // producer index of the request ring
	uint32_t resp_pos; // consumer index of the response ring
	uint32_t next_id;
	uint8_t *msg; // one message, SHMCHAN_MSG_MAX bytes
	const char *flood_stop_path; // doorbell_flood: ends once this file exists
};

static size_t ring_bytes(const struct hostile *h) {
	return (size_t)(h->mask + 1) * SHMCHAN_CELL_SIZE;
}

// Copy n bytes into the request ring's cells, from byte skip of cell index
// pos on, wrapping at the end of the cells (n is below the ring's bytes).
static void cells_write(struct hostile *h, uint32_t pos, size_t skip, const void *src, size_t n) {
	size_t off = ((size_t)(pos & h->mask) * SHMCHAN_CELL_SIZE + skip) % ring_bytes(h);
	size_t first = ring_bytes(h) - off < n ? ring_bytes(h) - off : n;

	memcpy(h->req_cells + off, src, first);
	memcpy(h->req_cells, (const uint8_t *)src + first, n - first);
}

// The same, out of the response ring's cells.
static void cells_read(const struct hostile *h, uint32_t pos, size_t skip, void *dst, size_t n) {
	size_t off = ((size_t)(pos & h->mask) * SHMCHAN_CELL_SIZE + skip) % ring_bytes(h);
	size_t first = ring_bytes(h) - off < n ? ring_bytes(h) - off : n;

	memcpy(dst, h->resp_cells + off, first);
	memcpy((uint8_t *)dst + first, h->resp_cells, n - first);
}

static void doorbell_ring(struct hostile *h) {
	uint64_t one = 1;
	CHECK(write(h->req_doorbell, &one, sizeof(one)) == sizeof(one) || errno == EAGAIN,
	      "doorbell: %s",
	      strerror(errno));
}

// Publish the request ring up to index tail, as a producer does: release,
// so the cells are visible first.
static void req_publish(struct hostile *h, uint32_t tail) {
	__atomic_store_n(&h->req_ring->prod.head, tail, __ATOMIC_RELEASE);
	__atomic_store_n(&h->req_ring->prod.tail, tail, __ATOMIC_RELEASE);
}

// Ring the daemon's doorbell as the protocol says: full fence between our
// tail store and the flag load (the daemon arms with the mirror sequence).
static void doorbell_maybe(struct hostile *h) {
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&h->ctrl->daemon_sleeping, __ATOMIC_RELAXED) != 0)
		doorbell_ring(h);
}

// True once the socket (the lease) reached EOF. Waits up to ms for it.
static bool lease_ended(struct hostile *h, int ms) {
	struct pollfd pfd = {.fd = h->sock, .events = POLLIN};
	char byte;

	int n = poll(&pfd, 1, ms);
	CHECK(n >= 0 || errno == EINTR, "poll: %s", strerror(errno));
	if (n <= 0)
		return false;
	ssize_t got = recv(h->sock, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
	if (got == 0 || (got < 0 && errno == ECONNRESET))
		return true;
	CHECK(got < 0 && errno == EAGAIN, "the daemon wrote on the socket of an attached channel");
	return false;
}

// Write a frame announcing frame_len bytes, carrying msg_len bytes of msg,
// over cells cells (zero padded), after our index, as the protocol says: a
// zero length in the cell after it, the frame's other bytes, then its length
// (frame_len 0: not written, the frame stays unpublished); move our index
// past it, and leave prod.tail. Waits for room.
static void frame_write(
	struct hostile *h,
	uint32_t frame_len,
	const void *msg,
	size_t msg_len,
	uint32_t cells
) {
	static const uint32_t no_frame;
	static const uint8_t zeros[SHMCHAN_CELL_SIZE];
	uint64_t deadline = monotonic_ns() + HOSTILE_RESP_BOUND_MS * 1000000ull;
	size_t body = (size_t)cells * SHMCHAN_CELL_SIZE;

	CHECK(SHMCHAN_FRAME_HDR + msg_len <= body, "frame of %u cells for %zu bytes", cells, msg_len
	);
	for (;;) {
		uint32_t cons = __atomic_load_n(&h->req_ring->cons.tail, __ATOMIC_ACQUIRE);
		if (cells <= h->capacity - (h->req_pos - cons))
			break;
		CHECK(!lease_ended(h, HOSTILE_POLL_MS),
		      "lease ended while the request ring was full");
		CHECK(monotonic_ns() < deadline, "the daemon does not drain the request ring");
	}
	cells_write(h, h->req_pos + cells, 0, &no_frame, sizeof(no_frame));
	cells_write(h, h->req_pos, SHMCHAN_FRAME_HDR, msg, msg_len);
	for (size_t off = SHMCHAN_FRAME_HDR + msg_len; off < body; off += sizeof(zeros)) {
		size_t n = body - off < sizeof(zeros) ? body - off : sizeof(zeros);
		cells_write(h, h->req_pos, off, zeros, n);
	}
	if (frame_len != 0) {
		uint8_t *first = h->req_cells + (size_t)(h->req_pos & h->mask) * SHMCHAN_CELL_SIZE;
		__atomic_store_n((uint32_t *)first, frame_len, __ATOMIC_RELEASE);
	}
	h->req_pos += cells;
}

// frame_write(), then publish the frame.
static void
frame_put(struct hostile *h, uint32_t frame_len, const void *msg, size_t msg_len, uint32_t cells) {
	frame_write(h, frame_len, msg, msg_len, cells);
	req_publish(h, h->req_pos);
}

// Send a valid request. Returns its id.
static uint32_t request_send(struct hostile *h, uint32_t type, const void *payload, uint32_t len) {
	struct gr_api_request hdr = {.id = h->next_id++, .type = type, .payload_len = len};
	uint32_t msg_len = sizeof(hdr) + len;

	memcpy(h->msg, &hdr, sizeof(hdr));
	memcpy(h->msg + sizeof(hdr), payload, len);
	frame_put(h, msg_len, h->msg, msg_len, SHMCHAN_MSG_CELLS(msg_len));
	doorbell_maybe(h);
	return hdr.id;
}

// The length word of the response cell at our index, as the client library
// reads it (acquire: the frame's other bytes are visible with it): a
// response's length, 0 while none is published there.
static uint32_t response_len(const struct hostile *h) {
	const uint8_t *cell = h->resp_cells + (size_t)(h->resp_pos & h->mask) * SHMCHAN_CELL_SIZE;

	return __atomic_load_n((const uint32_t *)cell, __ATOMIC_ACQUIRE);
}

// Take one response out of the response ring into h->msg. Returns its
// length, 0 if none is published (a frame is published by its length; the
// daemon stores its producer index at the end of its turn, and the end of
// a lease its fault started may come first). The daemon is trusted to
// frame it well, but it is checked anyway.
static uint32_t response_take(struct hostile *h) {
	uint32_t len = response_len(h);

	if (len == 0)
		return 0;
	CHECK(len >= SHMCHAN_MSG_MIN && len <= SHMCHAN_MSG_MAX, "response frame of %u bytes", len);
	cells_read(h, h->resp_pos, SHMCHAN_FRAME_HDR, h->msg, len);
	h->resp_pos += SHMCHAN_MSG_CELLS(len);
	// Release: our copy is done before the daemon reuses the cells.
	__atomic_store_n(&h->resp_ring->cons.head, h->resp_pos, __ATOMIC_RELEASE);
	__atomic_store_n(&h->resp_ring->cons.tail, h->resp_pos, __ATOMIC_RELEASE);
	return len;
}

// Wait for the next response. Returns 1 with *resp and its payload in
// h->msg + sizeof(*resp), or 0 if the lease ended first.
static int response_wait(struct hostile *h, struct gr_api_response *resp) {
	uint64_t deadline = monotonic_ns() + HOSTILE_RESP_BOUND_MS * 1000000ull;
	uint32_t len;

	for (;;) {
		len = response_take(h);
		if (len > 0)
			break;
		if (lease_ended(h, HOSTILE_POLL_MS)) {
			// The daemon may have answered just before it shut the
			// lease down: look at the ring once more.
			len = response_take(h);
			if (len == 0)
				return 0;
			break;
		}
		CHECK(monotonic_ns() < deadline, "no response within %d ms", HOSTILE_RESP_BOUND_MS);
	}
	memcpy(resp, h->msg, sizeof(*resp));
	CHECK(resp->payload_len == len - sizeof(*resp),
	      "response of %u bytes announces a payload of %u",
	      len,
	      resp->payload_len);
	return 1;
}

// Send a request and check its echo. Returns false if the lease ended.
static bool echo_round_trip(struct hostile *h, uint32_t type, uint32_t len, unsigned salt) {
	struct gr_api_response resp;
	uint8_t *tx = malloc(len > 0 ? len : 1);

	CHECK(tx != NULL, "malloc");
	for (uint32_t i = 0; i < len; i++)
		tx[i] = (uint8_t)(i * 11 + salt);
	uint32_t id = request_send(h, type, tx, len);
	if (response_wait(h, &resp) == 0) {
		free(tx);
		return false;
	}
	CHECK(resp.for_id == id, "response for id %u, expected %u", resp.for_id, id);
	CHECK(resp.status == 0, "request %u: status %u (%s)", id, resp.status, strerror(resp.status)
	);
	CHECK(resp.payload_len == len, "echo of %u bytes, sent %u", resp.payload_len, len);
	CHECK(memcmp(h->msg + sizeof(resp), tx, len) == 0, "echo of request %u differs", id);
	free(tx);
	return true;
}

static void ping2_round_trip(struct hostile *h, unsigned salt) {
	CHECK(echo_round_trip(h, GR_PING2, GR_PING2_LEN, salt), "lease ended on a valid request");
}

// After corrupting the ring: the daemon must end the lease within the bound.
// Responses still in the ring are read first; none may be a success for
// bad_id (the corrupt request must never be served).
static enum outcome expect_detached(struct hostile *h, uint32_t bad_id) {
	uint64_t start = monotonic_ns();
	bool ended;

	// Wake the poller whatever the flag says: it may sleep on the doorbell.
	doorbell_ring(h);
	do {
		CHECK(monotonic_ns() - start < HOSTILE_EOF_BOUND_MS * 1000000ull,
		      "the daemon did not end the lease within %d ms",
		      HOSTILE_EOF_BOUND_MS);
		ended = lease_ended(h, HOSTILE_POLL_MS);
		// What the daemon answered, before the lease ended too.
		while (response_take(h) > 0) {
			struct gr_api_response resp;
			memcpy(&resp, h->msg, sizeof(resp));
			CHECK(resp.for_id != bad_id || resp.status != 0,
			      "the corrupt request %u was served",
			      bad_id);
		}
	} while (!ended);
	printf("lease ended after %.1f ms\n", (double)(monotonic_ns() - start) / 1e6);
	return OUTCOME_DETACHED;
}

static void hostile_attach(struct hostile *h, const char *sock_path) {
	struct gr_shm_attach_req req = {
		.backings = GR_SHM_BACKING_MEMFD,
		.layout_version = SHMCHAN_LAYOUT_VERSION,
	};
	struct gr_api_response resp;
	int fds[3];
	unsigned n_fds = 0;

	h->sock = raw_connect(sock_path);
	raw_hello(h->sock, 1);
	CHECK(raw_send_request(h->sock, 2, GR_SHM_ATTACH, sizeof(req), &req, sizeof(req)) == 0,
	      "attach: connection closed");
	int ret = raw_recv_response_fds(
		h->sock,
		&resp,
		&h->attach,
		sizeof(h->attach),
		fds,
		3,
		&n_fds
	);
	CHECK(ret == 1, "attach: %s", ret == 0 ? "connection closed" : "no response");
	CHECK(resp.status == 0, "attach: status %u (%s)", resp.status, strerror(resp.status));
	CHECK(resp.payload_len == sizeof(h->attach), "attach response of %u bytes", resp.payload_len
	);
	CHECK(n_fds == 3, "attach gave %u descriptors", n_fds);
	h->req_doorbell = fds[0];
	h->resp_doorbell = fds[1];
	h->mem_fd = fds[2];

	const struct shmchan_geometry g = {
		.layout_version = h->attach.layout_version,
		.cell_size = h->attach.cell_size,
		.ring_cells = h->attach.ring_cells,
		.region_size = h->attach.region_size,
		.req_ring_off = h->attach.req_ring_off,
		.resp_ring_off = h->attach.resp_ring_off,
	};
	CHECK(shmchan_geometry_check(&g) == 0, "geometry: %s", shmchan_last_error());
	h->base = mmap(NULL, g.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, h->mem_fd, 0);
	CHECK(h->base != MAP_FAILED, "mmap: %s", strerror(errno));
	h->ctrl = (struct shmchan_ctrl *)h->base;
	CHECK(h->ctrl->magic == SHMCHAN_MAGIC, "magic %#x", h->ctrl->magic);
	h->req_ring = (struct rte_ring *)(h->base + g.req_ring_off);
	h->resp_ring = (struct rte_ring *)(h->base + g.resp_ring_off);
	h->req_cells = shmchan_ring_cells(h->req_ring);
	h->resp_cells = shmchan_ring_cells(h->resp_ring);
	h->mask = g.ring_cells - 1;
	h->capacity = g.ring_cells - 1;
	h->next_id = 1;
	h->msg = malloc(SHMCHAN_MSG_MAX);
	CHECK(h->msg != NULL, "malloc");
	printf("channel %s pid %d\n", h->attach.name, (int)getpid());
	fflush(stdout);
	// The channel works before anything is broken.
	ping2_round_trip(h, 0);
}

// A frame of msg_len bytes whose content is a request header announcing
// payload_len and zeros; the frame says frame_len and spans cells cells.
static enum outcome put_bad_frame(
	struct hostile *h,
	uint32_t frame_len,
	uint32_t msg_len,
	uint32_t payload_len,
	uint32_t cells
) {
	struct gr_api_request hdr = {
		.id = h->next_id++,
		.type = GR_SHM_ECHO,
		.payload_len = payload_len,
	};

	memset(h->msg, 0, msg_len);
	memcpy(h->msg, &hdr, msg_len < sizeof(hdr) ? msg_len : sizeof(hdr));
	frame_put(h, frame_len, h->msg, msg_len, cells);
	return expect_detached(h, hdr.id);
}

static enum outcome case_frame_short(struct hostile *h) {
	uint32_t len = SHMCHAN_MSG_MIN - 4;
	return put_bad_frame(h, len, len, 0, SHMCHAN_MSG_CELLS(len));
}

// As long as the ring allows, every cell published: only the length check
// stops the daemon from copying twice its buffer's size.
static enum outcome case_frame_long(struct hostile *h) {
	uint32_t len = h->capacity * SHMCHAN_CELL_SIZE - SHMCHAN_FRAME_HDR;
	return put_bad_frame(h, len, SHMCHAN_MSG_MAX, len - SHMCHAN_MSG_MIN, h->capacity);
}

// A length whose cell count overflows 32 bits: a daemon that computed cells
// before checking the length would see a tiny frame and copy gigabytes.
static enum outcome case_frame_huge(struct hostile *h) {
	return put_bad_frame(h, UINT32_MAX - 8, SHMCHAN_MSG_MIN, 0, 1);
}

// A valid GR_PING2 frame of several cells with only the first published: the
// daemon must not serve it (it would read cells the client still owns).
static enum outcome case_frame_unpublished(struct hostile *h) {
	struct gr_api_request hdr = {
		.id = h->next_id++,
		.type = GR_PING2,
		.payload_len = GR_PING2_LEN,
	};
	uint32_t len = sizeof(hdr) + GR_PING2_LEN;
	uint32_t cells = SHMCHAN_MSG_CELLS(len);
	uint64_t start = monotonic_ns();

	memset(h->msg, 0x5a, len);
	memcpy(h->msg, &hdr, sizeof(hdr));
	frame_write(h, 0, h->msg, len, cells);
	req_publish(h, h->req_pos);
	doorbell_ring(h);
	// A frame is published by its length alone: the daemon must not serve
	// this one, whatever prod.tail says, nor give up on the channel.
	while (monotonic_ns() - start < HOSTILE_UNSERVED_MS * 1000000ull) {
		CHECK(!lease_ended(h, HOSTILE_POLL_MS), "the daemon ended the lease");
		CHECK(response_take(h) == 0, "the daemon answered an unpublished request");
	}
	printf("not served in %d ms, lease held\n", HOSTILE_UNSERVED_MS);
	return OUTCOME_SERVED;
}

// The frame carries 16 bytes of payload, the header announces 4096: a daemon
// that believed the header would echo 4080 bytes of stale memory (other
// clients' requests).
static enum outcome case_payload_len_mismatch(struct hostile *h) {
	uint32_t len = SHMCHAN_MSG_MIN + 16;
	return put_bad_frame(h, len, len, 4096, SHMCHAN_MSG_CELLS(len));
}

// A well-framed request over the maximum payload: EMSGSIZE, then detached.
static enum outcome case_payload_over_max(struct hostile *h) {
	uint32_t payload_len = GR_API_MAX_MSG_LEN + 1;
	uint32_t len = SHMCHAN_MSG_MIN + payload_len;
	struct gr_api_request hdr = {
		.id = h->next_id++,
		.type = GR_SHM_ECHO,
		.payload_len = payload_len,
	};
	struct gr_api_response resp;

	memset(h->msg, 0, len);
	memcpy(h->msg, &hdr, sizeof(hdr));
	frame_put(h, len, h->msg, len, SHMCHAN_MSG_CELLS(len));
	doorbell_ring(h);
	CHECK(response_wait(h, &resp) == 1, "payload over the maximum: no EMSGSIZE before EOF");
	CHECK(resp.for_id == hdr.id && resp.status == EMSGSIZE && resp.payload_len == 0,
	      "payload over the maximum: response for id %u status %u (%s) with %u bytes",
	      resp.for_id,
	      resp.status,
	      strerror(resp.status),
	      resp.payload_len);
	return expect_detached(h, hdr.id);
}

// Fill the whole request ring, from our index on, with one-cell GR_PING
// frames whose lengths are not written: a daemon that trusted prod.tail
// would find nothing but valid requests there and serve on instead of
// detaching.
static void fill_with_pings(struct hostile *h) {
	struct gr_api_request hdr = {.type = GR_PING};

	_Static_assert(SHMCHAN_MSG_CELLS(sizeof(hdr)) == 1, "a ping frame is one cell");
	for (uint32_t i = 0; i <= h->mask; i++) {
		hdr.id = h->next_id++;
		cells_write(h, h->req_pos + i, SHMCHAN_FRAME_HDR, &hdr, sizeof(hdr));
	}
}

static enum outcome case_tail_backwards(struct hostile *h) {
	fill_with_pings(h);
	// Within the longest frame behind ours, the index may lag honestly (the
	// daemon takes a frame by its length before the client stores prod.tail).
	req_publish(h, h->req_pos - SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MAX) - 1);
	return expect_detached(h, 0);
}

static enum outcome case_tail_past_capacity(struct hostile *h) {
	fill_with_pings(h);
	req_publish(h, h->req_pos + h->capacity + 1);
	return expect_detached(h, 0);
}

// The daemon keeps its own geometry: it must serve on (or detach), and every
// answer it gives must be right.
static enum outcome case_ring_header(struct hostile *h) {
	struct rte_ring *rings[] = {h->req_ring, h->resp_ring};

	for (unsigned i = 0; i < 2; i++) {
		rings[i]->size = HOSTILE_HUGE_RING_FIELD;
		rings[i]->mask = HOSTILE_HUGE_RING_FIELD;
		rings[i]->capacity = HOSTILE_HUGE_RING_FIELD;
	}
	for (unsigned i = 0; i < HOSTILE_BIG_ECHOES; i++) {
		if (!echo_round_trip(h, GR_PING2, GR_PING2_LEN, i))
			return OUTCOME_DETACHED;
		if (!echo_round_trip(h, GR_SHM_ECHO, GR_API_MAX_MSG_LEN, i))
			return OUTCOME_DETACHED;
	}
	for (unsigned i = 0; i < HOSTILE_PINGS; i++)
		if (!echo_round_trip(h, GR_PING2, GR_PING2_LEN, i))
			return OUTCOME_DETACHED;
	return OUTCOME_SERVED;
}

// The flags and the client's CPU are hints: odd values may cost the daemon
// a doorbell, or its spin for this client, nothing more. Each request must
// be answered.
static enum outcome case_sleep_flags(struct hostile *h) {
	static const uint32_t odd[] = {2, 0xffffffffu, 0x80000000u, 0xdeadbeefu, 0x7fffffffu, 1};
	const unsigned n_odd = sizeof(odd) / sizeof(odd[0]);

	for (unsigned i = 0; i < HOSTILE_FLAG_ROUNDS; i++) {
		__atomic_store_n(&h->ctrl->daemon_sleeping, odd[i % n_odd], __ATOMIC_RELAXED);
		__atomic_store_n(&h->ctrl->client_sleeping, odd[(i + 1) % n_odd], __ATOMIC_RELAXED);
		__atomic_store_n(&h->ctrl->client_cpu, odd[(i + 2) % n_odd], __ATOMIC_RELAXED);
		ping2_round_trip(h, i);
	}
	return OUTCOME_SERVED;
}

// The host_load word is the daemon's to write and never to read: a client
// that writes it changes nothing the daemon does, and the daemon, idle
// after a call, tells a fresh one over it.
static enum outcome case_host_hint(struct hostile *h) {
	static const uint32_t scribbled = 0xdeadbeefu;
	bool busy = false;

	__atomic_store_n(&h->ctrl->host_load, scribbled, __ATOMIC_RELAXED);
	ping2_round_trip(h, 0);
	uint64_t start = monotonic_ns() / 1000000, now = start;
	for (;;) {
		uint32_t word = __atomic_load_n(&h->ctrl->host_load, __ATOMIC_RELAXED);
		now = monotonic_ns() / 1000000;
		if (word != scribbled &&
		    shmchan_host_word_read(word, now, HOSTILE_HOST_HINT_AGE_MS, &busy))
			break;
		CHECK(now - start < HOSTILE_HOST_HINT_MS,
		      "no fresh host hint %d ms after a call (word 0x%08" PRIx32 ")",
		      HOSTILE_HOST_HINT_MS,
		      word);
		usleep(HOSTILE_HOST_HINT_POLL_US);
	}
	printf("host hint told after %" PRIu64 " ms: %s\n", now - start, busy ? "busy" : "quiet");
	ping2_round_trip(h, 1);
	return OUTCOME_SERVED;
}

// The daemon's pid, from GR_SHM_DAEMON_INFO over a plain connection.
static pid_t daemon_pid_get(const char *sock_path) {
	struct gr_shm_daemon_info info;
	struct gr_api_response resp;
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	CHECK(raw_send_request(fd, 2, GR_SHM_DAEMON_INFO, 0, NULL, 0) == 0,
	      "daemon info: connection closed");
	CHECK(raw_recv_response(fd, &resp, &info, sizeof(info)) == 1, "daemon info: no response");
	CHECK(resp.status == 0 && resp.payload_len == sizeof(info),
	      "daemon info: status %u, %u bytes",
	      resp.status,
	      resp.payload_len);
	close(fd);
	return info.pid;
}

// True while the daemon maps the memfd region of channel name
// ("/memfd:NAME (deleted)" in its maps).
static bool daemon_maps_region(pid_t pid, const char *name) {
	char path[64], line[512], tag[GR_SHM_NAME_LEN + 16];
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	snprintf(tag, sizeof(tag), "/memfd:%s ", name);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL, "%s: %s", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, tag) != NULL;
	fclose(f);
	return found;
}

// The daemon still answers a new client.
static void daemon_serves(const char *sock_path) {
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	raw_ping(fd, 2, "ping of a new client");
	close(fd);
}

// Detached, then unmapped by the daemon: writes into the region and doorbell
// rings reach nobody.
static enum outcome case_write_after_detach(struct hostile *h) {
	pid_t daemon = daemon_pid_get(h->sock_path);
	struct gr_api_request hdr = {.type = GR_PING2, .payload_len = GR_PING2_LEN};
	uint32_t len = sizeof(hdr) + GR_PING2_LEN, cells = SHMCHAN_MSG_CELLS(len);

	CHECK(case_frame_short(h) == OUTCOME_DETACHED, "not detached");
	uint64_t start = monotonic_ns();
	while (daemon_maps_region(daemon, h->attach.name)) {
		CHECK(monotonic_ns() - start < HOSTILE_UNMAP_BOUND_MS * 1000000ull,
		      "the daemon still maps channel %s %d ms after it detached it",
		      h->attach.name,
		      HOSTILE_UNMAP_BOUND_MS);
		usleep(HOSTILE_POLL_MS * 1000);
	}
	printf("region unmapped by the daemon after %.1f ms\n",
	       (double)(monotonic_ns() - start) / 1e6);

	// Valid requests, published one after the other over the whole ring
	// (nobody consumes them: the indices wrap over unread cells).
	memset(h->msg, 0x5a, len);
	for (unsigned i = 0; i < HOSTILE_AFTER_DETACH_ROUNDS; i++) {
		hdr.id = h->next_id++;
		memcpy(h->msg, &hdr, sizeof(hdr));
		cells_write(h, h->req_pos, SHMCHAN_FRAME_HDR, h->msg, len);
		cells_write(h, h->req_pos, 0, &len, sizeof(len));
		h->req_pos += cells;
		req_publish(h, h->req_pos);
		doorbell_ring(h);
	}
	CHECK(response_len(h) == 0, "a detached channel was answered");
	// Then garbage over the whole region, and more rings.
	memset(h->base, 0xff, h->attach.region_size);
	for (unsigned i = 0; i < HOSTILE_AFTER_DETACH_ROUNDS; i++)
		doorbell_ring(h);
	printf("%d frames and %d doorbells after the detach, then garbage: nothing answered\n",
	       HOSTILE_AFTER_DETACH_ROUNDS,
	       2 * HOSTILE_AFTER_DETACH_ROUNDS);
	daemon_serves(h->sock_path);
	return OUTCOME_DETACHED;
}

// A call on the memfd that its seals must refuse with EPERM.
#define CHECK_SEALED(call, what)                                                                   \
	do {                                                                                       \
		int ret_ = (call);                                                                 \
		CHECK(ret_ < 0 && errno == EPERM,                                                  \
		      "%s: returned %d (%s), expected EPERM: the memfd is not sealed",             \
		      what,                                                                        \
		      ret_,                                                                        \
		      ret_ < 0 ? strerror(errno) : "allowed");                                     \
		printf("%s: EPERM: ok\n", what);                                                   \
	} while (0)

static enum outcome case_truncate_memfd(struct hostile *h) {
	off_t size = (off_t)h->attach.region_size;

	int seals = fcntl(h->mem_fd, F_GET_SEALS);
	CHECK(seals >= 0, "F_GET_SEALS: %s", strerror(errno));
	CHECK((seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) ==
		      (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
	      "seals %#x",
	      seals);
	CHECK_SEALED(ftruncate(h->mem_fd, 0), "ftruncate to 0");
	CHECK_SEALED(ftruncate(h->mem_fd, size / 2), "ftruncate to half");
	CHECK_SEALED(ftruncate(h->mem_fd, size * 2), "ftruncate to twice the size");
	CHECK_SEALED(fallocate(h->mem_fd, 0, size, size), "fallocate past the end");
	CHECK_SEALED(fcntl(h->mem_fd, F_ADD_SEALS, F_SEAL_WRITE), "F_ADD_SEALS F_SEAL_WRITE");
	struct stat st;
	CHECK(fstat(h->mem_fd, &st) == 0 && st.st_size == size,
	      "the memfd is %lld bytes, %lld before",
	      (long long)st.st_size,
	      (long long)size);
	for (unsigned i = 0; i < HOSTILE_PINGS; i++)
		ping2_round_trip(h, i);

	// The seals allow this one: every page of the region reads as zeros
	// again, for the daemon too (no SIGBUS: the size is unchanged). Its
	// request index is no longer where the ring says: it must detach.
	CHECK(fallocate(h->mem_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, size) == 0,
	      "punch hole: %s",
	      strerror(errno));
	printf("hole punched over the whole region\n");
	// Our own indices are as stale as the daemon's: wait for the end of
	// the lease without looking at the rings.
	uint64_t start = monotonic_ns();
	doorbell_ring(h);
	while (!lease_ended(h, HOSTILE_POLL_MS))
		CHECK(monotonic_ns() - start < HOSTILE_EOF_BOUND_MS * 1000000ull,
		      "the daemon did not end the lease within %d ms",
		      HOSTILE_EOF_BOUND_MS);
	printf("lease ended after %.1f ms\n", (double)(monotonic_ns() - start) / 1e6);
	return OUTCOME_DETACHED;
}

// Request ring free cells, by our own index and the daemon's published one.
static uint32_t req_room(const struct hostile *h) {
	uint32_t cons = __atomic_load_n(&h->req_ring->cons.tail, __ATOMIC_ACQUIRE);
	return h->capacity - (h->req_pos - cons);
}

static enum outcome case_never_reads(struct hostile *h) {
	uint32_t len = sizeof(struct gr_api_request) + GR_API_MAX_MSG_LEN;
	struct gr_api_request hdr = {.type = GR_SHM_ECHO, .payload_len = GR_API_MAX_MSG_LEN};
	uint64_t start = monotonic_ns(), last_sent = start;
	unsigned sent = 0;

	memset(h->msg, 0x3c, len);
	for (;;) {
		// Send while there is room; never take a response.
		while (req_room(h) >= SHMCHAN_MSG_CELLS(len)) {
			hdr.id = h->next_id++;
			memcpy(h->msg, &hdr, sizeof(hdr));
			frame_put(h, len, h->msg, len, SHMCHAN_MSG_CELLS(len));
			doorbell_maybe(h);
			sent++;
			last_sent = monotonic_ns();
		}
		if (lease_ended(h, HOSTILE_POLL_MS))
			break;
		CHECK(monotonic_ns() - start < HOSTILE_SLOW_BOUND_MS * 1000000ull,
		      "a client that reads nothing still attached after %d ms",
		      HOSTILE_SLOW_BOUND_MS);
	}
	uint64_t end = monotonic_ns();
	printf("%u requests of %u bytes sent, none read; the daemon stopped taking them; lease"
	       " ended %.1f ms after the last one went in (%.1f ms after the first)\n",
	       sent,
	       len,
	       (double)(end - last_sent) / 1e6,
	       (double)(end - start) / 1e6);
	return OUTCOME_DETACHED;
}

// Whether the doorbell flood's caller asked it to end (its stop file exists).
static bool flood_stopped(const struct hostile *h) {
	return h->flood_stop_path != NULL && access(h->flood_stop_path, F_OK) == 0;
}

static enum outcome case_doorbell_flood(struct hostile *h) {
	uint64_t max = HOSTILE_EVENTFD_MAX, one = 1, writes = 0, refused = 0;

	// The response doorbell is one-way, daemon to client: our end takes no
	// write (MSG_NOSIGNAL: EPIPE, not SIGPIPE).
	CHECK(send(h->resp_doorbell, &max, sizeof(max), MSG_NOSIGNAL) < 0 && errno == EPIPE,
	      "the response doorbell took a write from the client");
	ping2_round_trip(h, 1);

	printf("flooding\n");
	fflush(stdout);
	uint64_t start = monotonic_ns(), end = start + HOSTILE_FLOOD_MAX_MS * 1000000ull, now;
	do {
		for (unsigned i = 0; i < HOSTILE_FLOOD_BURST; i++) {
			if (write(h->req_doorbell, &one, sizeof(one)) == sizeof(one))
				writes++;
			else if (errno == EAGAIN)
				refused++;
			else
				CHECK(false, "doorbell: %s", strerror(errno));
		}
		now = monotonic_ns();
	} while (now < end && !flood_stopped(h));
	printf("doorbell flood: %" PRIu64 " writes (%" PRIu64 " refused) in %.1f s, %.0f/s\n",
	       writes,
	       refused,
	       (double)(now - start) / 1e9,
	       (double)writes / ((double)(now - start) / 1e9));
	for (unsigned i = 0; i < HOSTILE_PINGS; i++)
		ping2_round_trip(h, i);
	return OUTCOME_SERVED;
}

// The CPU time this process has used, user and system, in seconds.
static double self_cpu_s(void) {
	struct rusage ru;

	CHECK(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage: %s", strerror(errno));
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Ring the request doorbell every interval_us for HOSTILE_RING_EMPTY_MS, with no
// request in the ring: each ring is an empty wake-up of the poller, which
// must cost it no more than the ring costs us.
static enum outcome ring_empty(struct hostile *h, unsigned interval_us) {
	uint64_t one = 1, rings = 0;
	struct timespec next;
	double cpu_start;

	ping2_round_trip(h, 1);
	printf("ringing\n");
	fflush(stdout);
	cpu_start = self_cpu_s();
	CHECK(clock_gettime(CLOCK_MONOTONIC, &next) == 0, "clock_gettime");
	uint64_t end = monotonic_ns() + HOSTILE_RING_EMPTY_MS * 1000000ull;
	while (monotonic_ns() < end) {
		next.tv_nsec += (long)interval_us * 1000;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		CHECK(write(h->req_doorbell, &one, sizeof(one)) == sizeof(one),
		      "doorbell: %s",
		      strerror(errno));
		rings++;
	}
	printf("ringer cpu_s %.3f rings %" PRIu64 "\n", self_cpu_s() - cpu_start, rings);
	for (unsigned i = 0; i < HOSTILE_PINGS; i++)
		ping2_round_trip(h, i);
	return OUTCOME_SERVED;
}

static enum outcome case_ring_empty_20us(struct hostile *h) {
	return ring_empty(h, 20);
}

static enum outcome case_ring_empty_300us(struct hostile *h) {
	return ring_empty(h, 300);
}

// Socket only: 128 KiB echoes pushed as far as the daemon takes them, no
// response ever read; the daemon must close the connection.
static enum outcome case_sock_never_reads(struct hostile *h) {
	size_t len = sizeof(struct gr_api_request) + GR_API_MAX_MSG_LEN;
	uint8_t *msg = calloc(1, len);
	int fd = raw_connect(h->sock_path);
	uint64_t start, pushed = 0;
	uint32_t id = 2;
	size_t off = 0;

	CHECK(msg != NULL, "calloc");
	raw_hello(fd, 1);
	printf("socket pid %d\n", (int)getpid());
	fflush(stdout);
	start = monotonic_ns();
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLOUT | POLLRDHUP};
		if (off == 0) {
			struct gr_api_request hdr = {
				.id = id++,
				.type = GR_SHM_ECHO,
				.payload_len = GR_API_MAX_MSG_LEN,
			};
			memcpy(msg, &hdr, sizeof(hdr));
		}
		ssize_t n = send(fd, msg + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			pushed += (uint64_t)n;
			off = (off + (size_t)n) % len;
			continue;
		}
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			break;
		CHECK(n < 0 && errno == EAGAIN, "send: %s", n < 0 ? strerror(errno) : "0 bytes");
		CHECK(poll(&pfd, 1, HOSTILE_POLL_MS * 100) >= 0, "poll: %s", strerror(errno));
		if (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR))
			break;
		CHECK(monotonic_ns() - start < HOSTILE_SOCK_STALL_BOUND_MS * 1000000ull,
		      "a socket client that reads nothing still connected after %d ms",
		      HOSTILE_SOCK_STALL_BOUND_MS);
	}
	printf("%" PRIu64 " bytes of requests pushed, none of the answers read; connection closed"
	       " after %.1f ms\n",
	       pushed,
	       (double)(monotonic_ns() - start) / 1e6);
	close(fd);
	free(msg);
	daemon_serves(h->sock_path);
	return OUTCOME_DETACHED;
}

// Socket only: text of the client's making in the two requests whose
// strings the daemon logs.
static enum outcome case_log_forge(struct hostile *h) {
	struct gr_hello_req hello = {.api_version = GR_API_VERSION};
	// RTE_LOG_INFO, on a pattern that names no log type: status 0, as in Grout,
	// and a log line that quotes the pattern.
	struct gr_log_level_set_req set = {.level = 7};
	int fd = raw_connect(h->sock_path);

	snprintf(hello.version, sizeof(hello.version), "log_forge\nshmchand: forged hello\x1b[2J");
	CHECK(raw_send_request(fd, 1, GR_HELLO, sizeof(hello), &hello, sizeof(hello)) == 0,
	      "hello: connection closed");
	raw_expect_status(fd, 1, 0, "hello with a newline in its version string");
	snprintf(set.pattern, sizeof(set.pattern), "nomatch.forge\nshmchand: forged pattern");
	CHECK(raw_send_request(fd, 2, GR_LOG_LEVEL_SET, sizeof(set), &set, sizeof(set)) == 0,
	      "log level set: connection closed");
	raw_expect_status(fd, 2, 0, "log level set with a newline in its pattern");
	printf("socket pid %d\n", (int)getpid());
	close(fd);
	return OUTCOME_SERVED;
}

// GR_SHM_STATS over a plain connection, for the scripts.
static int print_stats(const char *sock_path) {
	struct gr_shm_stats_resp st;
	struct gr_api_response resp;
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	CHECK(raw_send_request(fd, 2, GR_SHM_STATS, 0, NULL, 0) == 0, "stats: connection closed");
	CHECK(raw_recv_response(fd, &resp, &st, sizeof(st)) == 1, "stats: no response");
	CHECK(resp.status == 0 && resp.payload_len == sizeof(st),
	      "stats: status %u, %u bytes",
	      resp.status,
	      resp.payload_len);
	printf("channels=%u detaches=%" PRIu64 " detach_corrupt=%" PRIu64 " detach_slow=%" PRIu64
	       " detach_lease=%" PRIu64 "\n",
	       st.channels,
	       st.total.detaches,
	       st.total.detach_corrupt,
	       st.total.detach_slow,
	       st.total.detach_lease);
	close(fd);
	return EXIT_SUCCESS;
}

// Unmap and close everything hostile_attach() set up.
static void hostile_release(struct hostile *h) {
	munmap(h->base, h->attach.region_size);
	close(h->mem_fd);
	close(h->req_doorbell);
	close(h->resp_doorbell);
	close(h->sock);
	free(h->msg);
}

static const struct {
	const char *name;
	enum outcome (*run)(struct hostile *);
	bool attach; // attaches a channel first (else the socket only)
} cases[] = {
	{"frame_short", case_frame_short, true},
	{"frame_long", case_frame_long, true},
	{"frame_huge", case_frame_huge, true},
	{"frame_unpublished", case_frame_unpublished, true},
	{"payload_len_mismatch", case_payload_len_mismatch, true},
	{"payload_over_max", case_payload_over_max, true},
	{"tail_backwards", case_tail_backwards, true},
	{"tail_past_capacity", case_tail_past_capacity, true},
	{"ring_header", case_ring_header, true},
	{"sleep_flags", case_sleep_flags, true},
	{"write_after_detach", case_write_after_detach, true},
	{"truncate_memfd", case_truncate_memfd, true},
	{"never_reads", case_never_reads, true},
	{"doorbell_flood", case_doorbell_flood, true},
	{"ring_empty_20us", case_ring_empty_20us, true},
	{"ring_empty_300us", case_ring_empty_300us, true},
	{"host_hint", case_host_hint, true},
	{"sock_never_reads", case_sock_never_reads, false},
	{"log_forge", case_log_forge, false},
};

int main(int argc, char **argv) {
	struct hostile h = {0};

	CHECK(argc == 3 || (argc == 4 && strcmp(argv[2], "doorbell_flood") == 0),
	      "usage: %s SOCK CASE, or %s SOCK doorbell_flood STOP_FILE",
	      argv[0],
	      argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	if (strcmp(argv[2], "stats") == 0)
		return print_stats(argv[1]);
	h.sock_path = argv[1];
	h.flood_stop_path = argc == 4 ? argv[3] : NULL;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(argv[2], cases[i].name) != 0)
			continue;
		if (cases[i].attach)
			hostile_attach(&h, argv[1]);
		enum outcome o = cases[i].run(&h);
		printf("outcome %s\n", o == OUTCOME_DETACHED ? "detached" : "served");
		if (cases[i].attach)
			hostile_release(&h);
		return EXIT_SUCCESS;
	}
	CHECK(false, "unknown case '%s'", argv[2]);
}
