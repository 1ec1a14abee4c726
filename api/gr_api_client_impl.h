// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// For programs written against Grout's client API: include this header in
// one unit of the program, first, before any other gr_*.h header, as
// Grout's own gr_api_client_impl.h is included, and link libgr_api_client
// (pkg-config gr_api_client). Grout's header holds Grout's client; this one
// holds none: the client is the library's, so the program gets the
// shared-memory channel without a change of its source.
//
// What it does: it includes the public headers (gr_api.h, gr_api_client.h,
// gr_shm.h, gr_clock.h), and makes GR_REQ(), GR_REQ_STREAM() and GR_EVENT()
// register, from a constructor, each message they declare in this unit
// (these headers' and those the program includes after them) with the
// library: gr_api_message_name() then knows its name and
// gr_api_client_recv() and gr_api_client_event_recv() check its responses'
// length, as Grout's header does for its own. Two different messages of one
// type are a programming error: the program prints both names and aborts
// before main(), as with Grout's header. It defines nothing else, and
// nothing that the library defines. It includes the system headers Grout's
// includes, which Grout's programs rely on (getopt(), the string and socket
// calls, sys/queue.h's lists, assert()).

#pragma once

#ifdef GR_REQ
#error "gr_api_client_impl.h must be included first, before any other gr_*.h header"
#endif

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

// Register one message, and stop the program if another message has its
// type (defined below, once gr_api.h declared gr_api_message_register()).
static void
gr_api_client_impl_register_(uint32_t type, const char *name, size_t resp_size, bool stream);

#define GR_MESSAGE_REGISTER(func, type, name, resp_size, stream)                                   \
	static void __attribute__((constructor, used)) func(void) {                                \
		gr_api_client_impl_register_((type), (name), (resp_size), (stream));               \
	}

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_clock.h>
#include <gr_shm.h>

static void
gr_api_client_impl_register_(uint32_t type, const char *name, size_t resp_size, bool stream) {
	int ret = gr_api_message_register(type, name, resp_size, stream);

	if (ret == -EEXIST) {
		fprintf(stderr,
			"fatal: message %s has the type 0x%08x of message %s\n",
			name,
			(unsigned)type,
			gr_api_message_name(type));
		abort();
	}
	if (ret < 0)
		fprintf(stderr,
			"gr_api_client: message %s (0x%08x) not registered (%s): its responses "
			"are not size-checked\n",
			name,
			(unsigned)type,
			ret == -ENOSPC ? "too many messages" : "out of memory");
}
