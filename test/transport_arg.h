// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The transport a test program is told to use on its command line, for the
// programs that run once over the socket and once over a channel.

#pragma once

#include "check.h"

#include <gr_api_client.h>

#include <errno.h>
#include <stddef.h>
#include <string.h>

// "socket" or "shm" as the client library's transport; anything else fails
// the test.
static inline enum gr_api_transport transport_arg(const char *arg) {
	if (strcmp(arg, "socket") == 0)
		return GR_API_TRANSPORT_SOCKET;
	CHECK(strcmp(arg, "shm") == 0, "transport '%s' is not socket or shm", arg);
	return GR_API_TRANSPORT_SHM;
}

// Connect to sock on the transport named (as transport_arg() reads it),
// with the adaptive spin and, unless NULL, the given version in the hello;
// fails the test, with the library's reason, unless the connection is up on
// that transport.
static inline struct gr_api_client *
connect_forced(const char *sock, const char *transport, const char *version) {
	struct gr_api_client_opts opts = GR_API_CLIENT_OPTS_INIT;
	opts.transport = transport_arg(transport);
	opts.version = version;
	struct gr_api_client *c = gr_api_client_connect_opts(sock, &opts);
	CHECK(c != NULL, "connect %s: %s", sock, gr_api_client_last_error());
	CHECK(gr_api_client_transport(c) == opts.transport, "%s transport was forced", transport);
	return c;
}
