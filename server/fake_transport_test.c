// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "fake_transport_test.h"

#include <string.h>

void fake_transport_wake(struct gr_api_ctx *ctx) {
	(void)ctx;
}

struct gr_api_out fake_status_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	uint32_t status;

	(void)len;
	(void)ctx;
	memcpy(&status, request, sizeof(status));
	return gr_api_out(status, 0, NULL);
}
