// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// For the unit tests that call api_dispatch() with no socket or channel
// (api_trace_test.c, type_stats_test.c): a transport whose responses go to
// the test's send function, and a handler that answers with the status its
// request names.

#pragma once

#include "api.h"

#include <stdint.h>

// A deferred reply's wake-up: nothing to wake, the test calls
// api_deferred_flush() itself.
void fake_transport_wake(struct gr_api_ctx *ctx);

// A struct api_transport initialiser: responses go to send_fn (the
// signature of api_transport.send), no events, no streams in turns.
#define FAKE_TRANSPORT(send_fn)                                                                    \
	{ .name = "fake", .send = (send_fn), .deferred_wake = fake_transport_wake, }

// Answers with the status its payload's first 4 bytes hold.
struct gr_api_out fake_status_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx);

// A struct gr_api_handler initialiser: fake_status_handler() for the
// request type type, whose payload is at least the status.
#define FAKE_STATUS_HANDLER(type)                                                                  \
	{                                                                                          \
		.name = "TEST_STATUS", .request_type = (type), .request_len = sizeof(uint32_t),    \
		.callback = fake_status_handler,                                                   \
	}
