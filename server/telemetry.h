// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// DPDK telemetry endpoints of the server (telemetry.c).

#pragma once

// Register /shmchan/info, /shmchan/clients and /shmchan/stats, once per
// process. After EAL init with telemetry on. Returns 0 or -errno.
int telemetry_init(void);
