// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The clients' side of EMBED_STREAM_LAZY_STATS (embed_stream.h), for the
// tests that count the streams embed_stream_app started and released.

#pragma once

#include "embed_stream.h"

#include <gr_api_client.h>

// The producers' counts of embed_stream_app, asked on c; a failure ends
// the test (check.h).
struct embed_stream_lazy_stats_resp embed_stream_stats_get(struct gr_api_client *c);
