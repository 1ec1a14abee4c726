// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A raw socket client of the end-to-end tests: no client library, so a test
// sends exactly the bytes it wants and sees exactly what the daemon answers,
// descriptors included. Every receive is bounded (SO_RCVTIMEO). Failures of
// the test's own making (a socket that cannot be created, a message cut in
// the middle) end the test through CHECK.

#pragma once

#include <gr_api.h>
#include <gr_shm.h>
#include <shmchan.h>

#include <stddef.h>
#include <stdint.h>

// Bound of every receive: the daemon answers in microseconds.
#define RAW_RECV_TIMEOUT_MS 3000

// Connect to the daemon's socket; receives and sends time out after
// RAW_RECV_TIMEOUT_MS.
int raw_connect(const char *sock_path);

// Bound receives and sends of fd to ms milliseconds.
void raw_set_timeout(int fd, unsigned ms);

// Send all of buf. Returns 0, or -EPIPE/-ECONNRESET if the daemon closed
// the connection.
int raw_send_bytes(int fd, const void *buf, size_t len);

// Send a request header announcing payload_len and the first sent_len bytes
// of payload, in one send. Returns as raw_send_bytes().
int raw_send_request(
	int fd,
	uint32_t id,
	uint32_t type,
	uint32_t payload_len,
	const void *payload,
	size_t sent_len
);

// Read exactly len bytes, and the descriptors that came with them (up to
// max_fds, stored in fds, their number added to *n_fds; the caller closes
// them). With max_fds 0 a descriptor that arrives fails the test. Returns 1,
// 0 if the daemon closed the connection before the first byte (EOF, or
// ECONNRESET), or -EAGAIN on timeout before the first byte.
int raw_recv_exact_fds(int fd, void *buf, size_t len, int *fds, unsigned max_fds, unsigned *n_fds);

// raw_recv_exact_fds() where no descriptor may arrive.
int raw_recv_exact(int fd, void *buf, size_t len);

// Read one response and the descriptors that came with it. Its payload is
// stored in payload when it fits in cap bytes, else read and dropped.
// Returns as raw_recv_exact_fds().
int raw_recv_response_fds(
	int fd,
	struct gr_api_response *resp,
	void *payload,
	size_t cap,
	int *fds,
	unsigned max_fds,
	unsigned *n_fds
);

// raw_recv_response_fds() where no descriptor may arrive.
int raw_recv_response(int fd, struct gr_api_response *resp, void *payload, size_t cap);

// Expect one response to id with status and no payload (and no descriptor).
void raw_expect_status(int fd, uint32_t id, uint32_t status, const char *what);

// Send GR_HELLO with api_version. Returns as raw_send_bytes().
int raw_hello_version(int fd, uint32_t id, uint32_t api_version);

// GR_HELLO with our API version, answered with status 0.
void raw_hello(int fd, uint32_t id);

// GR_PING answered with status 0.
void raw_ping(int fd, uint32_t id, const char *what);

// What a GR_SHM_ATTACH brought back.
struct raw_attach_reply {
	struct gr_api_response resp;
	struct gr_shm_attach_resp attach; // the payload; zeroed when there is none
	// The descriptors that came with it. Room for more than any attach
	// passes: extra ones are counted, not refused by the receive.
	int fds[SHMCHAN_FDS_MAX];
	unsigned n_fds;
};

// Send GR_SHM_ATTACH (id, backings, layout_version) and receive what it
// brings back in *reply; the caller closes reply->fds. A closed connection,
// no response, or a response to another id fails the test.
void raw_attach(
	int fd,
	uint32_t id,
	uint32_t backings,
	uint32_t layout_version,
	struct raw_attach_reply *reply
);

// Descriptors of a memfd channel's attach, in gr_shm.h's order.
#define RAW_MEMFD_ATTACH_FDS 3

// Check the RAW_MEMFD_ATTACH_FDS descriptors of a memfd channel's attach:
// an eventfd (request doorbell), a socket (response doorbell), then a memfd of
// region_size bytes sealed against shrinking and growing.
void raw_expect_memfd_channel_fds(const int *fds, uint64_t region_size);

// Close the n descriptors of fds.
void raw_close_fds(const int *fds, unsigned n);
