// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The server's configuration in force, what it learns while it runs, and
// its log.

#pragma once

#include "gr_api_server.h"

#include <rte_log.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

// Marks the public functions: the library is built with -fvisibility=hidden.
#define GR_API_EXPORT __attribute__((visibility("default")))

// Longest file prefix a secondary is told (GR_SHM_ATTACH's file_prefix).
#define SERVER_FILE_PREFIX_LEN 64
// Longest log type name and application version kept.
#define SERVER_LOG_TYPE_LEN 64
#define SERVER_APP_VERSION_LEN 64

// The settings a log line may name (struct gr_api_server_conf_names), as
// X(field) for each.
#define SERVER_CONF_NAMED(X)                                                                       \
	X(sock_path)                                                                               \
	X(shm_enabled)                                                                             \
	X(pollers)                                                                                 \
	X(spin_us)                                                                                 \
	X(poller_nice)                                                                             \
	X(memzones)                                                                                \
	X(file_prefix)                                                                             \
	X(max_conn_per_pid)                                                                        \
	X(max_conn_per_uid)                                                                        \
	X(event_backlog_msgs)                                                                      \
	X(event_backlog_bytes)                                                                     \
	X(event_memory_bytes)                                                                      \
	X(event_subs_max)                                                                          \
	X(app_version)                                                                             \
	X(trace_size)

// What the log calls each setting: the application's name for it, or
// "conf.<field>". Written by server_conf_set() before any thread of the
// library starts, as server_conf.
struct server_conf_names {
#define SERVER_CONF_NAME_FIELD(field) char field[GR_API_SERVER_CONF_NAME_MAX + 1];
	SERVER_CONF_NAMED(SERVER_CONF_NAME_FIELD)
#undef SERVER_CONF_NAME_FIELD
};
extern struct server_conf_names server_names;

// The application's configuration, copied by server_conf_set() (its
// strings into the library's own storage). Written before any thread of
// the library starts and not again until they are all stopped: read
// without a lock anywhere.
extern struct gr_api_server_conf server_conf;

// What the server learns while it runs.
struct server_state {
	unsigned memzone_channels; // reserved by channel_module_init()
	// Thread id of the first poller once it runs, 0 before and after:
	// gr_api_server_info_get() reads the pollers' nice value from it.
	_Atomic int poller0_tid;
	// A poller could not take a nice value its clients asked for (no
	// CAP_SYS_NICE, no RLIMIT_NICE that allows it): it keeps what it had.
	_Atomic bool poller_nice_denied;
	uint64_t start_ns; // CLOCK_MONOTONIC at start
	time_t start_time; // the same instant, wall clock
};
extern struct server_state server_state;

// The library's log type, and the name its lines start with.
extern int server_logtype;
extern char server_log_name[SERVER_LOG_TYPE_LEN];

// Check conf against the bounds of gr_api_server.h and against what EAL
// runs with (memzones need hugepages and shared files), and copy it, and
// the names of its settings, into server_conf and server_names. Logs what
// is wrong. Returns 0 or -EINVAL.
int server_conf_set(const struct gr_api_server_conf *conf);

// Take the application's names of the settings (NULL: the fields'), for
// the lines logged before a start (gr_api_server_socket_check()). Returns
// false (logged) for a name too long.
bool server_names_set(const struct gr_api_server_conf_names *names);

// Register conf's log type (or the default) as server_logtype. With
// pick_level, at a start: its level is what EAL's --log-level options say
// for it, else INFO, the first time (a later start keeps what was set
// since). Without, before EAL init: a type that exists keeps its level.
// Returns 0 or -errno.
int server_log_register(const struct gr_api_server_conf *conf, bool pick_level);

// The channel backings (GR_SHM_BACKING_*) offered: none without shm,
// memfd always, memzones only with server_conf.memzones.
uint32_t server_backings_offered(void);

// What gr_api_server_info_get() answers while a server runs.
void server_info_fill(struct gr_api_server_info *info);

// Mark the calling thread as one the library started (its own thread, a
// poller): gr_api_server_start() and gr_api_server_stop() refuse to run
// there (server.c).
void server_thread_mark(void);

// Nanoseconds of CLOCK_MONOTONIC.
uint64_t server_monotonic_ns(void);

// A log line reads as a sentence after the log type's name; the function
// that wrote it is named in debug lines only, for whoever reads the code.
#define LOG(level, fmt, ...)                                                                       \
	rte_log(RTE_LOG_##level,                                                                   \
		server_logtype,                                                                    \
		"%s: %s%s" fmt "\n",                                                               \
		server_log_name,                                                                   \
		RTE_LOG_##level == RTE_LOG_DEBUG ? __func__ : "",                                  \
		RTE_LOG_##level == RTE_LOG_DEBUG ? ": " : "",                                      \
		##__VA_ARGS__)
