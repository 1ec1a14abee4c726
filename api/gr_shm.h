// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Requests of shmchan's own module: channel attach, counters, daemon info.

#pragma once

#include <gr_api.h>

#include <stddef.h>
#include <stdint.h>

// Our module ('S' 'H'); the main module 0xcafe stays Grout's.
#define GR_SHM_MODULE 0x5348

// Backings a client can map, as a bit mask in the attach request.
#define GR_SHM_BACKING_MEMFD (1u << 0) // any process: the fd arrives over the socket
#define GR_SHM_BACKING_MEMZONE (1u << 1) // DPDK secondaries of the daemon only

// Ask for a shared-memory channel. Only on the socket, after GR_HELLO, at
// most one per connection. The response carries the geometry; the doorbells
// (and the memfd) arrive as SCM_RIGHTS on the response's bytes, in this
// order: request doorbell (an eventfd), response doorbell (a Unix stream
// socket, readable when the daemon rings), then the memfd if any.
// The connection stays open as the channel's lease.
#define GR_SHM_ATTACH GR_MSG_TYPE(GR_SHM_MODULE, 0x0001)

struct gr_shm_attach_req {
	uint32_t backings; // GR_SHM_BACKING_* the client can use
	uint32_t layout_version; // the client's SHMCHAN_LAYOUT_VERSION
};

#define GR_SHM_NAME_LEN 32 // memzone names are at most 31 characters + NUL
#define GR_SHM_PREFIX_LEN 64

struct gr_shm_attach_resp {
	uint32_t layout_version;
	uint32_t backing; // one GR_SHM_BACKING_* bit
	uint64_t region_size;
	uint64_t req_ring_off; // byte offset of the request rte_ring in the region
	uint64_t resp_ring_off; // byte offset of the response rte_ring
	uint32_t ring_cells; // elements per ring (a power of two)
	uint32_t cell_size; // bytes per element
	uint32_t n_fds; // file descriptors passed with this response
	// This channel's generation, also in the region's control block: a
	// memzone goes from client to client, and the client library checks
	// before each ring operation that the region is still its channel's.
	uint32_t generation;
	char name[GR_SHM_NAME_LEN]; // memzone name (memzone backing) or memfd name
	char file_prefix[GR_SHM_PREFIX_LEN]; // the daemon's EAL file prefix
};
GR_REQ(GR_SHM_ATTACH, struct gr_shm_attach_req, struct gr_shm_attach_resp);

// Counters of the channels, in total and per channel.
struct gr_shm_counters {
	uint64_t requests;
	uint64_t req_bytes;
	uint64_t responses;
	uint64_t resp_bytes;
	uint64_t doorbells_rung; // rings of the client's doorbell by the daemon
	uint64_t sleeps; // times the poller slept on this channel's doorbell
	uint64_t overflows; // responses and events that found the response ring
			    // full, each counted once however often retried
	uint64_t detaches; // channels ended, all reasons
	uint64_t detach_corrupt; // ended because the client corrupted its region
	uint64_t detach_slow; // ended because the client stopped reading responses
	uint64_t detach_lease; // ended because the socket (the lease) closed
	uint64_t detach_request; // given back by its client (GR_SHM_DETACH)
};

// Total counters since the daemon started.
#define GR_SHM_STATS GR_MSG_TYPE(GR_SHM_MODULE, 0x0002)
struct gr_shm_stats_resp {
	uint32_t channels; // attached now
	uint32_t memzones; // memzone channels in use now (back to the pool after detach)
	struct gr_shm_counters total;
};
GR_REQ(GR_SHM_STATS, struct gr_empty, struct gr_shm_stats_resp);

// One response per attached channel, then an empty one.
#define GR_SHM_CHANNEL_LIST GR_MSG_TYPE(GR_SHM_MODULE, 0x0003)
// States of a channel (gr_shm_channel_info.state, gr_shm_client_info.channel_state).
#define GR_SHM_CHANNEL_NONE 0 // a client on the socket only: it has no channel
#define GR_SHM_CHANNEL_UP 1 // served by its poller
#define GR_SHM_CHANNEL_FAULTED 2 // the client broke its channel; detach under way
#define GR_SHM_CHANNEL_CLOSED 3 // its lease ended; freed after the RCU grace period

struct gr_shm_channel_info {
	char name[GR_SHM_NAME_LEN];
	uint32_t backing;
	uint32_t poller;
	int32_t client_pid; // from SO_PEERCRED
	uint32_t state; // GR_SHM_CHANNEL_*
	struct gr_shm_counters counters;
};
GR_REQ_STREAM(GR_SHM_CHANNEL_LIST, struct gr_empty, struct gr_shm_channel_info);

// Who and how the daemon is.
#define GR_SHM_DAEMON_INFO GR_MSG_TYPE(GR_SHM_MODULE, 0x0004)
// Responses may grow at their end in later releases: a reader takes the
// fields it knows and ignores the rest (see docs/protocol.md).
#define GR_SHM_VERSION_LEN 32
#define GR_SHM_INFO_HUGEPAGES (1u << 0) // EAL runs on hugepages: memzones offered
#define GR_SHM_INFO_TELEMETRY (1u << 1) // DPDK telemetry runs: /shmchan/ endpoints served
// poller_nice and poller_nice_wanted are filled (a daemon without it sends
// neither).
#define GR_SHM_INFO_POLLER_NICE (1u << 2)
// event_subs_max and event_memory_bytes are filled.
#define GR_SHM_INFO_EVENT_BOUNDS (1u << 3)
// program and server_version are filled (a server without it sends
// neither).
#define GR_SHM_INFO_PROGRAM (1u << 4)
// A poller could not take a nice value its clients asked for (the daemon
// lacks CAP_SYS_NICE or an RLIMIT_NICE that allows it): it keeps what it had.
#define GR_SHM_INFO_POLLER_NICE_DENIED (1u << 5)
// poller_nice_wanted when the daemon leaves its pollers' nice value alone.
#define GR_SHM_POLLER_NICE_OFF INT32_MAX
struct gr_shm_daemon_info {
	int32_t pid;
	uint32_t pollers;
	uint32_t poller_spin_us;
	uint32_t backings; // GR_SHM_BACKING_* it offers (0: channels disabled)
	char file_prefix[GR_SHM_PREFIX_LEN];
	char version[GR_SHM_VERSION_LEN]; // shmchand's release, NUL-terminated
	uint64_t uptime_ms; // since the daemon started (monotonic clock)
	uint64_t start_time; // when it started, in seconds since the Unix epoch
	uint32_t flags; // GR_SHM_INFO_*
	// Limits (docs/limits.md).
	uint32_t max_clients; // socket connections served at once
	uint32_t memzone_channels; // memzone channels in the pool (0: memfd only)
	uint32_t max_msg_len; // GR_API_MAX_MSG_LEN
	uint32_t channel_batch; // responses one turn of a channel produces at most
	uint32_t channel_backlog_bytes; // responses held per channel while its ring is full
	uint32_t channel_slow_ms; // a channel with a full response ring this long is detached
	uint32_t sock_output_high; // output bytes queued per socket client before pausing it
	uint32_t sock_output_stall_s; // a paused socket client this long is disconnected
	uint32_t reserved; // zero
	// Per-peer connection limits (0: no limit) and the bounds of each
	// event subscriber's backlog, as the daemon's options set them.
	uint32_t max_conn_per_pid; // socket connections one client process may hold
	uint32_t max_conn_per_uid; // the processes of one uid other than root, together
	uint32_t event_backlog; // events queued per subscriber before it loses events
	uint32_t event_backlog_bytes; // bytes of events queued per subscriber
	// The pollers' nice value (GR_SHM_INFO_POLLER_NICE): what the first
	// poller runs at now (it follows the clients it serves), and the most
	// a poller may take, from the daemon's options.
	int32_t poller_nice;
	int32_t poller_nice_wanted; // -20..19 or GR_SHM_POLLER_NICE_OFF
	// The events' global bounds (GR_SHM_INFO_EVENT_BOUNDS): subscriptions
	// one connection may hold, and bytes of events all backlogs hold
	// together, as the daemon's options set them.
	uint32_t event_subs_max;
	uint32_t reserved2; // zero
	uint64_t event_memory_bytes;
	// Which program serves (GR_SHM_INFO_PROGRAM): its name, as the
	// kernel knows it (shmchand, or the application that embeds the
	// server library), and the server library's release. version above
	// is the application's own (empty when it gives none).
	char program[GR_SHM_VERSION_LEN];
	char server_version[GR_SHM_VERSION_LEN];
};
// The first release's 80 bytes keep their layout, and so do the 168, the
// 184, the 192 and the 208 of the next ones; the rest is appended.
GR_STATIC_ASSERT(offsetof(struct gr_shm_daemon_info, version) == 80, "fields appended only");
GR_STATIC_ASSERT(offsetof(struct gr_shm_daemon_info, max_conn_per_pid) == 168, "appended only");
GR_STATIC_ASSERT(offsetof(struct gr_shm_daemon_info, poller_nice) == 184, "appended only");
GR_STATIC_ASSERT(offsetof(struct gr_shm_daemon_info, event_subs_max) == 192, "appended only");
GR_STATIC_ASSERT(offsetof(struct gr_shm_daemon_info, program) == 208, "appended only");
GR_STATIC_ASSERT(sizeof(struct gr_shm_daemon_info) == 272, "no hidden padding");
GR_REQ(GR_SHM_DAEMON_INFO, struct gr_empty, struct gr_shm_daemon_info);

// Echo a payload of any size from 0 to GR_API_MAX_MSG_LEN (benchmarks).
#define GR_SHM_ECHO GR_MSG_TYPE(GR_SHM_MODULE, 0x0005)
GR_REQ(GR_SHM_ECHO, struct gr_empty, struct gr_empty);

// Give back the channel of this connection: the daemon stops serving it,
// frees it, and the connection may attach again. Only on the socket
// (EINVAL on a channel); ENOENT if the connection has no channel. A client
// that cannot map or validate the channel it was given sends it, so that no
// channel is left polled for nobody.
#define GR_SHM_DETACH GR_MSG_TYPE(GR_SHM_MODULE, 0x0010)
GR_REQ(GR_SHM_DETACH, struct gr_empty, struct gr_empty);
// One response per socket connection, in the order they were accepted, then
// an empty one. A client whose requests travel on a channel is listed with
// its channel; the connection that asks is listed too.
#define GR_SHM_CLIENT_LIST GR_MSG_TYPE(GR_SHM_MODULE, 0x0006)
#define GR_SHM_TRANSPORT_SOCKET 1 // requests arrive on the socket
#define GR_SHM_TRANSPORT_SHM 2 // requests arrive on its channel
struct gr_shm_client_info {
	int32_t pid; // from SO_PEERCRED, 0 if unknown
	uint32_t uid;
	uint32_t gid;
	uint32_t transport; // GR_SHM_TRANSPORT_*
	uint64_t connected_ms; // how long ago the connection was accepted
	// Requests and responses on the socket (hello and attach included).
	uint64_t sock_requests;
	uint64_t sock_req_bytes;
	uint64_t sock_responses;
	uint64_t sock_resp_bytes;
	// The channel, when transport is GR_SHM_TRANSPORT_SHM.
	char channel[GR_SHM_NAME_LEN]; // "" without a channel
	uint32_t backing; // GR_SHM_BACKING_*, 0 without a channel
	uint32_t poller;
	uint32_t channel_state; // GR_SHM_CHANNEL_*
	uint32_t reserved; // zero
	struct gr_shm_counters channel_counters;
};
GR_REQ_STREAM(GR_SHM_CLIENT_LIST, struct gr_empty, struct gr_shm_client_info);

// The request types the server serves: one response per type, in the
// order of their values, then an empty one. Served by the server library
// itself, so that any client (shmchanctl types, shmchanctl call) learns
// what any application that embeds it serves, its own types and the
// server's alike. At most GR_API_SERVER_HANDLERS_MAX (256) responses.
#define GR_SHM_TYPE_LIST GR_MSG_TYPE(GR_SHM_MODULE, 0x000a)
// Longest name of a request type and of a module, NUL included: a longer
// one is cut.
#define GR_SHM_TYPE_NAME_LEN 64
#define GR_SHM_MODULE_NAME_LEN 32
// gr_shm_type_info.flags: served by the server library itself (Grout's
// main module, the shm module), not by the application.
#define GR_SHM_TYPE_SERVER (1u << 0)
struct gr_shm_type_info {
	uint32_t type; // GR_MSG_TYPE(module, id)
	uint32_t request_len; // shortest payload accepted: shorter gets EMSGSIZE
	uint32_t flags; // GR_SHM_TYPE_*
	uint32_t reserved; // zero
	char name[GR_SHM_TYPE_NAME_LEN]; // the handler's, as the code names it
	// The module's (type >> 16), as the application names it; "" when it
	// gives none.
	char module[GR_SHM_MODULE_NAME_LEN];
};
GR_STATIC_ASSERT(sizeof(struct gr_shm_type_info) == 112, "no hidden padding");
GR_REQ_STREAM(GR_SHM_TYPE_LIST, struct gr_empty, struct gr_shm_type_info);

// ---- Events ----

// Subscribe like GR_EVENT_SUBSCRIBE (same payload, same rules), but ask for
// tagged events: each inside a response with for_id 0 whose payload is the
// struct gr_api_event and the event payload, so that events and responses
// mix on one socket connection. The client library sends this one for
// GR_EVENT_SUBSCRIBE on either transport.
#define GR_SHM_EVENT_SUBSCRIBE GR_MSG_TYPE(GR_SHM_MODULE, 0x0007)
GR_REQ(GR_SHM_EVENT_SUBSCRIBE, struct gr_event_subscribe_req, struct gr_empty);

// Publish GR_SHM_EVENT_TEST with the request's payload (0 to
// GR_API_MAX_MSG_LEN bytes) as its payload: for tests and benchmarks. The
// response comes once the event is in every subscriber's backlog.
#define GR_SHM_EVENT_PUBLISH GR_MSG_TYPE(GR_SHM_MODULE, 0x0008)
GR_REQ(GR_SHM_EVENT_PUBLISH, struct gr_empty, struct gr_empty);

// Totals of the event module.
#define GR_SHM_EVENT_STATS GR_MSG_TYPE(GR_SHM_MODULE, 0x0009)
struct gr_shm_event_stats_resp {
	uint32_t subscribers; // clients with at least one subscription
	uint32_t subscriptions; // (client, type) pairs
	uint64_t published; // events that had at least one subscriber
	uint64_t queued; // copies put in subscribers' backlogs
	uint64_t dropped; // copies lost to a full backlog
};
GR_REQ(GR_SHM_EVENT_STATS, struct gr_empty, struct gr_shm_event_stats_resp);

// Event types of the shm module: ids from 0x8001, apart from the requests.

// A client attached a channel.
#define GR_SHM_EVENT_CHANNEL_ATTACHED GR_MSG_TYPE(GR_SHM_MODULE, 0x8001)
struct gr_shm_event_channel {
	int32_t pid; // the client's, from SO_PEERCRED
	uint32_t backing; // one GR_SHM_BACKING_* bit
	char name[GR_SHM_NAME_LEN]; // the channel's memzone or memfd name
};
GR_EVENT(GR_SHM_EVENT_CHANNEL_ATTACHED, struct gr_shm_event_channel);

// Why a channel ended.
#define GR_SHM_DETACH_LEASE 1 // its socket closed (the client left, or the daemon stops)
#define GR_SHM_DETACH_CORRUPT 2 // the client corrupted its region
#define GR_SHM_DETACH_SLOW 3 // the client stopped reading its responses
#define GR_SHM_DETACH_REQUEST 4 // the client gave it back (GR_SHM_DETACH)

// A channel ended.
#define GR_SHM_EVENT_CHANNEL_DETACHED GR_MSG_TYPE(GR_SHM_MODULE, 0x8002)
struct gr_shm_event_channel_detached {
	int32_t pid;
	uint32_t reason; // GR_SHM_DETACH_*
	char name[GR_SHM_NAME_LEN];
};
GR_EVENT(GR_SHM_EVENT_CHANNEL_DETACHED, struct gr_shm_event_channel_detached);

// This subscriber lost count events to its full backlog. Sent once there is
// room again, to every tagged subscriber that lost events, and to a
// Grout-framed one only if it subscribed to this type, or to GR_EVENT_ALL
// without having said hello at a Grout API version (docs/protocol.md).
#define GR_SHM_EVENT_LOST GR_MSG_TYPE(GR_SHM_MODULE, 0x8003)
struct gr_shm_event_lost {
	uint64_t count;
};
GR_EVENT(GR_SHM_EVENT_LOST, struct gr_shm_event_lost);

// Published by GR_SHM_EVENT_PUBLISH: its payload is the request's.
#define GR_SHM_EVENT_TEST GR_MSG_TYPE(GR_SHM_MODULE, 0x8004)
GR_EVENT(GR_SHM_EVENT_TEST, struct gr_empty);

// ---- Per-request-type figures ----

// Buckets of the latency histograms: bucket 0 counts times under 2 ns,
// bucket b (1..GR_SHM_HIST_BUCKETS - 2) times in [2^b, 2^(b+1)) ns, and the
// last one everything from 2^(GR_SHM_HIST_BUCKETS - 1) ns (about 2.1 s) on.
#define GR_SHM_HIST_BUCKETS 32
// Longest handler name kept (NUL included); a longer one is cut.
#define GR_SHM_TYPE_STATS_NAME_LEN 48

// One response per registered request type, in registration order, then an
// empty one: what the server did with the requests of that type since it
// started.
#define GR_SHM_TYPE_STATS GR_MSG_TYPE(GR_SHM_MODULE, 0x0020)
struct gr_shm_type_stats {
	uint32_t type; // the request type
	uint32_t buckets; // GR_SHM_HIST_BUCKETS
	char name[GR_SHM_TYPE_STATS_NAME_LEN]; // the handler's name
	uint64_t count; // requests its handler ran for (deferred ones included)
	uint64_t errors; // of those, answered with a non-zero status
	uint64_t rejected; // refused before the handler ran (short payload)
	uint64_t deferred; // of count, kept open by gr_api_defer()
	uint64_t handle_ns_sum; // the handler's runs, summed
	uint64_t queue_ns_sum; // the waits before the handler started, summed
	// The handler's run (deferred: until it returned, not until the reply).
	uint64_t handle_hist[GR_SHM_HIST_BUCKETS];
	// From the request taken off the socket or the ring to its handler's
	// start: the wait for the handler lock (0 when it was free).
	uint64_t queue_hist[GR_SHM_HIST_BUCKETS];
};
GR_STATIC_ASSERT(sizeof(struct gr_shm_type_stats) == 616, "no hidden padding");
GR_REQ_STREAM(GR_SHM_TYPE_STATS, struct gr_empty, struct gr_shm_type_stats);

// ---- API trace ----
//
// A flight recorder of the last requests the server answered, each with
// its response: on and off at run time, of the size the server was started
// with. Only a client of uid 0 or of the server's own uid may switch it,
// switch payload capture, or dump it: others get EPERM.

// GR_SHM_TRACE_SET flags.
#define GR_SHM_TRACE_ON (1u << 0) // record (else stop recording; what is held stays)
#define GR_SHM_TRACE_CAPTURE (1u << 1) // keep the first bytes of each request's payload
#define GR_SHM_TRACE_CLEAR (1u << 2) // forget what is held first
#define GR_SHM_TRACE_FLAGS (GR_SHM_TRACE_ON | GR_SHM_TRACE_CAPTURE | GR_SHM_TRACE_CLEAR)

// Switch the trace. EINVAL for an unknown flag, ENOTSUP if the server
// keeps no trace (size 0), ENOMEM, EPERM (see above).
#define GR_SHM_TRACE_SET GR_MSG_TYPE(GR_SHM_MODULE, 0x0021)
struct gr_shm_trace_set_req {
	uint32_t flags; // GR_SHM_TRACE_*
};
GR_REQ(GR_SHM_TRACE_SET, struct gr_shm_trace_set_req, struct gr_empty);

// Bytes of a request's payload a trace entry keeps at most.
#define GR_SHM_TRACE_CAPTURE_LEN 128

// gr_shm_trace_entry.flags.
#define GR_SHM_TRACE_DEFERRED (1u << 0) // the handler deferred it: status not known yet
#define GR_SHM_TRACE_REPLY (1u << 1) // a deferred reply, sent later (id: the request's)
#define GR_SHM_TRACE_CAPTURED (1u << 2) // payload holds captured_len bytes of it

// One request and its response.
struct gr_shm_trace_entry {
	uint64_t time_ns; // taken off the socket or ring, ns since the Unix epoch
	int32_t pid; // the client's, from SO_PEERCRED (0 if unknown)
	uint32_t transport; // GR_SHM_TRANSPORT_*
	uint32_t id; // the request's id
	uint32_t type; // the request's type
	uint32_t req_len; // its payload's length
	uint32_t status; // of its last response
	uint32_t resp_len; // of its last response's payload
	uint32_t responses; // responses it got (a stream: its items and its end)
	uint32_t flags; // GR_SHM_TRACE_DEFERRED, _REPLY, _CAPTURED
	uint32_t captured_len; // bytes of payload kept: min(req_len, GR_SHM_TRACE_CAPTURE_LEN)
	uint64_t handle_ns; // its handler's run (0: refused before any handler)
	uint64_t queue_ns; // its wait before the handler started
	uint8_t payload[GR_SHM_TRACE_CAPTURE_LEN]; // zeros without capture
};
GR_STATIC_ASSERT(sizeof(struct gr_shm_trace_entry) == 192, "no hidden padding");

// One response per entry held, the oldest first, then an empty one. The
// trace's own requests are not recorded. EPERM (see above).
#define GR_SHM_TRACE_DUMP GR_MSG_TYPE(GR_SHM_MODULE, 0x0022)
GR_REQ_STREAM(GR_SHM_TRACE_DUMP, struct gr_empty, struct gr_shm_trace_entry);

// The trace's state: anyone the socket admits.
#define GR_SHM_TRACE_INFO GR_MSG_TYPE(GR_SHM_MODULE, 0x0023)
struct gr_shm_trace_info {
	uint32_t flags; // GR_SHM_TRACE_ON, GR_SHM_TRACE_CAPTURE
	uint32_t size; // entries it holds at most (0: the server keeps no trace)
	uint64_t recorded; // entries recorded since the server started
	uint32_t held; // entries held now
	uint32_t entry_len; // sizeof(struct gr_shm_trace_entry)
};
GR_REQ(GR_SHM_TRACE_INFO, struct gr_empty, struct gr_shm_trace_info);
