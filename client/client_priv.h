// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Internals of the client library, shared by its files and its unit tests.
// Not installed, not part of the API.

#pragma once

#include <gr_api_client.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

// Marks the public functions: the library is built with -fvisibility=hidden.
#define GR_API_EXPORT __attribute__((visibility("default")))

// Read-ahead buffer of the socket transport: one recvmsg() fills it, so a
// small response costs one system call and responses that arrive together
// are parsed from one read. A larger message is read straight into msg_buf.
#define CLIENT_READAHEAD_LEN (64 * 1024)

// Largest payload accepted from the daemon: a response payload, or an event
// (its 16-byte header inside a response) with the largest event payload.
#define CLIENT_MAX_PAYLOAD (GR_API_MAX_MSG_LEN + sizeof(struct gr_api_event))

// Largest message (header + payload); msg_buf holds one.
#define CLIENT_MSG_MAX (sizeof(struct gr_api_response) + CLIENT_MAX_PAYLOAD)

// Descriptors queued from SCM_RIGHTS. The daemon sends 3 at attach (2 for a
// memzone channel); room for a few more lets the attach code see (and
// reject) a daemon that sends too many.
#define CLIENT_MAX_FDS 8

// Room for gr_api_client_transport_reason(): a sentence naming two EAL file
// prefixes (GR_SHM_PREFIX_LEN each).
#define CLIENT_REASON_LEN 256

// Ids whose receive timed out, remembered so that their late responses are
// dropped when they arrive (gr_api_client_recv_len()). A controller that gives up
// on more ids than this before their answers come gets the oldest ones'
// answers stashed instead: memory, never a wrong answer.
#define CLIENT_ABANDONED_MAX 64

// Bytes of responses a handle keeps for later receives (the stash), each
// counted as its payload and its entry: a thousand times a pipeline of
// 64-byte answers 1,000 deep, or 500 of the largest answers. A daemon only
// answers what was asked, so a stash this full holds answers nobody will
// take (a stream read by no one, a daemon answering twice): the handle is
// then dropped (ENOBUFS) rather than grown.
#define CLIENT_STASH_MAX_BYTES (64u << 20)

// Messages a call that waits routes (stashes, queues as events, drops as
// late answers) between two reads of its deadline: a clock read per
// message would slow a pipeline's out-of-order receives, and 64 of the
// largest messages take well under a millisecond to route.
#define CLIENT_ROUTE_CLOCK_EVERY 64
// Messages a call that never waits routes before it returns -EAGAIN: as
// many as a full response ring of the default size holds (16384 cells, one
// per empty response), so that only a daemon that keeps the ring from ever
// going empty makes it stop before the ring's end.
#define CLIENT_TRY_ROUTE_MAX 16384

// Buckets of the stash, a power of two: ids of one client are consecutive,
// so id % CLIENT_STASH_BUCKETS spreads a pipeline of that many requests in
// flight over one entry a bucket.
#define CLIENT_STASH_BUCKETS 256

// One response that arrived before anyone asked for it (pipelining).
// Kept in the bucket of its id (for_id % CLIENT_STASH_BUCKETS).
struct client_stash_entry {
	STAILQ_ENTRY(client_stash_entry) next;
	struct gr_api_response hdr;
	void *payload; // malloc'ed copy, NULL when hdr.payload_len is 0
};

// The events a handle holds for gr_api_client_event_recv(), as the
// daemon's default backlog of each subscriber (--event-backlog,
// --event-backlog-bytes): a program that takes responses and never its
// events holds this much at most. Past either bound new events are dropped
// and counted, and once there is room a GR_SHM_EVENT_LOST with their count
// takes their place, as the daemon does for its own backlog.
#define CLIENT_EVENTS_MAX GR_API_CLIENT_EVENTS_MAX
#define CLIENT_EVENTS_MAX_BYTES GR_API_CLIENT_EVENTS_MAX_BYTES

// One event received, waiting for gr_api_client_event_recv().
struct client_event {
	STAILQ_ENTRY(client_event) next;
	size_t len; // bytes of ev, header included
	struct gr_api_event *ev; // malloc'ed header + payload, handed to the caller
};

// One message as received from either transport. payload points into the
// handle's buffers and stays valid until the next receive on the handle, or
// into the caller's buffer of a struct client_into.
struct client_msg {
	struct gr_api_response hdr;
	const void *payload;
};

// Where a receive of for_id wants the payload (gr_api_client_recv_into()):
// on shm, a response to for_id with status 0 that fits is copied straight
// from the ring's cells into buf, with no staging copy.
struct client_into {
	uint32_t for_id;
	void *buf;
	size_t len;
};

struct shmchan_client;

// Shortest adaptive spin budget: a few round trips of a busy channel (0.3-1
// µs), so that an answer late by a cache miss or a short interrupt of the
// daemon is still caught without a sleep.
#define CLIENT_SPIN_FLOOR_NS 2000ull

// The spin budget of a handle's waits (spin.c). Fixed: budget_ns is
// gr_api_client_opts.spin_us for ever. Adaptive: budget_ns is
// SPIN_RTT_MULT x rtt_ns + slack_ns, within [CLIENT_SPIN_FLOOR_NS, max_ns].
// Written by the thread that owns the handle only.
struct client_spin {
	bool adaptive;
	uint64_t max_ns; // the bound (fixed: the budget)
	uint64_t budget_ns; // how long the next wait spins before it sleeps
	// Weighted mean of the waits a spin caught (adaptive only): the round
	// trip as this handle sees it.
	uint64_t rtt_ns;
	// Added by short sleeps (a spin within max_ns would have caught the
	// answer), taken back by long ones (adaptive only).
	uint64_t slack_ns;
	// Long sleeps since the last caught wait or short sleep (adaptive
	// only): the budget shrinks once they keep coming.
	unsigned long_sleeps;
	// Weighted mean of the time between two clock reads of a spin that
	// was not descheduled: the turn of the wait's loop on this host.
	uint64_t turn_ns;
	// Weighted mean of the waits for answers whose requests woke the
	// daemon (adaptive only): its wake-up as this handle sees it. 0 until
	// the first.
	uint64_t wake_ns;
	// Waits a spin caught, and waits that slept (fixed and adaptive):
	// counters for the tests. Of those, the ones that stopped spinning
	// because the daemon's poller waited for this thread's CPU, and the
	// ones that noticed they were descheduled (fixed and adaptive).
	uint64_t caught;
	uint64_t sleeps;
	uint64_t left_cpu;
	uint64_t descheduled;
	// Waits that slept at once because their requests woke the daemon on
	// a host with no CPU free for it (client_spin_wake_sleep()).
	uint64_t host_busy;
};

// What a spinning wait does after a clock read (client_spin_turn()).
enum client_spin_next {
	CLIENT_SPIN_ON, // poll on
	CLIENT_SPIN_SLEEP, // arm the doorbell and sleep
};

// ---- spin.c ----

// spin_us as in gr_api_client_opts: > 0 fixed, 0 sleep at once, negative
// adaptive, bounded by GR_API_CLIENT_SPIN_US_DEFAULT.
void client_spin_init(struct client_spin *, int spin_us);

// A wait's spin found the answer wait_ns after it started (0 when it was
// found before the spin read the clock).
void client_spin_caught(struct client_spin *, uint64_t wait_ns);

// A wait spun spun_ns, found nothing, and slept slept_ns until the answer
// came (or the doorbell's re-check found it: slept_ns 0).
void client_spin_slept(struct client_spin *, uint64_t spun_ns, uint64_t slept_ns);

// A clock read of a spinning wait (fixed and adaptive), whose budget is
// budget_ns (client_spin_budget()): turn_ns since the read before (0 at the
// first), spun_ns since the wait's first read,
// daemon_here when the daemon's poller is awake on the CPU this thread runs
// on (shmchan_client_daemon_on()). Returns whether to spin on. Sets
// *disturbed when the wait says nothing of the round trip: the thread was
// descheduled in that turn (it took far longer than the mean), or it leaves
// the CPU to the poller. A disturbed wait ends with client_spin_disturbed(),
// not client_spin_caught() or client_spin_slept().
enum client_spin_next client_spin_turn(
	struct client_spin *,
	uint64_t budget_ns,
	uint64_t turn_ns,
	uint64_t spun_ns,
	bool daemon_here,
	bool *disturbed
);

// A disturbed wait ended, after a sleep or not: counted, not learnt from.
void client_spin_disturbed(struct client_spin *, bool slept);

// The budget of a wait: budget_ns, or, when the requests it waits for woke
// the daemon (woke) and the daemon did not last run on this thread's CPU
// (daemon_here: a woken poller may then be queued behind this spin), long
// enough to spin through the daemon's wake-up as seen before (adaptive
// only, and only when that fits within a bound).
uint64_t client_spin_budget(const struct client_spin *, bool woke, bool daemon_here);

// A wait whose requests woke the daemon ended wait_ns after it started,
// caught or after a sleep, and was not disturbed.
void client_spin_woke(struct client_spin *, uint64_t wait_ns);

// Before a wait spins: true when it should sleep at once, because its
// requests woke the sleeping daemon (woke) and every CPU of the host has a
// task to run (cpus_busy): the kernel then queues the woken poller on a
// busy CPU, most often this thread's own, and each poll of a spin delays
// the answer. Fixed and adaptive budgets; counted in host_busy. Such a
// wait's sleep is learnt as any other's (client_spin_slept()), but it is
// no sample of the daemon's wake-up (client_spin_woke()).
bool client_spin_wake_sleep(struct client_spin *, bool woke, bool cpus_busy);

// A handle. Used by one thread at a time (gr_api_client.h), so no field
// needs a lock.
struct gr_api_client {
	int sock; // connected Unix stream socket; the channel's lease once attached
	enum gr_api_transport transport; // GR_API_TRANSPORT_SOCKET or _SHM
	// Set when the daemon closed the socket or sent malformed input: every
	// later call fails ECONNRESET (or dead_err), even for a response
	// already stashed.
	bool dead;
	// The errno of every call once dead: 0 for ECONNRESET, else the
	// protocol error that made this end drop the connection
	// (client_drop()).
	int dead_err;
	uint32_t next_id; // id of the next request; never 0
	// next_id went past UINT32_MAX: every id but 0 has been sent. Until
	// then the ids sent are 1 .. next_id - 1, and a response to any other
	// answers nothing this handle asked (client_route()).
	bool ids_wrapped;
	// The API version the daemon accepted in hello, and its hello
	// response (zero when that version's is empty).
	uint32_t api_version;
	struct gr_hello_resp hello_resp;
	uint64_t ping2_seq; // gr_api_client_ping2() calls, in each echo
	// A daemon that speaks Grout's API only (api_version is Grout's) sends
	// events in Grout's framing, which no response parser tells from a
	// response: once its GR_EVENT_SUBSCRIBE succeeded, the socket carries
	// events only (grout_events), as Grout's own client assumes. Between
	// the send of a subscribe or an unsubscribe and its response
	// (grout_event_req_id, its type in grout_event_req_type), the socket is
	// read as responses, so that a program may subscribe to several types
	// one after the other.
	bool grout_events;
	uint32_t grout_event_req_id;
	uint32_t grout_event_req_type;
	struct client_spin spin; // spin budget of the waits on the channel
	// A flush rang the sleeping daemon since the last message taken: the
	// next wait waits for its wake-up (client_spin_budget()).
	bool woke;
	// /proc/loadavg, opened at the first wait that woke the daemon (-1
	// until then, CLIENT_LOADAVG_NONE when it cannot be read), the online
	// CPUs, and the last answer of client_cpus_busy() with the time it was
	// read (shm.c).
	int loadavg_fd;
	long online_cpus;
	uint64_t cpus_checked_ns;
	bool cpus_busy;
	char reason[CLIENT_REASON_LEN]; // why not on shm, "" when on shm

	// Timeout of every call that waits, in ms; -1: none.
	int timeout_ms;
	// Deadline of the call in progress (CLOCK_MONOTONIC ns), 0 until the
	// call first has to wait: a call that finds its answer at once reads
	// no clock. Public calls reset it (client_call_start()).
	uint64_t deadline_ns;
	// The kernel's receive timeout (SO_RCVTIMEO) of the socket equals
	// timeout_ms: a wait that starts a deadline sleeps in recvmsg() alone.
	bool sock_rcvtimeo;

	// Ids whose receive timed out: a ring of the last CLIENT_ABANDONED_MAX.
	uint32_t abandoned[CLIENT_ABANDONED_MAX];
	unsigned n_abandoned; // valid entries, at most CLIENT_ABANDONED_MAX
	unsigned abandoned_next; // where the next one goes

	// Responses received for other ids than the one waited for, in
	// buckets by id, each oldest first: per-id order is arrival order, so
	// stream responses stay in order.
	STAILQ_HEAD(client_stash_bucket, client_stash_entry) stash[CLIENT_STASH_BUCKETS];
	unsigned stash_n; // entries in all buckets
	size_t stash_bytes; // their payloads and entries, at most CLIENT_STASH_MAX_BYTES
	// Protocol errors of the daemon seen by this handle: a response to an
	// id never sent, a stash past its bound. Each drops the connection
	// (client_drop()); counted for the tests.
	uint64_t protocol_errors;

	// gr_api_client_fd() on shm: an epoll fd holding the response doorbell
	// and the socket; -1 until first asked for.
	int wait_fd;
	// The response doorbell is armed by gr_api_client_poll_prepare(), and
	// gr_api_client_poll_done() has not disarmed it yet.
	bool armed;
	// The blocking waits' own epoll instance (shm.c): the response doorbell
	// edge-triggered, the socket level-triggered. -1 until their first
	// sleep, CLIENT_SLEEP_FD_NONE when it could not be made (they poll()).
	int sleep_fd;
	// Wake-ups of those waits by a ring since the doorbell was last
	// drained, whose rings are still queued, and
	// shmchan_client_rings_mark() at that drain.
	unsigned bell_wakes;
	uint32_t bell_mark;
	// Events received and not yet taken, oldest first: at most
	// CLIENT_EVENTS_MAX of them and CLIENT_EVENTS_MAX_BYTES together
	// (event.c); events_lost counts those dropped since the last
	// GR_SHM_EVENT_LOST queued in their place.
	STAILQ_HEAD(, client_event) events;
	unsigned n_events;
	size_t event_bytes;
	uint64_t events_lost;

	// Socket receive: the bytes of rbuf[rbuf_head, rbuf_tail) are
	// received but not yet parsed.
	uint8_t *rbuf;
	size_t rbuf_head;
	size_t rbuf_tail;
	// One whole message: a socket message that does not fit rbuf, every
	// shm message.
	uint8_t *msg_buf;
	// Bytes of a socket message larger than rbuf received into msg_buf so
	// far; 0 when none is on its way.
	size_t big_have;

	// Descriptors received with SCM_RIGHTS, in arrival order, for the
	// attach code. fds_lost: some were dropped (queue full or MSG_CTRUNC).
	int fds[CLIENT_MAX_FDS];
	unsigned n_fds;
	bool fds_lost;

	struct shmchan_client *chan; // the attached channel, NULL on the socket
	uint32_t chan_backing; // its GR_SHM_BACKING_*, 0 on the socket
};

// ---- connect.c ----

// Transport to use: opts->transport unless it is GR_API_TRANSPORT_AUTO, else
// env (the value of GR_API_TRANSPORT: "auto", "shm", "socket"; NULL or ""
// mean auto). opts may be NULL. Returns 0, or -EINVAL for a bad value.
int client_transport_choose(
	const struct gr_api_client_opts *opts,
	const char *env,
	enum gr_api_transport *out
);

// Timeout of a handle: opts->timeout_ms unless it is 0, else env (the value
// of GR_API_TIMEOUT_MS: milliseconds, 0 for none; NULL or "": unset), else
// GR_API_CLIENT_TIMEOUT_MS_DEFAULT. opts may be NULL. Returns 0 with *ms
// (> 0 or GR_API_TIMEOUT_NONE), or -EINVAL for a bad value.
int client_timeout_choose(const struct gr_api_client_opts *opts, const char *env, int *ms);

// ---- client.c ----

// Build a handle over sock, an already connected socket, on the socket
// transport, without saying hello, with no timeout. Takes ownership of sock
// (also on failure). spin_us as in gr_api_client_opts. Returns NULL with
// errno ENOMEM.
struct gr_api_client *client_new(int sock, int spin_us);

// Send one request; returns its id (> 0) or -errno. With more, a channel
// does not wake a sleeping daemon yet (gr_api_client_send_more()).
long client_send_batch(
	struct gr_api_client *,
	uint32_t type,
	size_t len,
	const void *data,
	bool more
);
// client_send_batch() with more false.
long client_send(struct gr_api_client *, uint32_t type, size_t len, const void *data);

// Wait (wait true) for the response to for_id, or take it only if it is
// there (wait false). On success (0) either *entry is a stash entry to free
// with client_stash_free(), or *entry is NULL and msg views the handle's
// buffers; in both cases msg holds the header and payload.
// Returns 0 or -errno (-ECONNRESET, -EBADMSG, -ENOMEM, -ETIMEDOUT; -EAGAIN
// without wait: nothing for for_id has arrived).
// into: NULL, or where the payload of for_id's response may go at once
// (msg->payload is then into->buf).
int client_take(
	struct gr_api_client *,
	uint32_t for_id,
	bool wait,
	const struct client_into *into,
	struct client_msg *msg,
	struct client_stash_entry **entry
);

// A public call starts: the deadline of its waits starts when it first waits.
static inline void client_call_start(struct gr_api_client *c) {
	c->deadline_ns = 0;
}

// CLOCK_MONOTONIC in ns (the vDSO: no system call).
uint64_t client_clock_ns(void);

// How long the call in progress may still wait: *ms is the milliseconds
// left (rounded up), or -1 without timeout. Starts the call's deadline if
// it has not started. Returns 0, or -ETIMEDOUT once the deadline passed.
int client_wait_ms(struct gr_api_client *, int *ms);

// The deadline of the call passed (false without timeout or deadline).
bool client_deadline_passed(struct gr_api_client *, uint64_t now_ns);

// Free a stash entry and its payload (client_stash_free(): NULL too).
void client_stash_entry_free(struct client_stash_entry *);

// Inline: a busy receive passes NULL (no stash) on every call, and pays no
// call for it.
static inline void client_stash_free(struct client_stash_entry *e) {
	if (e != NULL)
		client_stash_entry_free(e);
}

// Number of stashed responses (for tests).
unsigned client_stash_count(const struct gr_api_client *);

// Read the next message from the transport in use: into->buf takes the
// payload of into->for_id's response straight from the ring when it fits
// (into may be NULL). Without wait, -EAGAIN when no whole message is there.
// Returns 0 or -errno (-ETIMEDOUT past the call's deadline).
int client_next_msg(
	struct gr_api_client *c,
	struct client_msg *msg,
	bool wait,
	const struct client_into *into
);

// Route a message that arrived: an event is checked and queued, the
// response to want_id is left to the caller, the response to an abandoned id
// is dropped, any other response is stashed (want_id 0 stashes them all).
// Returns 1 for the wanted response, 0 when routed, or -errno.
int client_route(struct gr_api_client *, const struct client_msg *, uint32_t want_id);

// Check a response header read from the daemon. Returns 0, or -EBADMSG
// (payload too long) after marking the handle dead. Inline: every receive
// checks, on both transports.
static inline int client_check_hdr(struct gr_api_client *c, const struct gr_api_response *hdr) {
	if (hdr->payload_len > CLIENT_MAX_PAYLOAD) {
		c->dead = true;
		return -EBADMSG;
	}
	return 0;
}

// The daemon broke the protocol (err: EPROTO, a response to an id never
// sent; ENOBUFS, more responses kept than the stash's bound): count it, mark
// the handle dead with err, and shut the socket down, which ends a channel's
// lease too, so that the daemon stops sending. The descriptor stays open
// (gr_api_client_fd() is the same), readable at EOF. Returns -err.
int client_drop(struct gr_api_client *, int err);

// What a call on a dead handle fails with: -ECONNRESET, or -dead_err.
static inline int client_dead_errno(const struct gr_api_client *c) {
	return c->dead_err != 0 ? -c->dead_err : -ECONNRESET;
}

// After a call routed one more message than it waited for (*routed
// counts them): a call that waits reads its deadline every
// CLIENT_ROUTE_CLOCK_EVERY messages, one that never waits stops after
// CLIENT_TRY_ROUTE_MAX. Returns 0 (go on), -ETIMEDOUT or -EAGAIN.
int client_route_budget_check(struct gr_api_client *, unsigned routed, bool wait);
_Static_assert(
	CLIENT_TRY_ROUTE_MAX % CLIENT_ROUTE_CLOCK_EVERY == 0,
	"the try bound is looked at when the clock would be"
);
static inline int client_route_budget(struct gr_api_client *c, unsigned *routed, bool wait) {
	if (++*routed % CLIENT_ROUTE_CLOCK_EVERY != 0)
		return 0;
	return client_route_budget_check(c, *routed, wait);
}

// Wait for the response to for_id and fail with its status (recv_len's
// receive). On success the caller owns *entry (may be NULL) and msg. A wait
// that times out abandons for_id: its answer is dropped when it comes.
int client_recv_common(
	struct gr_api_client *,
	uint32_t for_id,
	bool wait,
	const struct client_into *into,
	struct client_msg *msg,
	struct client_stash_entry **entry
);

// ---- hello.c ----

// Say hello with version text, in the newest API version the daemon
// accepts: GR_API_VERSION, else Grout's (GR_API_VERSION_GROUT_MAIN, then
// GR_API_VERSION_GROUT_0_17), and keep it and the hello response in the
// handle. Returns 0, or -errno (the daemon's status: EBADMSG when it
// refused all three).
int client_hello(struct gr_api_client *, const char *version);

// The errno of a response's non-zero status (EBADMSG for a status that is
// no errno value).
int client_status_errno(uint32_t status);

// ---- message.c ----

// Check a response (or event) payload of len bytes against the length
// registered for its type. Returns 0 (long enough, an empty one ending a
// stream, or a type never registered) or -EMSGSIZE. Takes no lock.
int client_message_check(uint32_t type, size_t len);

// ---- event.c ----

// Check a tagged event (a message with for_id 0) and queue a copy of it.
// Returns 0, -EBADMSG (malformed: the handle is dead) or -ENOMEM.
int client_event_queue(struct gr_api_client *, const struct client_msg *);

// Free every queued event.
void client_events_free(struct gr_api_client *);

// ---- sock.c ----

// Send a request header and its payload on the socket in one sendmsg().
// Returns 0 or -errno.
int client_sock_send(
	struct gr_api_client *,
	const struct gr_api_request *hdr,
	const void *payload,
	size_t len
);

// Receive the next whole message from the socket: with wait, waiting for
// it until the call's deadline; without, only from the bytes received or
// receivable at once (a part of a message stays buffered). Returns 0, or
// -ECONNRESET (EOF or error, the handle is dead), -EBADMSG (malformed),
// -ETIMEDOUT, -EAGAIN (no whole message without waiting).
int client_sock_next_msg(struct gr_api_client *, struct client_msg *, bool wait);

// True if the read-ahead buffer holds a whole message: a receive needs no
// system call to find it. Makes no system call.
bool client_sock_buffered(const struct gr_api_client *);

// The read-ahead buffer holds bytes not yet parsed: client_sock_buffered()
// may find a whole message among them. Inline: a receive on the channel
// looks on every call, and finds none.
static inline bool client_sock_pending(const struct gr_api_client *c) {
	return c->rbuf_tail != c->rbuf_head;
}

// Close every queued descriptor.
void client_sock_fds_close(struct gr_api_client *);

// ---- secondary.c ----

struct rte_memzone;
typedef const struct rte_memzone *(*client_memzone_lookup_fn)(const char *name);

// What the library knows of the DPDK process it runs in.
struct client_dpdk {
	bool secondary; // EAL initialised as a secondary process
	char file_prefix[GR_SHM_PREFIX_LEN]; // its EAL file prefix ("" if unknown)
	client_memzone_lookup_fn memzone_lookup; // rte_memzone_lookup of the process
};

// Fill dpdk for this process (rte_eal_process_type(), rte_eal_get_runtime_dir()
// and rte_memzone_lookup() found with dlsym()). Makes no system call. A
// pointer, so that the unit tests can play a secondary without EAL.
extern void (*client_dpdk_probe)(struct client_dpdk *dpdk);

// ---- shm.c ----

// Ask the daemon for a channel and map it; on success the handle is on the
// shm transport. A DPDK secondary of the daemon (same file prefix, daemon
// with hugepages) asks for a memzone channel, any other process for a memfd
// one; a secondary left on memfd has c->reason saying why. Returns 0;
// -ENOTSUP or -EPROTO (layout version mismatch) when the channel cannot be
// had, with c->reason saying why and the handle still usable on the socket;
// any other -errno when the socket itself failed. A channel the daemon
// granted but this client cannot map or validate is given back
// (GR_SHM_DETACH) before it returns, so the handle may attach again.
int client_shm_attach(struct gr_api_client *);

// Wake the daemon for requests sent with more, if it sleeps.
void client_shm_flush(struct gr_api_client *);

// client_shm_send() and client_shm_next_msg(), the channel's send and
// receive: inline in shm_fast.h.

// gr_api_client_fd() on shm: the epoll fd, created on first use. Returns it
// or -errno.
int client_shm_wait_fd(struct gr_api_client *);

// gr_api_client_poll_prepare() on shm: wake the daemon for what was sent,
// then arm the response doorbell unless a message is in the ring. Returns
// 1 (a message waits: do not sleep), 0 (armed: sleep on the fd).
int client_shm_poll_prepare(struct gr_api_client *);

// gr_api_client_poll_done() on shm: drain and disarm the doorbell armed by
// client_shm_poll_prepare(), and notice a closed socket. Returns 0 or -errno.
int client_shm_poll_done(struct gr_api_client *);

// Unmap the channel and close its descriptors, if attached.
void client_shm_detach(struct gr_api_client *);

// loadavg_fd when /proc/loadavg cannot be opened: not tried again.
#define CLIENT_LOADAVG_NONE (-2)
// sleep_fd when it cannot be made: not tried again on this channel.
#define CLIENT_SLEEP_FD_NONE (-2)
// A blocking wait woken by a ring leaves the ring queued in the doorbell
// (its edge-triggered wait needs no drain to sleep again), and a later one
// drains what is queued before it arms: after this many such wake-ups, or
// once the daemon may have rung this many times since the last drain
// (shmchan_client_rings_since()). Both stay far below the few hundred
// rings a doorbell's socket holds before a ring finds it full, which
// would raise no edge.
#define CLIENT_BELL_DRAIN_WAKES 8
#define CLIENT_BELL_DRAIN_RINGS 32

// Does every CPU of the host have a task to run, this thread and the
// daemon's poller it just woke included (the kernel's runnable tasks above
// the online CPUs)? Asked only by a wait whose requests woke the daemon.
// The daemon's answer when it told one in the control block less than
// CLIENT_HOST_HINT_MAX_MS ago (its poller looks about once a second while
// the channel is in use, when it has nothing else to do): one load, no
// system call. Else read at most once per CLIENT_CPUS_CHECK_NS per handle:
// one pread() of /proc/loadavg. False when it cannot be read (the waits
// then spin as on a quiet host). A pointer, so that the tests inject the
// answer.
extern bool (*client_cpus_busy)(struct gr_api_client *);
// How long an answer serves: a second. The read sits on the path of every
// call that wakes the daemon, and most such calls come after a silence
// (occasional calls, tens of milliseconds to seconds apart), where a
// shorter validity would read it for each: on a host whose CPUs are all
// busy the woken poller then waits behind that very read, and the calls
// measured slower by about a tenth of the socket's round trip. A host's load
// changes more slowly than that; an answer a second old costs a wait that
// spins when it should have slept, or sleeps when it could have spun: one
// call's difference, not a lost answer.
#define CLIENT_CPUS_CHECK_NS 1000000000ull
// The oldest answer of the daemon's taken: twice the period of its look,
// so that a look a little late on a busy host still serves.
#define CLIENT_HOST_HINT_MAX_MS 2000
