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
