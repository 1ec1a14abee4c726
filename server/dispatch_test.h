// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The server's own handlers that the unit tests link (dispatch_sources in
// server/meson.build: Grout's main module, the log levels, the echo).

#pragma once

// Register them as gr_api_server_start() registers its own. Returns 0, or
// the error of the first table that fails.
int dispatch_test_handlers(void);
