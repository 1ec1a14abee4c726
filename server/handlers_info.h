// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What GR_SHM_DAEMON_INFO answers (handlers_info.c).

#pragma once

#include "gr_api_server.h"

#include <gr_shm.h>

// Fill info from what the server runs with (gr_api_server_info_get()) and
// the program that runs it. Any thread.
void server_daemon_info(const struct gr_api_server_info *server, struct gr_shm_daemon_info *info);
