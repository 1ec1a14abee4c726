// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A C++17 program built on the public headers and the client library: the
// wire sizes agree with C's (an empty payload is 0 bytes in both), and it
// talks to the daemon: ping, ping2 through gr_api_client_fd() and try_recv,
// and Grout's stream loop over the log levels.
//
// usage: cpp_consumer SOCK (under test/with_daemon.sh)

#include "cpp_consumer_sizes.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <poll.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static_assert(GR_PING_REQ_LEN == 0, "an empty request is 0 bytes in C++ too");
static_assert(GR_SHM_STATS_REQ_LEN == 0, "an empty request is 0 bytes in C++ too");
static_assert(GR_PING2_REQ_LEN == GR_PING2_LEN, "ping2 is 64 bytes");

// A poll on the fd that takes longer than this means no wake-up came.
static constexpr int WAKE_MS = 5000;

#define CHECK(cond, what)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			std::fprintf(                                                              \
				stderr,                                                            \
				"%s:%d: %s: %s (%s)\n",                                            \
				__FILE__,                                                          \
				__LINE__,                                                          \
				#cond,                                                             \
				what,                                                              \
				std::strerror(errno)                                               \
			);                                                                         \
			return EXIT_FAILURE;                                                       \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: cpp_consumer SOCK");
	const std::array<size_t, CPP_CONSUMER_N_SIZES> cpp_sizes = {CPP_CONSUMER_SIZES};
	for (size_t i = 0; i < cpp_sizes.size(); i++) {
		if (cpp_sizes[i] != cpp_consumer_c_sizes[i]) {
			std::fprintf(
				stderr,
				"size %zu: C++ %zu, C %zu\n",
				i,
				cpp_sizes[i],
				cpp_consumer_c_sizes[i]
			);
			return EXIT_FAILURE;
		}
	}

	gr_api_client_opts opts = GR_API_CLIENT_OPTS_INIT;
	opts.version = "cpp_consumer";
	gr_api_client *c = gr_api_client_connect_opts(argv[1], &opts);
	CHECK(c != nullptr, gr_api_client_last_error());
	CHECK(gr_api_client_ping(c) == 0, "GR_PING");

	gr_ping2 req{}, rx{};
	for (size_t i = 0; i < sizeof(req.payload); i++)
		req.payload[i] = static_cast<char>(i * 7);
	long id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
	CHECK(id > 0, "send GR_PING2");
	int fd = gr_api_client_fd(c);
	CHECK(fd >= 0, "gr_api_client_fd");
	long len;
	while ((len = gr_api_client_try_recv_into(c, static_cast<uint32_t>(id), &rx, sizeof(rx))) <
	       0) {
		CHECK(errno == EAGAIN, "try_recv");
		int ready = gr_api_client_poll_prepare(c);
		CHECK(ready >= 0, "poll_prepare");
		if (ready == 0) {
			pollfd pfd{fd, POLLIN, 0};
			CHECK(poll(&pfd, 1, WAKE_MS) == 1, "no wake-up");
		}
		CHECK(gr_api_client_poll_done(c) == 0, "poll_done");
	}
	CHECK(len == GR_PING2_LEN && std::memcmp(&rx, &req, sizeof(rx)) == 0, "GR_PING2 echo");

	gr_log_level_list_req list{};
	const gr_log_entry *e;
	unsigned levels = 0;
	int ret;
	gr_api_client_stream_foreach (e, ret, c, GR_LOG_LEVEL_LIST, sizeof(list), &list) {
		CHECK(e->level >= GR_LOG_LEVEL_MIN && e->level <= GR_LOG_LEVEL_MAX, e->name);
		levels++;
	}
	CHECK(ret == 0 && levels > 0, "GR_LOG_LEVEL_LIST");
	std::printf(
		"C++17 consumer on %s: %zu wire sizes as in C, ping, ping2, %u log types: ok\n",
		gr_api_client_transport(c) == GR_API_TRANSPORT_SHM ? "shm" : "socket",
		cpp_sizes.size(),
		levels
	);
	gr_api_client_disconnect(c);
	return EXIT_SUCCESS;
}
