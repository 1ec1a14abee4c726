// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The requests of test/embed_types_app.c, an application that fills the
// handler registry and names its module, for the introspection tests
// (test/shmchanctl_types.sh).

#pragma once

#include <gr_api.h>

#include <stdint.h>

#define EMBED_TYPES_MODULE 0x7e54
#define EMBED_TYPES_MODULE_NAME "embed_types"

// The prefix sums of n values: a request with a trailing array, checked
// with GR_API_REQ_ARRAY_CHECK (EINVAL when n disagrees with the length),
// answered with one built by GR_API_RESP_ARRAY_ALLOC.
#define EMBED_TYPES_SUMS GR_MSG_TYPE(EMBED_TYPES_MODULE, 1)
struct embed_types_sums_req {
	uint32_t n;
	uint32_t values[];
};
struct embed_types_sums_resp {
	uint32_t n;
	uint32_t reserved;
	uint64_t sums[];
};
GR_REQ(EMBED_TYPES_SUMS, struct embed_types_sums_req, struct embed_types_sums_resp);

// A handler that calls gr_api_server_handler_unregister() of its own
// type: its status is what the call returned (EDEADLK), and it stays.
#define EMBED_TYPES_UNREGISTER_SELF GR_MSG_TYPE(EMBED_TYPES_MODULE, 2)
GR_REQ(EMBED_TYPES_UNREGISTER_SELF, struct gr_empty, struct gr_empty);

// Unregistered by the application's main thread at SIGUSR1.
#define EMBED_TYPES_VICTIM GR_MSG_TYPE(EMBED_TYPES_MODULE, 3)
GR_REQ(EMBED_TYPES_VICTIM, struct gr_empty, struct gr_empty);

// The handlers that fill the registry up to GR_API_SERVER_HANDLERS_MAX:
// EMBED_TYPES_FILL(i), named EMBED_TYPES_FILL_<i>, from i 0.
#define EMBED_TYPES_FILL(i) GR_MSG_TYPE(EMBED_TYPES_MODULE, 0x100 + (i))
