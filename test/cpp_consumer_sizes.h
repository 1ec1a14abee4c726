// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Every wire size of the public headers, listed once: test/cpp_consumer.cpp
// compares the values C (cpp_consumer_sizes.c) and C++ give them.

#pragma once

#include <stddef.h>

#define CPP_CONSUMER_SIZES                                                                         \
	sizeof(struct gr_api_request), sizeof(struct gr_api_response),                             \
		sizeof(struct gr_api_event), sizeof(struct gr_hello_req), GR_HELLO_REQ_LEN,        \
		GR_HELLO_RESP_LEN, GR_PING_REQ_LEN, GR_PING_RESP_LEN, GR_PING2_REQ_LEN,            \
		GR_PING2_RESP_LEN, GR_SHM_ATTACH_REQ_LEN, GR_SHM_ATTACH_RESP_LEN,                  \
		GR_SHM_STATS_REQ_LEN, GR_SHM_STATS_RESP_LEN, GR_SHM_CHANNEL_LIST_REQ_LEN,          \
		GR_SHM_CHANNEL_LIST_RESP_LEN, GR_SHM_DAEMON_INFO_REQ_LEN,                          \
		GR_SHM_DAEMON_INFO_RESP_LEN, GR_SHM_ECHO_REQ_LEN, GR_SHM_ECHO_RESP_LEN
#define CPP_CONSUMER_N_SIZES 20

#ifdef __cplusplus
extern "C" {
#endif
extern const size_t cpp_consumer_c_sizes[CPP_CONSUMER_N_SIZES];
#ifdef __cplusplus
}
#endif
