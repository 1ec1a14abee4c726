// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The shared-memory channel: one region per client holding a control block
// and two single-producer single-consumer rte_rings of SHMCHAN_CELL_SIZE
// byte elements. Requests go client -> daemon in the request ring; responses
// (and events) go daemon -> client in the response ring. See
// docs/protocol.md for the byte layout and the doorbell protocol.
//
// This library knows nothing of handlers or of the client library. The
// server side (shmchan_server_*) runs in the daemon and trusts nothing in
// the region; the client side (shmchan_client_*) trusts the daemon and needs
// no EAL.

#pragma once

#include <gr_shm.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHMCHAN_MAGIC 0x53484d43u // "SHMC"
// 2: the daemon's need-wakeup flag tells what it waits for (a request, or
// room in the response ring), and a client about to sleep rings the daemon
// when it waits for room.
// 3: the control block records the cache line size it was laid out for,
// the generation of the channel and whether the daemon detached it; the
// response doorbell is the client's end of a one-way Unix stream
// socketpair, not an eventfd (the daemon rings its own end with
// send(MSG_DONTWAIT), so no client can make that block).
// 4: each side publishes the CPU it runs on beside its need-wakeup flag
// (daemon_cpu, client_cpu), so that a waiter stops spinning on the CPU its
// peer needs.
// 5: a frame is published by its length: the producer writes a zero length
// into the cell after the frame, then the frame's other bytes, then its
// length (release); the consumer waits for a non-zero length at its index
// and never reads the producer's index (which producers still store).
// 6: the daemon publishes how busy the host's CPUs were at its poller's
// last look, and when (host_load), so that a client that woke the poller
// need not read /proc/loadavg itself on the way to its sleep.
#define SHMCHAN_LAYOUT_VERSION 6

// One ring element. 16 bytes lets rte_ring copy with 128-bit moves.
#define SHMCHAN_CELL_SIZE 16
// Each message is preceded by a 4-byte frame length (the message's bytes:
// header + payload); frame length + message are padded up to whole cells.
// The length is also what publishes the frame (layout version 5): a cell
// whose first 4 bytes are zero holds no frame yet.
#define SHMCHAN_FRAME_HDR 4
// Longest message: an event (16-byte header inside a 12-byte response
// header) with the maximum payload. Requests are shorter.
#define SHMCHAN_MSG_MAX (12 + 16 + (128 * 1024))
// Shortest message: a request or response header, with no payload.
#define SHMCHAN_MSG_MIN 12
// Cells taken by a message of msg_len bytes.
#define SHMCHAN_MSG_CELLS(msg_len)                                                                 \
	(((msg_len) + SHMCHAN_FRAME_HDR + SHMCHAN_CELL_SIZE - 1) / SHMCHAN_CELL_SIZE)
// Ring size: the smallest power of two whose capacity (size - 1) holds the
// longest message, so any legal message fits an empty ring whole.
#define SHMCHAN_RING_CELLS 16384
_Static_assert(
	SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MAX) <= SHMCHAN_RING_CELLS - 1,
	"the longest message fits an empty ring"
);

// Where a region lives. Both backings hold the same layout. The values are
// the wire's (the daemon sends a shmchan_backing as a GR_SHM_BACKING_* bit).
enum shmchan_backing {
	SHMCHAN_BACKING_MEMFD = 1,
	SHMCHAN_BACKING_MEMZONE = 2,
};
_Static_assert(SHMCHAN_BACKING_MEMFD == GR_SHM_BACKING_MEMFD, "a backing is sent as is");
_Static_assert(SHMCHAN_BACKING_MEMZONE == GR_SHM_BACKING_MEMZONE, "a backing is sent as is");

// Geometry of a region. The daemon computes it and sends it in the attach
// response; the client validates it before mapping anything.
struct shmchan_geometry {
	uint32_t layout_version;
	uint32_t cell_size;
	uint32_t ring_cells;
	uint64_t region_size;
	uint64_t req_ring_off;
	uint64_t resp_ring_off;
	// Which attach of the region this is (0 from shmchan_geometry_init()):
	// the daemon gives every channel a new one, writes it into the control
	// block and sends it in the attach response. A client attached to
	// another generation than the region's is a stale one.
	uint32_t generation;
};

// Why the calling thread's last failing shmchan call failed, in words, for
// the caller to log or report (the library itself prints nothing). Empty if
// no failure was recorded. Valid until the thread's next failing call.
const char *shmchan_last_error(void);

// Compute the geometry of a region with rings of ring_cells elements.
// Returns 0 or -EINVAL (ring_cells not a power of two, too small for the
// longest message, or above 2^24).
int shmchan_geometry_init(struct shmchan_geometry *g, uint32_t ring_cells);

// Check a geometry received from the daemon: layout version, cell size,
// ring size, offsets and sizes inside region_size and not overlapping.
// Returns 0, -EPROTO (layout version mismatch) or -EINVAL (anything else).
int shmchan_geometry_check(const struct shmchan_geometry *g);

// Counters kept by the daemon in its private memory (never in the region,
// where the client could rewrite them).
struct shmchan_server_stats {
	uint64_t requests;
	uint64_t req_bytes;
	uint64_t responses;
	uint64_t resp_bytes;
	uint64_t doorbells_rung; // rings of the client's doorbell (one byte sent)
	uint64_t sleeps; // calls of shmchan_server_doorbell_arm*() and _mark*()
	uint64_t
		overflows; // messages the ring refused, once each (shmchan_server_count_overflow())
};

// ---- server side (daemon) ----

struct shmchan_server;

// Memory for a region, from one backing. The memfd backing is built in; the
// daemon passes an allocator for the memzone backing.
struct shmchan_mem {
	enum shmchan_backing backing;
	void *base;
	size_t size;
	int fd; // the memfd (SHMCHAN_BACKING_MEMFD), -1 otherwise
	char name[32]; // memfd name or memzone name, NUL-terminated
	const void *cookie; // backing-private (the rte_memzone)
};

// Create a sealed memfd of size bytes, mapped shared. Seals: shrink, grow,
// seal. name is at most 31 characters. Returns 0 or -errno.
int shmchan_memfd_create(struct shmchan_mem *mem, const char *name, size_t size);
// Unmap and close. Safe on a zeroed mem with fd -1.
void shmchan_memfd_destroy(struct shmchan_mem *mem);

// Lay out a region in mem (control block and both rings, via rte_ring_init)
// and create the two doorbells (close-on-exec): the request doorbell, an
// eventfd, and the response doorbell, a Unix stream socketpair whose client
// end is passed and whose other end only the daemon holds.
// mem must be at least g->region_size bytes. The shmchan_server takes no
// ownership of mem. Returns 0 or -errno. Main thread.
int shmchan_server_create(
	const struct shmchan_mem *mem,
	const struct shmchan_geometry *g,
	struct shmchan_server **out
);
// Close the doorbells and free the server. Does not touch mem. Call only when
// no thread can use the server any more (after an RCU grace period).
void shmchan_server_destroy(struct shmchan_server *);

// Tell the client that the daemon gave up on the channel: mark the region
// detached, so that the client's next ring operation fails with
// -ECONNRESET instead of writing into a region nobody serves (and that may
// be handed to another client next). Call before the memory goes back to
// any pool. One store, no system call; idempotent. Any thread.
void shmchan_server_detach(struct shmchan_server *);

// Doorbell fds passed to the client at attach: the daemon sleeps on req_fd
// (an eventfd it never reads or writes); the client sleeps on resp_fd (its
// end of the response doorbell socketpair, readable once rung), which the
// daemon rings through the other end.
int shmchan_server_req_fd(const struct shmchan_server *);
int shmchan_server_resp_fd(const struct shmchan_server *);

// Take one request message out of the request ring into buf (capacity at
// least SHMCHAN_MSG_MAX). Copies before validating; uses only the daemon's
// own copy of the ring geometry and its own consumer index.
// Returns the message length (header + payload, >= 12), 0 if the ring is
// empty (no frame published at our index), or -EBADMSG if the client
// corrupted the ring (a frame length out of bounds): the caller detaches.
// The cells taken are handed back to the client by the next
// shmchan_server_flush(), those of a message of 4 KiB or more at once.
// Poller thread only.
int shmchan_server_recv(struct shmchan_server *, void *buf, size_t buf_len);

// True if the request ring holds a message. Poller thread only.
bool shmchan_server_has_request(const struct shmchan_server *);

// Before the poller sleeps on an idle channel: what the daemon wrote and a
// client never may is still there (the control block's magic and
// generation), and the client's producer index of the request ring is
// where its frames put it, give or take the frame whose length the daemon
// took before the index was stored. The busy path reads neither (frames
// are published by their lengths), so a client that wiped its region, or
// moved its index, is caught here. Returns 0, or -EBADMSG (the caller
// detaches). Poller thread only.
int shmchan_server_idle_check(const struct shmchan_server *);

// Put one message (hdr_len bytes of header, then payload) in the response
// ring, whole, and publish it. Does not ring the client's doorbell: call
// shmchan_server_flush() after a batch.
// Returns 0, -ENOBUFS if the ring has no room for it now (nothing written:
// the caller keeps it in its backlog and retries), -EMSGSIZE if it can never
// fit, -EINVAL if shorter than SHMCHAN_MSG_MIN, -EBADMSG if the client
// corrupted the ring. No system call. Poller thread only.
int shmchan_server_enqueue(
	struct shmchan_server *,
	const void *hdr,
	size_t hdr_len,
	const void *payload,
	size_t payload_len
);

// Count one message that found the response ring full. The caller counts
// each message once, however many times shmchan_server_enqueue() refuses
// it, so that the counter says how many waited, not how often the poller
// looked. Poller thread only.
void shmchan_server_count_overflow(struct shmchan_server *);

// Read the client's consumer index of the response ring, and check it: it
// only moves forward, up to what was published. Returns 1 if the client took
// responses since the previous call, 0 if not, -EBADMSG if the index moved
// backwards or past what was published (the caller detaches). What tells a
// slow reader, which takes a response now and then, from one that stopped.
// Poller thread only.
int shmchan_server_resp_taken(struct shmchan_server *);

// End a batch: hand the request cells taken since the last flush back to the
// client, then one full fence, and ring the client's doorbell if it sleeps
// (waiting for a response or for room in the request ring). Does nothing if
// no message moved since the last flush. Makes a system call (one send of a
// byte, MSG_DONTWAIT: it never blocks) only when the client sleeps. Poller
// thread only.
void shmchan_server_flush(struct shmchan_server *);

// shmchan_server_enqueue() then, on success, shmchan_server_flush().
int shmchan_server_send(
	struct shmchan_server *,
	const void *hdr,
	size_t hdr_len,
	const void *payload,
	size_t payload_len
);

// Doorbell, daemon side. arm: say "I am going to sleep, waiting for a
// request" (need-wakeup flag), then a full fence; the caller must then
// re-check the ring with shmchan_server_has_request() before sleeping.
// arm_room: the same, waiting for room in the response ring; the caller
// re-checks by trying its send again. disarm: clear the flag after waking.
// Poller thread only.
void shmchan_server_doorbell_arm(struct shmchan_server *);
void shmchan_server_doorbell_arm_room(struct shmchan_server *);
void shmchan_server_doorbell_disarm(struct shmchan_server *);

// Doorbell, daemon side, for a thread that arms many channels before one
// sleep: mark (mark_room) sets the flag as arm (arm_room) does, but issues no
// fence. The caller marks every channel, issues one full fence
// (atomic_thread_fence(memory_order_seq_cst)), then re-checks every channel
// it marked, as after arm. Poller thread only.
void shmchan_server_doorbell_mark(struct shmchan_server *);
void shmchan_server_doorbell_mark_room(struct shmchan_server *);

const struct shmchan_server_stats *shmchan_server_stats(const struct shmchan_server *);

// Largest CPU hint taken as a CPU number (its value minus 1): the kernel's
// limit on CPU numbers (NR_CPUS is at most 8192). A larger one is "not
// known".
#define SHMCHAN_CPU_HINT_MAX 8192

// Tell the client which CPU the poller serving the channel runs on (cpu,
// from sched_getcpu(); -1: not known). A store only when it changed, no
// system call. Poller thread only.
void shmchan_server_cpu_publish(struct shmchan_server *, int cpu);

// The host_load word of the control block: the CLOCK_MONOTONIC millisecond
// of the poller's look at the host's CPUs, modulo 2^31, in the low bits,
// and SHMCHAN_HOST_BUSY when every CPU had a task to run then (the
// poller's included). 0: not told (a look whose word would be 0 is stored
// as 1, a millisecond later).
#define SHMCHAN_HOST_BUSY 0x80000000u
#define SHMCHAN_HOST_MS_MASK 0x7fffffffu

static inline uint32_t shmchan_host_word(uint64_t now_ms, bool busy) {
	uint32_t word = ((uint32_t)now_ms & SHMCHAN_HOST_MS_MASK) | (busy ? SHMCHAN_HOST_BUSY : 0);
	return word != 0 ? word : 1;
}

// Read a host_load word at now_ms: true, with *busy, when it was told less
// than max_age_ms before (a word "from the future" by the wrapping
// difference is old); false when not told or older. A hint: any word
// decides only between a spin and a sleep.
static inline bool
shmchan_host_word_read(uint32_t word, uint64_t now_ms, uint32_t max_age_ms, bool *busy) {
	if (word == 0)
		return false;
	uint32_t age = ((uint32_t)now_ms - word) & SHMCHAN_HOST_MS_MASK;
	if (age >= max_age_ms)
		return false;
	*busy = (word & SHMCHAN_HOST_BUSY) != 0;
	return true;
}

// Tell the client how busy the host's CPUs were at the poller's last look
// (a shmchan_host_word()). A store only when it changed, no system call.
// Poller thread only.
void shmchan_server_host_publish(struct shmchan_server *, uint32_t word);

// What the client says about itself, for the poller's spin (hints: a client
// can write anything there, and only its own service depends on them).
struct shmchan_peer {
	int cpu; // the CPU it last waited or rang from, -1 if not known
	bool sleeping; // its need-wakeup flag is set
	bool in_loop; // ... by a wait in its caller's event loop
	// With tail: its consumer index of the response ring as it is (not
	// checked), and whether it equals ours (it took every response);
	// without, 0 and false.
	uint32_t taken;
	bool all_taken;
};

// Read those hints; with tail, the client's consumer index too (a load of
// the line the client writes at each receive: only when needed). No system
// call. Poller thread only.
void shmchan_server_peer(const struct shmchan_server *, bool tail, struct shmchan_peer *);

// ---- client side ----

// Threads: a shmchan_client belongs to one thread at a time, and every
// shmchan_client_* call on it, sending or receiving, comes from that thread,
// as the client library's handle does. The two directions are not
// independent: one need-wakeup flag (client_sleeping) says the client waits,
// for a response or for room in the request ring, and a thread waiting on
// one ring also flushes and drains the other, so two threads on one client
// would clear each other's flag and lose wake-ups.
struct shmchan_client;

// Map a channel: for the memfd backing base is NULL and fd is the memfd (it is
// mmap'ed, and checked to be sealed against growing and shrinking); for the
// memzone backing base is the zone's address and fd is -1. The geometry must
// have passed shmchan_geometry_check(). The control block's magic, layout
// version and cache line size are checked, and that it is up and of g's
// generation. Takes ownership of the fds on success. Returns 0 or -errno
// (-EPROTO: layout mismatch, -EINVAL: bad region, -ECONNRESET: the region
// is detached or of another generation).
//
// The lease: every ring operation below first checks that the daemon has
// not detached the channel and that the region is still of the generation
// opened (one load of a read-mostly line). If not, it touches nothing and
// returns -ECONNRESET (enqueue, send, recv, peek_len); has_response and
// can_enqueue say true, so that a waiting caller tries the operation and
// gets the error instead of sleeping; arm and disarm write nothing.
int shmchan_client_open(
	const struct shmchan_geometry *g,
	void *base,
	int mem_fd,
	int req_fd,
	int resp_fd,
	struct shmchan_client **out
);
// Unmap (memfd backing), close the fds, free.
void shmchan_client_close(struct shmchan_client *);

// Put one request message in the request ring, whole, and publish it.
// Does not ring the daemon's doorbell: call shmchan_client_flush() after a
// batch (a spinning daemon serves it at once; a sleeping one only after the
// flush). Returns 0, -ENOBUFS (no room now; retry after the daemon drained
// some), -EMSGSIZE (longer than SHMCHAN_MSG_MAX), -EINVAL (shorter than
// SHMCHAN_MSG_MIN), -ECONNRESET (detached: see the lease above), -EBADMSG
// (the consumer index in the region is past ours). No system call, never
// blocks.
int shmchan_client_enqueue(
	struct shmchan_client *,
	const void *hdr,
	size_t hdr_len,
	const void *payload,
	size_t payload_len
);

// End a batch of enqueues: one full fence, then ring the daemon's doorbell
// if it sleeps. Does nothing if nothing was enqueued since the last flush.
// Makes a system call (one eventfd write) only when the daemon sleeps.
// Returns true when it rang: the answers of this batch wait for the
// daemon's wake-up.
bool shmchan_client_flush(struct shmchan_client *);

// shmchan_client_enqueue() then, on success, shmchan_client_flush().
int shmchan_client_send(
	struct shmchan_client *,
	const void *hdr,
	size_t hdr_len,
	const void *payload,
	size_t payload_len
);

// True if a message of msg_len bytes fits in the request ring now. Reads
// the daemon's consumer tail: call it after shmchan_client_doorbell_arm() to
// re-check before sleeping for room.
bool shmchan_client_can_enqueue(const struct shmchan_client *, size_t msg_len);

// If the daemon waits for room in the response ring, ring its doorbell.
// No fence: a cheap early check for a client that found its ring empty and
// starts to wait; the check in shmchan_client_doorbell_arm() is the one that
// cannot miss.
void shmchan_client_room_check(struct shmchan_client *);

// The same after each response taken, ringing a daemon that waits for room
// only once the client has taken an eighth of the ring since it last rang
// from here: a daemon that is slow to wake is rung once, not once per
// response taken meanwhile. No fence, as room_check.
void shmchan_client_room_made(struct shmchan_client *);

// Take one message out of the response ring into buf. Returns its length,
// 0 if the ring is empty, -EMSGSIZE if buf_len is too small (the message
// stays in the ring), -EBADMSG if the ring holds a bad frame, -ECONNRESET if
// the channel is detached.
int shmchan_client_recv(struct shmchan_client *, void *buf, size_t buf_len);

// Peek the length of the next message: > 0, 0 if the ring is empty,
// -EBADMSG if the ring holds a bad frame, or -ECONNRESET.
int shmchan_client_peek_len(struct shmchan_client *);

// Take one message out of the response ring, with one look at its frame:
// its first hdr_len bytes (at least 4) into hdr, then the rest straight from
// the cells, with no staging copy, into payload if the message's first 4
// bytes equal key and the rest fits in payload_len bytes, else into stage.
// *to_payload says which. Returns the message's length, 0 if the ring is
// empty, -EMSGSIZE if it is shorter than hdr_len or its rest longer than
// stage_len (it stays in the ring), -EINVAL (hdr_len under 4), -EBADMSG for
// a bad frame. Receiving thread.
int shmchan_client_recv_keyed(
	struct shmchan_client *,
	void *hdr,
	size_t hdr_len,
	uint32_t key,
	void *payload,
	size_t payload_len,
	void *stage,
	size_t stage_len,
	bool *to_payload
);

// Doorbell, client side, same protocol as the server's. The client sleeps
// (poll, epoll: it is an ordinary fd that turns readable when rung) on
// shmchan_client_resp_fd() and drains it with shmchan_client_doorbell_drain()
// after waking, which takes the rings queued without blocking, at most
// SHMCHAN_DOORBELL_DRAIN_MAX, so that a daemon ringing without end cannot
// hold it (what is left wakes the next wait at once; the fd's kind stays
// inside these two calls). The daemon rings it when it
// published a response or freed room in the request ring. arm also rings the
// daemon's doorbell when the daemon waits for room in the response ring
// (after its fence, so that it cannot miss): a client arms only after it
// took every response it could, so it has just made room. A client waiting
// for room in the request ring arms, then re-checks by enqueueing again.
// arm_in_loop: the same, for a client that waits in its caller's event
// loop and never spins (the daemon may read that as a hint).
void shmchan_client_doorbell_arm(struct shmchan_client *);
void shmchan_client_doorbell_arm_in_loop(struct shmchan_client *);
void shmchan_client_doorbell_disarm(struct shmchan_client *);
bool shmchan_client_has_response(const struct shmchan_client *);

// Spin on the response ring's producer index: up to polls looks, with a
// pause between two, until a message is published. Returns the looks that
// found nothing (polls when none came). Makes no system call and takes
// nothing: the caller's receive does, and checks the lease and the frame.
// A waiting loop's inner spin, as tight as a raw rte_ring consumer's, so that
// a response is noticed within one look of its publication. Receiving
// thread.
unsigned shmchan_client_spin(const struct shmchan_client *, unsigned polls);

// Tell the daemon which CPU the client runs on (cpu, from sched_getcpu();
// -1: not known): a store only when it changed, and none once the channel
// is detached. Ringing the daemon's doorbell does it too. No system call.
// Client thread.
void shmchan_client_cpu_publish(struct shmchan_client *, int cpu);
// True when the daemon's poller is awake (not armed to sleep) and last ran
// on cpu: the client, running there, holds the CPU its answer needs. Two
// loads, no system call. Any thread.
bool shmchan_client_daemon_on(const struct shmchan_client *, int cpu);
// The CPU the daemon's poller last ran on, asleep or awake (-1: not known).
// One load. Any thread.
int shmchan_client_daemon_cpu(const struct shmchan_client *);
// How busy the host's CPUs were at the daemon's last look, if it looked
// less than max_age_ms before now_ms (CLOCK_MONOTONIC): true with *busy,
// else false. One load, no system call. Any thread.
bool shmchan_client_host_busy(
	const struct shmchan_client *,
	uint64_t now_ms,
	uint32_t max_age_ms,
	bool *busy
);
int shmchan_client_resp_fd(const struct shmchan_client *);
// Rings one drain takes at most: far more than a daemon rings while its
// client sleeps (once per batch), a few system calls.
#define SHMCHAN_DOORBELL_DRAIN_MAX 256
void shmchan_client_doorbell_drain(struct shmchan_client *);
// For a client that leaves rings queued in its doorbell and drains them
// only now and then (waiting on it edge-triggered): the daemon rings at
// most once per flush, and a flush follows a response it published or a
// request it freed. A mark taken at a drain counts the request cells the
// daemon has not freed then (a load of its consumer tail); rings_since(mark)
// adds the requests sent and the responses taken since: a bound of the rings
// the daemon can have sent since the drain, once every response published
// has been taken. Wrapping counts, no system call. Client thread.
uint32_t shmchan_client_rings_mark(const struct shmchan_client *);
uint32_t shmchan_client_rings_since(const struct shmchan_client *, uint32_t mark);

// ---- SCM_RIGHTS helpers (both sides) ----

// Most descriptors passed with one message.
#define SHMCHAN_FDS_MAX 8

// Send len bytes and n_fds descriptors in one sendmsg (MSG_NOSIGNAL). With
// descriptors, len must be at least 1 (they ride on the first byte).
// Returns bytes sent (maybe fewer than len, as send()) or -errno (-EINVAL:
// n_fds above SHMCHAN_FDS_MAX or no byte to carry them).
long shmchan_send_fds(int sock, const void *buf, size_t len, const int *fds, unsigned n_fds);

// Receive up to len bytes and the descriptors that came with them, in one
// recvmsg (MSG_CMSG_CLOEXEC: the fds arrive close-on-exec). Stores up to
// max_fds fds in fds and their number in *n_fds (the caller owns them).
// Returns bytes received (0 at end of file) or -errno; -EMSGSIZE if more
// than max_fds descriptors came or the control data was truncated: every
// descriptor received is then closed, the bytes are consumed anyway.
long shmchan_recv_fds(int sock, void *buf, size_t len, int *fds, unsigned max_fds, unsigned *n_fds);
