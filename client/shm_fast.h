// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Internal: the shared-memory transport's busy path, inline into the
// library's public calls (client.c) and into its waits (shm.c): a send that
// finds room, and a receive that finds its message in the ring, run without
// a call (the channel's operations are inline too: client_inline.h). What
// waits is out of line, in shm.c.

#pragma once

#include "client_priv.h"

#include <client_inline.h>

#include <limits.h>
#include <string.h>

// shm_msg_check() when the message is not the well-formed one it nearly
// always is (n < 0: a bad frame, or the channel detached): which check
// failed. Out of line, in shm.c.
int client_shm_msg_bad(struct gr_api_client *, int n, const struct client_msg *)
	__attribute__((cold));

// client_shm_send() when the request ring is full: wait for room (or the
// channel's end). Out of line, in shm.c (also with link-time optimisation).
// Returns as client_shm_send().
__attribute__((noinline)) int client_shm_send_wait(
	struct gr_api_client *,
	const struct gr_api_request *hdr,
	const void *payload,
	size_t len,
	bool more
);

// client_shm_next_msg() once the ring was found empty: wake the daemon for
// what was sent, then (with wait) spin and sleep until a message comes.
// Out of line, in shm.c (also with link-time optimisation): a receive that
// finds its answer at once keeps the few registers it needs. Returns as
// client_shm_next_msg().
__attribute__((noinline)) int client_shm_next_msg_wait(
	struct gr_api_client *,
	struct client_msg *,
	bool wait,
	const struct client_into *into
);

// A frame the ring accepted is at most SHMCHAN_MSG_MAX long, so a payload
// length that matches the frame's is within what this handle accepts: the
// one comparison of the busy path checks both.
_Static_assert(
	SHMCHAN_MSG_MAX - sizeof(struct gr_api_response) <= CLIENT_MAX_PAYLOAD,
	"a payload that fills its frame is within CLIENT_MAX_PAYLOAD"
);

// Check a message of the n bytes a channel receive returned (n < 0: a bad
// frame, or the channel detached) whose header is in msg->hdr: its payload
// length is the frame's (and so within CLIENT_MAX_PAYLOAD). Returns 0,
// -EBADMSG or -ECONNRESET (the handle is dead).
static inline __attribute__((always_inline)) int
shm_msg_check(struct gr_api_client *c, int n, struct client_msg *msg) {
	if (n >= (int)sizeof(msg->hdr) && msg->hdr.payload_len == (size_t)n - sizeof(msg->hdr))
		return 0;
	return client_shm_msg_bad(c, n, msg);
}

// Make a message of the n bytes shmchan_client_recv() put in msg_buf.
// Returns as shm_msg_check().
static inline __attribute__((always_inline)) int
shm_msg(struct gr_api_client *c, int n, struct client_msg *msg) {
	if (n >= (int)sizeof(msg->hdr))
		memcpy(&msg->hdr, c->msg_buf, sizeof(msg->hdr));
	msg->payload = c->msg_buf + sizeof(msg->hdr);
	return shm_msg_check(c, n, msg);
}

// shm_look(): the socket holds a whole message. A value
// shmchan_client_recv() never returns (no message is that long).
#define SHM_LOOK_SOCKET INT_MAX

// Take the next message, its payload straight from the cells into
// into->buf if it is the response to into->for_id and fits, else into the
// staging buffer. Returns as shmchan_client_recv(): the length, 0 when the
// ring is empty, or -errno.
static inline __attribute__((always_inline)) int
shm_recv_into(struct gr_api_client *c, const struct client_into *into, struct client_msg *msg) {
	bool direct = false;
	int n = shmchan_client_recv_keyed_inline(
		c->chan,
		&msg->hdr,
		sizeof(msg->hdr),
		into->for_id,
		into->buf,
		into->len,
		c->msg_buf,
		CLIENT_MSG_MAX,
		&direct
	);
	if (n > 0)
		msg->payload = direct ? into->buf : c->msg_buf;
	return n;
}

// A message n bytes long was taken (n != 0): the daemon hears of the room
// it made, and the message is checked. Returns as shm_msg_check().
static inline __attribute__((always_inline)) int
shm_took(struct gr_api_client *c, int n, struct client_msg *msg, const struct client_into *into) {
	c->woke = false;
	// A daemon that ran out of room waits for what we take: tell it now
	// rather than when we next wait (a load of a line that changes only
	// when the daemon sleeps or wakes), once an eighth of the ring is free
	// again.
	shmchan_client_room_made_inline(c->chan);
	return into != NULL ? shm_msg_check(c, n, msg) : shm_msg(c, n, msg);
}

// One look for the next message: a whole one the daemon wrote on the
// socket (rare: client_sock_pending() is a load), else the ring's.
// Returns 1 when the socket has one, else as shmchan_client_recv().
static inline __attribute__((always_inline)) int
shm_look(struct gr_api_client *c, struct client_msg *msg, const struct client_into *into) {
	if (client_sock_pending(c) && client_sock_buffered(c))
		return SHM_LOOK_SOCKET;
	return into != NULL ? shm_recv_into(c, into, msg)
			    : shmchan_client_recv_inline(c->chan, c->msg_buf, CLIENT_MSG_MAX);
}

// Receive the next whole message from the channel (or, should the daemon
// write one there, from the socket). With wait, spins, then sleeps, until
// the call's deadline; without, returns -EAGAIN when the ring is empty.
// into as in client_take(). Returns 0 or -errno.
static inline __attribute__((always_inline)) int client_shm_next_msg(
	struct gr_api_client *c,
	struct client_msg *msg,
	bool wait,
	const struct client_into *into
) {
	int n = shm_look(c, msg, into);
	if (n == SHM_LOOK_SOCKET)
		return client_sock_next_msg(c, msg, false);
	if (n != 0)
		return shm_took(c, n, msg, into);
	return client_shm_next_msg_wait(c, msg, wait, into);
}

// One try at sending a request on the channel, and its flush unless more.
// Returns 0, -ENOBUFS (the request ring is full) or -errno (the handle is
// dead: the daemon detached the channel, or its index is corrupt).
static inline __attribute__((always_inline)) int shm_enqueue(
	struct gr_api_client *c,
	const struct gr_api_request *hdr,
	const void *payload,
	size_t len,
	bool more
) {
	int ret = shmchan_client_enqueue_inline(c->chan, hdr, sizeof(*hdr), payload, len);
	if (ret == 0 && !more && shmchan_client_flush_inline(c->chan))
		c->woke = true;
	if (ret == -ECONNRESET || ret == -EBADMSG)
		c->dead = true;
	return ret;
}

// Send one request on the channel, waiting while the request ring is full.
// Unless more, wake the daemon if it sleeps (shmchan_client_flush()).
// Returns 0 or -errno.
static inline __attribute__((always_inline)) int client_shm_send(
	struct gr_api_client *c,
	const struct gr_api_request *hdr,
	const void *payload,
	size_t len,
	bool more
) {
	int ret = shm_enqueue(c, hdr, payload, len, more);
	if (ret != -ENOBUFS)
		return ret;
	return client_shm_send_wait(c, hdr, payload, len, more);
}
