// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The API trace: a flight recorder of the last server_conf.trace_size
// requests and their responses (GR_SHM_TRACE_*). Every entry is written
// under the handler lock by the thread that dispatched the request, into
// a ring allocated when the trace is first switched on: a full ring
// overwrites its oldest entry, so recording never waits and never
// allocates.

#pragma once

#include "api.h"

#include <stdbool.h>
#include <stdint.h>

// Whether requests are recorded now. Handler lock.
extern bool trace_recording;

// Record req, answered with status (its last response's payload resp_len
// bytes; flags GR_SHM_TRACE_DEFERRED or 0), taken off its transport at
// TSC taken, its handler run from start to end. Handler lock held,
// trace_recording set.
void trace_record_locked(
	const struct gr_api_ctx *ctx,
	const struct gr_api_request *req,
	const void *payload,
	uint32_t status,
	uint32_t resp_len,
	uint32_t flags,
	uint64_t taken,
	uint64_t start,
	uint64_t end
);

// Record the deferred reply to request id of type, sent with status and
// len bytes. Handler lock held, trace_recording set.
void trace_reply_locked(
	const struct gr_api_ctx *ctx,
	uint32_t id,
	uint32_t type,
	uint32_t status,
	uint32_t len
);

// Switch the trace off and free what it holds (the server's stop). Takes
// the handler lock.
void trace_fini(void);
