// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The clients' side of EMBED_STREAM_LAZY and EMBED_STREAM_LAZY_STATS
// (embed_stream.h), for the tests of the streams embed_stream_app produces
// in turns. A failure ends the test (check.h).

#pragma once

#include "embed_stream.h"

#include <gr_api_client.h>

#include <stdint.h>

// Start a stream of responses responses of len bytes on c and read reads
// of them. Returns the stream's request id.
uint32_t
embed_stream_lazy_begin(struct gr_api_client *c, uint32_t responses, uint32_t len, int reads);

// The producers' counts of embed_stream_app, asked on c.
struct embed_stream_lazy_stats_resp embed_stream_stats_get(struct gr_api_client *c);
