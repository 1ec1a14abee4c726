// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// GR_SHM_ECHO: the request's payload back, of any length.

#include "api.h"

#include <gr_shm.h>

// The response is the request's payload itself (copied out by the
// transport before the dispatch returns): no allocation, whatever the size.
static struct gr_api_out echo(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)ctx;
	return gr_api_out_borrowed(0, len, request);
}

static struct gr_api_handler handlers_echo_array[] = {
	GR_API_HANDLER_INIT(GR_SHM_ECHO, echo),
};
API_HANDLER_TABLE(handlers_echo, handlers_echo_array);
