// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The daemon's clients as GR_SHM_CLIENT_LIST reports them, for the handler
// and for the telemetry endpoint.

#pragma once

#include <gr_shm.h>

// A malloc'ed array (*infos, the caller frees it) of every connection, in
// accept order; *n is how many. Under the handler lock, any thread. Returns
// 0 or -ENOMEM.
int clients_collect(struct gr_shm_client_info **infos, unsigned *n);
