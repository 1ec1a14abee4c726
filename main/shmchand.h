// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Daemon-wide configuration and logging.

#pragma once

#include <gr_api_server.h>
#include <gr_shm.h>
#include <rte_log.h>

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

enum hugepage_mode {
	HUGEPAGES_AUTO, // use hugepages if the EAL finds any, else --no-huge
	HUGEPAGES_ON,
	HUGEPAGES_OFF, // --no-huge: memfd channels only
};

struct shmchand_config {
	// What the server library serves with: the options, then after EAL
	// init whether memzones are offered (a primary with hugepage files
	// accepts secondaries), the file prefix and whether EAL runs
	// telemetry (then the /shmchan/ endpoints are served).
	struct gr_api_server_conf server;
	enum hugepage_mode hugepages;
	bool verbose;
	char file_prefix[64];
};

extern struct shmchand_config shmchand_config;

extern int shmchand_logtype;

// A log line reads as a sentence after "shmchand: "; the function that
// wrote it is named in debug lines only, for whoever reads the code.
#define LOG(level, fmt, ...)                                                                       \
	rte_log(RTE_LOG_##level,                                                                   \
		shmchand_logtype,                                                                  \
		"shmchand: %s%s" fmt "\n",                                                         \
		RTE_LOG_##level == RTE_LOG_DEBUG ? __func__ : "",                                  \
		RTE_LOG_##level == RTE_LOG_DEBUG ? ": " : "",                                      \
		##__VA_ARGS__)
