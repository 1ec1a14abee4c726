// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Daemon-wide configuration and logging.

#pragma once

#include <gr_shm.h>
#include <rte_log.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define SHMCHAND_DEFAULT_MODE 0660
#define SHMCHAND_DEFAULT_POLLERS 1
// Poller spin budget: long enough to catch a controller's next request in a
// tight loop, short enough that an idle daemon sleeps (docs/spin-budgets.md).
#define SHMCHAND_DEFAULT_SPIN_US 100
#define SHMCHAND_MAX_POLLERS 16
// Nice value the pollers take when the daemon may set it (CAP_SYS_NICE or
// RLIMIT_NICE): a poller is the server its clients spin-wait on, so on CPUs
// it shares with them it must not get only its 1/(n+1) share of them
// (docs/spin-budgets.md). SHMCHAND_POLLER_NICE_OFF: leave them at the
// daemon's own.
#define SHMCHAND_DEFAULT_POLLER_NICE (-20)
#define SHMCHAND_POLLER_NICE_OFF GR_SHM_POLLER_NICE_OFF
// Socket connections one client process may hold at once, and all the
// processes of one uid other than root: far below the daemon's
// SOCK_MAX_CLIENTS, so one process, or one user, cannot lock everyone else
// out (docs/reliability.md). A controller needs a handful.
#define SHMCHAND_DEFAULT_MAX_CONN_PER_PID 64
#define SHMCHAND_DEFAULT_MAX_CONN_PER_UID 256

enum hugepage_mode {
	HUGEPAGES_AUTO, // use hugepages if the EAL finds any, else --no-huge
	HUGEPAGES_ON,
	HUGEPAGES_OFF, // --no-huge: memfd channels only
};

struct shmchand_config {
	const char *sock_path;
	mode_t sock_mode;
	gid_t sock_gid; // (gid_t)-1: leave the group alone
	unsigned pollers;
	unsigned spin_us;
	int32_t poller_nice; // or SHMCHAND_POLLER_NICE_OFF
	bool shm_enabled; // false: --no-shm, every client stays on the socket
	unsigned max_conn_per_pid; // 0: no limit
	unsigned max_conn_per_uid; // 0: no limit; never applied to root
	enum hugepage_mode hugepages;
	bool verbose;
	unsigned event_backlog_msgs; // bounds of each event subscriber's backlog
	size_t event_backlog_bytes;
	size_t event_memory_bytes; // bound of the events all backlogs hold together
	unsigned event_subs_max; // subscriptions one connection may hold
	// Filled after EAL init.
	bool have_hugepages; // primary can accept secondaries: memzone offered
	char file_prefix[64];
	bool telemetry; // EAL runs telemetry: the /shmchan/ endpoints are served
	uint64_t start_ns; // CLOCK_MONOTONIC when main() began
	time_t start_time; // the same instant, wall clock
	unsigned memzone_channels; // reserved by channel_module_init()
	// Thread id of the first poller once it runs, 0 before and after:
	// GR_SHM_DAEMON_INFO reads the pollers' nice value from it.
	_Atomic int poller0_tid;
};

extern struct shmchand_config shmchand_config;

// The channel backings (GR_SHM_BACKING_*) this daemon offers: none with
// --no-shm, memfd always, memzones only to secondaries, which a primary
// without hugepages (--no-huge, --in-memory) cannot have.
uint32_t shmchand_backings_offered(void);

struct gr_shm_daemon_info;

// What GR_SHM_DAEMON_INFO answers: version, pid, uptime, configuration and
// limits. Any thread: it reads the configuration, set before any client.
void shmchand_daemon_info(struct gr_shm_daemon_info *);

// Nanoseconds of CLOCK_MONOTONIC.
uint64_t shmchand_monotonic_ns(void);

extern int shmchand_logtype;

#define LOG(level, fmt, ...)                                                                       \
	rte_log(RTE_LOG_##level,                                                                   \
		shmchand_logtype,                                                                  \
		"shmchand: %s: " fmt "\n",                                                         \
		__func__,                                                                          \
		##__VA_ARGS__)
