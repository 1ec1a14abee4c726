// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Requests of shmchan's own module: channel attach, counters, daemon info.

#pragma once

#include <gr_api.h>

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
	uint32_t reserved;
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
	uint64_t overflows; // responses that found the response ring full
	uint64_t detaches; // channels ended, all reasons
	uint64_t detach_corrupt; // ended because the client corrupted its region
	uint64_t detach_slow; // ended because the client stopped reading responses
	uint64_t detach_lease; // ended because the socket (the lease) closed
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
struct gr_shm_channel_info {
	char name[GR_SHM_NAME_LEN];
	uint32_t backing;
	uint32_t poller;
	int32_t client_pid; // from SO_PEERCRED
	uint32_t state;
	struct gr_shm_counters counters;
};
GR_REQ_STREAM(GR_SHM_CHANNEL_LIST, struct gr_empty, struct gr_shm_channel_info);

// Who and how the daemon is.
#define GR_SHM_DAEMON_INFO GR_MSG_TYPE(GR_SHM_MODULE, 0x0004)
struct gr_shm_daemon_info {
	int32_t pid;
	uint32_t pollers;
	uint32_t poller_spin_us;
	uint32_t backings; // GR_SHM_BACKING_* it offers (0: channels disabled)
	char file_prefix[GR_SHM_PREFIX_LEN];
};
GR_REQ(GR_SHM_DAEMON_INFO, struct gr_empty, struct gr_shm_daemon_info);

// Echo a payload of any size from 0 to GR_API_MAX_MSG_LEN (benchmarks).
#define GR_SHM_ECHO GR_MSG_TYPE(GR_SHM_MODULE, 0x0005)
GR_REQ(GR_SHM_ECHO, struct gr_empty, struct gr_empty);
