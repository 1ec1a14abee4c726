// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The connections of the Unix stream socket server: their lifetime, their
// input, serving their requests, and their output. Main thread only: the
// listener, every connection and every response sent on a socket live on
// the event loop. The connection table is walked on any thread too
// (sock_clients_walk()).
//
// The other files of the socket server: what handlers send, and the events
// (sock_transport.c); the admission of a connection, and the refusals
// (sock_admit.c); the listening socket and its accept loop (sock_listen.c).
// Serving a connection, from its read through the dispatch to the write of
// its batch's responses, stays in this file, so that the compiler inlines
// what it calls per request: keep it so. (A handler's send reaches
// sock_send() through the transport's pointer, never inlined, and
// sock_send() inlines what it calls in sock_transport.c.)
//
// A connection is a small state machine:
//
//   READ_HEADER --12 bytes--> READ_PAYLOAD --payload_len bytes, dispatch--> READ_HEADER
//   READ_* --oversized request, or EOF with output queued--> CLOSING --output flushed--> CLOSED
//   any state --socket error, EOF, stall, send failure, shutdown--> CLOSED
//
// Reading: each time the socket is readable, one recv() into the
// connection's own input buffer, of at most SOCK_READ_TURN bytes or what the
// request being read still misses, then the whole requests in it are served
// in a turn. A turn is bounded by the work it causes, not by the bytes it
// read: it ends once its requests produced SOCK_TURN_RESPONSES responses or
// SOCK_TURN_BYTES bytes of them (a request that streams hundreds of
// responses ends it alone), or once the loop was told to stop. The requests
// left in the input then wait, with the socket no longer read, on the list
// of turns due, whose timer gives each its next turn on the loop's next
// iteration, after every connection that became readable meanwhile
// (libevent runs the timers that expired after the I/O events it polled).
// So a client that keeps sending, however expensive its requests, delays
// another by one bounded turn, and a stop waits for at most one turn of each
// connection served before the loop sees it.
//
// The input is served through a read offset; the part of a request left
// over is moved to the front once, before the next read, and a misaligned
// payload is realigned by moving itself alone: the main thread,
// which serves every socket client, spends on a client's input time linear
// in its bytes, whatever the client makes them look like. The daemon reads
// the socket itself, one recv() per readable socket: libevent's own reads
// (evbuffer_read()) would ask the kernel how much is there, FIONREAD,
// before each read, one more system call per request.
//
// Writing: everything sent to a client goes through conn_write()
// (sock_transport.c). The responses to the requests of one turn are staged,
// each header and payload in one contiguous piece, and
// written to the socket together once the batch is served, straight when
// nothing older is queued; outside a batch, a piece is written at once.
// Whatever the socket does not take goes to the connection's output, which
// its write event writes when the socket can take more. Every write is a
// sendmsg() with MSG_NOSIGNAL (conn_send_buf()): a client that closed its
// end makes it fail with EPIPE, never raise SIGPIPE, whose default action
// would end the application the server runs in (the library installs no
// handler for it, and libevent's own writes would raise it). So a client costs one
// epoll_wait(), one read and one write per batch, with no write event armed
// unless the socket is full.
//
// Output policy: when a client's queued output passes SOCK_OUTPUT_HIGH, the
// daemon stops reading its requests until the output drains to
// SOCK_OUTPUT_LOW; a client still above SOCK_OUTPUT_HIGH after
// SOCK_OUTPUT_STALL_SEC is disconnected. So the backlog of a client is
// bounded by SOCK_OUTPUT_HIGH plus the responses of one request (handlers do
// bounded work).

#include "sock_priv.h"
#include "api.h"
#include "event.h"
#include "stream.h"
#include "fd_budget.h"
#include "config.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

// A read takes at most this much, or what the request being read still
// misses if that is more: the input a connection holds at once. What its
// turn serves of it is bounded by the work the requests cause
// (SOCK_TURN_RESPONSES, sock.h), not by this.
#define SOCK_READ_TURN SOCK_READ_INITIAL
// Pieces of the output one sendmsg() takes at most: a batch of responses is
// staged in one or two pieces, events and a stream in one each.
#define SOCK_WRITE_IOVS 64

struct event_base *sock_base;
struct conn_list conns = TAILQ_HEAD_INITIALIZER(conns);
unsigned n_conns;
pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;

// The connections whose turn ended on its budget with requests left, in the
// order their turns ended, and the timer of their next turns. A pass of the
// timer gives one turn to each connection that was on the list when it
// began (turn_pass below the pass's number); one that ends this turn on its
// budget again goes back to the end of the list, for the next pass.
static struct {
	TAILQ_HEAD(, conn) due;
	struct event *timer;
	uint64_t pass;
} turns = {.due = TAILQ_HEAD_INITIALIZER(turns.due)};

// conns_close() runs: every connection ends for the daemon's stop.
static bool conns_closing;

static void conn_serve(struct conn *conn);
static void conn_arm_stall_timer(struct conn *conn);

// Write as much of buf as the socket takes now, in one sendmsg() of at most
// SOCK_WRITE_IOVS pieces and SOCK_READ_HIGH bytes, and drain that from buf.
// MSG_NOSIGNAL (see the top of the file); MSG_DONTWAIT: never blocks,
// whatever the socket's flags. Returns the bytes written, -EAGAIN (the
// socket is full) or another -errno.
ssize_t conn_send_buf(struct conn *conn, struct evbuffer *buf) {
	struct evbuffer_iovec vec[SOCK_WRITE_IOVS];
	struct iovec iov[SOCK_WRITE_IOVS];
	struct msghdr msg = {.msg_iov = iov};
	int n = evbuffer_peek(buf, SOCK_READ_HIGH, NULL, vec, SOCK_WRITE_IOVS);
	ssize_t sent;

	if (n <= 0)
		return 0;
	if (n > SOCK_WRITE_IOVS)
		n = SOCK_WRITE_IOVS; // the rest waits for the next write
	for (int i = 0; i < n; i++)
		iov[i] = (struct iovec){.iov_base = vec[i].iov_base, .iov_len = vec[i].iov_len};
	msg.msg_iovlen = (size_t)n;
	sent = sendmsg(conn->ctx.sock_fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (sent < 0)
		return errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -errno;
	evbuffer_drain(buf, (size_t)sent);
	return sent;
}

// Hand the staged responses to the socket: straight to it if nothing older
// is queued, the rest to the output. A failed write leaves everything to
// the output, whose write event then reports the error (never here: the
// caller may be a handler's send, which must not see its connection freed).
void conn_flush_staged(struct conn *conn) {
	struct evbuffer *output = conn_output(conn);

	if (evbuffer_get_length(conn->staged) == 0)
		return;
	if (evbuffer_get_length(output) == 0)
		(void)conn_send_buf(conn, conn->staged);
	// Moves the chains without copying; cannot fail, as neither buffer
	// is frozen at the end it touches.
	evbuffer_add_buffer(output, conn->staged);
}

// The connection's turn came (or it is freed): off the list of turns due.
static void conn_turn_taken(struct conn *conn) {
	if (!conn->turn_due)
		return;
	TAILQ_REMOVE(&turns.due, conn, turn_next);
	conn->turn_due = false;
}

// Never under the handler lock: a send that fails closes the connection
// inside conn_serve(), which frees it after the dispatch.
void conn_free(struct conn *conn) {
	conn_turn_taken(conn);
	conn_replies_forget(conn);
	// A stream left unfinished: its producer's state goes.
	api_stream_close(&conn->ctx);
	api_faults_log(&conn->ctx, true);
	pthread_mutex_lock(&conns_lock);
	event_sub_free(conn->ctx.events);
	TAILQ_REMOVE(&conns, conn, next);
	n_conns--;
	pthread_mutex_unlock(&conns_lock);
	conn_input_fini(conn);
	event_free(conn->stall_timer);
	event_free(conn->write_event);
	evbuffer_free(conn->output);
	evbuffer_free(conn->staged);
	bufferevent_free(conn->bev);
	fd_budget_give(1);
	free(conn);
}

// The socket is the lease of a channel attached over it: end it once, as
// soon as the connection stops serving.
static void conn_end_lease(struct conn *conn) {
	if (conn->lease_ended)
		return;
	// A walker that saw the lease still held reads the channel while it
	// holds the lock; once the flag is set no walker reaches the channel.
	pthread_mutex_lock(&conns_lock);
	conn->lease_ended = true;
	pthread_mutex_unlock(&conns_lock);
	if (conn->ctx.lease_lost != NULL)
		conn->ctx.lease_lost(conn->ctx.lease_arg, conn->peer_closed);
}

// Whether a line about the end of conn is logged: yes if its lines are; for
// a connection past its peer's rate limit (ctx.log_quiet), not for a
// routine end (its client closed it, or the daemon stops), and for a fault
// of its client only within its peer's budget of those (sock_log.c), once
// per connection.
static bool conn_end_logged(struct conn *conn) {
	if (!conn->ctx.log_quiet)
		return true;
	if (conn->peer_closed || conns_closing || conn->fault_judged)
		return false;
	conn->fault_judged = true;
	if (!sock_log_fault(conn->ctx.peer_uid))
		return false;
	conn->ctx.log_quiet = false;
	return true;
}

void conn_close(struct conn *conn, const char *fmt, ...) {
	char reason[128];
	va_list ap;

	if (conn->state == CONN_CLOSED)
		return;
	if (conn_end_logged(conn)) {
		va_start(ap, fmt);
		vsnprintf(reason, sizeof(reason), fmt, ap);
		va_end(ap);
		LOG(INFO, "client pid %d: closed: %s", (int)conn->ctx.peer_pid, reason);
	}

	conn->state = CONN_CLOSED;
	conn_reading(conn, false);
	event_del(conn->write_event);
	conn->writing = false;
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
	if (conn_end_logged(conn))
		LOG(INFO, "client pid %d: closing after flush: %s", (int)conn->ctx.peer_pid, reason
		);
	conn->state = CONN_CLOSING;
	conn_reading(conn, false);
	conn_end_lease(conn);
	// The write callback fires once the output is empty.
	conn->write_low = 0;
	conn_arm_stall_timer(conn);
}

static void conn_pause(struct conn *conn) {
	LOG(DEBUG,
	    "client pid %d: %zu bytes of output queued, pausing its requests",
	    (int)conn->ctx.peer_pid,
	    conn_pending(conn));
	conn->paused = true;
	conn_reading(conn, false);
	// The write callback fires once the output drains to the low mark.
	conn->write_low = SOCK_OUTPUT_LOW;
	conn_arm_stall_timer(conn);
}

static void conn_resume(struct conn *conn) {
	conn->paused = false;
	event_del(conn->stall_timer);
	conn->write_low = 0;
	conn_reading(conn, true);
	// Requests already in the input get no new read callback.
	conn_serve(conn);
}

// The turn of conn ended on its budget with input left: its next one comes
// on the next pass of the turns due, after every connection ready before.
// Its socket is not read meanwhile: its input holds requests already.
static void conn_turn_defer(struct conn *conn) {
	static const struct timeval next_iteration = {0};

	if (conn->turn_due)
		return;
	conn->turn_due = true;
	conn->turn_pass = turns.pass;
	TAILQ_INSERT_TAIL(&turns.due, conn, turn_next);
	if (!evtimer_pending(turns.timer, NULL))
		evtimer_add(turns.timer, &next_iteration);
}

// A pass of the turns due: one turn to each connection on the list when it
// began, unless the loop was told to stop meanwhile (then the rest wait for
// the loop's next run, if it has one).
static void sock_turns_on_timer(evutil_socket_t fd, short what, void *arg) {
	uint64_t pass = ++turns.pass;
	struct conn *conn;

	(void)fd;
	(void)what;
	(void)arg;
	while ((conn = TAILQ_FIRST(&turns.due)) != NULL && conn->turn_pass < pass &&
	       !event_base_got_break(sock_base))
		conn_serve(conn);
	if (!TAILQ_EMPTY(&turns.due) && !evtimer_pending(turns.timer, NULL)) {
		static const struct timeval next_iteration = {0};
		evtimer_add(turns.timer, &next_iteration);
	}
}

int sock_turns_init(void) {
	turns.timer = evtimer_new(sock_base, sock_turns_on_timer, NULL);
	return turns.timer != NULL ? 0 : -ENOMEM;
}

void sock_turns_fini(void) {
	if (turns.timer != NULL) {
		event_free(turns.timer);
		turns.timer = NULL;
	}
}

// Take the next header out of the input. Returns false if the connection
// cannot go on to read a payload now.
static bool conn_read_header(struct conn *conn) {
	if (conn_input_len(conn) < sizeof(conn->req))
		return false;
	conn_input_take(conn, &conn->req, sizeof(conn->req));
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

// Whether the turn that began with the connection's counters at responses
// and bytes, and served requests, has done its work.
static bool
conn_turn_spent(const struct conn *conn, uint64_t responses, uint64_t bytes, unsigned requests) {
	uint64_t produced = conn->counters.responses - responses;

	if (produced < requests)
		produced = requests;
	return produced >= SOCK_TURN_RESPONSES ||
	       conn->counters.resp_bytes - bytes >= SOCK_TURN_BYTES ||
	       event_base_got_break(sock_base);
}

// The connection's stream has more: hand what its turn produced to the
// socket. Its next turn comes once the socket took all of it (paused until
// then: the server holds one turn of a stream at most), else at the next
// pass of the turns due, after every other connection ready. Its requests
// are not read meanwhile: they wait for the stream's end.
static void conn_stream_wait(struct conn *conn) {
	conn_flush_staged(conn);
	conn_reading(conn, false);
	if (evbuffer_get_length(conn_output(conn)) > 0) {
		conn->paused = true;
		conn->write_low = 0;
		conn_arm_stall_timer(conn);
	} else {
		conn_turn_defer(conn);
	}
}

// A turn of the connection's stream. Returns true if it has ended (the
// connection's requests are served again), false while it has more or the
// connection closed.
static bool conn_stream_serve(struct conn *conn) {
	api_lock();
	// A send that failed has closed the connection.
	(void)api_stream_turn_locked(&conn->ctx);
	api_unlock();
	api_faults_log(&conn->ctx, false);
	if (conn->state == CONN_CLOSED)
		return false;
	if (!api_stream_active(&conn->ctx))
		return true;
	conn_stream_wait(conn);
	return false;
}

// A turn: serve the whole requests in the input, in order, until the input
// runs dry, the output passes its bound, the connection stops reading, or
// the turn has done its work (conn_turn_spent()): then the rest waits for
// its next turn (conn_turn_defer()).
static void conn_serve(struct conn *conn) {
	uint64_t responses = conn->counters.responses, bytes = conn->counters.resp_bytes;
	unsigned requests = 0;
	uint32_t len;
	void *payload;

	conn->serving = true;
	conn_turn_taken(conn);
	// A stream being produced: its turn comes first, and the requests
	// only after its end.
	if (api_stream_active(&conn->ctx) &&
	    (conn->paused || conn->state != CONN_READ_HEADER || !conn_stream_serve(conn)))
		goto served;
	while (!conn->paused &&
	       (conn->state == CONN_READ_HEADER || conn->state == CONN_READ_PAYLOAD)) {
		if (requests > 0 && conn_input_len(conn) > 0 &&
		    conn_turn_spent(conn, responses, bytes, requests)) {
			conn_turn_defer(conn);
			break;
		}
		if (conn->state == CONN_READ_HEADER && !conn_read_header(conn))
			break;
		len = conn->req.payload_len;
		if (conn_input_len(conn) < len && conn_input_want(conn, len) < 0) {
			conn_close(conn, "out of memory for a %u-byte request", len);
			break;
		}
		if (conn_input_len(conn) < len)
			break;
		payload = NULL;
		if (len > 0) {
			payload = conn_input_peek(conn, len);
			if (payload == NULL) {
				conn_close(conn, "out of memory for a %u-byte payload", len);
				break;
			}
		}
		COUNTER_ADD(conn->counters.requests, 1);
		COUNTER_ADD(conn->counters.req_bytes, sizeof(conn->req) + len);
		requests++;
		// A failed send has closed the connection already.
		api_dispatch(&conn->ctx, &conn->req, payload);
		conn_input_drain(conn, len);
		if (conn->state != CONN_READ_PAYLOAD)
			break;
		conn->state = CONN_READ_HEADER;
		// Its handler started a stream, whose first turn ran.
		if (api_stream_active(&conn->ctx)) {
			conn_stream_wait(conn);
			break;
		}
		if (conn_pending(conn) > SOCK_OUTPUT_HIGH) {
			// Pause only on what the socket will not take now: the
			// write callback that resumes fires on the output only.
			conn_flush_staged(conn);
			if (evbuffer_get_length(conn_output(conn)) > SOCK_OUTPUT_HIGH)
				conn_pause(conn);
		}
	}
served:
	conn->serving = false;
	if (conn->state != CONN_CLOSED)
		conn_flush_staged(conn);

	if (conn->state == CONN_CLOSED) {
		conn_free(conn);
		return;
	}
	if (conn->state == CONN_CLOSING || conn->paused || api_stream_active(&conn->ctx))
		return;
	// Read again once no turn is due: the input holds no whole request.
	conn_reading(conn, !conn->turn_due);
}

// The client closed its end: at a request's boundary, a normal disconnect
// (its last responses still go out); in the middle of one, it vanished.
static void conn_on_eof(struct conn *conn) {
	conn->peer_closed = true;
	if (conn->state == CONN_READ_PAYLOAD || conn_input_len(conn) > 0)
		conn_close(conn, "vanished in the middle of a request");
	else
		conn_close_after_flush(conn, "disconnected");
}

// What the next read may take: SOCK_READ_TURN, or the rest of the payload
// being read if that is more, within the buffer's room.
static size_t conn_read_size(const struct conn *conn) {
	size_t room = conn->in_size - conn->in_end, size = SOCK_READ_TURN;

	if (conn->state == CONN_READ_PAYLOAD && conn->req.payload_len > conn_input_len(conn) &&
	    conn->req.payload_len - conn_input_len(conn) > size)
		size = conn->req.payload_len - conn_input_len(conn);
	return size < room ? size : room;
}

// One read per loop turn (conn_read_size()), then serve: a client that keeps
// sending waits for the next turn, with every other ready connection, to be
// read again. MSG_DONTWAIT: the socket's O_NONBLOCK is libevent's to keep,
// and a read must never block.
void conn_on_readable(evutil_socket_t fd, short what, void *arg) {
	struct conn *conn = arg;
	size_t size;
	ssize_t n;

	(void)what;
	conn_input_compact(conn);
	size = conn_read_size(conn);
	if (size == 0) {
		// Reading stops while a full buffer is served (paused, closing),
		// and conn_input_want() leaves room otherwise.
		conn_close(conn, "input buffer full with no request to serve");
		return;
	}
	n = recv(fd, conn->in + conn->in_end, size, MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			conn->peer_closed = true;
			conn_close(conn, "socket error: %s", strerror(errno));
		}
		return;
	}
	if (n == 0) {
		conn_on_eof(conn);
		return;
	}
	conn->in_end += (size_t)n;
	conn_serve(conn);
}

// The output drained to write_low.
static void conn_on_write(struct conn *conn) {
	size_t queued = evbuffer_get_length(conn_output(conn));

	if (conn->ctx.events != NULL && event_sub_pending(conn->ctx.events)) {
		conn_events_drain(conn);
		queued = evbuffer_get_length(conn_output(conn));
	}

	if (conn->state == CONN_CLOSING && queued == 0)
		conn_close(conn, "last responses flushed");
	else if (conn->paused && queued <= SOCK_OUTPUT_LOW)
		conn_resume(conn);
}

static void conn_on_event(struct bufferevent *bev, short events, void *arg) {
	struct conn *conn = arg;

	(void)bev;
	if (events & BEV_EVENT_ERROR) {
		conn->peer_closed = true;
		conn_close(conn, "socket error: %s", strerror(EVUTIL_SOCKET_ERROR()));
	} else if (events & BEV_EVENT_EOF)
		conn_on_eof(conn);
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
	} else if (conn->paused && api_stream_active(&conn->ctx)) {
		// Its stream's turn was not taken whole for that long: it stopped
		// reading, and holds the producer's state.
		conn_close(conn, "its stream was not read for %d s", SOCK_OUTPUT_STALL_SEC);
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

// The socket can take more: write the output, and say when it drained to
// write_low (conn_on_write()). Stops once the output is empty.
static void conn_on_writable(evutil_socket_t fd, short what, void *arg) {
	struct conn *conn = arg;
	ssize_t ret;

	(void)fd;
	(void)what;
	ret = conn_send_buf(conn, conn_output(conn));
	if (ret < 0 && ret != -EAGAIN) {
		conn->peer_closed = true;
		conn_close(conn, "socket error: %s", strerror((int)-ret));
		return;
	}
	if (evbuffer_get_length(conn_output(conn)) == 0) {
		event_del(conn->write_event);
		conn->writing = false;
	}
	if (ret > 0 && evbuffer_get_length(conn_output(conn)) <= conn->write_low)
		conn_on_write(conn);
}

// The output changed: anything added is written once the socket can take
// it (the write event stays until the output is empty).
static void
conn_output_changed(struct evbuffer *output, const struct evbuffer_cb_info *info, void *arg) {
	struct conn *conn = arg;

	(void)output;
	if (info->n_added == 0 || conn->writing || conn->state == CONN_CLOSED)
		return;
	event_add(conn->write_event, NULL);
	conn->writing = true;
}

void conn_open(evutil_socket_t fd, const struct ucred *cred, uint64_t start) {
	struct conn *conn;

	conn = calloc(1, sizeof(*conn));
	if (conn == NULL)
		goto fail;
	conn->bev = bufferevent_socket_new(sock_base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (conn->bev == NULL)
		goto fail;
	conn->stall_timer = evtimer_new(sock_base, conn_on_stall_timer, conn);
	conn->write_event = event_new(sock_base, fd, EV_WRITE | EV_PERSIST, conn_on_writable, conn);
	conn->staged = evbuffer_new();
	conn->output = evbuffer_new();
	conn->state = CONN_READ_HEADER;
	conn->ctx.sock_fd = fd;
	if (conn->stall_timer == NULL || conn->write_event == NULL || conn->staged == NULL ||
	    conn->output == NULL ||
	    evbuffer_add_cb(conn->output, conn_output_changed, conn) == NULL ||
	    conn_input_init(conn) < 0) {
		conn_input_fini(conn);
		if (conn->stall_timer != NULL)
			event_free(conn->stall_timer);
		if (conn->write_event != NULL)
			event_free(conn->write_event);
		if (conn->staged != NULL)
			evbuffer_free(conn->staged);
		if (conn->output != NULL)
			evbuffer_free(conn->output);
		bufferevent_free(conn->bev);
		free(conn);
		LOG(ERR, "client pid %d: out of memory", (int)cred->pid);
		return;
	}
	conn->accepted_ns = server_monotonic_ns();
	conn->peer_start = start;
	conn->ctx = (struct gr_api_ctx){
		.transport = &sock_transport,
		.priv = conn,
		.peer_pid = cred->pid,
		.peer_uid = cred->uid,
		.peer_gid = cred->gid,
		.sock_fd = fd,
		.log_quiet = !sock_log_admit(cred->uid, cred->pid),
	};
	bufferevent_setcb(conn->bev, NULL, NULL, conn_on_event, conn);
	conn_reading(conn, true);
	pthread_mutex_lock(&conns_lock);
	TAILQ_INSERT_TAIL(&conns, conn, next);
	n_conns++;
	pthread_mutex_unlock(&conns_lock);
	fd_budget_take(1);
	if (!conn->ctx.log_quiet)
		LOG(INFO,
		    "client connected: pid %d uid %d gid %d",
		    (int)cred->pid,
		    (int)cred->uid,
		    (int)cred->gid);
	return;
fail:
	LOG(ERR, "client pid %d: out of memory", (int)cred->pid);
	free(conn);
	close(fd);
}

void conns_close(const char *reason) {
	struct conn *conn;

	conns_closing = true;
	while ((conn = TAILQ_FIRST(&conns)) != NULL)
		conn_close(conn, "%s", reason);
	conns_closing = false;
}

unsigned sock_clients_walk(sock_client_walk_fn fn, void *arg) {
	struct sock_conn_counters counters;
	const struct conn *conn;
	unsigned n = 0;
	uint64_t now;

	now = server_monotonic_ns();
	pthread_mutex_lock(&conns_lock);
	TAILQ_FOREACH (conn, &conns, next) {
		counters.requests = __atomic_load_n(&conn->counters.requests, __ATOMIC_RELAXED);
		counters.req_bytes = __atomic_load_n(&conn->counters.req_bytes, __ATOMIC_RELAXED);
		counters.responses = __atomic_load_n(&conn->counters.responses, __ATOMIC_RELAXED);
		counters.resp_bytes = __atomic_load_n(&conn->counters.resp_bytes, __ATOMIC_RELAXED);
		fn(&conn->ctx, !conn->lease_ended, &counters, now - conn->accepted_ns, arg);
		n++;
	}
	pthread_mutex_unlock(&conns_lock);
	return n;
}
