// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The requests of test/embed_stream_app.c, an application on
// libgr_api_server whose handlers stream, and of its clients: the order in
// which the server serves the requests of several clients
// (test/chan_turn_order.c).

#pragma once

#include <gr_api.h>

#include <stdint.h>

#define EMBED_STREAM_MODULE 0x7e5c

// Where the application and its clients meet besides the socket: files in
// the socket's folder.
#define EMBED_STREAM_HELD_FILE "stream-held"
#define EMBED_STREAM_RELEASE_FILE "stream-release"

// Appends tag to the order of service, then sends responses responses of
// len bytes each (at most GR_API_MAX_MSG_LEN; from 4 bytes on, each starts
// with its number, a u32 counted from 0), then the end.
#define EMBED_STREAM_TAGGED GR_MSG_TYPE(EMBED_STREAM_MODULE, 1)
struct embed_stream_tagged_req {
	uint8_t tag;
	uint8_t pad[3];
	uint32_t responses;
	uint32_t len;
};
GR_REQ_STREAM(EMBED_STREAM_TAGGED, struct embed_stream_tagged_req, struct gr_empty);

// Appends tag to the order of service, creates EMBED_STREAM_HELD_FILE, and
// holds the server (the handler lock, its thread) until
// EMBED_STREAM_RELEASE_FILE exists; removes both, and answers.
#define EMBED_STREAM_HOLD GR_MSG_TYPE(EMBED_STREAM_MODULE, 2)
struct embed_stream_hold_req {
	uint8_t tag;
};
GR_REQ(EMBED_STREAM_HOLD, struct embed_stream_hold_req, struct gr_empty);

// The tags appended since the last EMBED_STREAM_ORDER, in order, as the
// payload (at most EMBED_STREAM_ORDER_MAX of them).
#define EMBED_STREAM_ORDER GR_MSG_TYPE(EMBED_STREAM_MODULE, 3)
#define EMBED_STREAM_ORDER_MAX 4096
GR_REQ(EMBED_STREAM_ORDER, struct gr_empty, struct gr_empty);

// Appends 'L' to the order of service, then answers with a stream produced
// in turns (gr_api_stream_start()): responses numbered responses of len
// bytes (at least 4), as EMBED_STREAM_TAGGED's. Its producer appends 'l'
// to the order at each turn that follows another request's service (so a
// run of turns is one 'l'). EBUSY: EMBED_STREAM_LAZY_MAX streams are open.
#define EMBED_STREAM_LAZY GR_MSG_TYPE(EMBED_STREAM_MODULE, 4)
#define EMBED_STREAM_LAZY_MAX 16
struct embed_stream_lazy_req {
	uint32_t responses;
	uint32_t len;
};
GR_REQ_STREAM(EMBED_STREAM_LAZY, struct embed_stream_lazy_req, struct gr_empty);

// The producers' counts since the application started.
#define EMBED_STREAM_LAZY_STATS GR_MSG_TYPE(EMBED_STREAM_MODULE, 5)
struct embed_stream_lazy_stats_resp {
	uint32_t started; // streams gr_api_stream_start() took
	uint32_t released; // their states released
	uint64_t produced; // responses the producers sent
	uint64_t turns; // producer turns
};
GR_REQ(EMBED_STREAM_LAZY_STATS, struct gr_empty, struct embed_stream_lazy_stats_resp);

// A handler and a producer that misuse the stream API: one response of
// struct embed_stream_misuse_resp with what each call returned, then the
// end, whose status is the producer's wrong return (EINVAL).
#define EMBED_STREAM_MISUSE GR_MSG_TYPE(EMBED_STREAM_MODULE, 6)
struct embed_stream_misuse_resp {
	int32_t ctx_null; // gr_api_stream_start(NULL, ...): -EINVAL
	int32_t produce_null; // no producer: -EINVAL
	int32_t other_ctx; // a ctx not the handler's: -EPERM
	int32_t started; // the start: 0
	int32_t twice; // a second start: -EALREADY
	int32_t defer_errno; // gr_api_defer() after it: EALREADY
	int32_t handler_send; // gr_api_send() by the handler after it: -EPERM
	int32_t producer_start; // gr_api_stream_start() in the producer: -EALREADY
	int32_t producer_defer_errno; // gr_api_defer() in the producer: EALREADY
};
GR_REQ_STREAM(EMBED_STREAM_MISUSE, struct gr_empty, struct embed_stream_misuse_resp);
