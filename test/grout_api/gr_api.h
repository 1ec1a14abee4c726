// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Grout's client API as Grout's own api/gr_api.h declares it, restated for
// the ABI test (test/grout_abi.c): the prototypes, the struct layouts and
// the contracts of its macros, at Grout v0.17.0 and, with GROUT_MAIN 1, on
// Grout's main branch, whose hello has a response and whose client has
// gr_api_client_info(). A program built against this header alone, with no
// header of shmchan on its include path, is a Grout program compiled with
// Grout's headers; the test links it against libgr_api_client. The facts
// are Grout's; the text is this project's (docs/protocol.md, "Grout's
// client API", says which facts are read from Grout's tree and which are
// this project's reading). The RFC's additions (GR_PING, GR_PING2 and
// their calls) come last.
//
// GNU C, as Grout's header: an empty struct and statement expressions.

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef GROUT_MAIN
#define GROUT_MAIN 0
#endif

// The API version a Grout client says hello with: 9 at v0.17.0, 10 on main.
#define GR_API_VERSION (GROUT_MAIN ? 10 : 9)

struct gr_api_request {
	uint32_t id;
	uint32_t type;
	uint32_t payload_len;
};

struct gr_api_response {
	uint32_t for_id;
	uint32_t status;
	uint32_t payload_len;
};

#define GR_API_MAX_MSG_LEN (128 * 1024)
#define GR_MSG_TYPE(module, id) (((uint32_t)(0xffff & (module)) << 16) | (0xffff & (id)))
#define GR_EVENT_ALL UINT32_C(0xffffffff)
#define GR_DEFAULT_SOCK_PATH "/run/grout.sock"

// The handle; one per thread.
struct gr_api_client;

// NULL with errno on failure; says hello itself.
struct gr_api_client *gr_api_client_connect(const char *sock_path);
int gr_api_client_disconnect(struct gr_api_client *);

// The request's id, or a negative errno.
long int
gr_api_client_send(struct gr_api_client *, uint32_t req_type, size_t tx_len, const void *tx_data);

// 0 or a negative errno; *rx_data is malloc'ed (the caller frees it), set
// only when the response has a payload; -EMSGSIZE for a payload shorter than
// req_type's response, unless it is a stream's empty last one.
int gr_api_client_recv(struct gr_api_client *, uint32_t req_type, uint32_t for_id, void **rx_data);

// Inline in Grout's header: the program calls the library's send and recv.
static inline int gr_api_client_send_recv(
	struct gr_api_client *client,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data,
	void **rx_data
) {
	long int id = gr_api_client_send(client, req_type, tx_len, tx_data);
	if (id < 0)
		return (int)id;
	return gr_api_client_recv(client, req_type, (uint32_t)id, rx_data);
}

// Called by the loop below when its body breaks: receive the rest of the
// stream up to its empty last response.
int __gr_api_client_stream_drain(struct gr_api_client *, uint32_t req_type, uint32_t for_id);

// The contract of Grout's stream loop: send the request, then run the body
// once per response with obj pointing at its payload (freed by the loop),
// until the empty last response (ret 0) or an error (ret < 0, no drain). A
// break frees obj and drains the rest through __gr_api_client_stream_drain()
// (its result in ret). The send's error ends it at once (ret < 0).
#define gr_api_client_stream_foreach(obj, ret, client, req_type, tx_len, tx_data)                  \
	for (long int grt_id_ = gr_api_client_send(client, req_type, tx_len, tx_data),             \
		      grt_outer_ = 0,                                                              \
		      grt_over_ = 0;                                                               \
	     ({                                                                                    \
		     bool grt_run_ = false;                                                        \
		     if (grt_outer_ == 0) {                                                        \
			     (ret) = (int)grt_id_;                                                 \
			     grt_run_ = grt_id_ >= 0;                                              \
			     grt_over_ = !grt_run_;                                                \
		     } else if (!grt_over_) {                                                      \
			     free((void *)(obj));                                                  \
			     (ret) = __gr_api_client_stream_drain(                                 \
				     client,                                                       \
				     req_type,                                                     \
				     (uint32_t)grt_id_                                             \
			     );                                                                    \
		     }                                                                             \
		     grt_run_;                                                                     \
	     });                                                                                   \
	     grt_outer_ = 1)                                                                       \
		for (void *grt_resp_ = NULL; ({                                                    \
			     (ret) = gr_api_client_recv(                                           \
				     client,                                                       \
				     req_type,                                                     \
				     (uint32_t)grt_id_,                                            \
				     &grt_resp_                                                    \
			     );                                                                    \
			     if ((ret) < 0 || grt_resp_ == NULL) {                                 \
				     free(grt_resp_);                                              \
				     grt_resp_ = NULL;                                             \
				     grt_over_ = 1;                                                \
			     } else {                                                              \
				     (obj) = grt_resp_;                                            \
			     }                                                                     \
			     grt_resp_ != NULL;                                                    \
		     });                                                                           \
		     free(grt_resp_), grt_resp_ = NULL)

// "0x%08x?" for a type never registered.
const char *gr_api_message_name(uint32_t type);

#define GR_REQ(code, req, resp)                                                                    \
	enum { code##_REQ_SIZE = sizeof(req), code##_RESP_SIZE = sizeof(resp) }
#define GR_REQ_STREAM(code, req, resp)                                                             \
	enum { code##_REQ_SIZE = sizeof(req), code##_RESP_SIZE = sizeof(resp) }
#define GR_EVENT(code, obj) enum { code##_OBJ_SIZE = sizeof(obj) }

// Size 0 in GNU C.
struct gr_empty {};

#define GR_MAIN_MODULE 0xcafe

// Grout gives this enum the underlying type uint32_t (C23); its values are
// the same in a plain GNU C enum.
enum gr_main_requests {
	GR_HELLO = GR_MSG_TYPE(GR_MAIN_MODULE, 0x1981),
	GR_LOG_PACKETS_SET,
	GR_LOG_LEVEL_LIST,
	GR_LOG_LEVEL_SET,
	GR_EVENT_SUBSCRIBE,
	GR_EVENT_UNSUBSCRIBE,
	// The RFC's, after Grout's.
	GR_PING,
	GR_PING2,
};

struct gr_hello_req {
	uint32_t api_version;
	char version[128];
};

#if GROUT_MAIN
struct gr_hello_resp {
	uint16_t max_ifaces;
};
GR_REQ(GR_HELLO, struct gr_hello_req, struct gr_hello_resp);

// The hello response of the connection.
const struct gr_hello_resp *gr_api_client_info(const struct gr_api_client *);
#else
GR_REQ(GR_HELLO, struct gr_hello_req, struct gr_empty);
#endif

struct gr_log_packets_set_req {
	bool enabled;
};
GR_REQ(GR_LOG_PACKETS_SET, struct gr_log_packets_set_req, struct gr_empty);

struct gr_log_level_list_req {
	bool show_all;
};

struct gr_log_entry {
	char name[64];
	uint32_t level;
};
GR_REQ_STREAM(GR_LOG_LEVEL_LIST, struct gr_log_level_list_req, struct gr_log_entry);

#define GR_LOG_LEVEL_MIN 1
#define GR_LOG_LEVEL_MAX 8

struct gr_log_level_set_req {
	char pattern[64];
	uint32_t level;
};
GR_REQ(GR_LOG_LEVEL_SET, struct gr_log_level_set_req, struct gr_empty);

struct gr_event_subscribe_req {
	bool suppress_self_events;
	uint32_t ev_type;
};
GR_REQ(GR_EVENT_SUBSCRIBE, struct gr_event_subscribe_req, struct gr_empty);
GR_REQ(GR_EVENT_UNSUBSCRIBE, struct gr_empty, struct gr_empty);

// The padding after ev_type is implicit in Grout's.
struct gr_api_event {
	uint32_t ev_type;
	size_t payload_len;
};

// 0 or a negative errno; *event is malloc'ed, header then payload.
int gr_api_client_event_recv(const struct gr_api_client *, struct gr_api_event **);

// ---- The RFC's additions ----

struct gr_ping2 {
	char payload[64];
};
GR_REQ(GR_PING, struct gr_empty, struct gr_empty);
GR_REQ(GR_PING2, struct gr_ping2, struct gr_ping2);

// 0 or a negative errno.
int gr_api_client_ping(struct gr_api_client *);
int gr_api_client_ping2(struct gr_api_client *);
