// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// GR_SHM_ECHO: the request's payload back, of any length.

#include "api.h"

#include <gr_shm.h>

// The response is the request's payload itself (copied out by the
// transport before the dispatch returns): no allocation, whatever the size.
static struct api_out echo(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)ctx;
	return api_out_borrowed(0, len, request);
}

API_HANDLER(GR_SHM_ECHO, echo);
