// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Wire format of the shmchan control API. Identical on the Unix socket and on
// the shared-memory channel. All integers are in host byte order: both ends
// always share one machine. Compiles as ISO C11 and as C++ (11 and later).

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

// Declare a request: GR_REQ(GR_PING, struct gr_empty, struct gr_empty) gives
// GR_PING_REQ_LEN and GR_PING_RESP_LEN, the minimum request payload length
// the daemon accepts and the length of the response payload (0 for
// struct gr_empty).
#define GR_REQ(code, req_struct, resp_struct)                                                      \
	typedef req_struct code##_req_t;                                                           \
	typedef resp_struct code##_resp_t;                                                         \
	enum {                                                                                     \
		code##_REQ_LEN = GR_PAYLOAD_LEN(req_struct),                                       \
		code##_RESP_LEN = GR_PAYLOAD_LEN(resp_struct)                                      \
	}

// Declare a stream request: it is answered by any number of responses with a
// resp_struct payload, all with the request's id, and ends with an empty one.
// Spelled out, not forwarded to GR_REQ: forwarding would expand code (itself
// a macro) before the ## pastes could use its name.
#define GR_REQ_STREAM(code, req_struct, resp_struct)                                               \
	typedef req_struct code##_req_t;                                                           \
	typedef resp_struct code##_resp_t;                                                         \
	enum {                                                                                     \
		code##_REQ_LEN = GR_PAYLOAD_LEN(req_struct),                                       \
		code##_RESP_LEN = GR_PAYLOAD_LEN(resp_struct)                                      \
	}

// Declare an event and the struct its payload starts with.
#define GR_EVENT(code, payload_struct)                                                             \
	typedef payload_struct code##_ev_t;                                                        \
	enum { code##_EV_LEN = GR_PAYLOAD_LEN(payload_struct) }

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
	uint8_t data[GR_PING2_LEN];
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
// (rte_log_set_level_pattern). A level out of range, or a pattern empty or
// not NUL-terminated, is EINVAL.
struct gr_log_level_set_req {
	char pattern[GR_LOG_NAME_LEN];
	uint32_t level;
};
GR_REQ(GR_LOG_LEVEL_SET, struct gr_log_level_set_req, struct gr_empty);
