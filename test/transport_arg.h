// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The transport a test program is told to use on its command line, for the
// programs that run once over the socket and once over a channel.

#pragma once

#include "check.h"

#include <gr_api_client.h>

#include <string.h>

// "socket" or "shm" as the client library's transport; anything else fails
// the test.
static inline enum gr_api_transport transport_arg(const char *arg) {
	if (strcmp(arg, "socket") == 0)
		return GR_API_TRANSPORT_SOCKET;
	CHECK(strcmp(arg, "shm") == 0, "transport '%s' is not socket or shm", arg);
	return GR_API_TRANSPORT_SHM;
}
