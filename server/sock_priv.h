// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What the files of the socket server share: its connections and their
// table (sock.c), a connection's input (sock_input.c), the socket
// api_transport (sock_transport.c), admission and refusals (sock_admit.c),
// the listening socket and its accept loop (sock_listen.c).
//
// Threads: the main thread alone, except where a comment says otherwise
// (the connection table's lock and each connection's counters, which
// sock_clients_walk() reads on any thread).

#pragma once

#include "api.h"
#include "sock.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

// Input kept at most: one maximal request. Reading stops above it until
// the request is served. Also the most read or written in one system call.
#define SOCK_READ_HIGH (sizeof(struct gr_api_request) + GR_API_MAX_MSG_LEN)
// A connection's own input buffer starts this large: a batch of small
// requests (32 pipelined GR_PING2 take 2.4 KiB). It grows to hold a larger
// request whole, up to SOCK_READ_HIGH, and keeps that size.
#define SOCK_READ_INITIAL (16u << 10)

enum conn_state {
	CONN_READ_HEADER,
	CONN_READ_PAYLOAD,
	CONN_CLOSING, // reads no more requests; closes once its output is flushed
	CONN_CLOSED, // freed as soon as conn_serve() is off the stack
};

// One client. Main thread only.
struct conn {
	TAILQ_ENTRY(conn) next;
	struct gr_api_ctx ctx;
	// Owns the socket (closes it when freed) and its queued output.
	struct bufferevent *bev;
	// Responses of the batch being served, not yet handed to the socket.
	// Empty whenever conn_serve() is not on the stack.
	struct evbuffer *staged;
	// What the socket did not take yet, and the event that writes it once
	// the socket can take more (added while output holds something).
	struct evbuffer *output;
	struct event *write_event;
	bool writing; // write_event is added
	// conn_on_write() runs once output drains to this: 0, or SOCK_OUTPUT_LOW
	// while paused.
	size_t write_low;
	struct event *stall_timer; // paused or closing for too long
	enum conn_state state;
	struct gr_api_request req; // header of the request being read
	struct event *read_event; // the socket is readable: conn_on_readable()
	// Bytes read and not yet served: in[in_start, in_end) of in_size.
	char *in;
	size_t in_size;
	size_t in_start;
	size_t in_end;
	bool reading; // read_event is added
	bool paused; // output above SOCK_OUTPUT_HIGH: requests not read
	// Its turn ended on its budget with input left: it waits on the list
	// of turns due (sock.c) and reads nothing until that turn.
	bool turn_due;
	uint64_t turn_pass; // the pass of the turns due it waits for
	TAILQ_ENTRY(conn) turn_next;
	bool serving; // conn_serve() is on the stack: it frees a CLOSED conn
	// On the list of deferred replies due (sock_replies.c, its lock).
	bool replies_due;
	TAILQ_ENTRY(conn) replies_next;
	bool lease_ended; // ctx.lease_lost was called (written under conns_lock)
	bool peer_closed; // the client closed its end: EOF, or a socket error
	// ctx.log_quiet: whether a fault of its client is logged was decided
	// (sock_log_fault()).
	bool fault_judged;
	uint64_t accepted_ns; // setup only
	// Start time of the peer process (proc_start_time(), sock_admit.c), 0
	// if unknown: with its pid, which process connected, even once the pid
	// is reused.
	uint64_t peer_start;
	// Written by the main thread alone, read by sock_clients_walk() on any
	// thread: relaxed atomic stores and loads, no locked instruction.
	struct sock_conn_counters counters;
};

TAILQ_HEAD(conn_list, conn);

// A counter of struct sock_conn_counters, by the main thread (the walk's
// loads on other threads see it whole).
#define COUNTER_ADD(field, n) __atomic_store_n(&(field), (field) + (n), __ATOMIC_RELAXED)

static inline struct evbuffer *conn_output(const struct conn *conn) {
	return conn->output;
}

// Output not yet written to the socket.
static inline size_t conn_pending(const struct conn *conn) {
	return evbuffer_get_length(conn->staged) + evbuffer_get_length(conn_output(conn));
}

// Hidden (the library is built so, but an extern declaration does not say
// it): each file reaches these directly, not through the GOT, as when they
// were the statics of one file.
#pragma GCC visibility push(hidden)

// ---- sock.c ----

// The event loop of the listener and of every connection: set by
// sock_server_init() before the first accept.
extern struct event_base *sock_base;
// The connection table. Only the main thread changes it, always under
// conns_lock, which sock_clients_walk() takes on any thread.
extern struct conn_list conns;
extern unsigned n_conns;
extern pthread_mutex_t conns_lock;

// Write as much of buf as the socket takes now, and drain that from buf.
// Never blocks, never raises SIGPIPE. Returns the bytes written, -EAGAIN
// (the socket is full) or another -errno.
ssize_t conn_send_buf(struct conn *conn, struct evbuffer *buf);

// Hand the staged responses to the socket, the rest to the output. Never
// closes the connection: a failed write shows on the write event.
void conn_flush_staged(struct conn *conn);

// Close now, logging why: drop its subscriptions, end its lease, and free
// it (once conn_serve() is off the stack). Idempotent.
void __attribute__((format(printf, 2, 3))) conn_close(struct conn *conn, const char *fmt, ...);

// The socket of conn is readable: read once, then serve.
void conn_on_readable(evutil_socket_t fd, short what, void *arg);

// Serve a connection the listener accepted and admitted, from a peer of
// these credentials whose process started at start (0: unknown). Logs the
// connection, or why it could not be served (out of memory: fd is closed).
void conn_open(evutil_socket_t fd, const struct ucred *cred, uint64_t start);

// Free a connection closed (CONN_CLOSED) and off the stack of its serve.
void conn_free(struct conn *conn);

// Close every connection (each logs reason), calling each lease_lost.
void conns_close(const char *reason);

// The timer of the turns due, on sock_base. Returns 0 or -ENOMEM (not
// logged: the caller says out of memory).
int sock_turns_init(void);

// Free that timer, once every connection is closed. Idempotent.
void sock_turns_fini(void);

// ---- sock_transport.c ----

// The "socket" api_transport of every connection.
extern const struct api_transport sock_transport;

// Move events from the client's backlog to its output while the output
// holds less than SOCK_EVENT_OUTPUT_MAX. arg: the connection.
void conn_events_drain(void *arg);

// ---- sock_replies.c ----

// The socket transport's deferred_wake (api.h): put the client's
// connection on the list of replies due and wake the loop. Any thread.
void sock_deferred_wake(struct gr_api_ctx *ctx);

// The client of conn is gone: its deferred replies are dropped (the open
// ones will answer -ECONNRESET) and it leaves the list. conn_free().
void conn_replies_forget(struct conn *conn);

// The loop's event of the replies due, on sock_base; from the loop's
// thread. Returns 0 or -errno (not logged: the caller says why).
int sock_replies_init(void);

// Free that event, once every connection is closed. Idempotent.
void sock_replies_fini(void);

// ---- sock_log.c ----

// Whether the lines of a new connection of a peer of uid (and pid) are
// logged: its connect, hello and close, and its channel's attach and
// routine detach. Else they are counted, for a summary per uid.
bool sock_log_admit(uid_t uid, pid_t pid);

// Whether the line of a fault that made the daemon close a connection of
// uid whose lines are not logged is logged all the same.
bool sock_log_fault(uid_t uid);

// The timer of the summaries, on sock_base. Returns 0 or -ENOMEM (not
// logged: the caller says out of memory).
int sock_log_init(void);

// Write the summaries not written yet, and free the timer. Idempotent.
void sock_log_fini(void);

// ---- sock_admit.c ----

// Admit a connection just accepted from a peer of these credentials, or
// refuse it (sock.h). Returns true if it is admitted, with *start set to
// the start time of the peer's process (0 if unknown, or not needed:
// server_conf.max_conn_per_pid is 0); false if it is refused: fd is then
// answered and closed by the refusal, now or later.
bool sock_admit_or_refuse(evutil_socket_t fd, const struct ucred *cred, uint64_t *start);

// The timer of the refusals' rate-limited log, on sock_base. Returns 0 or
// -ENOMEM (not logged: the caller says out of memory).
int sock_refusals_init(void);

// Close the refused connections still waiting for their hello, log the
// refusals not logged yet, and free the timer. Idempotent.
void sock_refusals_fini(void);

#pragma GCC visibility pop

// ---- sock_input.c ----

// The connection's input: set up (0 or -ENOMEM) and freed.
int conn_input_init(struct conn *conn);
void conn_input_fini(struct conn *conn);
// Bytes read and not yet served.
size_t conn_input_len(const struct conn *conn);
// The next len bytes in one piece (realigned for a payload's struct with
// direct reads), NULL if out of memory for it.
void *conn_input_peek(struct conn *conn, size_t len);
// Drop the next len bytes, or copy them to dst first.
void conn_input_drain(struct conn *conn, size_t len);
void conn_input_take(struct conn *conn, void *dst, size_t len);
// The next step needs need bytes in one piece. Returns 0 or -ENOMEM.
int conn_input_want(struct conn *conn, size_t need);
// Start or stop reading the socket.
void conn_reading(struct conn *conn, bool on);
// Before a read: move the input not yet served to the front.
void conn_input_compact(struct conn *conn);
