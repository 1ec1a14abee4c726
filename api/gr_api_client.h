// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Client library of the shmchan control API.
//
// A client is connected to shmchand's Unix socket and, when it can, attached
// to a shared-memory channel of its own. Every call below works the same on
// both transports; gr_api_client_transport() tells which one is used.
//
// Conventions, as in Grout and libc: a call returns -1 (or NULL) on failure
// and sets errno. A handle belongs to one thread at a time. No call raises
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
// poll() on the response doorbell and the socket.

#pragma once

#include <gr_api.h>

#include <stddef.h>
#include <stdint.h>

struct gr_api_client;

enum gr_api_transport {
	GR_API_TRANSPORT_AUTO = 0, // shm when it can be had, else the socket
	GR_API_TRANSPORT_SOCKET, // the Unix socket only
	GR_API_TRANSPORT_SHM, // the shared-memory channel, or connect fails
};

// Default client spin budget: how long a receive polls its ring before it
// sleeps on the doorbell (see docs/spin-budgets.md).
#define GR_API_CLIENT_SPIN_US_DEFAULT 50

struct gr_api_client_opts {
	// Transport to use. GR_API_TRANSPORT_AUTO lets the environment variable
	// GR_API_TRANSPORT=auto|shm|socket decide; any other value overrides it.
	enum gr_api_transport transport;
	// Microseconds a receive spins before it sleeps. 0 sleeps at once.
	// A negative value means GR_API_CLIENT_SPIN_US_DEFAULT.
	int spin_us;
	// Free text sent in GR_HELLO (NULL: "shmchan-client").
	const char *version;
};

// Connect to the daemon at sock_path (NULL: GR_API_DEFAULT_SOCK_PATH), say
// hello and, when the transport allows, attach a shared-memory channel.
// If the channel cannot be had in auto mode the client stays on the socket;
// gr_api_client_transport_reason() says why. Blocks and makes system calls.
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
// EBADMSG (API version mismatch), ENOTSUP (shm forced but not offered by the
// daemon or not mappable here), EINVAL (bad options or GR_API_TRANSPORT),
// ENOMEM, or a refusal of the daemon: EMFILE (this process holds the most
// connections the daemon allows one process), EUSERS (this user does),
// ENFILE (the daemon serves all the connections it can).
struct gr_api_client *gr_api_client_connect(const char *sock_path);
struct gr_api_client *
gr_api_client_connect_opts(const char *sock_path, const struct gr_api_client_opts *opts);

// Detach the channel, close the socket and free the handle and every
// response still stashed in it. Returns 0, or -1 with errno if a close failed
// (the handle is freed anyway). NULL is accepted and returns 0.
int gr_api_client_disconnect(struct gr_api_client *);

// The transport in use: GR_API_TRANSPORT_SOCKET or GR_API_TRANSPORT_SHM.
enum gr_api_transport gr_api_client_transport(const struct gr_api_client *);

// Why the client is not on the shared-memory channel, or, for a DPDK
// secondary on a memfd channel, why it has no memzone channel; "" otherwise.
// The string lives as long as the handle.
const char *gr_api_client_transport_reason(const struct gr_api_client *);

// Send one request without waiting. Returns its id (> 0), or -1 with errno:
// EINVAL (tx_len over GR_API_MAX_MSG_LEN, or tx_data NULL with tx_len > 0),
// ECONNRESET/EPIPE (daemon gone). On shm, may wait (spin, then sleep) while
// the request ring is full; nothing is dropped.
long gr_api_client_send(
	struct gr_api_client *,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data
);

// Like gr_api_client_send(), for a batch: on the shared-memory channel the
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

// Wake the daemon, if it sleeps, for the requests sent with
// gr_api_client_send_more(). Returns 0, or -1 with errno EINVAL (NULL
// handle). Makes a system call only when the daemon sleeps.
int gr_api_client_flush(struct gr_api_client *);

// Wait for the response to request for_id. Responses to other ids that
// arrive first are kept for later calls (pipelining, out of order).
// On status 0, returns the payload length and, if rx_data is not NULL, stores
// a malloc'ed copy of the payload there (NULL for an empty payload; the
// caller frees it). Returns -1 with errno set to the response's non-zero
// status, or to ECONNRESET (daemon gone), EBADMSG (malformed response),
// ENOMEM. Blocks.
long gr_api_client_recv(struct gr_api_client *, uint32_t for_id, void **rx_data);

// Like gr_api_client_recv(), but copies the payload into buf. Returns the
// payload length; if it exceeds buf_len, the payload is dropped and the call
// fails with EMSGSIZE. Makes no allocation on the shm fast path.
long gr_api_client_recv_into(struct gr_api_client *, uint32_t for_id, void *buf, size_t buf_len);

// send + recv. Returns what gr_api_client_recv() returns.
long gr_api_client_send_recv(
	struct gr_api_client *,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data,
	void **rx_data
);

// Receive the next response of a stream request, in order. Returns 1 and the
// payload (as gr_api_client_recv) for a data response, 0 for the empty
// response that ends the stream, -1 with errno as gr_api_client_recv().
int gr_api_client_stream_next(
	struct gr_api_client *,
	uint32_t for_id,
	void **rx_data,
	size_t *rx_len
);

// ---- Events ----
//
// Subscribe with gr_api_client_send_recv(c, GR_EVENT_SUBSCRIBE, ...) and a
// struct gr_event_subscribe_req (GR_EVENT_ALL for every type); drop every
// subscription with GR_EVENT_UNSUBSCRIBE. On either transport the library
// sends GR_SHM_EVENT_SUBSCRIBE for GR_EVENT_SUBSCRIBE, so events and
// responses share the handle: any call that reads from the daemon queues the
// events it meets, and responses that arrive while waiting for an event are
// kept for their receivers. Events stay queued in the handle until taken:
// a program that subscribes takes them. A subscriber whose events pile up in
// the daemon loses the newest and later gets a GR_SHM_EVENT_LOST event with
// their count (gr_shm.h).

// Wait for the next event, Grout's call. Returns 0 and stores in *event a
// malloc'ed struct gr_api_event followed by its payload_len bytes of
// payload (the caller frees it; unlike Grout's, also for an empty payload).
// As in Grout, returns a negative errno value on failure, with errno set too:
// -EINVAL (NULL argument), -ECONNRESET (daemon gone), -EBADMSG (malformed
// event), -ENOMEM. Blocks. On the shared-memory channel, makes no system
// call while events keep coming (it spins, then sleeps on the doorbell).
int gr_api_client_event_recv(const struct gr_api_client *, struct gr_api_event **event);
