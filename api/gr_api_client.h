// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Client library of the shmchan control API: shmchan's calls. Grout's
// (connect, disconnect, info, send, recv, send_recv, the stream loop,
// event_recv, ping, ping2, message names) are in gr_api.h, included here.
//
// A client is connected to shmchand's Unix socket and, when it can, attached
// to a shared-memory channel of its own. Every call works the same on both
// transports; gr_api_client_transport() tells which one is used.
//
// Conventions: Grout's calls and gr_api_client_send_more() return a
// negative errno value on failure, as in Grout, with errno set too; the
// others return -1 (or NULL) and set errno, as libc. All of them fail < 0.
// A handle belongs to one thread at a time. No call raises
// SIGPIPE. When the daemon goes away, pending and later calls fail with
// ECONNRESET (or EPIPE for a send that found the socket closed). So do they
// once the daemon detached the client's channel (it stopped reading its
// responses, or wrote garbage into its region), even a client that was
// stopped meanwhile: its next call fails, and writes nothing.
//
// System calls: on the socket transport every send is one sendmsg() and a
// receive is at most one recvmsg() per read-ahead buffer. On the shm
// transport a request and its response make no system call while both sides
// are busy; a receive that waits past the client's spin budget sleeps in
// poll() on the response doorbell and the socket. A receive whose request
// woke the sleeping daemon first reads the host's runnable tasks (one
// pread() of /proc/loadavg, at most once a second; the handle keeps
// the file open) and sleeps at once when they outnumber the CPUs.
//
// Timeouts: every call that waits (connect, a receive, a send that finds the
// shm request ring or the socket buffer full, stream_next, the drain of a
// stream left early) fails with ETIMEDOUT once it waited the handle's
// timeout (gr_api_client_opts.timeout_ms, GR_API_TIMEOUT_MS, default
// GR_API_CLIENT_TIMEOUT_MS_DEFAULT), however much the daemon sends
// meanwhile. The handle stays usable: the response of a receive that timed
// out is dropped when it arrives (see gr_api_client_recv_len()).
//
// The daemon is not trusted with the client's memory: a handle keeps at
// most 64 MiB of responses not yet taken and GR_API_CLIENT_EVENTS_MAX events
// (docs/reliability.md). A daemon that answers an id never sent (EPROTO) or
// makes the handle keep more responses than that (ENOBUFS) has its
// connection shut down: that call and every later one fail with that errno.
//
// Event loops: gr_api_client_fd() gives one descriptor to wait on for
// readability, gr_api_client_poll_prepare() and gr_api_client_poll_done()
// frame each wait, and the try calls receive without waiting. See
// docs/event-loop.md.

#pragma once

#include <gr_api.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gr_api_client;

enum gr_api_transport {
	GR_API_TRANSPORT_AUTO = 0, // shm when it can be had, else the socket
	GR_API_TRANSPORT_SOCKET, // the Unix socket only
	GR_API_TRANSPORT_SHM, // the shared-memory channel, or connect fails
};

// Default client spin budget: how long a receive polls its ring before it
// sleeps on the doorbell (see docs/spin-budgets.md). The bound of the
// adaptive spin; as gr_api_client_opts.spin_us, a fixed budget of that long.
#define GR_API_CLIENT_SPIN_US_DEFAULT 50

// gr_api_client_opts.spin_us: the adaptive spin, the default. A receive
// spins a few times the round trip the handle has seen, at most
// GR_API_CLIENT_SPIN_US_DEFAULT: less while its spins keep ending in long
// sleeps (a sleeping, slow or descheduled daemon), more while its sleeps
// keep ending soon after the spin gave up.
#define GR_API_CLIENT_SPIN_ADAPTIVE (-1)

// Default timeout of every call that waits: far above any answer of a live
// daemon (microseconds), short enough that a controller facing a stopped
// daemon gets its error while it still matters.
#define GR_API_CLIENT_TIMEOUT_MS_DEFAULT 10000

// gr_api_client_opts.timeout_ms: wait forever.
#define GR_API_TIMEOUT_NONE (-1)

// The events a handle holds and the program has not taken yet (see Events
// below): at most this many, of this many bytes together (headers and
// payloads), as the daemon's default backlog of each subscriber.
#define GR_API_CLIENT_EVENTS_MAX 1024
#define GR_API_CLIENT_EVENTS_MAX_BYTES (4u << 20)

// Options of gr_api_client_connect_opts(). Start from GR_API_CLIENT_OPTS_INIT,
// the defaults of gr_api_client_connect(), then set what you need:
//
//	struct gr_api_client_opts o = GR_API_CLIENT_OPTS_INIT;
//	o.timeout_ms = 500;
//
// A zero-initialised struct is valid but is not those defaults: its spin_us
// of 0 sleeps at once instead of spinning adaptively. What a zero means is
// said for each field. ABI: the library reads every field of
// the struct of its own version, and fields are only ever appended, each
// addition a new version of the library (timeout_ms is the first): a program
// built against an older gr_api_client.h, whose struct is shorter, must be
// rebuilt before it runs with a newer library. A newer program runs with an
// older library, which ignores the fields it does not know.
struct gr_api_client_opts {
	// Transport to use. GR_API_TRANSPORT_AUTO lets the environment variable
	// GR_API_TRANSPORT=auto|shm|socket decide; any other value overrides it.
	enum gr_api_transport transport;
	// Microseconds a receive spins before it sleeps: a fixed budget.
	// 0 sleeps at once. A negative value (GR_API_CLIENT_SPIN_ADAPTIVE)
	// means the adaptive spin, the default (GR_API_CLIENT_OPTS_INIT): a
	// zero-initialised struct sleeps at once. Whatever the budget, a wait
	// stops spinning early when the daemon's poller is awake on this
	// thread's CPU, or once this thread was descheduled
	// (docs/spin-budgets.md).
	int spin_us;
	// Free text sent in GR_HELLO (NULL: "shmchan-client" and the version).
	const char *version;
	// Milliseconds a call may wait (connect: in all) before it fails with
	// ETIMEDOUT. 0: the environment variable GR_API_TIMEOUT_MS (a number
	// of milliseconds, 0 for none) decides, else
	// GR_API_CLIENT_TIMEOUT_MS_DEFAULT. Negative (GR_API_TIMEOUT_NONE):
	// no timeout.
	int timeout_ms;
};

// The defaults of gr_api_client_connect(), in the order of the fields of
// struct gr_api_client_opts: transport GR_API_TRANSPORT_AUTO (the
// environment decides), spin_us GR_API_CLIENT_SPIN_ADAPTIVE, version NULL
// (the library's), timeout_ms 0 (GR_API_TIMEOUT_MS, else the default).
// Positional rather than designated, so that it compiles as C++ before
// C++20 too; fields are only ever appended, so the order holds.
#define GR_API_CLIENT_OPTS_INIT                                                                    \
	{ GR_API_TRANSPORT_AUTO, GR_API_CLIENT_SPIN_ADAPTIVE, NULL, 0 }

// gr_api_client_connect() (gr_api.h) with options: connect to the daemon at
// sock_path (NULL: GR_API_DEFAULT_SOCK_PATH), say hello and, when the
// transport allows, attach a shared-memory channel. Hello names shmchan's
// API version (GR_API_VERSION); a daemon that refuses it (EBADMSG) is asked
// again on the same connection with Grout's main version
// (GR_API_VERSION_GROUT_MAIN), then with v0.17.0's
// (GR_API_VERSION_GROUT_0_17): a Grout daemon, which then answers the
// attach ENOTSUP. If the channel cannot be had in auto mode the client
// stays on the socket; gr_api_client_transport_reason() says why. Blocks
// and makes system calls.
//
// The channel's memory: a process that is a DPDK secondary of the daemon
// (rte_eal_init() with --proc-type=secondary and the daemon's --file-prefix,
// and a daemon running with hugepages) gets a memzone channel, which it
// finds by name in the daemon's memory; any other process gets a memfd
// channel, mapped from a descriptor the daemon passes. The library links no
// DPDK library: it finds rte_eal_process_type(), rte_eal_get_runtime_dir()
// and rte_memzone_lookup() with dlsym(RTLD_DEFAULT), so a program that links
// DPDK statically must export them (-rdynamic) to be seen as a secondary. A
// secondary that cannot have a memzone channel falls back to memfd, and
// gr_api_client_transport_reason() says why.
// Returns a handle, or NULL with errno: ENOENT/ECONNREFUSED (no daemon),
// EACCES (the socket's permissions), EBADMSG (the daemon refused all three
// API versions), ENOTSUP
// (shm forced but not offered by the daemon or not mappable here), EINVAL
// (bad options, GR_API_TRANSPORT or GR_API_TIMEOUT_MS), ETIMEDOUT (no answer
// within the timeout: a stopped daemon), ENOMEM, or a refusal of the daemon:
// EMFILE (this process holds the most connections the daemon allows one
// process), EUSERS (this user does), ENFILE (the daemon serves all the
// connections it can).
struct gr_api_client *
gr_api_client_connect_opts(const char *sock_path, const struct gr_api_client_opts *opts);

// Why the calling thread's last gr_api_client_connect*() failed, in words,
// for a log or an error message, with no handle: for example "no socket at
// PATH", "socket PATH: permission denied: mode 0660, owner root (0), group
// shmchan (999); this process runs as uid 1000 gid 1000", "the daemon on
// PATH refused API version 1", "shm forced, but no channel: daemon offers
// no shared-memory channel (ENOTSUP)", "GR_API_TRANSPORT=\"x\": accepted
// values are auto, shm and socket", "no answer to hello from PATH within
// 10000 ms". "" after a connect that succeeded (on the socket instead of the
// channel, gr_api_client_transport_reason() says why). Thread-local: valid
// until the thread's next connect. Never NULL; makes no system call.
const char *gr_api_client_last_error(void);

// The API version the daemon accepted in hello: GR_API_VERSION (shmchand),
// GR_API_VERSION_GROUT_MAIN or GR_API_VERSION_GROUT_0_17 (a daemon that
// speaks only Grout's; gr_api_client_info() has its hello response). 0 for
// a NULL handle. Makes no system call.
uint32_t gr_api_client_api_version(const struct gr_api_client *);

// The transport in use: GR_API_TRANSPORT_SOCKET or GR_API_TRANSPORT_SHM.
enum gr_api_transport gr_api_client_transport(const struct gr_api_client *);

// Why the client is not on the shared-memory channel, or, for a DPDK
// secondary on a memfd channel, why it has no memzone channel; "" otherwise.
// The string lives as long as the handle.
const char *gr_api_client_transport_reason(const struct gr_api_client *);

// The handle's timeout in milliseconds, as gr_api_client_opts.timeout_ms,
// GR_API_TIMEOUT_MS or the default made it (> 0), or GR_API_TIMEOUT_NONE:
// for a caller that bounds several calls by one deadline (a whole stream,
// say). GR_API_TIMEOUT_NONE for a NULL handle. Makes no system call.
int gr_api_client_timeout_ms(const struct gr_api_client *);

// Like gr_api_client_send() (gr_api.h; a negative errno on failure), for a
// batch: on the shared-memory channel the
// request is in the ring at once and a spinning daemon serves it at once, but
// a sleeping daemon is woken only by the next gr_api_client_send(),
// gr_api_client_flush(), or call that has to wait for a response (recv,
// send_recv, stream_next), or by a send that finds the request ring full. A
// batch then costs one memory fence (and at most one doorbell) instead of one
// per request. On the socket it is gr_api_client_send(). End every batch
// with one of those calls: a request left unflushed waits for a sleeping
// daemon's next wake-up.
long gr_api_client_send_more(
	struct gr_api_client *,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data
);

// One request of gr_api_client_send_batch(): as the arguments of
// gr_api_client_send(). ABI: fields are only ever appended, as for
// gr_api_client_opts.
struct gr_api_client_req {
	uint32_t req_type;
	size_t tx_len;
	const void *tx_data;
};

// Send the n requests of reqs, in order, without waiting for responses, and
// store the id of reqs[i] in ids[i]: on the shared-memory channel, many
// requests and one doorbell (at most one eventfd write to wake a sleeping
// daemon, and one memory fence), as gr_api_client_send_more() for each
// request then gr_api_client_flush(); on the socket, one sendmsg() per
// request. Every request is checked before any is sent: a bad one (tx_len
// over GR_API_MAX_MSG_LEN, or tx_data NULL with tx_len > 0) sends none and
// fails with EINVAL. Returns n (0 for n 0) when all were sent; when one
// failed after others were sent, how many were (ids of those set, errno
// says why the next one failed, the daemon is woken for those sent); -1
// with errno when none was: EINVAL (also a NULL handle, reqs or ids with n
// > 0), ECONNRESET/EPIPE, ETIMEDOUT, as gr_api_client_send(). May wait
// while the request ring is full (a full ring wakes the daemon first).
long gr_api_client_send_batch(
	struct gr_api_client *,
	size_t n,
	const struct gr_api_client_req *reqs,
	long *ids
);

// Wake the daemon, if it sleeps, for the requests sent with
// gr_api_client_send_more(). Returns 0, or -1 with errno EINVAL (NULL
// handle). Makes a system call only when the daemon sleeps.
int gr_api_client_flush(struct gr_api_client *);

// Wait for the response to request for_id, as gr_api_client_recv()
// (gr_api.h), without its type and its size check: returns the payload's
// length. Responses to other ids that arrive first are kept for later calls
// (pipelining, out of order). On status 0, returns the payload length and,
// if rx_data is not NULL, stores a malloc'ed copy of the payload there (NULL
// for an empty payload; the caller frees it). Returns -1 with errno set to
// the response's non-zero status, or to ECONNRESET (daemon gone), EBADMSG
// (malformed response), EPROTO or ENOBUFS (the daemon broke the protocol:
// the connection is dropped, see above), ENOMEM, ETIMEDOUT, ECANCELED
// (for_id timed out before), EINVAL. Blocks.
long gr_api_client_recv_len(struct gr_api_client *, uint32_t for_id, void **rx_data);

// Like gr_api_client_recv_len(), but copies the payload into buf. Returns the
// payload length; if it exceeds buf_len, the payload is dropped and the call
// fails with EMSGSIZE. Makes no allocation on the shm fast path, where the
// payload of the response waited for is copied from the ring straight into
// buf. When the response carries an error status, buf may hold its payload.
long gr_api_client_recv_into(struct gr_api_client *, uint32_t for_id, void *buf, size_t buf_len);

// Like gr_api_client_recv_len() and gr_api_client_recv_into(), but never wait:
// take the response to for_id if it has arrived, reading what the transport
// holds without waiting (responses to other ids found on the way are
// stashed). Return -1 with errno EAGAIN when no response to for_id has
// arrived, or when 16384 other messages were taken on the way without it (a
// daemon that keeps the ring from ever going empty: call again); otherwise
// as gr_api_client_recv_len() (ECONNRESET once the daemon is gone; see
// gr_api_client_poll_done()). On shm, make no system call
// (a sleeping daemon is woken, as by gr_api_client_flush(), for requests
// sent with gr_api_client_send_more()); on the socket, at most one
// non-blocking recvmsg() per read-ahead buffer.
long gr_api_client_try_recv(struct gr_api_client *, uint32_t for_id, void **rx_data);
long gr_api_client_try_recv_into(
	struct gr_api_client *,
	uint32_t for_id,
	void *buf,
	size_t buf_len
);

// send + recv_len, with one timeout for both. Returns what
// gr_api_client_recv_len() returns.
long gr_api_client_send_recv_len(
	struct gr_api_client *,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data,
	void **rx_data
);

// send + recv_into, with one timeout for both: a request and its answer in
// one call, for a language binding that pays for every call it makes
// (Python's ctypes: python/shmchan, docs/python.md). Returns what
// gr_api_client_recv_into() returns; the payload is copied into buf (on shm,
// straight from the ring: no allocation), EMSGSIZE if it exceeds buf_len.
// Blocks; on shm, makes no system call while the daemon is busy.
long gr_api_client_send_recv_into(
	struct gr_api_client *,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data,
	void *buf,
	size_t buf_len
);

// Receive the next response of a stream request, in order. Returns 1 and the
// payload (as gr_api_client_recv_len) for a data response, 0 for the empty
// response that ends the stream, -1 with errno as gr_api_client_recv_len()
// (ETIMEDOUT abandons the rest of the stream).
int gr_api_client_stream_next(
	struct gr_api_client *,
	uint32_t for_id,
	void **rx_data,
	size_t *rx_len
);

// ---- Events ----
//
// Subscribe with gr_api_client_send_recv(c, GR_EVENT_SUBSCRIBE, ...) and a
// struct gr_event_subscribe_req (GR_EVENT_ALL for every type), and take
// the events with gr_api_client_event_recv() (gr_api.h); drop every
// subscription with GR_EVENT_UNSUBSCRIBE. On either transport the library
// sends shmchand GR_SHM_EVENT_SUBSCRIBE for GR_EVENT_SUBSCRIBE, so events and
// responses share the handle: any call that reads from the daemon queues the
// events it meets, and responses that arrive while waiting for an event are
// kept for their receivers. Events stay queued in the handle until taken:
// a program that subscribes takes them. A subscriber whose events pile up in
// the daemon loses the newest and later gets a GR_SHM_EVENT_LOST event with
// their count (gr_shm.h). The handle holds at most 1024 events and 4 MiB
// not yet taken: past that it drops the events that arrive (the daemon's
// GR_SHM_EVENT_LOST too, adding its count to theirs) and queues one
// GR_SHM_EVENT_LOST with their total once an event is taken, so that the
// events kept and the counts of the GR_SHM_EVENT_LOST taken add up to every
// event the daemon had for the subscriber.
//
// A daemon that speaks Grout's API only (gr_api_client_api_version() is one
// of Grout's) gets Grout's GR_EVENT_SUBSCRIBE and sends its events in
// Grout's framing, which no reader tells from responses: as with Grout's own
// client, the handle then takes events only (a further subscribe, or an
// unsubscribe, sent and received one at a time, still gets its answer;
// after an unsubscribe, responses again). Subscribe on a handle of its own.

// Like gr_api_client_event_recv(), without waiting: takes a queued event or
// one the daemon has already sent, else returns -EAGAIN (errno EAGAIN).
// For event loops: call it after gr_api_client_fd() was readable, until it
// returns -EAGAIN. Makes no system call on the shared-memory channel, at most
// one non-blocking recv() on the socket.
int gr_api_client_event_try_recv(struct gr_api_client *, struct gr_api_event **event);

// A descriptor to wait on for readability in an event loop (epoll, poll,
// libevent, GLib, asyncio), the same for the life of the handle. On the
// socket transport it is the socket. On shm it is an epoll descriptor that
// holds the response doorbell and the socket: readable when the daemon
// rang, and when it died (EOF). Do not read it, write it or close it; a
// readable fd does not mean a whole message: use the try calls. Returns the
// descriptor, or -1 with errno EINVAL (NULL handle), or what epoll_create1()
// and epoll_ctl() fail with. The first call on shm makes three system calls,
// later calls none.
//
// Sequence (docs/event-loop.md): send requests, then
//   for (;;) {
//           if (gr_api_client_poll_prepare(c) == 0)
//                   wait until gr_api_client_fd(c) is readable;
//           gr_api_client_poll_done(c);
//           for each request in flight: gr_api_client_try_recv(c, id, ...);
//   }
int gr_api_client_fd(struct gr_api_client *);

// Before waiting on gr_api_client_fd(): on shm, wake a sleeping daemon for
// requests sent with gr_api_client_send_more(), then arm the response
// doorbell (the daemon rings it for the next response) and look again. Returns
// 1 when something waits already (a response stashed, in the ring or in the
// read-ahead buffer): do not sleep, take it with the try calls; 0 when it is
// safe to sleep until the fd is readable: nothing that arrives from now on
// can be missed. -1 with errno ECONNRESET (the daemon is gone) or EINVAL.
// Makes no system call (at most an eventfd write to wake the daemon).
// Responses stashed for ids the caller never takes make it return 1 for
// ever: take every response of the ids sent.
int gr_api_client_poll_prepare(struct gr_api_client *);

// After waking (or after a wait that ended for any other reason) from a
// gr_api_client_poll_prepare() that returned 0: on shm, drain the doorbell,
// disarm it (the daemon stops ringing), and when nothing arrived look at
// the socket for the daemon's EOF, so that the next call fails ECONNRESET.
// Returns 0, or -1 with errno EINVAL. Does nothing (no system call) on the
// socket transport or when nothing is armed; on shm, one read() of the
// doorbell, and one recv() of the socket when the ring is empty.
int gr_api_client_poll_done(struct gr_api_client *);

#ifdef __cplusplus
}
#endif
