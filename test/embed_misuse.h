// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The requests of test/embed_misuse_app.c, an application whose handlers
// misuse libgr_api_server, and of its client test/embed_handler_misuse.c.

#pragma once

#include <gr_api.h>

#include <stdint.h>

#define EMBED_MISUSE_MODULE 0x7e5b

// Returns a payload of GR_API_MAX_MSG_LEN + 1 bytes.
#define EMBED_MISUSE_BIG GR_MSG_TYPE(EMBED_MISUSE_MODULE, 1)
GR_REQ(EMBED_MISUSE_BIG, struct gr_empty, struct gr_empty);

// Returns a descriptor with its response.
#define EMBED_MISUSE_FDS GR_MSG_TYPE(EMBED_MISUSE_MODULE, 2)
GR_REQ(EMBED_MISUSE_FDS, struct gr_empty, struct gr_empty);

// Returns 8 bytes of payload NULL.
#define EMBED_MISUSE_NULL GR_MSG_TYPE(EMBED_MISUSE_MODULE, 3)
GR_REQ(EMBED_MISUSE_NULL, struct gr_empty, struct gr_empty);

// A stream: an int32_t 1, then what gr_api_send() returned for a response
// of GR_API_MAX_MSG_LEN + 1 bytes, then what it returned for 8 bytes of
// NULL; ends as the handler returns (status 0).
#define EMBED_MISUSE_STREAM GR_MSG_TYPE(EMBED_MISUSE_MODULE, 4)
struct embed_misuse_item {
	int32_t value;
};
GR_REQ_STREAM(EMBED_MISUSE_STREAM, struct gr_empty, struct embed_misuse_item);

// What gr_api_server_lock(), _unlock(), _handler_register(), _start() and
// _stop() returned in the handler.
#define EMBED_MISUSE_LOCK GR_MSG_TYPE(EMBED_MISUSE_MODULE, 5)
struct embed_misuse_lock_resp {
	int32_t lock;
	int32_t unlock;
	int32_t register_;
	int32_t start;
	int32_t stop;
};
GR_REQ(EMBED_MISUSE_LOCK, struct gr_empty, struct embed_misuse_lock_resp);
