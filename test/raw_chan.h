// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A raw channel client of the end-to-end tests: it attaches a memfd channel
// over a raw socket (test/raw_sock.h) and drives it with the channel library
// alone (shmchan_client_*), never the client library, so that a test decides
// exactly when it sends, reads, sleeps and rings, and can break the rules the
// client library keeps.

#pragma once

#include <gr_shm.h>
#include <shmchan.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct raw_chan {
	int sock; // the lease
	struct gr_shm_attach_resp attach;
	struct shmchan_client *chan; // owns the doorbells and the memfd
	uint32_t next_id;
};

// Connect, say hello, attach a memfd channel and map it. Fails the test on
// any error.
void raw_chan_attach(struct raw_chan *rc, const char *sock_path);

// Send one request of type with len bytes of payload, whole, and ring the
// daemon if it sleeps; waits up to RAW_RECV_TIMEOUT_MS for room. Returns its id.
uint32_t raw_chan_send(struct raw_chan *rc, uint32_t type, const void *payload, uint32_t len);

// Take one message (a response header and its payload) into buf, waiting up
// to ms for it. Returns its length, or 0 if none came in time.
int raw_chan_recv(struct raw_chan *rc, void *buf, size_t cap, int ms);

// True once the daemon ended the lease (EOF on the socket), waiting up to ms.
bool raw_chan_lease_ended(struct raw_chan *rc, int ms);

// Unmap, close the doorbells, the memfd and the socket.
void raw_chan_close(struct raw_chan *rc);
