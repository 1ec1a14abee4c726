// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The "socket" api_transport: what handlers send to a socket client, and its
// events. A response is staged with the others of its batch, or passes
// descriptors alone, after every earlier piece (conn_write()); a
// subscriber's events move from its backlog to the connection's output
// while that holds less than SOCK_EVENT_OUTPUT_MAX (conn_events_drain()).
// Writing the output to the socket, and its bounds, are sock.c's. Main
// thread only.

#include "sock_priv.h"
#include "event.h"
#include "config.h"

#include <shmchan.h>

#include <event2/buffer.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

// Write the queued output to the socket now, before its write event. A
// short write leaves the rest queued; a real socket error shows on the
// write event.
static void conn_write_now(struct conn *conn) {
	(void)conn_send_buf(conn, conn_output(conn));
}

// Move events from the client's backlog to its output, each as one piece,
// while the output holds less than SOCK_EVENT_OUTPUT_MAX. Main thread: the
// event module calls it after a publish, the write callback once the output
// drained.
void conn_events_drain(void *arg) {
	struct conn *conn = arg;
	enum event_framing framing = event_sub_framing(conn->ctx.events);
	const struct event_msg *m;
	const void *bytes;
	uint32_t len;

	if (conn->state != CONN_READ_HEADER && conn->state != CONN_READ_PAYLOAD)
		return;
	while (conn_pending(conn) < SOCK_EVENT_OUTPUT_MAX &&
	       (m = event_sub_peek(conn->ctx.events)) != NULL) {
		bytes = event_msg_bytes(m, framing, &len);
		// Out of memory: left in the backlog for the next drain.
		if (evbuffer_add(conn_output(conn), bytes, len) < 0) {
			LOG(ERR, "client pid %d: no memory for an event", (int)conn->ctx.peer_pid);
			return;
		}
		event_sub_pop(conn->ctx.events);
	}
}

static struct event_sub *sock_events_open(struct gr_api_ctx *ctx) {
	return event_sub_new(
		ctx->peer_pid,
		EVENT_FRAMING_TAGGED,
		NULL,
		conn_events_drain,
		ctx->priv
	);
}

// Head and body are staged as one contiguous piece, written with the rest
// of the batch once it is served.
static int conn_queue(
	struct conn *conn,
	const void *head,
	size_t head_len,
	const void *body,
	size_t body_len
) {
	size_t len = head_len + body_len;
	struct evbuffer_iovec vec;

	if (evbuffer_reserve_space(conn->staged, len, &vec, 1) != 1)
		return -ENOMEM;
	memcpy(vec.iov_base, head, head_len);
	if (body_len > 0)
		memcpy((char *)vec.iov_base + head_len, body, body_len);
	vec.iov_len = len;
	if (evbuffer_commit_space(conn->staged, &vec, 1) < 0)
		return -ENOMEM;
	return 0;
}

// File descriptors must ride on the piece's first byte, so this piece is
// sent directly with sendmsg(), once every earlier one has left.
static int conn_send_fds(
	struct conn *conn,
	const void *head,
	size_t head_len,
	const void *body,
	size_t body_len,
	const int *fds,
	unsigned n_fds
) {
	struct evbuffer *output = conn_output(conn);
	size_t len = head_len + body_len;
	size_t queued;
	char *msg;
	long sent;

	// Earlier responses of a pipelining client may still be queued: try to
	// write them now.
	conn_flush_staged(conn);
	if (evbuffer_get_length(output) > 0)
		conn_write_now(conn);
	queued = evbuffer_get_length(output);
	if (queued > 0) {
		conn_close(
			conn,
			"cannot pass %u fds: %zu bytes of earlier responses still queued",
			n_fds,
			queued
		);
		return -EBUSY;
	}
	msg = malloc(len);
	if (msg == NULL) {
		conn_close(conn, "out of memory for a response with fds");
		return -ENOMEM;
	}
	memcpy(msg, head, head_len);
	if (body_len > 0)
		memcpy(msg + head_len, body, body_len);

	sent = shmchan_send_fds(conn->ctx.sock_fd, msg, len, fds, n_fds);
	if (sent < 0) {
		conn_close(conn, "passing %u fds: %s", n_fds, strerror((int)-sent));
		free(msg);
		return (int)sent;
	}
	// The fds went with the first byte; queue what the socket did not take.
	if ((size_t)sent < len && evbuffer_add(output, msg + sent, len - sent) < 0) {
		conn_close(conn, "out of memory queueing a response");
		free(msg);
		return -ENOMEM;
	}
	free(msg);
	return 0;
}

// Everything sent to a client goes through here: responses and events
// alike. head (head_len bytes) and body (body_len, may be NULL if 0) leave
// as one piece, after everything sent before them; fds, if any, ride on
// head's first byte. During a batch (conn_serve() on the stack) the piece
// is staged and leaves with the batch's other responses; otherwise it is
// written at once if nothing is queued. Whatever the socket does not take
// waits in the bufferevent's output, bounded as conn_serve() and
// conn_on_write() keep it. Both are copied before it returns. Main thread.
// Returns 0, -EPIPE (the connection is closing), or -errno with the
// connection closed and the reason logged.
static int conn_write(
	struct conn *conn,
	const void *head,
	size_t head_len,
	const void *body,
	size_t body_len,
	const int *fds,
	unsigned n_fds
) {
	int ret;

	if (conn->state == CONN_CLOSING || conn->state == CONN_CLOSED)
		return -EPIPE;
	if (n_fds > 0)
		return conn_send_fds(conn, head, head_len, body, body_len, fds, n_fds);
	ret = conn_queue(conn, head, head_len, body, body_len);
	if (ret < 0) {
		conn_close(conn, "out of memory queueing %zu bytes of output", head_len + body_len);
		return ret;
	}
	if (!conn->serving)
		conn_flush_staged(conn);
	return 0;
}

// The socket api_transport. Main thread, under the handler lock.
static int sock_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	struct gr_api_response hdr = {
		.for_id = for_id,
		.status = out->status,
		.payload_len = out->len,
	};
	struct conn *conn = ctx->priv;
	int ret;

	ret = conn_write(conn, &hdr, sizeof(hdr), out->payload, out->len, out->fds, out->n_fds);
	if (ret == 0) {
		COUNTER_ADD(conn->counters.responses, 1);
		COUNTER_ADD(conn->counters.resp_bytes, sizeof(hdr) + out->len);
	}
	return ret;
}

const struct api_transport sock_transport = {
	.name = "socket",
	.send = sock_send,
	.events_open = sock_events_open,
	.deferred_wake = sock_deferred_wake,
	.streams = true,
};
