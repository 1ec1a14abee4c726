// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The requests of test/embed_deferred_app.c, an application on
// libgr_api_server whose handlers keep their requests open
// (gr_api_defer()) for a thread of its own to answer, and of its client
// (test/deferred_replies.c).

#pragma once

#include <gr_api.h>

#include <stdint.h>

#define EMBED_DEFERRED_MODULE 0x7e5d

// How EMBED_DEFERRED_HOLD's handler misbehaves, or streams, around its
// gr_api_defer().
enum embed_deferred_mode {
	EMBED_DEFERRED_PLAIN,
	// Three stream responses (each its value) before gr_api_defer(); the
	// reply is then the stream's empty end.
	EMBED_DEFERRED_STREAM,
	// gr_api_defer() twice: the reply's value is the second one's errno.
	EMBED_DEFERRED_TWICE,
	// gr_api_send() after gr_api_defer(): the reply's value is its -errno.
	EMBED_DEFERRED_SEND_AFTER,
	// Returns a payload (of value + 1) after gr_api_defer(): not sent.
	EMBED_DEFERRED_RETURN,
};

// Kept open by the handler, and answered by the application's thread at
// an EMBED_DEFERRED_RELEASE with value (a u32) as the payload. If
// gr_api_defer() fails, answered at once with its errno as the status.
#define EMBED_DEFERRED_HOLD GR_MSG_TYPE(EMBED_DEFERRED_MODULE, 1)
struct embed_deferred_hold_req {
	uint32_t value;
	uint32_t mode; // enum embed_deferred_mode
};
GR_REQ(EMBED_DEFERRED_HOLD, struct embed_deferred_hold_req, struct gr_empty);

// Answered at once; the application's thread then answers the count oldest
// requests held (0: all of them) with a payload of reply_len bytes (0: the
// value, 4 bytes), from its own thread.
#define EMBED_DEFERRED_RELEASE GR_MSG_TYPE(EMBED_DEFERRED_MODULE, 2)
struct embed_deferred_release_req {
	uint32_t count;
	uint32_t reply_len;
};
GR_REQ(EMBED_DEFERRED_RELEASE, struct embed_deferred_release_req, struct gr_empty);

// What gr_api_deferred_reply() returned so far, by kind, and the requests
// held now.
#define EMBED_DEFERRED_STATS GR_MSG_TYPE(EMBED_DEFERRED_MODULE, 3)
struct embed_deferred_stats {
	uint32_t held;
	uint32_t replied; // 0
	uint32_t reset; // -ECONNRESET: the client was gone
	uint32_t refused; // -EMSGSIZE or -EINVAL
	uint32_t other;
};
GR_REQ(EMBED_DEFERRED_STATS, struct gr_empty, struct embed_deferred_stats);
