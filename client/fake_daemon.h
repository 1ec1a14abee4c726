// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Test helper: the daemon's end of a client connection over a socketpair,
// with a real channel built by shmchan's server functions, for the unit
// tests of the client library's shared-memory transport. Asserts with
// cmocka on any failure.

#pragma once

#include "client_priv.h"

#include <gr_shm.h>
#include <shmchan.h>

struct fake_daemon {
	int sock; // the daemon's end of the socketpair, -1 once closed
	struct gr_api_client *client; // over the other end, no hello said
	struct shmchan_geometry g;
	struct shmchan_mem mem;
	struct shmchan_server *server;
};

// A socketpair and a client over one end, spin budget spin_us.
void fake_daemon_init(struct fake_daemon *, int spin_us);

// Create the channel (memfd region, rings, doorbell eventfds).
void fake_daemon_channel(struct fake_daemon *);

// The attach response describing the channel, and its three descriptors in
// the order of gr_shm.h.
void fake_daemon_attach_resp(const struct fake_daemon *, struct gr_shm_attach_resp *, int fds[3]);

// Write one response on the socket, with descriptors (SCM_RIGHTS) if n_fds.
void fake_daemon_write(
	struct fake_daemon *,
	uint32_t for_id,
	uint32_t status,
	const void *payload,
	size_t len,
	const int *fds,
	unsigned n_fds
);

// Read the attach request the client sent and check it.
void fake_daemon_read_attach(struct fake_daemon *);

// Channel and a good attach: on return the client is on the shm transport.
void fake_daemon_attach(struct fake_daemon *);

// Close the daemon's end of the socket (the channel's lease).
void fake_daemon_close_sock(struct fake_daemon *);

// Disconnect the client, destroy the channel, close the socket.
void fake_daemon_fini(struct fake_daemon *);

// Descriptors open in this process (entries of /proc/self/fd).
unsigned fake_daemon_count_fds(void);
