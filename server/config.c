// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The configuration: defaults, bounds, the copy in force, and the log type.

#include "config.h"

#include <gr_shm.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

// Socket permissions: the owner's group may connect.
#define DEFAULT_SOCK_MODE 0660
#define DEFAULT_POLLERS 1
// Poller spin budget: long enough to catch a controller's next request in a
// tight loop, short enough that an idle server sleeps (docs/spin-budgets.md).
#define DEFAULT_SPIN_US 100
// The most a poller may take of the nice values its clients give it, when
// the process may set them (CAP_SYS_NICE or RLIMIT_NICE): a poller is the
// server its clients spin-wait on, so on CPUs it shares with them it must
// not get only its 1/(n+1) share of them; it takes the weight of its
// clients and itself (poller_nice.h, docs/spin-budgets.md).
#define DEFAULT_POLLER_NICE (-20)
// Socket connections one client process may hold at once, and all the
// processes of one uid other than root: far below GR_API_SERVER_MAX_CLIENTS,
// so one process, or one user, cannot lock everyone else out
// (docs/reliability.md). A controller needs a handful.
#define DEFAULT_MAX_CONN_PER_PID 64
#define DEFAULT_MAX_CONN_PER_UID 256
// One subscriber's backlog: 1024 messages keep a burst of small events;
// 4 MiB keeps 32 of the largest.
#define DEFAULT_EVENT_BACKLOG_MSGS 1024
#define DEFAULT_EVENT_BACKLOG_BYTES ((size_t)4 << 20)
// The events all backlogs hold together, each counted once however many
// backlogs hold it: 64 MiB, what a small machine gives a control server
// without noticing, is 16 subscribers' full default backlogs of distinct
// events, or 500 of the largest events.
#define DEFAULT_EVENT_MEMORY_BYTES ((size_t)64 << 20)
// Subscriptions one connection may hold: any event type can be subscribed
// to (as in Grout), so the table is bounded per connection instead. Grout's
// own clients hold at most a few dozen (its FRR plugin 14 on two
// connections, grcli one GR_EVENT_ALL); 256 leaves a controller ample room.
#define DEFAULT_EVENT_SUBS 256
// 1024 entries of the API trace: 192 KiB once switched on.
#define DEFAULT_TRACE_SIZE 1024
#define DEFAULT_LOG_TYPE "gr_api_server"

_Static_assert(GR_API_SERVER_NICE_OFF == GR_SHM_POLLER_NICE_OFF, "one value on the wire");

struct gr_api_server_conf server_conf;
// The fields' names until a start copies the application's.
#define NAME_DEFAULT(field) .field = "conf." #field,
struct server_conf_names server_names = {SERVER_CONF_NAMED(NAME_DEFAULT)};
#undef NAME_DEFAULT
struct server_state server_state;
// EAL's own log type until a server registers its own.
int server_logtype = RTE_LOGTYPE_EAL;
char server_log_name[SERVER_LOG_TYPE_LEN] = DEFAULT_LOG_TYPE;

// The strings of server_conf.
static struct {
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char file_prefix[SERVER_FILE_PREFIX_LEN];
	char app_version[SERVER_APP_VERSION_LEN];
} strings;

GR_API_EXPORT void gr_api_server_conf_init(struct gr_api_server_conf *conf) {
	if (conf == NULL)
		return;
	*conf = (struct gr_api_server_conf){
		.sock_path = NULL, // GR_API_SERVER_SOCK_NAME in EAL's runtime folder
		.sock_mode = DEFAULT_SOCK_MODE,
		.sock_gid = GR_API_SERVER_GID_KEEP,
		.shm_enabled = true,
		.pollers = DEFAULT_POLLERS,
		.spin_us = DEFAULT_SPIN_US,
		.poller_nice = DEFAULT_POLLER_NICE,
		.max_conn_per_pid = DEFAULT_MAX_CONN_PER_PID,
		.max_conn_per_uid = DEFAULT_MAX_CONN_PER_UID,
		.event_backlog_msgs = DEFAULT_EVENT_BACKLOG_MSGS,
		.event_backlog_bytes = DEFAULT_EVENT_BACKLOG_BYTES,
		.event_memory_bytes = DEFAULT_EVENT_MEMORY_BYTES,
		.event_subs_max = DEFAULT_EVENT_SUBS,
		.trace_size = DEFAULT_TRACE_SIZE,
		.log_type = DEFAULT_LOG_TYPE,
	};
}

// Whether value of the setting named name is in min..max; else say so.
static bool in_range(
	const char *name,
	unsigned long long value,
	unsigned long long min,
	unsigned long long max
) {
	if (value >= min && value <= max)
		return true;
	LOG(ERR, "%s is %llu, not %llu..%llu", name, value, min, max);
	return false;
}

// Copy the string of the setting named name into dst (len bytes), or say
// it is too long.
static bool copy_string(const char *name, char *dst, size_t len, const char *src) {
	if ((size_t)snprintf(dst, len, "%s", src) < len)
		return true;
	LOG(ERR, "%s is longer than %zu bytes", name, len - 1);
	return false;
}

// Copy the application's names of the settings into server_names, the
// fields' names for those it leaves NULL. Returns false (logged) if one is
// too long.
static bool names_set(const struct gr_api_server_conf_names *names) {
	bool ok = true;

#define NAME_SET(field)                                                                            \
	ok &= copy_string(                                                                         \
		"conf.names." #field,                                                              \
		server_names.field,                                                                \
		sizeof(server_names.field),                                                        \
		names != NULL && names->field != NULL ? names->field : "conf." #field              \
	);
	SERVER_CONF_NAMED(NAME_SET)
#undef NAME_SET
	return ok;
}

// Whether EAL keeps its configuration in the file "config" of its runtime
// folder, which a secondary maps: not with --in-memory or --no-shconf. EAL
// says so through no call; its mapping of the file tells, named by its real
// path ("START-END PERMS OFFSET DEV INODE PATH" in /proc/self/maps).
static bool eal_config_shared(void) {
	char given[PATH_MAX], path[PATH_MAX], line[PATH_MAX + 128], *name;
	bool found = false;
	FILE *maps;

	if ((size_t)snprintf(given, sizeof(given), "%s/config", rte_eal_get_runtime_dir()) >=
		    sizeof(given) ||
	    realpath(given, path) == NULL)
		return false;
	maps = fopen("/proc/self/maps", "re");
	if (maps == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), maps) != NULL) {
		name = strchr(line, '/');
		if (name == NULL)
			continue;
		name[strcspn(name, "\n")] = '\0';
		found = strcmp(name, path) == 0;
	}
	fclose(maps);
	return found;
}

// Memzone channels are for DPDK secondaries, which attach only to a
// primary with hugepage files and a shared configuration. Says why not.
static bool memzones_possible(void) {
	const char *why = NULL;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		why = "this process is not a DPDK primary";
	else if (!rte_eal_has_hugepages())
		why = "EAL runs without hugepages (--no-huge)";
	else if (!eal_config_shared())
		why = "EAL keeps no shared configuration (--in-memory or --no-shconf)";
	if (why == NULL)
		return true;
	LOG(ERR,
	    "%s asks for memzone channels, but %s: no DPDK secondary can attach; leave it off"
	    " (memfd channels serve every client)",
	    server_names.memzones,
	    why);
	return false;
}

// The file prefix EAL runs with: the last part of its runtime folder
// (<base>/dpdk/<prefix>).
static const char *eal_file_prefix(void) {
	const char *dir = rte_eal_get_runtime_dir();
	const char *slash = dir != NULL ? strrchr(dir, '/') : NULL;

	return slash != NULL ? slash + 1 : "";
}

bool server_names_set(const struct gr_api_server_conf_names *names) {
	return names_set(names);
}

int server_conf_set(const struct gr_api_server_conf *conf) {
	// One byte more than a socket path holds: a runtime folder too long
	// for it is refused by copy_string(), not cut.
	char default_sock_path[sizeof(strings.sock_path) + 1];
	bool ok;

	if (conf == NULL) {
		LOG(ERR, "no configuration");
		return -EINVAL;
	}
	if (!names_set(conf->names))
		return -EINVAL;
	if (conf->sock_path == NULL) {
		// The application's own folder: its socket is found beside its
		// telemetry's, and never collides with another application's.
		snprintf(
			default_sock_path,
			sizeof(default_sock_path),
			"%s/%s",
			rte_eal_get_runtime_dir(),
			GR_API_SERVER_SOCK_NAME
		);
	}
	// Each check logs on its own: every mistake is named at once.
	ok = in_range(server_names.pollers, conf->pollers, 1, GR_API_SERVER_MAX_POLLERS);
	ok &= in_range(server_names.spin_us, conf->spin_us, 0, GR_API_SERVER_SPIN_US_MAX);
	if (conf->poller_nice != GR_API_SERVER_NICE_OFF)
		ok &= in_range(
			server_names.poller_nice,
			(unsigned long long)(conf->poller_nice + 20),
			0,
			39
		);
	ok &= in_range(
		server_names.max_conn_per_pid,
		conf->max_conn_per_pid,
		0,
		GR_API_SERVER_MAX_CLIENTS
	);
	ok &= in_range(
		server_names.max_conn_per_uid,
		conf->max_conn_per_uid,
		0,
		GR_API_SERVER_MAX_CLIENTS
	);
	ok &= in_range(
		server_names.event_backlog_msgs,
		conf->event_backlog_msgs,
		1,
		GR_API_SERVER_EVENT_BACKLOG_MSGS_MAX
	);
	ok &= in_range(
		server_names.event_backlog_bytes,
		conf->event_backlog_bytes,
		GR_API_SERVER_EVENT_BYTES_MIN,
		GR_API_SERVER_EVENT_BACKLOG_BYTES_MAX
	);
	ok &= in_range(
		server_names.event_memory_bytes,
		conf->event_memory_bytes,
		GR_API_SERVER_EVENT_BYTES_MIN,
		GR_API_SERVER_EVENT_MEMORY_BYTES_MAX
	);
	ok &= in_range(
		server_names.event_subs_max,
		conf->event_subs_max,
		1,
		GR_API_SERVER_EVENT_SUBS_MAX
	);
	ok &= in_range(server_names.trace_size, conf->trace_size, 0, GR_API_SERVER_TRACE_SIZE_MAX);
	ok &= copy_string(
		server_names.sock_path,
		strings.sock_path,
		sizeof(strings.sock_path),
		conf->sock_path != NULL ? conf->sock_path : default_sock_path
	);
	ok &= copy_string(
		server_names.file_prefix,
		strings.file_prefix,
		sizeof(strings.file_prefix),
		conf->file_prefix != NULL ? conf->file_prefix : eal_file_prefix()
	);
	ok &= copy_string(
		server_names.app_version,
		strings.app_version,
		sizeof(strings.app_version),
		conf->app_version != NULL ? conf->app_version : ""
	);
	if (conf->shm_enabled && conf->memzones)
		ok &= memzones_possible();
	if (!ok)
		return -EINVAL;
	server_conf = *conf;
	server_conf.sock_path = strings.sock_path;
	server_conf.file_prefix = strings.file_prefix;
	server_conf.app_version = conf->app_version != NULL ? strings.app_version : NULL;
	server_conf.log_type = server_log_name;
	server_conf.names = NULL; // the copies are server_names
	return 0;
}

int server_log_register(const struct gr_api_server_conf *conf, bool pick_level) {
	const char *name =
		conf != NULL && conf->log_type != NULL ? conf->log_type : DEFAULT_LOG_TYPE;
	static bool level_picked;
	int ret;

	if (name[0] == '\0' || strlen(name) >= sizeof(server_log_name)) {
		LOG(ERR,
		    "log type '%s': empty or longer than %zu bytes",
		    name,
		    sizeof(server_log_name) - 1);
		return -EINVAL;
	}
	// The same name again gives the same type: an application that logs
	// under it too shares it.
	if (pick_level && !level_picked)
		ret = rte_log_register_type_and_pick_level(name, RTE_LOG_INFO);
	else
		ret = rte_log_register(name);
	if (ret < 0) {
		LOG(ERR, "cannot register log type %s: %s", name, rte_strerror(-ret));
		return ret;
	}
	level_picked |= pick_level;
	server_logtype = ret;
	snprintf(server_log_name, sizeof(server_log_name), "%s", name);
	return 0;
}

uint32_t server_backings_offered(void) {
	uint32_t backings = GR_SHM_BACKING_MEMFD;

	if (!server_conf.shm_enabled)
		return 0;
	// A primary without hugepage files accepts no secondary.
	if (server_conf.memzones)
		backings |= GR_SHM_BACKING_MEMZONE;
	return backings;
}

#define NS_PER_S 1000000000ull

uint64_t server_monotonic_ns(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}
