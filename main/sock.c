// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The Unix stream socket server. Main thread only: the listener, every
// connection and every response sent on a socket live on the event loop.
//
// A connection is a small state machine:
//
//   READ_HEADER --12 bytes--> READ_PAYLOAD --payload_len bytes, dispatch--> READ_HEADER
//   READ_* --oversized request, or EOF with output queued--> CLOSING --output flushed--> CLOSED
//   any state --socket error, EOF, stall, send failure, shutdown--> CLOSED
//
// Writing: the responses to one batch of requests (all the whole requests one
// read brought) are staged, each header and payload in one contiguous piece,
// and written to the socket together once the batch is served, straight
// when nothing older is queued. Whatever the socket does not take goes to
// the bufferevent's output, which writes it when the socket can take more.
// So a client costs one read and one write per batch, with no write event
// armed unless the socket is full. Built with SHMCHAN_DAEMON_SINGLE_WRITE
// undefined, the daemon instead writes each header alone, then queues the
// payload (the seed's behaviour, kept for the benchmark).
//
// Output policy: when a client's queued output passes SOCK_OUTPUT_HIGH, the
// daemon stops reading its requests until the output drains to
// SOCK_OUTPUT_LOW; a client still above SOCK_OUTPUT_HIGH after
// SOCK_OUTPUT_STALL_SEC is disconnected. So the backlog of a client is
// bounded by SOCK_OUTPUT_HIGH plus the responses of one request (handlers do
// bounded work).

#include "sock.h"
#include "api.h"
#include "event.h"
#include "shmchand.h"

#include <shmchan.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

// Input kept at most: one maximal request. Reading stops above it until
// the request is served. Also the most read or written in one system call.
#define SOCK_READ_HIGH (sizeof(struct gr_api_request) + GR_API_MAX_MSG_LEN)
// libevent 2.1 reads at most this much per call (EVBUFFER_MAX_READ); the rest
// of a larger payload is read straight into the input buffer.
#define SOCK_LIBEVENT_READ_MAX 4096
// After a failed accept (out of fds), wait this long before accepting again
// instead of spinning on the readable listener.
#define SOCK_ACCEPT_RETRY_MS 100

enum conn_state {
	CONN_READ_HEADER,
	CONN_READ_PAYLOAD,
	CONN_CLOSING, // reads no more requests; closes once its output is flushed
	CONN_CLOSED, // freed as soon as conn_serve() is off the stack
};

// One client. Main thread only.
struct conn {
	TAILQ_ENTRY(conn) next;
	struct api_ctx ctx;
	struct bufferevent *bev;
	// Responses of the batch being served, not yet handed to the socket.
	// Empty whenever conn_serve() is not on the stack.
	struct evbuffer *staged;
	struct event *stall_timer; // paused or closing for too long
	enum conn_state state;
	struct gr_api_request req; // header of the request being read
	bool paused; // output above SOCK_OUTPUT_HIGH: requests not read
	bool serving; // conn_serve() is on the stack: it frees a CLOSED conn
	bool lease_ended; // ctx.lease_lost was called
};

static struct {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *accept_retry;
	TAILQ_HEAD(, conn) conns;
	unsigned n_conns;
	bool bound; // path holds our socket file
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev; // of the socket file we created, to remove only ours
	ino_t ino;
} server = {.conns = TAILQ_HEAD_INITIALIZER(server.conns)};

static void conn_serve(struct conn *conn);

static struct evbuffer *conn_output(const struct conn *conn) {
	return bufferevent_get_output(conn->bev);
}

// Output not yet written to the socket.
static size_t conn_pending(const struct conn *conn) {
	return evbuffer_get_length(conn->staged) + evbuffer_get_length(conn_output(conn));
}

// Hand the staged responses to the socket: straight to it if nothing older
// is queued, the rest to the bufferevent's output. A failed write leaves
// everything to the bufferevent, whose own write then reports the error.
static void conn_flush_staged(struct conn *conn) {
	struct evbuffer *output = conn_output(conn);

	if (evbuffer_get_length(conn->staged) == 0)
		return;
	if (evbuffer_get_length(output) == 0)
		evbuffer_write(conn->staged, conn->ctx.sock_fd);
	// Moves the chains without copying; cannot fail, as neither buffer
	// is frozen at the end it touches.
	evbuffer_add_buffer(output, conn->staged);
}

static void conn_free(struct conn *conn) {
	event_sub_free(conn->ctx.events);
	TAILQ_REMOVE(&server.conns, conn, next);
	server.n_conns--;
	event_free(conn->stall_timer);
	evbuffer_free(conn->staged);
	bufferevent_free(conn->bev);
	free(conn);
}

// The socket is the lease of a channel attached over it: end it once, as
// soon as the connection stops serving.
static void conn_end_lease(struct conn *conn) {
	if (conn->lease_ended)
		return;
	conn->lease_ended = true;
	if (conn->ctx.lease_lost != NULL)
		conn->ctx.lease_lost(conn->ctx.lease_arg);
}

static void __attribute__((format(printf, 2, 3)))
conn_close(struct conn *conn, const char *fmt, ...) {
	char reason[128];
	va_list ap;

	if (conn->state == CONN_CLOSED)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	LOG(INFO, "client pid %d: closed: %s", (int)conn->ctx.peer_pid, reason);

	conn->state = CONN_CLOSED;
	bufferevent_disable(conn->bev, EV_READ | EV_WRITE);
	// A disconnect drops the client's subscriptions at once.
	if (conn->ctx.events != NULL)
		event_unsubscribe_all(conn->ctx.events);
	conn_end_lease(conn);
	if (!conn->serving)
		conn_free(conn);
}

static void conn_arm_stall_timer(struct conn *conn) {
	struct timeval limit = {.tv_sec = SOCK_OUTPUT_STALL_SEC};
	evtimer_add(conn->stall_timer, &limit);
}

// Read no more requests; close once the queued output is flushed.
static void conn_close_after_flush(struct conn *conn, const char *reason) {
	if (conn->state == CONN_CLOSING || conn->state == CONN_CLOSED)
		return;
	conn_flush_staged(conn);
	if (evbuffer_get_length(conn_output(conn)) == 0) {
		conn_close(conn, "%s", reason);
		return;
	}
	LOG(INFO, "client pid %d: closing after flush: %s", (int)conn->ctx.peer_pid, reason);
	conn->state = CONN_CLOSING;
	bufferevent_disable(conn->bev, EV_READ);
	conn_end_lease(conn);
	// The write callback fires once the output is empty.
	bufferevent_setwatermark(conn->bev, EV_WRITE, 0, 0);
	conn_arm_stall_timer(conn);
}

static void conn_pause(struct conn *conn) {
	LOG(DEBUG,
	    "client pid %d: %zu bytes of output queued, pausing its requests",
	    (int)conn->ctx.peer_pid,
	    conn_pending(conn));
	conn->paused = true;
	bufferevent_disable(conn->bev, EV_READ);
	// The write callback fires once the output drains to the low mark.
	bufferevent_setwatermark(conn->bev, EV_WRITE, SOCK_OUTPUT_LOW, 0);
	conn_arm_stall_timer(conn);
}

static void conn_resume(struct conn *conn) {
	conn->paused = false;
	event_del(conn->stall_timer);
	bufferevent_setwatermark(conn->bev, EV_WRITE, 0, 0);
	bufferevent_enable(conn->bev, EV_READ);
	// Requests already in the input get no new read callback.
	conn_serve(conn);
}

// Read callbacks fire only once the next step's bytes are all there.
static void conn_set_read_watermark(struct conn *conn) {
	size_t need = sizeof(conn->req);

	if (conn->state == CONN_READ_PAYLOAD)
		need = conn->req.payload_len;
	bufferevent_setwatermark(conn->bev, EV_READ, need, SOCK_READ_HIGH);
}

// Take the next header out of the input. Returns false if the connection
// cannot go on to read a payload now.
static bool conn_read_header(struct conn *conn, struct evbuffer *input) {
	if (evbuffer_get_length(input) < sizeof(conn->req))
		return false;
	evbuffer_remove(input, &conn->req, sizeof(conn->req));
	if (api_check_header(&conn->req) < 0) {
		LOG(NOTICE,
		    "client pid %d: request id %u type 0x%08x announces %u bytes of payload,"
		    " over the maximum %u",
		    (int)conn->ctx.peer_pid,
		    conn->req.id,
		    conn->req.type,
		    conn->req.payload_len,
		    GR_API_MAX_MSG_LEN);
		api_reject(&conn->ctx, conn->req.id, EMSGSIZE);
		conn_close_after_flush(conn, "oversized request");
		return false;
	}
	conn->state = CONN_READ_PAYLOAD;
	return true;
}

// Read the missing part of a large payload now, in one system call, rather
// than in one libevent read and loop turn per SOCK_LIBEVENT_READ_MAX bytes.
// If the socket has nothing more yet, or is at EOF or in error, libevent's
// next read finds the same.
static void conn_read_payload_now(struct conn *conn, struct evbuffer *input) {
	size_t missing = conn->req.payload_len - evbuffer_get_length(input);
	struct evbuffer_iovec vec;
	ssize_t n;

	if (missing <= SOCK_LIBEVENT_READ_MAX)
		return;
	// A socket bufferevent freezes the end of its input against other
	// writers; lift that for this read, as its own reads do.
	evbuffer_unfreeze(input, 0);
	if (evbuffer_reserve_space(input, missing, &vec, 1) == 1) {
		n = recv(conn->ctx.sock_fd, vec.iov_base, missing, MSG_DONTWAIT);
		vec.iov_len = n > 0 ? (size_t)n : 0;
		evbuffer_commit_space(input, &vec, 1);
	}
	evbuffer_freeze(input, 0);
}

// Serve the whole requests in the input, in order, until the input runs
// dry, the output passes its bound, or the connection stops reading.
static void conn_serve(struct conn *conn) {
	struct evbuffer *input = bufferevent_get_input(conn->bev);
	uint32_t len;
	void *payload;

	conn->serving = true;
	while (!conn->paused &&
	       (conn->state == CONN_READ_HEADER || conn->state == CONN_READ_PAYLOAD)) {
		if (conn->state == CONN_READ_HEADER && !conn_read_header(conn, input))
			break;
		len = conn->req.payload_len;
		if (evbuffer_get_length(input) < len)
			conn_read_payload_now(conn, input);
		if (evbuffer_get_length(input) < len)
			break;
		payload = NULL;
		if (len > 0) {
			payload = evbuffer_pullup(input, len);
			if (payload == NULL) {
				conn_close(conn, "out of memory for a %u-byte payload", len);
				break;
			}
		}
		// A failed send has closed the connection already.
		api_dispatch(&conn->ctx, &conn->req, payload);
		evbuffer_drain(input, len);
		if (conn->state != CONN_READ_PAYLOAD)
			break;
		conn->state = CONN_READ_HEADER;
		if (conn_pending(conn) > SOCK_OUTPUT_HIGH) {
			// Pause only on what the socket will not take now: the
			// write callback that resumes fires on the output only.
			conn_flush_staged(conn);
			if (evbuffer_get_length(conn_output(conn)) > SOCK_OUTPUT_HIGH)
				conn_pause(conn);
		}
	}
	conn->serving = false;
	if (conn->state != CONN_CLOSED)
		conn_flush_staged(conn);

	if (conn->state == CONN_CLOSED)
		conn_free(conn);
	else if (conn->state != CONN_CLOSING)
		conn_set_read_watermark(conn);
}

static void conn_on_read(struct bufferevent *bev, void *arg) {
	(void)bev;
	conn_serve(arg);
}

// Move events from the client's backlog to its output, each as one piece,
// while the output holds less than SOCK_EVENT_OUTPUT_MAX. Main thread: the
// event module calls it after a publish, the write callback once the output
// drained.
static void conn_events_drain(void *arg) {
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

static struct event_sub *sock_events_open(struct api_ctx *ctx) {
	return event_sub_new(
		ctx->peer_pid,
		EVENT_FRAMING_TAGGED,
		NULL,
		conn_events_drain,
		ctx->priv
	);
}

static void conn_on_write(struct bufferevent *bev, void *arg) {
	size_t queued = evbuffer_get_length(bufferevent_get_output(bev));
	struct conn *conn = arg;

	if (conn->ctx.events != NULL && event_sub_pending(conn->ctx.events)) {
		conn_events_drain(conn);
		queued = evbuffer_get_length(bufferevent_get_output(bev));
	}

	if (conn->state == CONN_CLOSING && queued == 0)
		conn_close(conn, "last responses flushed");
	else if (conn->paused && queued <= SOCK_OUTPUT_LOW)
		conn_resume(conn);
}

static void conn_on_event(struct bufferevent *bev, short events, void *arg) {
	size_t unread = evbuffer_get_length(bufferevent_get_input(bev));
	struct conn *conn = arg;

	if (events & BEV_EVENT_ERROR) {
		conn_close(conn, "socket error: %s", strerror(EVUTIL_SOCKET_ERROR()));
	} else if (events & BEV_EVENT_EOF) {
		if (conn->state == CONN_READ_PAYLOAD || unread > 0)
			conn_close(conn, "vanished in the middle of a request");
		else
			conn_close_after_flush(conn, "disconnected");
	}
}

static void conn_on_stall_timer(evutil_socket_t fd, short what, void *arg) {
	struct conn *conn = arg;

	(void)fd;
	(void)what;
	if (conn->state == CONN_CLOSING) {
		conn_close(
			conn,
			"its last responses were not read within %d s",
			SOCK_OUTPUT_STALL_SEC
		);
	} else if (evbuffer_get_length(conn_output(conn)) > SOCK_OUTPUT_HIGH) {
		conn_close(
			conn,
			"output backlog above %u bytes for %d s",
			SOCK_OUTPUT_HIGH,
			SOCK_OUTPUT_STALL_SEC
		);
	} else {
		// Paused but draining: give it another period to reach the low mark.
		conn_arm_stall_timer(conn);
	}
}

// Write the queued output to the socket now, outside the bufferevent's own
// write callback. A socket bufferevent freezes the front of its output
// buffer against any other drain; lift that for this write, as its write
// callback does. A short write leaves the rest queued; a real socket error
// shows on the bufferevent's next write.
static void conn_write_now(struct conn *conn) {
	struct evbuffer *output = conn_output(conn);

	evbuffer_unfreeze(output, 1);
	evbuffer_write(output, conn->ctx.sock_fd);
	evbuffer_freeze(output, 1);
}

#ifdef SHMCHAN_DAEMON_SINGLE_WRITE
// Header and payload are staged as one contiguous piece, written with the
// rest of the batch once it is served.
static int conn_queue(struct conn *conn, const struct gr_api_response *hdr, const void *payload) {
	size_t len = sizeof(*hdr) + hdr->payload_len;
	struct evbuffer_iovec vec;

	if (evbuffer_reserve_space(conn->staged, len, &vec, 1) != 1)
		return -ENOMEM;
	memcpy(vec.iov_base, hdr, sizeof(*hdr));
	if (hdr->payload_len > 0)
		memcpy((char *)vec.iov_base + sizeof(*hdr), payload, hdr->payload_len);
	vec.iov_len = len;
	if (evbuffer_commit_space(conn->staged, &vec, 1) < 0)
		return -ENOMEM;
	return 0;
}
#else
// The seed's behaviour, kept to measure against: the header is written to
// the socket on its own, then the payload is queued. bufferevent_flush()
// does nothing on socket bufferevents, hence the explicit write.
static int conn_queue(struct conn *conn, const struct gr_api_response *hdr, const void *payload) {
	struct evbuffer *output = conn_output(conn);

	if (evbuffer_add(output, hdr, sizeof(*hdr)) < 0)
		return -ENOMEM;
	conn_write_now(conn);
	if (hdr->payload_len > 0 && evbuffer_add(output, payload, hdr->payload_len) < 0)
		return -ENOMEM;
	return 0;
}
#endif

// File descriptors must ride on the response's first byte, so this response
// is sent directly with sendmsg(), once every earlier response has left.
static int
conn_send_fds(struct conn *conn, const struct gr_api_response *hdr, const struct api_out *out) {
	struct evbuffer *output = conn_output(conn);
	size_t len = sizeof(*hdr) + out->len;
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
			out->n_fds,
			queued
		);
		return -EBUSY;
	}
	msg = malloc(len);
	if (msg == NULL) {
		conn_close(conn, "out of memory for a response with fds");
		return -ENOMEM;
	}
	memcpy(msg, hdr, sizeof(*hdr));
	if (out->len > 0)
		memcpy(msg + sizeof(*hdr), out->payload, out->len);

	sent = shmchan_send_fds(conn->ctx.sock_fd, msg, len, out->fds, out->n_fds);
	if (sent < 0) {
		conn_close(conn, "passing %u fds: %s", out->n_fds, strerror((int)-sent));
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

// The socket api_transport. Main thread, under the handler lock.
static int sock_send(struct api_ctx *ctx, uint32_t for_id, const struct api_out *out) {
	struct gr_api_response hdr = {
		.for_id = for_id,
		.status = out->status,
		.payload_len = out->len,
	};
	struct conn *conn = ctx->priv;
	int ret;

	if (conn->state == CONN_CLOSING || conn->state == CONN_CLOSED)
		return -EPIPE;
	if (out->n_fds > 0)
		return conn_send_fds(conn, &hdr, out);
	ret = conn_queue(conn, &hdr, out->payload);
	if (ret < 0)
		conn_close(conn, "out of memory queueing a response");
	return ret;
}

static const struct api_transport sock_transport = {
	.name = "socket",
	.send = sock_send,
	.events_open = sock_events_open,
};

static void sock_on_accept(
	struct evconnlistener *listener,
	evutil_socket_t fd,
	struct sockaddr *addr,
	int addr_len,
	void *arg
) {
	struct ucred cred = {.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1};
	socklen_t cred_len = sizeof(cred);
	struct conn *conn;

	(void)listener;
	(void)addr;
	(void)addr_len;
	(void)arg;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) < 0)
		LOG(WARNING, "SO_PEERCRED: %s", strerror(errno));
	if (server.n_conns >= SOCK_MAX_CLIENTS) {
		LOG(WARNING,
		    "refusing client pid %d: already %d clients",
		    (int)cred.pid,
		    SOCK_MAX_CLIENTS);
		close(fd);
		return;
	}

	conn = calloc(1, sizeof(*conn));
	if (conn == NULL)
		goto fail;
	conn->bev = bufferevent_socket_new(server.base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (conn->bev == NULL)
		goto fail;
	conn->stall_timer = evtimer_new(server.base, conn_on_stall_timer, conn);
	conn->staged = evbuffer_new();
	if (conn->stall_timer == NULL || conn->staged == NULL) {
		if (conn->stall_timer != NULL)
			event_free(conn->stall_timer);
		if (conn->staged != NULL)
			evbuffer_free(conn->staged);
		bufferevent_free(conn->bev);
		free(conn);
		LOG(ERR, "client pid %d: out of memory", (int)cred.pid);
		return;
	}
	conn->state = CONN_READ_HEADER;
	conn->ctx = (struct api_ctx){
		.transport = &sock_transport,
		.priv = conn,
		.peer_pid = cred.pid,
		.peer_uid = cred.uid,
		.peer_gid = cred.gid,
		.sock_fd = fd,
	};
	bufferevent_setcb(conn->bev, conn_on_read, conn_on_write, conn_on_event, conn);
	bufferevent_set_max_single_read(conn->bev, SOCK_READ_HIGH);
	bufferevent_set_max_single_write(conn->bev, SOCK_READ_HIGH);
	conn_set_read_watermark(conn);
	bufferevent_enable(conn->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&server.conns, conn, next);
	server.n_conns++;
	LOG(INFO,
	    "client connected: pid %d uid %d gid %d",
	    (int)cred.pid,
	    (int)cred.uid,
	    (int)cred.gid);
	return;
fail:
	LOG(ERR, "client pid %d: out of memory", (int)cred.pid);
	free(conn);
	close(fd);
}

static void sock_on_accept_retry(evutil_socket_t fd, short what, void *arg) {
	(void)fd;
	(void)what;
	(void)arg;
	evconnlistener_enable(server.listener);
}

static void sock_on_accept_error(struct evconnlistener *listener, void *arg) {
	struct timeval retry = {.tv_usec = SOCK_ACCEPT_RETRY_MS * 1000};

	(void)arg;
	LOG(ERR,
	    "accept: %s; retrying in %d ms",
	    strerror(EVUTIL_SOCKET_ERROR()),
	    SOCK_ACCEPT_RETRY_MS);
	evconnlistener_disable(listener);
	evtimer_add(server.accept_retry, &retry);
}

// Remove path if it is a socket nobody listens on. Refuse if a daemon
// answers there or if it is not a socket.
static int sock_remove_stale(const struct sockaddr_un *addr) {
	struct stat st;
	int fd, err;

	if (lstat(addr->sun_path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		err = errno;
		LOG(ERR, "%s: %s", addr->sun_path, strerror(err));
		return -err;
	}
	if (!S_ISSOCK(st.st_mode)) {
		LOG(ERR, "%s exists and is not a socket; not removing it", addr->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = errno;
		LOG(ERR, "socket: %s", strerror(err));
		return -err;
	}
	// EAGAIN: a listener whose backlog is full, so someone is there.
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 || errno == EAGAIN) {
		close(fd);
		LOG(ERR,
		    "another daemon answers on %s; stop it or choose another socket path (-s)",
		    addr->sun_path);
		return -EADDRINUSE;
	}
	err = errno;
	close(fd);
	if (err != ECONNREFUSED) {
		LOG(ERR, "probing %s: %s", addr->sun_path, strerror(err));
		return -err;
	}
	if (unlink(addr->sun_path) < 0 && errno != ENOENT) {
		err = errno;
		LOG(ERR, "removing stale socket %s: %s", addr->sun_path, strerror(err));
		return -err;
	}
	LOG(INFO, "removed stale socket %s", addr->sun_path);
	return 0;
}

static int sock_path_check(const char *path, struct sockaddr_un *addr) {
	if (path[0] == '\0' || path[0] == '@') {
		LOG(ERR, "socket path '%s': abstract or empty paths are not allowed", path);
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(addr->sun_path)) {
		LOG(ERR,
		    "socket path '%s' is longer than %zu bytes",
		    path,
		    sizeof(addr->sun_path) - 1);
		return -EINVAL;
	}
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	memcpy(addr->sun_path, path, strlen(path) + 1);
	return 0;
}

// bind, chmod, chown, in that order: the socket accepts no connection
// before listen(), so no client ever sees the umask's permissions.
static int sock_bind(int fd, const struct sockaddr_un *addr, mode_t mode, gid_t gid) {
	struct stat st;
	int err;

	if (bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
		err = errno;
		LOG(ERR, "bind %s: %s", addr->sun_path, strerror(err));
		return -err;
	}
	server.bound = true;
	if (stat(addr->sun_path, &st) < 0) {
		err = errno;
		LOG(ERR, "stat %s: %s", addr->sun_path, strerror(err));
		return -err;
	}
	server.dev = st.st_dev;
	server.ino = st.st_ino;
	if (chmod(addr->sun_path, mode) < 0) {
		err = errno;
		LOG(ERR, "chmod %s %04o: %s", addr->sun_path, (unsigned)mode, strerror(err));
		return -err;
	}
	if (gid != (gid_t)-1 && chown(addr->sun_path, (uid_t)-1, gid) < 0) {
		err = errno;
		LOG(ERR, "chown %s to group %d: %s", addr->sun_path, (int)gid, strerror(err));
		return -err;
	}
	return 0;
}

int sock_server_init(struct event_base *base, const char *path, mode_t mode, gid_t gid) {
	struct sockaddr_un addr;
	int fd, ret;

	ret = sock_path_check(path, &addr);
	if (ret < 0)
		return ret;
	ret = sock_remove_stale(&addr);
	if (ret < 0)
		return ret;
	// A write to a client that vanished must fail with EPIPE, not kill the
	// daemon.
	signal(SIGPIPE, SIG_IGN);

	server.base = base;
	memcpy(server.path, addr.sun_path, sizeof(server.path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		LOG(ERR, "socket: %s", strerror(errno));
		return ret;
	}
	ret = sock_bind(fd, &addr, mode, gid);
	if (ret < 0)
		goto fail;
	if (listen(fd, SOMAXCONN) < 0) {
		ret = -errno;
		LOG(ERR, "listen %s: %s", path, strerror(errno));
		goto fail;
	}
	server.accept_retry = evtimer_new(base, sock_on_accept_retry, NULL);
	if (server.accept_retry == NULL) {
		ret = -ENOMEM;
		LOG(ERR, "out of memory");
		goto fail;
	}
	// Backlog 0: the socket is listening already.
	server.listener = evconnlistener_new(
		base,
		sock_on_accept,
		NULL,
		LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
		0,
		fd
	);
	if (server.listener == NULL) {
		ret = -ENOMEM;
		LOG(ERR, "out of memory");
		goto fail;
	}
	evconnlistener_set_error_cb(server.listener, sock_on_accept_error);
	LOG(INFO, "listening on %s, mode %04o", path, (unsigned)mode);
	return 0;
fail:
	close(fd);
	sock_server_fini();
	return ret;
}

void sock_server_fini(void) {
	struct stat st;
	struct conn *conn;

	if (server.listener != NULL) {
		evconnlistener_free(server.listener);
		server.listener = NULL;
	}
	if (server.accept_retry != NULL) {
		event_free(server.accept_retry);
		server.accept_retry = NULL;
	}
	while ((conn = TAILQ_FIRST(&server.conns)) != NULL)
		conn_close(conn, "daemon shutting down");
	// Leave the file alone if another daemon replaced it meanwhile.
	if (server.bound && stat(server.path, &st) == 0 && st.st_dev == server.dev &&
	    st.st_ino == server.ino)
		unlink(server.path);
	server.bound = false;
}
