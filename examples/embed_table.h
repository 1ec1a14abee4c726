// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The control API of embed_table (embed_table.c), a DPDK application that
// serves a small table of its own through libgr_api_server: what its
// clients include. A module of its own, as every application's requests
// are: type values (EMBED_TABLE_MODULE << 16) | id.

#pragma once

#include <gr_api.h>

#include <stdint.h>

#define EMBED_TABLE_MODULE 0x4554 // "ET"

// Longest key, NUL included.
#define EMBED_TABLE_KEY_LEN 32

// Set key to value (a new key, or a new value for one there). Answers
// ENOSPC when the table is full, EINVAL for a key not NUL-terminated or
// empty. Publishes EMBED_TABLE_EVENT_CHANGED.
#define EMBED_TABLE_SET GR_MSG_TYPE(EMBED_TABLE_MODULE, 0x0001)
struct embed_table_set_req {
	char key[EMBED_TABLE_KEY_LEN];
	uint64_t value;
};
GR_REQ(EMBED_TABLE_SET, struct embed_table_set_req, struct gr_empty);

// The value of key; ENOENT if the table has none.
#define EMBED_TABLE_GET GR_MSG_TYPE(EMBED_TABLE_MODULE, 0x0002)
struct embed_table_get_req {
	char key[EMBED_TABLE_KEY_LEN];
};
struct embed_table_get_resp {
	uint64_t value;
};
GR_REQ(EMBED_TABLE_GET, struct embed_table_get_req, struct embed_table_get_resp);

// An entry changed: by EMBED_TABLE_SET, or by the application itself (its
// timer counts EMBED_TABLE_TICKS_KEY up every EMBED_TABLE_TICK_MS).
#define EMBED_TABLE_EVENT_CHANGED GR_MSG_TYPE(EMBED_TABLE_MODULE, 0x1001)
struct embed_table_event_changed {
	char key[EMBED_TABLE_KEY_LEN];
	uint64_t value;
};

#define EMBED_TABLE_TICKS_KEY "ticks"
#define EMBED_TABLE_TICK_MS 100
