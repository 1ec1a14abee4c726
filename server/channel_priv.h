// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What the pollers call on the channel registry. Each function walks the
// channels assigned to one poller and must be called by that poller inside
// an RCU read-side critical section.

#pragma once

#include "gr_api_server.h"

// Where a poller's buffer puts the request it copies out of a ring: this far
// past a multiple of GR_API_SERVER_PAYLOAD_ALIGN, so that the payload,
// right after the 12-byte header, starts at one.
#define CHANNEL_REQ_BUF_SKEW 4
_Static_assert(
	(CHANNEL_REQ_BUF_SKEW + sizeof(struct gr_api_request)) % GR_API_SERVER_PAYLOAD_ALIGN == 0,
	"a request's payload is aligned in the poller's buffer"
);

// Serve every channel of this poller once: flush its response backlog, then
// take a bounded batch of requests. req_buf holds SHMCHAN_MSG_MAX bytes and
// starts CHANNEL_REQ_BUF_SKEW past an aligned address.
// Returns the number of messages moved (0: nothing to do).
unsigned channel_poll(unsigned poller_id, void *req_buf);

// Arm the doorbell of every channel of this poller, issue one full fence
// (which also orders the caller's stores before the re-checks), then
// re-check their rings: a channel with a response backlog is armed for room
// in its response ring and re-checked by retrying the backlog, any other one
// is armed for a request. Returns the number of channels with work pending (the poller must
// not sleep then). Sets *timeout_ms to how long the poller may sleep: -1
// (until a doorbell rings), or the time left before the slow-client limit of
// the first backlog to expire.
unsigned channel_arm(unsigned poller_id, int *timeout_ms);

// Clear the request doorbell flag of every channel of this poller.
void channel_disarm(unsigned poller_id);
