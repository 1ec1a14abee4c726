// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Handler registry and dispatch of the server. Transport-agnostic: the
// socket server and the channel pollers both feed requests to
// api_dispatch() through a gr_api_ctx, and handlers answer the same way on
// both. The types a handler sees are public (gr_api_server.h).

#pragma once

#include "gr_api_server.h"
#include "log_limit.h"

#include <gr_api.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct event_sub;
struct deferred_client;

// How a transport delivers a response. Called with the handler lock held,
// from the thread that serves the client (main thread for sockets, a poller
// for channels). It copies out->payload before it returns (into the ring,
// the socket's output or a backlog) and never keeps or frees the pointer:
// gr_api_out_borrowed() and gr_api_send() rely on that. Returns 0 or -errno; on
// error the transport closes the client itself.
struct api_transport {
	const char *name; // "socket", "shm"
	int (*send)(struct gr_api_ctx *, uint32_t for_id, const struct gr_api_out *);
	// Make the event subscriber of a client (event.h), served by the
	// client's thread. NULL: the transport carries no event.
	struct event_sub *(*events_open)(struct gr_api_ctx *);
	// Deferred replies (deferred.h) were queued for the client: make the
	// thread that serves it call api_deferred_flush() soon. Any thread,
	// the deferred lock held: must not block nor call into deferred.c.
	void (*deferred_wake)(struct gr_api_ctx *);
	// The transport serves streams produced in turns (stream.h): it calls
	// api_stream_turn_locked() while the client has one, and ends a turn
	// (ctx->stream_full) when it has no room. False: gr_api_stream_start()
	// refuses (a transport of the tests).
	bool streams;
};

// What a client did wrong in a request, or did that deserves a line, which
// it can repeat at will (a log level change, a channel attached and given
// back on one connection). Each is recorded under the handler lock
// (api_fault()) and logged outside it (api_faults_log()), once per
// LOG_LIMIT_INTERVAL_MS per client and kind at most: a flood of such
// requests costs a line a second, not a line (and a syslog() call, under
// the lock every poller waits on) per request.
enum api_fault {
	API_FAULT_BEFORE_HELLO, // args: type
	API_FAULT_UNKNOWN_TYPE, // args: type
	API_FAULT_SHORT_PAYLOAD, // name: the handler; args: payload_len, expected
	API_FAULT_HELLO_VERSION, // args: the client's version, ours
	API_FAULT_HELLO_STRING, // no args: version string not NUL-terminated
	API_FAULT_ATTACH_LAYOUT, // args: the client's layout version, ours
	API_FAULT_ATTACH_BACKINGS, // args: backings asked for, offered
	API_FAULT_LOG_LEVEL, // args: the level asked for
	API_FAULT_LOG_PATTERN, // no args: pattern not NUL-terminated
	API_FAULT_LOG_LEVEL_SET, // text: what changed (a change done)
	API_FAULT_LOG_PACKETS, // no args: GR_LOG_PACKETS_SET, not served
	API_FAULT_SUBSCRIBE_FRAMING, // no args: the other framing while subscribed
	API_FAULT_SUBSCRIBE_LIMIT, // args: the limit (server_conf.event_subs_max)
	API_FAULT_SUBSCRIBE_CHANNEL, // no args: on the socket while a channel is attached
	API_FAULT_ATTACH_SUBSCRIBED, // no args: attach with a subscriber on the socket
	API_FAULT_CHANNEL_ATTACHED, // text: which, how (done)
	API_FAULT_CHANNEL_GIVEN_BACK, // text: which (done)
	API_FAULT_MEMZONES_IN_USE, // args: memzone channels in the pool
	API_FAULT_ATTACH_FDS, // args: descriptors held for clients, the room for this one's
	API_FAULT_TRACE_DENIED, // args: the request type, the client's uid
	API_FAULT_TRACE_SET, // text: what changed (done)
	API_FAULTS,
};

#define API_FAULT_ARGS 2
// Longest text a fault keeps (NUL included): a line about a log pattern
// (63 characters) or a channel, with its numbers.
#define API_FAULT_TEXT_LEN 96

// The faults of one kind not logged yet, and the last one's details.
struct api_fault_note {
	struct log_limit limit;
	bool logged; // a line about this kind came already
	const char *name; // static: a handler's name
	uint32_t args[API_FAULT_ARGS];
	char text[API_FAULT_TEXT_LEN]; // the last one's line (api_fault_text())
};

// Per-client dispatch state. One per socket connection and one per channel.
struct gr_api_ctx {
	const struct api_transport *transport;
	void *priv; // the transport's own client state
	bool hello_done; // GR_HELLO accepted on this client
	uint32_t api_version; // the version of the last accepted GR_HELLO
	struct event_sub *events; // made at the first subscribe, freed with the client
	// Its deferred replies (deferred.h): made at its first gr_api_defer()
	// by its serving thread, under the deferred lock.
	struct deferred_client *deferred;
	bool deferred_closed; // the client is gone (deferred lock)
	bool deferred_now; // the handler running deferred its request
	// Its stream produced in turns (stream.h), NULL if none: its serving
	// thread, under the handler lock (and whoever frees the client).
	struct api_stream *stream;
	bool stream_now; // the handler running started a stream
	bool stream_turn; // the stream's producer runs: gr_api_send() counts
	// The transport has no room for more of the stream now: the turn is
	// over (set by its send, read by gr_api_send()).
	bool stream_full;
	uint32_t turn_sent; // responses of the producer's turn, and their bytes
	uint32_t turn_sent_bytes;
	uint32_t req_id; // id of the request being handled (for gr_api_send)
	const struct gr_api_handler *handler; // the handler running, NULL between requests
	// The status that ends the stream being answered: 0, or the error of a
	// response of it that gr_api_send() refused.
	uint32_t stream_status;
	// When the transport took the request being dispatched off the socket
	// or the ring (TSC), for its queueing time; 0: not said. Set by the
	// transport, consumed by api_dispatch_locked().
	uint64_t taken_tsc;
	// Whether taking the handler lock after taken_tsc had to wait (else
	// the handler's start is taken_tsc: one TSC read fewer per request).
	bool lock_waited;
	uint32_t responses; // sent for the request being dispatched (the trace's)
	pid_t peer_pid; // from SO_PEERCRED, 0 if unknown
	uid_t peer_uid;
	gid_t peer_gid;
	int sock_fd; // the socket of this client, -1 on a channel
	// Its connection's routine lines (hello, channel attach and detach)
	// are not logged: past its peer's rate limit (server/sock_log.c).
	bool log_quiet;
	// Called once when the socket connection closes (the lease of a channel
	// attached over it). peer_closed: the client closed its end (EOF, or
	// a reset); else the daemon ended the connection while the client's
	// end was open (a bad request, a stall, a failed send, shutdown), and
	// the client may still run. Main thread.
	void (*lease_lost)(void *arg, bool peer_closed);
	void *lease_arg;
	// Faults recorded and not logged yet: written and read only by the
	// thread that serves this client.
	bool faults_pending;
	struct api_fault_note faults[API_FAULTS];
};

// Record a fault of the client (see enum api_fault for name and args).
// Under the handler lock, by the thread serving the client; makes no system
// call and logs nothing.
void api_fault(struct gr_api_ctx *, enum api_fault, const char *name, uint32_t arg0, uint32_t arg1);

// api_fault() of a kind whose line is a text made now (printf format, cut
// to API_FAULT_TEXT_LEN - 1 bytes): from the request or the state it
// changed, which will not be there when the line is logged.
void api_fault_text(struct gr_api_ctx *, enum api_fault, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

// Log the faults that are due: the first of each kind at once, then one line
// per LOG_LIMIT_INTERVAL_MS at most saying how many more came, and with
// final (the client is gone) whatever is left. Outside the handler lock, by
// the thread serving the client (or, final, by whoever frees it). Cheap when
// nothing is pending: api_dispatch() calls it after every request.
void api_faults_log(struct gr_api_ctx *, bool final);

// What the application can get wrong in a call of the API (the first
// argument of api_misuse()): each kind logged at its own rate.
enum api_misuse {
	API_MISUSE_LOCK, // gr_api_server_lock() where it would wait for itself
	API_MISUSE_UNLOCK, // gr_api_server_unlock() of a lock not taken
	API_MISUSE_REGISTER, // a handler (un)registered, a module named, with the lock held
	API_MISUSE_START, // gr_api_server_start() where it would wait for itself
	API_MISUSE_STOP, // gr_api_server_stop() where it would wait for itself
	API_MISUSE_STOP_THREAD, // stop off the thread of conf.base's loop
	API_MISUSE_SEND_NO_CLIENT, // gr_api_send() of ctx NULL
	API_MISUSE_SEND_ELSEWHERE, // gr_api_send() not from the handler of ctx
	API_MISUSE_RESPONSE_SIZE, // a response above GR_API_MAX_MSG_LEN
	API_MISUSE_RESPONSE_NULL, // a response length with no payload
	API_MISUSE_RESPONSE_FDS, // a response with descriptors
	API_MISUSE_ARGUMENT, // NULL where a call needs a pointer
	API_MISUSE_DEFERRED, // gr_api_defer() or its reply where they do not belong
	API_MISUSE_STREAM, // gr_api_stream_start() or a producer where they do not belong
	API_MISUSES,
};

// Longest line of api_misuse().
#define API_MISUSE_LINE_LEN 256

// Log a misuse of the API (printf format): the first of its kind on this
// thread at once, then at most one line per LOG_LIMIT_INTERVAL_MS that
// counts the others. Any thread; the caller returns the error.
void api_misuse(enum api_misuse, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// The client whose request the calling thread's handler serves, NULL
// outside a handler.
struct gr_api_ctx *api_current_ctx(void);

// Make ctx the client the calling thread serves (a stream's producer
// runs), NULL when it returns. Handler lock held.
void api_current_set(struct gr_api_ctx *ctx);

// Whether the calling thread holds the handler lock: it runs a handler or a
// transport's send, or took gr_api_server_lock().
bool api_lock_held(void);

// Where the calling thread holds the handler lock, for a log line ("in a
// handler, ...").
const char *api_lock_holder(void);

// gr_api_server_lock() and gr_api_server_unlock(): 0, -EDEADLK (the thread
// holds the lock: a handler, or a second lock), -EPERM (unlock without
// lock, or in a handler).
int api_app_lock(void);
int api_app_unlock(void);

// Look up a handler, NULL if none. A hash table: one or two probes, no list
// walk, on every request of every transport. Under the handler lock (or
// before any thread dispatches).
const struct gr_api_handler *api_handler_lookup(uint32_t request_type);

// Handlers registered so far.
unsigned api_handler_count(void);

struct type_stats;

// The i-th handler registered (in order) and its figures (*stats), NULL
// past the last. Under the handler lock.
const struct gr_api_handler *api_handler_at(unsigned i, const struct type_stats **stats);

// Forget the figures of every type (a server's start). Takes the lock.
void api_type_stats_reset(void);

// A deferred reply to a request of request_type went out with status:
// counted as an error of its type if not 0. Handler lock held.
void api_type_reply_locked(uint32_t request_type, uint32_t status);
// One handler of the registry, and whether it is one of the server's own.
struct api_handler_entry {
	const struct gr_api_handler *handler;
	bool own;
};

// Copy the registry into entries (at most max), in the order of
// registration. Returns how many. Under the handler lock.
unsigned api_handlers_copy(struct api_handler_entry *entries, unsigned max);

// The server's own handlers of one file: gr_api_server_start() registers
// them and gr_api_server_stop() drops them again. Not registered by
// constructors: a program that links the static library would leave out
// every object it references nothing of, and their handlers with them.
struct api_handler_table {
	struct gr_api_handler *handlers;
	unsigned n;
};
#define API_HANDLER_TABLE(name, array)                                                             \
	const struct api_handler_table name = {array, sizeof(array) / sizeof((array)[0])}

// The tables of the server's own handlers (handlers_*.c, channel.c,
// channel_stats.c).
extern const struct api_handler_table handlers_main, handlers_log, handlers_echo, handlers_clients,
	handlers_channel, handlers_channel_stats, handlers_event, handlers_type_stats,
	handlers_trace, handlers_types, handlers_info;

// The name an application gave its module (gr_api_server_module_name()),
// the server's own modules' ("main", "shm"), or "" if none: copied into
// name, GR_SHM_MODULE_NAME_LEN bytes. Under the handler lock.
void api_module_name_get(uint16_t module, char name[GR_SHM_MODULE_NAME_LEN]);

// Register a table of the server's own handlers. Returns 0, or the error of
// gr_api_server_handler_register() for the first that fails (logged),
// leaving none of the table registered.
int api_table_register(const struct api_handler_table *);

// Drop every handler api_table_register() registered; the application's
// stay.
void api_tables_drop(void);

// The server's own tables (n of them): their types are refused to
// application handlers, before the server starts too. Called once, before
// any handler is registered (a constructor of the server).
void api_tables_reserve(const struct api_handler_table *const *tables, unsigned n);

// The first error of a handler registered from a constructor
// (GR_API_HANDLER): logged, and returned. 0 if none failed.
int api_ctor_error(void);

// Check a request header before its payload is read. Returns 0, or
// -EMSGSIZE if payload_len exceeds GR_API_MAX_MSG_LEN: the caller answers
// with api_reject() and closes that client. Inline: every request of
// either transport passes here.
static inline int api_check_header(const struct gr_api_request *req) {
	if (req->payload_len > GR_API_MAX_MSG_LEN)
		return -EMSGSIZE;
	return 0;
}

// Dispatch one whole request (payload copied out of any shared memory by
// the caller). Enforces hello-first, version check (EBADMSG), unknown type
// (ENOTSUP) and short payload (EMSGSIZE); runs the handler under the handler
// lock, so two handlers never run at once; sends the response through
// ctx->transport; then, outside the lock, logs the client's faults that are
// due (api_faults_log()). Returns 0, or the transport's -errno if sending
// failed.
int api_dispatch(struct gr_api_ctx *, const struct gr_api_request *, const void *payload);

// Answer request id with an error status and no payload (under the lock).
int api_reject(struct gr_api_ctx *, uint32_t for_id, uint32_t status);

// A batch of dispatches under one hold of the handler lock: api_lock(),
// any number of api_dispatch_locked() and api_reject_locked(), api_unlock().
// For a poller that takes several requests in one pass: one lock round trip
// (two atomic instructions, each a full barrier on x86) per batch instead of
// per request. Keep batches bounded: the socket clients wait meanwhile.
// After api_unlock(), call api_faults_log() for the client served.
void api_lock(void);
void api_unlock(void);
// api_lock(), saying whether it had to wait for another holder.
bool api_lock_waited(void);
int api_dispatch_locked(struct gr_api_ctx *, const struct gr_api_request *, const void *payload);
int api_reject_locked(struct gr_api_ctx *, uint32_t for_id, uint32_t status);

// The pid of the client whose request the calling thread's handler serves,
// 0 outside a handler (what suppress_self_events compares with).
pid_t api_current_pid(void);
