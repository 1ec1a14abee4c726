// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The input of a socket connection: the requests read and not yet served
// (sock.c serves them, on the main thread). conn_input_len() bytes are
// there; conn_input_take() copies the next ones out, conn_input_peek()
// shows them in one piece and conn_input_drain() drops them;
// conn_input_want() is told how many the next step needs; conn_reading()
// starts and stops reading the socket.

#include "sock_priv.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int conn_input_init(struct conn *conn) {
	conn->read_event = event_new(
		sock_base,
		conn->ctx.sock_fd,
		EV_READ | EV_PERSIST,
		conn_on_readable,
		conn
	);
	conn->in = malloc(SOCK_READ_INITIAL);
	if (conn->read_event == NULL || conn->in == NULL)
		return -ENOMEM;
	conn->in_size = SOCK_READ_INITIAL;
	return 0;
}

void conn_input_fini(struct conn *conn) {
	if (conn->read_event != NULL)
		event_free(conn->read_event);
	free(conn->in);
}

size_t conn_input_len(const struct conn *conn) {
	return conn->in_end - conn->in_start;
}

// A request payload is read through its struct (handlers cast it): it must
// start aligned for the request structs' fields, of 8 bytes at most
// (GR_API_SERVER_PAYLOAD_ALIGN). A payload of a length not a multiple of it
// leaves the next one misaligned; that one is moved back by at most
// SOCK_PAYLOAD_ALIGN - 1 bytes, over its own header, which
// was taken out already and sits right before it (a header is read from the
// buffer, and a compaction that moves a payload moves it to the front,
// which is aligned). So realigning a payload costs its own length, never
// the input behind it.
#define SOCK_PAYLOAD_ALIGN GR_API_SERVER_PAYLOAD_ALIGN
_Static_assert(
	sizeof(struct gr_api_request) >= SOCK_PAYLOAD_ALIGN - 1,
	"a misaligned payload moves back over its header"
);

void *conn_input_peek(struct conn *conn, size_t len) {
	size_t skew = (uintptr_t)(conn->in + conn->in_start) % SOCK_PAYLOAD_ALIGN;
	char *payload = conn->in + conn->in_start;

	if (skew == 0)
		return payload;
	memmove(payload - skew, payload, len);
	return payload - skew;
}

// The payload was moved back (conn_input_peek()), never what follows it:
// the next request starts len bytes after in_start all the same.
void conn_input_drain(struct conn *conn, size_t len) {
	conn->in_start += len;
	if (conn->in_start == conn->in_end)
		conn->in_start = conn->in_end = 0;
}

void conn_input_take(struct conn *conn, void *dst, size_t len) {
	memcpy(dst, conn->in + conn->in_start, len);
	conn_input_drain(conn, len);
}

// The next step needs need bytes in one piece from in_start: grow the buffer
// if it is smaller than that (need is at most SOCK_READ_HIGH:
// api_check_header() bounds every payload). The next read moves the input to
// the front first (conn_input_compact()). Returns 0, or -ENOMEM with every
// byte of the input kept.
int conn_input_want(struct conn *conn, size_t need) {
	size_t size = conn->in_size;
	char *in;

	if (need <= size)
		return 0;
	while (size < need)
		size *= 2;
	if (size > SOCK_READ_HIGH)
		size = SOCK_READ_HIGH;
	in = realloc(conn->in, size);
	if (in == NULL)
		return -ENOMEM;
	conn->in = in;
	conn->in_size = size;
	return 0;
}

// Before each read: move the input not yet served to the front of the
// buffer, so that the read gets all the room behind it. Reading runs only
// while the input holds less than one whole request (conn_serve() serves
// every whole one, and reading stops while it cannot: paused, closing), so
// this moves less than one request, at most once per read: the input costs
// the daemon a bounded number of copies of each byte it reads.
void conn_input_compact(struct conn *conn) {
	if (conn->in_start == 0)
		return;
	memmove(conn->in, conn->in + conn->in_start, conn_input_len(conn));
	conn->in_end -= conn->in_start;
	conn->in_start = 0;
}

void conn_reading(struct conn *conn, bool on) {
	if (on && !conn->reading)
		event_add(conn->read_event, NULL);
	else if (!on && conn->reading)
		event_del(conn->read_event);
	conn->reading = on;
}
