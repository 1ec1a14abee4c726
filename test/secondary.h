// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Helpers of the end-to-end tests of DPDK secondary clients: EAL init as a
// secondary of the test's daemon, what the daemon says of its channels, and
// pipelined requests with every answer checked. Every failure ends the test
// through CHECK.

#pragma once

#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdint.h>
#include <sys/types.h>

// The three ways a test client reaches the daemon: the socket, a memfd
// channel, a memzone channel (as a secondary).
enum transport {
	T_SOCKET,
	T_MEMFD,
	T_MEMZONE,
	T_COUNT,
};

static const char *const transport_names[T_COUNT] = {"socket", "memfd", "memzone"};

// Requests kept in flight by secondary_pipeline().
#define SECONDARY_DEPTH 16

// GR_SHM_DAEMON_INFO over a short socket connection of its own.
void secondary_daemon_info(const char *sock_path, struct gr_shm_daemon_info *info);

// Initialise EAL as a DPDK secondary of the daemon at sock_path: its file
// prefix from GR_SHM_DAEMON_INFO, lcore id 1 + pid % (RTE_MAX_LCORE - 1)
// (the clients of a test are forked one after the other: distinct ids), no
// PCI, no telemetry. Call in the process that will connect, after any fork.
void secondary_eal_init(const char *sock_path);

// Connect with the given transport; the version string names the test.
struct gr_api_client *
secondary_connect(const char *sock_path, enum gr_api_transport transport, const char *who);

// secondary_connect() on transport t: the socket, or a channel (T_MEMFD;
// T_MEMZONE once secondary_eal_init() made this process a secondary).
struct gr_api_client *
secondary_connect_on(const char *sock_path, enum transport t, const char *who);

// For a channel transport (T_MEMFD, T_MEMZONE), check that the daemon lists
// this process's channel with t's backing; there is nothing to check on
// T_SOCKET.
void secondary_expect_backing(struct gr_api_client *c, enum transport t, const char *who);

// GR_SHM_STATS.
void secondary_stats(struct gr_api_client *c, struct gr_shm_stats_resp *stats);

// Channels of GR_SHM_CHANNEL_LIST, counted by backing.
struct secondary_channels {
	unsigned memzone;
	unsigned memfd;
	unsigned total;
};

// Walk GR_SHM_CHANNEL_LIST: counts in *counts (may be NULL); returns the
// backing of pid's channel, 0 if pid has none.
uint32_t
secondary_channel_list(struct gr_api_client *c, pid_t pid, struct secondary_channels *counts);

// The payload of request number seq: seq itself (its first bytes when size is
// below 8), then bytes that depend on it, so that the echo of another request
// never matches.
void secondary_payload_fill(uint8_t *buf, size_t size, uint64_t seq);

// Send calls requests of type (GR_PING: empty, GR_PING2: 64 bytes, any
// other: GR_SHM_ECHO of size bytes) with SECONDARY_DEPTH in flight, and
// check every answer: its length, and for a payload the bytes of its own
// request (each request's payload is distinct).
void secondary_pipeline(struct gr_api_client *c, uint32_t type, size_t size, unsigned calls);

// Poll GR_SHM_STATS on c until the daemon reserves memzones channel memzones
// and attaches channels channels, at most wait_ms. Returns the last stats.
void secondary_wait_stats(
	struct gr_api_client *c,
	uint32_t memzones,
	uint32_t channels,
	unsigned wait_ms,
	struct gr_shm_stats_resp *last
);
