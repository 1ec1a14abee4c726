// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// libgr_api_server: the server side of the control API, for any DPDK
// application to embed. It serves the application's handlers, and its own
// (Grout's main module, the shm module), on a Unix socket and on a
// shared-memory channel per client, with the limits, events, counters and
// trust rules of shmchand, which is built on it (docs/embedding.md).
//
// One server per process. The application calls rte_eal_init(), fills a
// struct gr_api_server_conf (gr_api_server_conf_init(), then what it
// wants), registers its handlers, calls gr_api_server_start(), and
// gr_api_server_stop() before rte_eal_cleanup(). The library never exits,
// aborts, installs a signal handler or reads the command line, and logs
// only through its own DPDK log type (gr_api_server_conf.log_type).
//
// Threads of the library: its pollers (conf.pollers), which serve the
// channels; the thread that runs conf.base's loop (the application's, or,
// with base NULL, one of the library's), which serves the socket; and the
// liburcu call_rcu thread, which frees channels. Handlers run on the first
// two, one at a time, under the handler lock (gr_api_server_lock()).
//
// Every call that can fail returns 0 or a negative errno and logs why once;
// none crashes on a NULL pointer or waits for its own caller: where it
// would (a lock, registration, start or stop in a handler), it returns
// -EDEADLK at once. docs/embedding.md sums up what each call returns.

#pragma once

#include <gr_api.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct event_base;

// Bounds of the configuration (gr_api_server_start() refuses values past
// them with EINVAL).
#define GR_API_SERVER_MAX_POLLERS 16
// Past a second a poller would in practice never sleep.
#define GR_API_SERVER_SPIN_US_MAX 1000000
// gr_api_server_conf.poller_nice: leave the pollers at the process's nice.
#define GR_API_SERVER_NICE_OFF INT32_MAX
// gr_api_server_conf.sock_gid: leave the socket's group alone.
#define GR_API_SERVER_GID_KEEP ((gid_t)-1)
// Socket connections served at once. The last GR_API_SERVER_ROOT_RESERVED
// of them only root's processes may take.
#define GR_API_SERVER_MAX_CLIENTS 1024
#define GR_API_SERVER_ROOT_RESERVED 64
// Event bounds: one subscriber's backlog (messages, bytes), the events all
// backlogs hold together, the subscriptions of one connection.
#define GR_API_SERVER_EVENT_BACKLOG_MSGS_MAX (1u << 20)
#define GR_API_SERVER_EVENT_BYTES_MIN 4096
#define GR_API_SERVER_EVENT_BACKLOG_BYTES_MAX ((size_t)1 << 30)
#define GR_API_SERVER_EVENT_MEMORY_BYTES_MAX ((size_t)1 << 36)
#define GR_API_SERVER_EVENT_SUBS_MAX (1u << 16)
// Entries of the API trace at most: 12 MiB of them (192 bytes each,
// struct gr_shm_trace_entry), which a dump still streams whole.
#define GR_API_SERVER_TRACE_SIZE_MAX 65536
// Descriptors the server may hold at most for its clients (each connection
// with a memfd channel, held memzones, and a spare for refused connections
// and attaches in progress). An application that wants every client served
// raises RLIMIT_NOFILE to this plus its own; the server counts what it
// holds against the limit in force at start and refuses the clients past
// it (ENFILE), keeping room for root's.
#define GR_API_SERVER_FDS_MAX (GR_API_SERVER_MAX_CLIENTS * 6 + 256 + 128 + 32)

// The default socket's name, in the application's EAL runtime folder
// (/run/dpdk/<file prefix>/ for root, $XDG_RUNTIME_DIR/dpdk/<file prefix>/
// else), beside DPDK telemetry's socket: each application, and each file
// prefix, has its own, and none takes shmchand's GR_API_DEFAULT_SOCK_PATH.
#define GR_API_SERVER_SOCK_NAME "gr_api.sock"

// Longest name of a setting in struct gr_api_server_conf_names.
#define GR_API_SERVER_CONF_NAME_MAX 47

// What the library's log lines call each setting of the configuration
// when they name one (a bound refused at start, a limit a client reached):
// by default the field, "conf.spin_us"; an application whose users set it
// otherwise (a command-line option, a key of its configuration file) gives
// its own name, "-S/--spin-us", so that the line says what to change in
// the words its users know. Each NULL: the field's name. At most
// GR_API_SERVER_CONF_NAME_MAX bytes each.
struct gr_api_server_conf_names {
	const char *sock_path;
	const char *shm_enabled;
	const char *pollers;
	const char *spin_us;
	const char *poller_nice;
	const char *memzones;
	const char *file_prefix;
	const char *max_conn_per_pid;
	const char *max_conn_per_uid;
	const char *event_backlog_msgs;
	const char *event_backlog_bytes;
	const char *event_memory_bytes;
	const char *event_subs_max;
	const char *app_version;
	const char *trace_size;
};

// The server's configuration. gr_api_server_conf_init() fills the
// defaults (shmchand's); gr_api_server_start() copies it, strings
// included.
struct gr_api_server_conf {
	// The Unix socket: a path (never abstract, at most 107 bytes), its
	// permissions, and its group or GR_API_SERVER_GID_KEEP. Default
	// NULL: GR_API_SERVER_SOCK_NAME in the application's EAL runtime
	// folder (rte_eal_get_runtime_dir(), resolved at start), 0660,
	// GR_API_SERVER_GID_KEEP.
	const char *sock_path;
	mode_t sock_mode;
	gid_t sock_gid;
	// Shared-memory channels: off, every client stays on the socket.
	// Default on.
	bool shm_enabled;
	// Poller threads serving the channels, 1..GR_API_SERVER_MAX_POLLERS
	// (default 1); microseconds a poller spins after work before it
	// sleeps, 0..GR_API_SERVER_SPIN_US_MAX (default 100); the lowest
	// nice value a poller takes, -20..19 or GR_API_SERVER_NICE_OFF
	// (default -20). A poller takes the weight of itself and of the
	// clients it served in the last 100 ms (one client: 3 below the
	// process's nice value, 16: 13 below), within that bound, if the
	// process may (else logged and left); a bound above the process's
	// value keeps them there.
	unsigned pollers;
	unsigned spin_us;
	int32_t poller_nice;
	// Memzone channels for DPDK secondaries of this process: only for a
	// primary with hugepages and shared files (not --no-huge, --in-memory
	// or --no-shconf), which the application knows; a start with memzones
	// on such an EAL is refused (EINVAL). Default off (memfd channels
	// only). file_prefix: what a secondary passes to EAL as
	// --file-prefix; NULL (the default) takes it from
	// rte_eal_get_runtime_dir().
	bool memzones;
	const char *file_prefix;
	// Socket connections one client process, and all the processes of one
	// uid other than root, may hold; 0: no limit. Default 64 and 256.
	unsigned max_conn_per_pid;
	unsigned max_conn_per_uid;
	// Events: one subscriber's backlog (default 1024 messages, 4 MiB), the
	// bytes all backlogs hold together (default 64 MiB), the subscriptions
	// one connection may hold (default 256). Bounds above.
	unsigned event_backlog_msgs;
	size_t event_backlog_bytes;
	size_t event_memory_bytes;
	unsigned event_subs_max;
	// Serve /shmchan/info, /shmchan/clients and /shmchan/stats on DPDK
	// telemetry (which EAL must run). Default off.
	bool telemetry;
	// The DPDK log type the library logs through, registered at start
	// (default "gr_api_server"), and the application's version for its
	// lines (default NULL: none).
	const char *log_type;
	const char *app_version;
	// Where the socket side runs: the application's libevent base, whose
	// loop the application runs on the thread that calls
	// gr_api_server_start() and gr_api_server_stop(); or NULL (the
	// default): a thread of the library's own, with a base of its own.
	struct event_base *base;
	// How the log names these settings (above); NULL (the default): by
	// their fields' names. Copied at start.
	const struct gr_api_server_conf_names *names;
	// Entries the API trace keeps (GR_SHM_TRACE_SET, api/gr_shm.h), the
	// newest, 0..GR_API_SERVER_TRACE_SIZE_MAX; 0: no trace. Allocated when
	// the trace is first switched on, 192 bytes each. Default 1024.
	unsigned trace_size;
};

// Fill conf with the defaults. Any thread; no system call. NULL: does
// nothing.
void gr_api_server_conf_init(struct gr_api_server_conf *conf);

// The checks of gr_api_server_start() on conf->sock_path that need neither
// EAL nor an event loop, for an application to make before rte_eal_init()
// so that a start that would fail creates nothing: the path is valid, no
// other server answers there, it is a socket or nothing; a stale socket
// file (nobody listens) is removed. The default path (sock_path NULL) has
// nothing to check before EAL: the runtime folder is EAL's, and its file
// prefix's lock keeps another primary out of it. Registers conf->log_type
// and logs why it refuses. Any thread; connect(), unlink(). Returns 0,
// -EINVAL (conf NULL, a path empty, abstract or too long, a log type empty
// or too long), -EADDRINUSE (another server answers there), -EEXIST (not a
// socket) or another -errno of connect() or unlink().
int gr_api_server_socket_check(const struct gr_api_server_conf *conf);

// Start serving: after rte_eal_init(), and, with conf->base set, on the
// thread that runs that base's loop (the socket is served when the loop
// runs). Registers the log type, checks and copies conf, reserves the
// memzone pool (conf->memzones), starts the pollers, registers the
// telemetry endpoints (conf->telemetry), creates the socket and, with
// conf->base NULL, the library's thread. Blocks until the server is ready
// or has failed; never from a handler, with the handler lock held, or on a
// thread of the library's. Returns 0, or (each logged) -EALREADY (a server
// runs), -EDEADLK (called where it would wait for itself: a handler, the
// lock held, a thread of the library's), -EINVAL (conf NULL or out of
// bounds, EAL not initialised, memzones asked of an EAL that cannot have
// secondaries), the error of a handler registered from a constructor
// (naming it), gr_api_server_socket_check()'s errors, -ENOMEM, or the
// -errno of a system call that failed (eventfd(), pthread_create(),
// bind(), ...); a failed start leaves nothing behind.
int gr_api_server_start(const struct gr_api_server_conf *conf);

// Stop serving: close every connection, remove the socket file, detach
// every channel, join the pollers (and the library's thread) and free the
// channels once no thread can reach them. On the thread that called
// gr_api_server_start() when conf->base was set (with its loop not
// running, or from one of its callbacks), any thread else. Blocks until
// done (an RCU grace period, the threads' ends), and only then: where it
// would wait for itself it refuses at once. Returns 0 (stopped, or no
// server ran), or, logged and nothing stopped, -EDEADLK (called from a
// handler, with the handler lock held, or on a thread of the library's)
// or -EPERM (conf->base set and another thread than its loop's).
int gr_api_server_stop(void);

// The handler lock: two handlers never run at once, on any transport. An
// application takes it around its own work on the state its handlers
// touch, so that none of them runs meanwhile. Hold it briefly: every
// client waits meanwhile. Not recursive, and handlers hold it already.
// gr_api_server_lock(): any thread; blocks while a handler (or another
// holder) runs. Returns 0, or -EDEADLK without blocking where it would
// wait for itself (in a handler, or taken already on this thread; logged).
// gr_api_server_unlock(): on the thread that took it. Returns 0, or -EPERM
// (logged, nothing released) without gr_api_server_lock() on this thread,
// in a handler too (the handler's hold is the server's to release).
int gr_api_server_lock(void);
int gr_api_server_unlock(void);

// What the server runs with, for an application's own status requests.
struct gr_api_server_info {
	// The configuration in force (strings: the library's copies, valid
	// until gr_api_server_stop(); file_prefix resolved, base as given,
	// names NULL).
	struct gr_api_server_conf conf;
	uint32_t backings; // GR_SHM_BACKING_* offered to clients (api/gr_shm.h)
	uint32_t memzone_channels; // in the pool reserved at start
	int32_t poller_nice; // of the first poller now, the process's before it runs
	uint64_t uptime_ms; // since gr_api_server_start()
	uint64_t start_time; // of gr_api_server_start(), seconds since the epoch
	// Fixed bounds (docs/limits.md).
	uint32_t max_clients; // GR_API_SERVER_MAX_CLIENTS
	uint32_t max_msg_len; // GR_API_MAX_MSG_LEN
	uint32_t channel_batch; // responses one turn of a channel produces at most
	uint32_t channel_backlog_bytes; // responses held for a full ring
	uint32_t channel_slow_ms; // a ring full this long: detached
	uint32_t sock_output_high; // output bytes that pause a socket client
	uint32_t sock_output_stall_s; // paused this long: disconnected
};

// Fill info. Any thread; one getpriority() call. Returns 0, -ESRCH if no
// server runs, or -EINVAL (info NULL, logged).
int gr_api_server_info_get(struct gr_api_server_info *info);

// ---- Handlers ----
//
// A handler answers one request type (GR_MSG_TYPE(module, id), with a
// module of the application's own; api/gr_api.h). It runs under the handler
// lock, on the thread that serves the client: the socket's (conf.base's
// loop, or the library's thread) or a poller. It does bounded work and never
// blocks: every client waits while it runs.

// One client: a socket connection, or a channel attached over one. Valid
// while the handler runs.
struct gr_api_ctx;

// What a handler returns: a status (0 or an errno value) and a response
// payload of len bytes, at most GR_API_MAX_MSG_LEN. payload is malloc'ed
// by the handler (or NULL when len is 0) and freed by the server once sent,
// unless borrowed is set (gr_api_out_borrowed()). A response the
// transports cannot carry is answered with an error status instead, the
// same on both transports, the connection kept, and logged naming the
// handler (its payload freed all the same): EMSGSIZE for len above
// GR_API_MAX_MSG_LEN, EINVAL for a NULL payload with len above 0, ENOTSUP
// for descriptors. fds and n_fds are the server's own (its attach passes
// descriptors over the socket): leave them 0. No descriptor reaches a
// client through a handler of the application's, on either transport
// (docs/embedding.md says why).
struct gr_api_out {
	uint32_t status;
	uint32_t len;
	void *payload;
	const int *fds;
	unsigned n_fds;
	bool borrowed; // payload is not the server's to free
};

static inline struct gr_api_out gr_api_out(uint32_t status, uint32_t len, void *payload) {
	struct gr_api_out out = {status, len, payload, NULL, 0, false};
	return out;
}

// A response whose payload the handler does not give away: the request's own
// payload (an echo), or state that outlives the request. Every transport
// copies the payload before the handler's dispatch ends and the server
// never frees it, so an answer costs no allocation. The cast only satisfies
// the field's type: nothing writes through it.
static inline struct gr_api_out
gr_api_out_borrowed(uint32_t status, uint32_t len, const void *payload) {
	struct gr_api_out out = {status, len, (void *)payload, NULL, 0, true};
	return out;
}

// Where a request's payload starts, on either transport: a multiple of
// this, so a request struct of fields up to 8 bytes (uint64_t, double) is
// read in place.
#define GR_API_SERVER_PAYLOAD_ALIGN 8

// request: the payload, len bytes (at least the handler's request_len),
// aligned to GR_API_SERVER_PAYLOAD_ALIGN; the server's copy, valid while
// the handler runs.
typedef struct gr_api_out (*gr_api_handler_func
)(const void *request, uint32_t len, struct gr_api_ctx *ctx);

struct gr_api_handler {
	const char *name; // for the logs
	uint32_t request_type;
	uint32_t request_len; // shortest payload accepted; shorter gets EMSGSIZE
	gr_api_handler_func callback;
};

// Handlers the registry holds at most, the server's own (about 20)
// included.
#define GR_API_SERVER_HANDLERS_MAX 256

// An initializer of struct gr_api_handler for request code (declared with
// GR_REQ: code##_REQ_LEN is its request_len) and function func.
#define GR_API_HANDLER_INIT(code, func)                                                            \
	{ #code, code, code##_REQ_LEN, func }

// Register a handler; handler must stay valid until the process ends. Any
// thread, before or after gr_api_server_start(); takes the handler lock,
// so never in a handler nor with the lock held. Returns 0, or, logged:
// -EEXIST (its type is registered, or is one the server serves itself,
// Grout's main module and the shm module's requests: whether the server
// runs or not), -ENOSPC (GR_API_SERVER_HANDLERS_MAX reached), -EINVAL (no
// handler, name or callback, or a request_len above GR_API_MAX_MSG_LEN),
// -EDEADLK (in a handler, or with the handler lock held: it would wait for
// itself).
int gr_api_server_handler_register(struct gr_api_handler *handler);

// Register handler func for request code in a constructor, beside the
// state it serves. A failure cannot be returned there: it is kept, and
// gr_api_server_start() fails with it, naming the handler. Written
// GR_API_HANDLER(code, func); (the declaration it ends with takes the ';').
// The initializer is GR_API_HANDLER_INIT's, written out: code must reach #
// and ## unexpanded.
#define GR_API_HANDLER(code, func)                                                                 \
	static struct gr_api_handler gr_api_handler_##func = {#code, code, code##_REQ_LEN, func};  \
	static void __attribute__((constructor)) gr_api_handler_register_##func(void) {            \
		__gr_api_server_handler_register_ctor(&gr_api_handler_##func);                     \
	}                                                                                          \
	static void gr_api_handler_register_##func(void)

// What GR_API_HANDLER calls: gr_api_server_handler_register(), and the
// first failure kept for gr_api_server_start().
void __gr_api_server_handler_register_ctor(struct gr_api_handler *handler);

// Remove the application's handler of request_type: requests of that type
// get ENOTSUP from then on, on every transport, and the handler's struct
// is the application's again once this returns (no thread runs it: it
// takes the handler lock). Any thread, before, during or after a server's
// run; never in a handler nor with the handler lock held. Returns 0, or,
// logged: -EPERM (a type the server serves itself), -ENOENT (no handler
// of that type), -EDEADLK (in a handler, or with the handler lock held).
int gr_api_server_handler_unregister(uint32_t request_type);

// Module names: GR_SHM_TYPE_LIST (shmchanctl types) shows each request
// type with its module's name. The server names its own ("main" for
// Grout's 0xcafe, "shm" for GR_SHM_MODULE); an application names its
// modules with gr_api_server_module_name(), or leaves them unnamed (an
// empty name, shown by number). At most GR_API_SERVER_MODULE_NAMES_MAX
// modules are named: a module serves one handler at least, and the
// registry holds GR_API_SERVER_HANDLERS_MAX.
#define GR_API_SERVER_MODULE_NAMES_MAX GR_API_SERVER_HANDLERS_MAX

// Name module (the upper 16 bits of its request types) name: 1 to 31
// letters, digits, '_', '-' or '.', copied; a module named again takes the
// new name, and NULL removes its name. Any thread, before or after
// gr_api_server_start(); takes the handler lock, so never in a handler nor
// with the lock held. Returns 0, or, logged: -EPERM (one of the server's
// own modules), -EINVAL (a name empty, too long or of other characters),
// -ENOSPC (GR_API_SERVER_MODULE_NAMES_MAX named already), -EDEADLK (in a
// handler, or with the handler lock held).
int gr_api_server_module_name(uint16_t module, const char *name);

// ---- Payloads with a trailing array ----
//
// A request or response of a header and a count of items after it:
//
//	struct route_list { uint32_t n; struct route routes[]; };
//
// is valid only when its length is exactly sizeof(struct route_list) +
// n * sizeof(struct route). These check that without reading past the
// payload and without overflow, whatever the client wrote in n.

// 0 if len bytes hold exactly a header of hdr_len bytes and n items of
// item_len bytes, else -EINVAL (shorter than the header, a count that
// disagrees with the length, however large). No system call; never reads
// memory.
static inline int gr_api_array_check(uint32_t len, size_t hdr_len, uint64_t n, size_t item_len) {
	if (len < hdr_len)
		return -EINVAL;
	if (item_len == 0)
		return len == hdr_len ? 0 : -EINVAL;
	// Divide, never multiply: n * item_len may overflow any width.
	if ((len - hdr_len) % item_len != 0 || (len - hdr_len) / item_len != n)
		return -EINVAL;
	return 0;
}

// gr_api_array_check() of the request req (a pointer to the header
// struct) of len bytes, whose field count holds the number of items of its
// flexible array member items. The count is read only once len covers the
// header. A handler answers EINVAL when it is not 0:
//
//	if (GR_API_REQ_ARRAY_CHECK(req, len, n, routes) < 0)
//		return gr_api_out(EINVAL, 0, NULL);
#define GR_API_REQ_ARRAY_CHECK(req, len, count, items)                                             \
	gr_api_array_check(                                                                        \
		(len),                                                                             \
		sizeof(*(req)),                                                                    \
		(len) >= sizeof(*(req)) ? (uint64_t)(req)->count : 0,                              \
		sizeof((req)->items[0])                                                            \
	)

// A zeroed payload of a header of hdr_len bytes and n items of item_len
// bytes, malloc'ed for a handler to return (gr_api_out(0, *len, p)), its
// length in *len. Any thread; no lock. Returns it, or NULL with errno
// EMSGSIZE (above GR_API_MAX_MSG_LEN, n huge included: the server could
// not send it) or ENOMEM.
static inline void *gr_api_array_alloc(size_t hdr_len, uint64_t n, size_t item_len, uint32_t *len) {
	void *payload;

	if (hdr_len > GR_API_MAX_MSG_LEN ||
	    (item_len > 0 && n > (GR_API_MAX_MSG_LEN - hdr_len) / item_len)) {
		errno = EMSGSIZE;
		return NULL;
	}
	*len = (uint32_t)(hdr_len + n * item_len);
	payload = calloc(1, *len > 0 ? *len : 1);
	if (payload == NULL)
		errno = ENOMEM;
	return payload;
}

// gr_api_array_alloc() for resp, a pointer to a header struct with the
// flexible array member items: resp is set to the payload (NULL on
// failure, errno set) and len to its length. The caller sets the count.
#ifdef __cplusplus
#define GR_API_RESP_ARRAY_ALLOC(resp, n, items, len)                                               \
	((resp) = static_cast<decltype(resp)>(                                                     \
		 gr_api_array_alloc(sizeof(*(resp)), (n), sizeof((resp)->items[0]), &(len))        \
	 ))
#else
#define GR_API_RESP_ARRAY_ALLOC(resp, n, items, len)                                               \
	((resp) = gr_api_array_alloc(sizeof(*(resp)), (n), sizeof((resp)->items[0]), &(len)))
#endif

// Send one response of a stream from inside a handler: status 0, the id of
// the request being handled, payload copied before it returns. The
// handler's own return (normally gr_api_out(0, 0, NULL)) ends the stream.
// The handler serving ctx only, on its thread. Never blocks: what a client
// does not read waits in a bounded backlog (docs/limits.md). Returns 0, or:
// -EMSGSIZE (len above GR_API_MAX_MSG_LEN) or -EINVAL (payload NULL with
// len above 0): nothing sent, logged; the handler may go on, and the
// stream's end carries that status to the client (unless the handler ends
// it with an error of its own), on the connection kept; -EINVAL (ctx NULL)
// or -EPERM (not called by the handler serving ctx or its stream's
// producer, or by a handler after gr_api_stream_start()): nothing sent,
// logged; -EAGAIN, in a producer only (gr_api_stream_start()): nothing
// sent, the turn is over; or -ECONNRESET, -EPIPE, -ENOBUFS, -ENOMEM: the
// client is gone, or the server is closing it for not reading (stop the
// stream).
int gr_api_send(struct gr_api_ctx *ctx, uint32_t len, const void *payload);

// The credentials of the client's process (SO_PEERCRED of its socket; a
// channel has its socket's): pid (0 when it is in another pid namespace),
// uid and gid. The handler's thread only. ctx NULL (logged): pid 0, uid
// and gid (uid_t)-1 and (gid_t)-1.
pid_t gr_api_ctx_pid(const struct gr_api_ctx *ctx);
uid_t gr_api_ctx_uid(const struct gr_api_ctx *ctx);
gid_t gr_api_ctx_gid(const struct gr_api_ctx *ctx);

// ---- Deferred replies ----
//
// A handler that cannot answer at once (it waits for a datapath round trip,
// an RCU grace period, another thread's work) keeps its request open with
// gr_api_defer() and returns. The server goes on serving this client and
// every other; the application answers later, from any thread, with
// gr_api_deferred_reply(). The client sees nothing but a response that
// takes longer: responses carry the id of their request, so other requests
// of the same client may be answered meanwhile.

// Requests one client may hold open at once, and all clients together: a
// bound on the memory a client can make the application hold by sending
// requests it defers. Past either, gr_api_defer() fails with ENOSPC and the
// handler answers at once (EBUSY, or by doing the work synchronously).
#define GR_API_SERVER_DEFERRED_PER_CLIENT 1024
#define GR_API_SERVER_DEFERRED_MAX 65536

// A request kept open: what gr_api_deferred_reply() answers.
struct gr_api_deferred;

// In the handler serving ctx: keep the request it serves open. The
// handler's own return is then not sent (return gr_api_out(0, 0, NULL); a
// payload it returns anyway is freed and the misuse logged); responses it
// sent with gr_api_send() before are kept, and the reply ends the stream.
// Returns the handle, which gr_api_deferred_reply() takes exactly once, or
// NULL with errno set (logged where it is a misuse): EINVAL (ctx NULL),
// EPERM (not in the handler serving ctx), EALREADY (this request is
// deferred already), ENOSPC (a bound above is reached), ECONNRESET (the
// client is going: answer at once), ENOMEM.
struct gr_api_deferred *gr_api_defer(struct gr_api_ctx *ctx);

// Answer a deferred request with status and len bytes of payload, copied
// before it returns. Any thread, the handler lock held or not, a handler
// included; never blocks on the client: the thread that serves the client
// sends the reply at its next turn. The handle is freed whatever it
// returns. Returns 0 (queued for the client), -ECONNRESET (the client is
// gone, or the server stopped: nothing sent, nothing left to do), or, the
// client answered with that status instead (as for a handler's return,
// logged): -EMSGSIZE (len above GR_API_MAX_MSG_LEN), -EINVAL (payload NULL
// with len above 0); -ENOMEM (no memory for the payload: the client gets
// ENOMEM with none); -EINVAL (d NULL, logged: nothing to answer).
int gr_api_deferred_reply(
	struct gr_api_deferred *d,
	uint32_t status,
	uint32_t len,
	const void *payload
);

// ---- Streams produced lazily ----
//
// A stream too long to produce in one handler call (every route of a
// table) is produced in turns instead: the handler starts it with
// gr_api_stream_start() and returns; the server then calls the producer
// from the thread that serves the client, under the handler lock, whenever
// the client's response ring (or its socket's output) has room, and serves
// the other clients between two turns. A turn ends when gr_api_send()
// refuses with -EAGAIN: the turn's bound is reached (GR_API_STREAM_TURN_*
// below) or the client has not taken what was sent. A client that stops
// reading holds nothing of the server but its producer's state: the
// stream pauses, and the client is detached (channel) or disconnected
// (socket) once it stays stopped past the slow-client limit
// (docs/limits.md). Its next requests wait for the stream's end: a
// client's responses keep the order of its requests, the stream whole.

// Responses and bytes one turn of a producer sends at most: then
// gr_api_send() answers -EAGAIN, and the producer's next turn comes after
// every other client had one. Each transport may end a turn earlier (a
// full ring, a socket's output above its bound).
#define GR_API_STREAM_TURN_RESPONSES 128
#define GR_API_STREAM_TURN_BYTES (64u << 10)

// A producer: send the stream's next responses with gr_api_send(ctx, ...)
// until it answers -EAGAIN (that response was not sent: send it again at
// the next turn), and return -EAGAIN (more to come), 0 (the stream is
// done: the server sends its end, status 0, or the error of a response
// gr_api_send() refused) or another -errno (the stream ends with that
// status). Runs under the handler lock, on the thread that serves the
// client, as a handler does. Any other value ends the stream with EINVAL
// (logged).
typedef int (*gr_api_stream_func)(struct gr_api_ctx *ctx, void *state);

// Free a producer's state: called exactly once per stream started, when
// the stream ended (after the producer's last turn) or when it cannot go on
// (the client went, the server stops), on the thread that serves or frees
// the client, under the handler lock, never while the producer runs. It
// frees and calls nothing of the server.
typedef void (*gr_api_stream_release_func)(void *state);

// In the handler serving ctx: answer its request with a stream that
// produce makes in turns, from state (the application's, released by
// release, NULL: nothing to free). The handler's own return is then not
// sent (return gr_api_out(0, 0, NULL); a payload it returns anyway is freed
// and the misuse logged); responses it sent with gr_api_send() before come
// first. The producer's first turn runs as the handler returns. Returns 0
// (release will be called), or, state still the caller's, logged where it
// is a misuse: -EINVAL (ctx or produce NULL), -EPERM (not in the handler
// serving ctx), -EALREADY (this request has a stream or a deferred reply
// already; a producer's call too), -ENOTSUP (a transport that cannot
// pause), -ENOMEM.
int gr_api_stream_start(
	struct gr_api_ctx *ctx,
	gr_api_stream_func produce,
	gr_api_stream_release_func release,
	void *state
);

// ---- Events ----

// Publish an event of type ev_type (of a module of the application's own)
// with len bytes of payload, copied, to every client subscribed to it
// (GR_EVENT_SUBSCRIBE, or GR_EVENT_ALL), on both transports. Any thread,
// inside a handler or not; never blocks on a client: a subscriber whose
// backlog is full loses it, counted, and is told how many it lost. Inside a
// handler, subscribers that suppress their own events skip it when the
// request is theirs. Returns 0 (delivered, queued or lost as above; also
// with no subscriber, or no server), -EINVAL (ev_type GR_EVENT_ALL, or no
// payload for len bytes), -EMSGSIZE (len above GR_API_MAX_MSG_LEN) or
// -ENOMEM.
int gr_api_event_publish(uint32_t ev_type, const void *payload, uint32_t len);

#ifdef __cplusplus
}
#endif
