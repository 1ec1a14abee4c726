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

#include <pthread.h>
#include <stdatomic.h>
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

// Let the client take responses to ids it never sent, as a handle whose
// ids went round does: for the tests that answer requests they do not make
// it send. Any other client drops a daemon that answers an id never sent.
void fake_daemon_any_id(struct fake_daemon *);

// Close the daemon's end of the socket (the channel's lease).
void fake_daemon_close_sock(struct fake_daemon *);

// Disconnect the client, destroy the channel, close the socket.
void fake_daemon_fini(struct fake_daemon *);

// The client's rings of the daemon's request doorbell since the last call:
// the eventfd's counter (each ring adds 1), read without waiting.
uint64_t fake_daemon_doorbell_rings(struct fake_daemon *);

// A daemon thread's loop, as the daemon's poller reduced to one channel:
// take each request of d into req (SHMCHAN_MSG_MAX bytes) and pass it to
// handle (its length, and arg), then publish its answers; when the ring is
// empty, arm the request doorbell, re-check and sleep on it (counted in
// asleep, when not NULL, before the sleep), until stop is set and stop_fd
// (an eventfd) readable.
void fake_daemon_serve(
	struct fake_daemon *d,
	uint8_t *req,
	const atomic_bool *stop,
	int stop_fd,
	atomic_uint *asleep,
	void (*handle)(void *arg, int len),
	void *arg
);

// Sleep on d's request doorbell, armed by the caller, who re-checked the
// ring after arming it, or until stop_fd (an eventfd) is readable; take the
// doorbell's count and disarm it. For a daemon thread of the test.
void fake_daemon_doorbell_sleep(struct fake_daemon *d, int stop_fd);

// Descriptors open in this process (entries of /proc/self/fd).
unsigned fake_daemon_count_fds(void);

// Channel of a memfd on hugetlbfs (MFD_HUGETLB), sealed and laid out as
// fake_daemon_channel()'s, one huge page at least. Returns false (nothing
// made) when this host gives no hugetlbfs memfd: no huge page free.
bool fake_daemon_channel_huge(struct fake_daemon *);

// ---- A hostile daemon: floods on cue ----

// Largest message a flood repeats (header and payload).
#define FAKE_FLOOD_MSG_MAX (sizeof(struct gr_api_response) + 64 * 1024)
// A flood stops by itself after this long (or after the bytes its test
// gave), so that a client that never returns from its call (the bug a test
// looks for) fails that test instead of hanging it or eating the host's
// memory.
#define FAKE_FLOOD_MAX_S 20

// A thread that sends one message to the client, again and again, as fast
// as the client takes them: on the channel when the fake daemon has one
// (ringing the doorbell when the client sleeps), else on the socket; or,
// with doorbell_fd >= 0, writes that descriptor (the daemon's end of a
// response doorbell it passed) without end instead. Stops when asked, at
// its bounds, or when the client shut the connection down.
struct fake_flood {
	pthread_t thread;
	struct fake_daemon *d;
	int doorbell_fd;
	uint8_t msg[FAKE_FLOOD_MSG_MAX];
	size_t len;
	uint64_t max_bytes; // 0: no bound but FAKE_FLOOD_MAX_S
	atomic_bool stop;
	atomic_ullong sent; // messages (or doorbell bytes) sent
};

// Start flooding the client of d with the message of len bytes at msg (a
// response header then its payload), max_bytes at most (0: no bound).
void fake_flood_start(
	struct fake_flood *,
	struct fake_daemon *d,
	const void *msg,
	size_t len,
	uint64_t max_bytes
);
// Start flooding fd, the daemon's end of a response doorbell.
void fake_flood_doorbell_start(struct fake_flood *, int fd);
// Wait until the flood sent that many messages (or doorbell bytes).
void fake_flood_wait(struct fake_flood *, uint64_t sent);
// Stop and join the flood; returns what it sent.
uint64_t fake_flood_stop(struct fake_flood *);

// A response header for for_id with a payload of len bytes of fill, in
// buf (FAKE_FLOOD_MSG_MAX bytes); returns the message's length.
size_t fake_flood_msg(uint8_t *buf, uint32_t for_id, size_t len, uint8_t fill);

// A tagged event of ev_type with a payload of len bytes of fill, in buf;
// returns the message's length.
size_t fake_flood_event(uint8_t *buf, uint32_t ev_type, size_t len, uint8_t fill);

// CLOCK_MONOTONIC now, in milliseconds.
uint64_t fake_daemon_now_ms(void);

// ---- A slow daemon: answers on its channel, late ----

// A thread that answers each request of type type on the channel with an
// empty response answer_us after it read it (so that the client's wait
// finds an empty ring), and sleeps on its doorbell in between; asleep
// counts the times it armed the doorbell and found no request, just before
// it sleeps. Any other request fails the test. gate, when a test sets it
// before its first request: the thread answers its request n (from 1) only
// once *gate reaches n, or FAKE_SLOW_GATE_MAX_MS after it read it, so that
// the client's wait cannot find the answer at its first look however long
// the host keeps the client from its CPU.
#define FAKE_SLOW_GATE_MAX_MS 1000
struct fake_slow {
	struct fake_daemon d; // attached: d.client is on the channel
	pthread_t thread;
	int stop_fd;
	atomic_bool stop;
	atomic_uint asleep;
	uint32_t type;
	unsigned answer_us;
	uint8_t *req;
	const atomic_uint *gate;
	unsigned answered; // the thread's own count
};

// A fake daemon with a client of spin budget spin_us attached to its
// channel, and its slow thread started.
struct fake_slow *fake_slow_start(int spin_us, uint32_t type, unsigned answer_us);
// Stop and join the thread, then fake_daemon_fini() and free.
void fake_slow_stop(struct fake_slow *);
