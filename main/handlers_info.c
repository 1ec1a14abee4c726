// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Requests of our module that need no channel state: daemon info and echo.

#include "api.h"
#include "shmchand.h"

#include <gr_shm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

uint32_t shmchand_backings_offered(void) {
	uint32_t backings = GR_SHM_BACKING_MEMFD;

	if (!shmchand_config.shm_enabled)
		return 0;
	// A primary without hugepage files accepts no secondary.
	if (shmchand_config.have_hugepages)
		backings |= GR_SHM_BACKING_MEMZONE;
	return backings;
}

// Main thread or poller, under the handler lock.
static struct api_out daemon_info(const void *request, uint32_t len, struct api_ctx *ctx) {
	struct gr_shm_daemon_info *info = calloc(1, sizeof(*info));

	(void)request;
	(void)len;
	(void)ctx;
	if (info == NULL)
		return api_out(ENOMEM, 0, NULL);
	info->pid = getpid();
	info->pollers = shmchand_config.pollers;
	info->poller_spin_us = shmchand_config.spin_us;
	info->backings = shmchand_backings_offered();
	snprintf(info->file_prefix, sizeof(info->file_prefix), "%s", shmchand_config.file_prefix);
	return api_out(0, sizeof(*info), info);
}

// The response is the request's payload itself (copied out by the
// transport before the dispatch returns): no allocation, whatever the size.
static struct api_out echo(const void *request, uint32_t len, struct api_ctx *ctx) {
	(void)ctx;
	return api_out_borrowed(0, len, request);
}

API_HANDLER(GR_SHM_DAEMON_INFO, daemon_info);
API_HANDLER(GR_SHM_ECHO, echo);
