// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Test helper: the daemon's end of a client connection (a socketpair, or a
// connection the test accepted), with a real channel built by shmchan's
// server functions, for the unit tests of the client library. Asserts with
// cmocka on any failure; the functions that say they may run on any thread
// abort the test program when they fail on another thread than the test's.

#pragma once

#include "client_priv.h"

#include <gr_shm.h>
#include <shmchan.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

// Check cond with cmocka's assert_true() on the test's thread, the process's
// main one. cmocka fails a test with a longjmp to that thread: on another
// one (a daemon thread of the test) a failed check is printed and aborts
// the test program instead.
#define FAKE_DAEMON_CHECK(cond)                                                                    \
	do {                                                                                       \
		if (gettid() == getpid()) {                                                        \
			assert_true(cond);                                                         \
		} else if (!(cond)) {                                                              \
			fprintf(stderr, "fake daemon: %s:%d: %s\n", __FILE__, __LINE__, #cond);    \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

// The generation of the fake daemon's channel: not 0, so that a client that
// ignored the attach response's would fail to open it.
#define FAKE_DAEMON_GENERATION 7
// Bytes a newer daemon's GR_SHM_DAEMON_INFO answer has past this release's.
#define FAKE_DAEMON_INFO_NEWER_EXTRA 32

struct fake_daemon {
	int sock; // the daemon's end of the connection, -1 once closed
	struct gr_api_client *client; // over the other end, if the test made it
	struct shmchan_geometry g;
	struct shmchan_mem mem;
	struct shmchan_server *server;
};

// A socketpair and a client over one end (no hello said), spin budget
// spin_us.
void fake_daemon_init(struct fake_daemon *, int spin_us);

// On sock, the daemon's end of a connection the test accepted: no client,
// no channel.
void fake_daemon_init_sock(struct fake_daemon *, int sock);

// cmocka setup and teardown: *state is a fake daemon, fake_daemon_init()ed
// with spin budget 0, freed by the teardown after fake_daemon_fini().
int fake_daemon_setup(void **state);
int fake_daemon_teardown(void **state);

// A cmocka test on the fake daemon of fake_daemon_setup().
#define FAKE_DAEMON_TEST(func)                                                                     \
	cmocka_unit_test_setup_teardown(func, fake_daemon_setup, fake_daemon_teardown)

// Create the channel (memfd region, rings, doorbell eventfds).
void fake_daemon_channel(struct fake_daemon *);

// The attach response describing the channel, and its three descriptors in
// the order of gr_shm.h.
void fake_daemon_attach_resp(const struct fake_daemon *, struct gr_shm_attach_resp *, int fds[3]);

// Write one response on the socket, with descriptors (SCM_RIGHTS) if n_fds.
// The payload is at most an attach response or the daemon's info. May run
// on any thread.
void fake_daemon_write(
	struct fake_daemon *,
	uint32_t for_id,
	uint32_t status,
	const void *payload,
	size_t len,
	const int *fds,
	unsigned n_fds
);

// Read exactly len bytes of fd. May run on any thread.
void fake_daemon_read_all(int fd, void *buf, size_t len);

// Read the attach request the client sent and check it.
void fake_daemon_read_attach(struct fake_daemon *);

// Read the GR_SHM_DETACH a client sends to give back a channel it could
// not use, waiting at most FAKE_DAEMON_DETACH_WAIT_MS for it. May run on
// any thread.
#define FAKE_DAEMON_DETACH_WAIT_MS 5000
void fake_daemon_read_detach(struct fake_daemon *);

// Channel and a good attach: on return the client is on the shm transport.
void fake_daemon_attach(struct fake_daemon *);

// Close the daemon's end of the socket (the channel's lease).
void fake_daemon_close_sock(struct fake_daemon *);

// Disconnect the client, destroy the channel, close the socket.
void fake_daemon_fini(struct fake_daemon *);

// The client's rings of the daemon's request doorbell since the last call:
// the eventfd's counter (each ring adds 1), read without waiting.
uint64_t fake_daemon_doorbell_rings(struct fake_daemon *);

// Descriptors open in this process (entries of /proc/self/fd).
unsigned fake_daemon_count_fds(void);
