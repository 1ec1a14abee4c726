// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Wire format of the shmchan control API. Identical on the Unix socket and on
// the shared-memory channel. All integers are in host byte order: both ends
// always share one machine. Compiles as ISO C11 and as C++ (11 and later).

#pragma once

// What Grout's gr_api.h includes, for Grout's programs that rely on it:
// alignas() and static_assert() in C11 and C17 (keywords in C23 and C++).
#include <assert.h>
#ifndef __cplusplus
#include <stdalign.h>
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

// A compile-time check, spelled as each language wants it.
#ifdef __cplusplus
#define GR_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define GR_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

// Bumped whenever a message layout below changes. GR_HELLO carries it.
// shmchan's own clients speak it; the daemon also speaks Grout's versions
// below, each with the hello response of that version (docs/protocol.md).
#define GR_API_VERSION 1

// Grout v0.17.0: the hello response is empty.
#define GR_API_VERSION_GROUT_0_17 9
// Grout's main branch: the hello response is a struct gr_hello_resp.
#define GR_API_VERSION_GROUT_MAIN 10

// Largest payload of one message, as in Grout.
#define GR_API_MAX_MSG_LEN (128 * 1024)

// Default socket path of shmchand (see docs/protocol.md).
#define GR_API_DEFAULT_SOCK_PATH "/run/shmchand.sock"
// Grout's name for it: a Grout program built against these headers talks to
// shmchand by default.
#define GR_DEFAULT_SOCK_PATH GR_API_DEFAULT_SOCK_PATH

// Request header, 12 bytes, followed by payload_len bytes of payload.
struct gr_api_request {
	uint32_t id; // chosen by the client, unique among its requests in flight, never 0
	uint32_t type; // GR_MSG_TYPE(module, id)
	uint32_t payload_len;
};

// Response header, 12 bytes, followed by payload_len bytes of payload.
// A response with for_id 0 is not a response: it carries an event (see below).
struct gr_api_response {
	uint32_t for_id; // the id of the request this answers
	uint32_t status; // 0 or an errno value
	uint32_t payload_len;
};

// Event header, as in Grout: payload_len is a size_t, so on LP64 the header is
// 16 bytes with 4 bytes of padding after ev_type (always sent as zero).
// An event travels inside a response with for_id 0 and status 0 whose payload
// is this header followed by the event payload.
struct gr_api_event {
	uint32_t ev_type;
	uint32_t reserved; // explicit padding, zero
	size_t payload_len;
};

GR_STATIC_ASSERT(sizeof(struct gr_api_request) == 12, "request header is 12 bytes");
GR_STATIC_ASSERT(sizeof(struct gr_api_response) == 12, "response header is 12 bytes");
GR_STATIC_ASSERT(sizeof(struct gr_api_event) == 16, "event header is 16 bytes on LP64");

#define GR_MSG_TYPE(module, id) ((uint32_t)((((uint32_t)(module)&0xffff) << 16) | ((id)&0xffff)))
#define GR_MSG_MODULE(type) ((uint32_t)(type) >> 16)

// An empty request or response payload: no byte on the wire. ISO C wants a
// member in every struct (an empty one is a GNU extension, of size 0) and
// C++ gives an empty one size 1, so it has a byte that is never sent: take
// payload lengths from GR_PAYLOAD_LEN() or from a GR_REQ()'s lengths, never
// from sizeof.
struct gr_empty {
	uint8_t unused;
};

// Bytes a payload of type takes on the wire: sizeof(type), and 0 for
// struct gr_empty. An integer constant expression.
#ifdef __cplusplus
template <typename T> struct gr_payload_len { static constexpr size_t value = sizeof(T); };
template <> struct gr_payload_len<struct gr_empty> { static constexpr size_t value = 0; };
#define GR_PAYLOAD_LEN(type) (gr_payload_len<type>::value)
#else
#define GR_PAYLOAD_LEN(type)                                                                       \
	_Generic((type *)0, struct gr_empty * : (size_t)0, default : sizeof(type))
#endif

// What GR_REQ(), GR_REQ_STREAM() and GR_EVENT() emit besides their
// declarations: nothing, unless gr_api_client_impl.h, included first in the
// unit, defines it to register each message's name and response size with
// the client library (gr_api_message_register()). func is a name for a
// function made from the message's, type its value, name its name as a
// string, resp_size the response (or event payload) length, stream whether
// it is a stream request.
#ifndef GR_MESSAGE_REGISTER
#define GR_MESSAGE_REGISTER(func, type, name, resp_size, stream)
#endif

// Declare a request: GR_REQ(GR_PING, struct gr_empty, struct gr_empty) gives
// GR_PING_REQ_SIZE and GR_PING_RESP_SIZE (Grout's names), the minimum
// request payload length the daemon accepts and the length of the response
// payload (0 for struct gr_empty), also named GR_PING_REQ_LEN and
// GR_PING_RESP_LEN, and the types GR_PING_req_t and GR_PING_resp_t. The
// parameters are spelled out in each macro, never forwarded to another
// one: forwarding would expand code (itself a macro) before the ## pastes
// could use its name.
#define GR_REQ(code, req_struct, resp_struct)                                                      \
	GR_MESSAGE_REGISTER(                                                                       \
		code##_register_message,                                                           \
		code,                                                                              \
		#code,                                                                             \
		GR_PAYLOAD_LEN(resp_struct),                                                       \
		false                                                                              \
	)                                                                                          \
	typedef req_struct code##_req_t;                                                           \
	typedef resp_struct code##_resp_t;                                                         \
	enum {                                                                                     \
		code##_REQ_LEN = GR_PAYLOAD_LEN(req_struct),                                       \
		code##_RESP_LEN = GR_PAYLOAD_LEN(resp_struct),                                     \
		code##_REQ_SIZE = code##_REQ_LEN,                                                  \
		code##_RESP_SIZE = code##_RESP_LEN                                                 \
	}

// Declare a stream request: it is answered by any number of responses with a
// resp_struct payload, all with the request's id, and ends with an empty one.
#define GR_REQ_STREAM(code, req_struct, resp_struct)                                               \
	GR_MESSAGE_REGISTER(                                                                       \
		code##_register_message,                                                           \
		code,                                                                              \
		#code,                                                                             \
		GR_PAYLOAD_LEN(resp_struct),                                                       \
		true                                                                               \
	)                                                                                          \
	typedef req_struct code##_req_t;                                                           \
	typedef resp_struct code##_resp_t;                                                         \
	enum {                                                                                     \
		code##_REQ_LEN = GR_PAYLOAD_LEN(req_struct),                                       \
		code##_RESP_LEN = GR_PAYLOAD_LEN(resp_struct),                                     \
		code##_REQ_SIZE = code##_REQ_LEN,                                                  \
		code##_RESP_SIZE = code##_RESP_LEN                                                 \
	}

// Declare an event and the struct its payload starts with: code##_OBJ_SIZE
// (Grout's name) and code##_EV_LEN are its length.
#define GR_EVENT(code, payload_struct)                                                             \
	GR_MESSAGE_REGISTER(                                                                       \
		code##_register_message,                                                           \
		code,                                                                              \
		#code,                                                                             \
		GR_PAYLOAD_LEN(payload_struct),                                                    \
		false                                                                              \
	)                                                                                          \
	typedef payload_struct code##_ev_t;                                                        \
	enum { code##_EV_LEN = GR_PAYLOAD_LEN(payload_struct), code##_OBJ_SIZE = code##_EV_LEN }

#ifdef __cplusplus
extern "C" {
#endif

// The messages the client library knows: their names for
// gr_api_message_name(), and the response (or event payload) length that
// gr_api_client_recv() and gr_api_client_event_recv() check a payload
// against. The library knows every message of gr_api.h and gr_shm.h; a
// program registers its own by including gr_api_client_impl.h first in one
// unit (GR_REQ() and its siblings then call this from constructors), or
// calls it itself. A message never registered is not size-checked.
//
// Register type as name (a copy is kept) with responses of at least
// resp_size bytes (an empty one also ends a stream request). Returns 0
// (also when type is registered already under the same name: the first
// registration stays), -EEXIST when another name has type, -ENOSPC past
// GR_API_MESSAGES_MAX messages, -EINVAL (name NULL or empty), -ENOMEM.
// Thread-safe; may be called from constructors.
#define GR_API_MESSAGES_MAX 768
int gr_api_message_register(uint32_t type, const char *name, size_t resp_size, bool stream);

// The name a message type was registered as, or "0x%08x?" (its value) for
// a type never registered, in a buffer of the calling thread that the next
// call overwrites. As Grout's. Never NULL; makes no system call.
const char *gr_api_message_name(uint32_t type);

#ifdef __cplusplus
}
#endif

// How Grout's API headers declare their inline functions, unless the
// program chose otherwise first.
#ifndef GR_API_INLINE
#define GR_API_INLINE static inline
#endif

// Main module, numbered as in Grout.
#define GR_MAIN_MODULE 0xcafe

#define GR_HELLO GR_MSG_TYPE(GR_MAIN_MODULE, 0x1981)
#define GR_LOG_PACKETS_SET GR_MSG_TYPE(GR_MAIN_MODULE, 0x1982)
#define GR_LOG_LEVEL_LIST GR_MSG_TYPE(GR_MAIN_MODULE, 0x1983)
#define GR_LOG_LEVEL_SET GR_MSG_TYPE(GR_MAIN_MODULE, 0x1984)
#define GR_EVENT_SUBSCRIBE GR_MSG_TYPE(GR_MAIN_MODULE, 0x1985)
#define GR_EVENT_UNSUBSCRIBE GR_MSG_TYPE(GR_MAIN_MODULE, 0x1986)
#define GR_PING GR_MSG_TYPE(GR_MAIN_MODULE, 0x1987)
#define GR_PING2 GR_MSG_TYPE(GR_MAIN_MODULE, 0x1988)

// Size of the version string in GR_HELLO, NUL included.
#define GR_HELLO_VERSION_LEN 128

struct gr_hello_req {
	// GR_API_VERSION or one of Grout's (GR_API_VERSION_GROUT_*); any other
	// value is answered EBADMSG.
	uint32_t api_version;
	char version[GR_HELLO_VERSION_LEN]; // NUL-terminated free text (client version)
};
GR_STATIC_ASSERT(sizeof(struct gr_hello_req) == 132, "hello is 132 bytes");

GR_REQ(GR_HELLO, struct gr_hello_req, struct gr_empty);

// The hello response to a client of GR_API_VERSION_GROUT_MAIN (the other
// versions get an empty one). shmchand serves no interface: max_ifaces is
// always 0 (docs/protocol.md).
struct gr_hello_resp {
	uint16_t max_ifaces;
};
GR_STATIC_ASSERT(sizeof(struct gr_hello_resp) == 2, "Grout's hello response is 2 bytes");
GR_REQ(GR_PING, struct gr_empty, struct gr_empty);

// GR_PING2 echoes its 64-byte payload.
#define GR_PING2_LEN 64
struct gr_ping2 {
	char payload[GR_PING2_LEN];
};
GR_REQ(GR_PING2, struct gr_ping2, struct gr_ping2);

GR_STATIC_ASSERT(GR_PING_REQ_LEN == 0 && GR_PING_RESP_LEN == 0, "an empty payload is 0 bytes");
GR_STATIC_ASSERT(GR_HELLO_REQ_LEN == 132 && GR_HELLO_RESP_LEN == 0, "hello sizes");

// ---- Events, as in Grout (docs/protocol.md) ----

// Every event type, in a subscription.
#define GR_EVENT_ALL UINT32_C(0xffffffff)

// Subscribe to ev_type (or GR_EVENT_ALL); subscribing again to a type
// updates suppress_self_events. With suppress_self_events, events caused by
// requests of a client of the subscriber's own pid are not sent to it.
// On the socket this is Grout's subscribe: the events come in Grout's
// framing (a struct gr_api_event and its payload, no response header) and
// the connection must only read events from then on. The shm module's
// GR_SHM_EVENT_SUBSCRIBE (gr_shm.h) takes the same payload and asks for
// tagged events that mix with responses; on a channel both are tagged.
struct gr_event_subscribe_req {
	bool suppress_self_events;
	uint32_t ev_type;
};
GR_STATIC_ASSERT(sizeof(struct gr_event_subscribe_req) == 8, "subscribe is 8 bytes, as in Grout");
GR_REQ(GR_EVENT_SUBSCRIBE, struct gr_event_subscribe_req, struct gr_empty);

// Drop every subscription of this client (a disconnect does too).
GR_REQ(GR_EVENT_UNSUBSCRIBE, struct gr_empty, struct gr_empty);

// ---- Log levels, as in Grout ----

// Packet logging of a datapath: shmchand has none and answers ENOTSUP.
struct gr_log_packets_set_req {
	bool enabled;
};
GR_REQ(GR_LOG_PACKETS_SET, struct gr_log_packets_set_req, struct gr_empty);

// The daemon's log types and their levels (show_all: every DPDK log type
// too), one struct gr_log_entry per response, then an empty one.
struct gr_log_level_list_req {
	bool show_all;
};
#define GR_LOG_NAME_LEN 64
struct gr_log_entry {
	char name[GR_LOG_NAME_LEN]; // NUL-terminated
	uint32_t level; // GR_LOG_LEVEL_MIN .. GR_LOG_LEVEL_MAX (RTE_LOG_*)
};
GR_REQ_STREAM(GR_LOG_LEVEL_LIST, struct gr_log_level_list_req, struct gr_log_entry);

// rte_log levels: 1 (emergency) to 8 (debug).
#define GR_LOG_LEVEL_MIN 1
#define GR_LOG_LEVEL_MAX 8

// Set the level of every log type whose name matches the glob pattern
// (rte_log_set_level_pattern), with Grout's statuses: a pattern not
// NUL-terminated is ENAMETOOLONG, a level above GR_LOG_LEVEL_MAX EINVAL
// (0 silences the types), anything else 0, also when the pattern matches
// no log type and nothing changes (the daemon logs that; shmchanctl says
// it).
struct gr_log_level_set_req {
	char pattern[GR_LOG_NAME_LEN];
	uint32_t level;
};
GR_REQ(GR_LOG_LEVEL_SET, struct gr_log_level_set_req, struct gr_empty);

// ---- Grout's client API, implemented by libgr_api_client ----
//
// Grout's calls, with Grout's names, signatures and semantics: a program
// written against Grout's client API builds against these headers
// unchanged, or runs with Grout's own headers and this library. shmchan's
// additions (options, transports, batches, non-blocking receives, the
// event-loop descriptor, timeouts) are in gr_api_client.h, with the rules
// every call follows (threads, signals, timeouts, system calls).
//
// Conventions, as in Grout: connect returns NULL with errno set; the calls
// returning int or long return 0 (or a request id) on success and a
// negative errno value on failure, with errno set to the same value.

#ifdef __cplusplus
extern "C" {
#endif

// A connection to the daemon: on the shared-memory channel when it can be
// had, else on the socket. One thread at a time.
struct gr_api_client;

// Connect to the daemon at sock_path (NULL: GR_DEFAULT_SOCK_PATH), say
// hello in the newest API version it speaks (shmchand's, else Grout's main
// then v0.17.0, on the same connection: gr_api_client_info()) and, unless
// GR_API_TRANSPORT=socket, attach a shared-memory channel. A daemon that
// offers no channel (Grout itself answers ENOTSUP) leaves the client on the
// socket, without an error. gr_api_client_connect_opts() (gr_api_client.h)
// takes options. Returns a handle, or NULL with errno (see
// gr_api_client_connect_opts() for each value, and
// gr_api_client_last_error() for why in words). Blocks.
struct gr_api_client *gr_api_client_connect(const char *sock_path);

// Detach the channel, close the socket and free the handle and every
// response and event still held in it. Returns 0, or -1 with errno if a
// close failed (the handle is freed anyway). NULL is accepted and returns 0.
int gr_api_client_disconnect(struct gr_api_client *);

// The hello response of the API version the daemon accepted: max_ifaces as
// the daemon sent it at Grout's main version, 0 at the versions whose
// response is empty (shmchand's and Grout's v0.17.0; shmchand answers 0 at
// every version: it serves no interface). gr_api_client_api_version()
// (gr_api_client.h) says which version. Valid as long as the handle; NULL
// with errno EINVAL for a NULL handle. Makes no system call.
const struct gr_hello_resp *gr_api_client_info(const struct gr_api_client *);

// Send one request without waiting. Returns its id (> 0), or a negative
// errno: -EINVAL (tx_len over GR_API_MAX_MSG_LEN, tx_data NULL with tx_len
// > 0, NULL handle), -ECONNRESET/-EPIPE (daemon gone), -ETIMEDOUT. On shm,
// may wait (spin, then sleep) while the request ring is full; nothing is
// dropped, and a send that times out sent nothing. On the socket, may wait
// while the socket buffer is full; one that times out after part of the
// request left has broken the framing: the handle is then dead (later calls
// fail -ECONNRESET). GR_EVENT_SUBSCRIBE is sent as the shm module's
// GR_SHM_EVENT_SUBSCRIBE (gr_api_client.h, events).
long int
gr_api_client_send(struct gr_api_client *, uint32_t req_type, size_t tx_len, const void *tx_data);

// Wait for the response to request for_id, of type req_type. Responses to
// other ids that arrive first are kept for later calls (pipelining, out of
// order). On status 0, stores the payload, malloc'ed, through rx_data (the
// caller frees it) or NULL when it is empty; a payload with rx_data NULL
// is dropped. Returns 0, or a negative errno: the response's non-zero
// status (-ENOTSUP, a request the daemon does not serve; -EMSGSIZE, a
// request shorter than its type needs), or -EMSGSIZE when the payload is
// shorter than req_type's registered response length (an empty one ends a
// stream request and passes), -ECONNRESET (daemon gone), -EBADMSG
// (malformed response), -ENOMEM, -ETIMEDOUT (the handle stays usable: the
// late response is dropped when it comes), -ECANCELED (for_id timed out
// before), -EINVAL (NULL handle or for_id 0). A req_type the library does
// not know (gr_api_message_register()) is not size-checked. Blocks.
int gr_api_client_recv(struct gr_api_client *, uint32_t req_type, uint32_t for_id, void **rx_data);

// gr_api_client_send() then gr_api_client_recv(), with one timeout for
// both. Returns what the failing one returns, else 0. Blocks.
int gr_api_client_send_recv(
	struct gr_api_client *,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data,
	void **rx_data
);

// Receive and free the rest of the stream for_id of type req_type, up to
// its empty last response, within one timeout for all of it: what
// gr_api_client_stream_foreach() calls when its body breaks out. A stream
// still going when the timeout passed is abandoned: its later responses are
// dropped as they come. Returns 0, -ETIMEDOUT (abandoned), or the first
// error of gr_api_client_recv(). Blocks, at most the handle's timeout.
int __gr_api_client_stream_drain(struct gr_api_client *, uint32_t req_type, uint32_t for_id);

// Send a stream request and loop over its responses, as Grout's macro:
//
//	const struct gr_log_entry *e;
//	int ret;
//	gr_api_client_stream_foreach (e, ret, c, GR_LOG_LEVEL_LIST, sizeof(req), &req)
//		printf("%s\n", e->name);
//	if (ret < 0)
//		error(-ret);
//
// obj points at each response's payload in turn (freed when the next one
// comes, or when the loop ends); ret ends as 0 after the stream's last
// response, or the negative errno of the send or of a receive (the loop
// stops there). A break frees obj and drains the rest of the stream within
// one timeout (__gr_api_client_stream_drain(), its result in ret). Leaving
// the body
// with return or goto leaks obj and leaves the rest of the stream to the
// handle's stash. gr_api_client_stream_next() (gr_api_client.h) is the
// same as a call.
#define gr_api_client_stream_foreach(obj, ret, client, req_type, tx_len, tx_data)                  \
	for (struct gr_api_client_stream gr_api_stream_ = gr_api_client_stream_begin_(             \
		     (client),                                                                     \
		     (req_type),                                                                   \
		     gr_api_client_send((client), (req_type), (tx_len), (tx_data))                 \
	     );                                                                                    \
	     gr_api_client_stream_enter_(&gr_api_stream_) || ((ret) = gr_api_stream_.result, 0);)  \
		for (; gr_api_client_stream_step_(&gr_api_stream_)                                 \
			       ? ((obj) = (__typeof__(obj))gr_api_stream_.payload, 1)              \
			       : ((ret) = gr_api_stream_.result, 0);)

// The state of one gr_api_client_stream_foreach(), for the macro alone. Its
// members are named apart from the macro's parameters.
struct gr_api_client_stream {
	struct gr_api_client *client;
	uint32_t req_type;
	long int id; // the request's id, or the send's negative errno
	void *payload; // the response the body sees, freed at the next step
	int result; // what ret ends as
	bool entered; // the outer loop ran the inner one
	bool ended; // the stream ended (last response, or an error): no drain
};

static inline struct gr_api_client_stream
gr_api_client_stream_begin_(struct gr_api_client *client, uint32_t req_type, long int id) {
	struct gr_api_client_stream s = {client, req_type, id, NULL, (int)id, false, id < 0};
	return s;
}

// The outer loop: true once, to run the inner loop, unless the send failed;
// then false, after draining what a break left.
static inline bool gr_api_client_stream_enter_(struct gr_api_client_stream *s) {
	if (!s->entered) {
		s->entered = true;
		return s->id >= 0;
	}
	if (!s->ended) {
		free(s->payload);
		s->payload = NULL;
		s->ended = true;
		s->result = __gr_api_client_stream_drain(s->client, s->req_type, (uint32_t)s->id);
	}
	return false;
}

// The inner loop: free the response the body saw, receive the next; false
// at the stream's end or on an error.
static inline bool gr_api_client_stream_step_(struct gr_api_client_stream *s) {
	free(s->payload);
	s->payload = NULL;
	s->result = gr_api_client_recv(s->client, s->req_type, (uint32_t)s->id, &s->payload);
	if (s->result < 0 || s->payload == NULL) {
		s->ended = true;
		return false;
	}
	return true;
}

// Wait for the next event. Returns 0 and stores through event a malloc'ed
// struct gr_api_event followed by its payload_len bytes of payload (the
// caller frees it; unlike Grout's, also for an empty payload). Returns a
// negative errno on failure: -EINVAL (NULL argument), -ECONNRESET (daemon
// gone), -EBADMSG (malformed event), -EMSGSIZE (a payload shorter than its
// type's registered length: the event is dropped), -ENOMEM, -ETIMEDOUT (no
// event within the handle's timeout; the handle stays usable). Blocks. On
// the shared-memory channel, makes no system call while events keep coming
// (it spins, then sleeps on the doorbell). Events share the handle with
// responses (gr_api_client.h, events).
int gr_api_client_event_recv(const struct gr_api_client *, struct gr_api_event **event);

// GR_PING: an empty request, an empty answer. Returns 0 or a negative errno
// as gr_api_client_send_recv(). Blocks.
int gr_api_client_ping(struct gr_api_client *);

// GR_PING2: a 64-byte payload, echoed back; the echo is checked. Returns 0,
// -EBADMSG when the echo differs, or a negative errno as
// gr_api_client_send_recv(). Allocates nothing; on shm, makes no system
// call while the daemon is busy. Blocks.
int gr_api_client_ping2(struct gr_api_client *);

#ifdef __cplusplus
}
#endif
