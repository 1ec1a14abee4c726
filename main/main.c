// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchand: the order of its start (options, checks, EAL), the signals
// that stop it, the event loop, and the order of its shutdown.

#include "eal_args.h"
#include "eal_exit.h"
#include "eal_explain.h"
#include "eal_files.h"
#include "eal_memcfg.h"
#include "eal_mp_socket.h"
#include "eal_retry.h"
#include "options.h"
#include "shmchand.h"
#include "sock_folder.h"

#include <gr_api_server.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include <event2/event.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

// The server's part is filled by gr_api_server_conf_init() in main().
struct shmchand_config shmchand_config = {.hugepages = HUGEPAGES_AUTO};

// What the server's log lines call its settings: the options that set them.
static const struct gr_api_server_conf_names option_names = {
	.sock_path = "-s/--socket",
	.shm_enabled = "--no-shm",
	.pollers = "-p/--pollers",
	.spin_us = "-S/--spin-us",
	.poller_nice = "--poller-nice",
	.memzones = "--hugepages",
	.file_prefix = "--file-prefix",
	.max_conn_per_pid = "--max-conn-per-pid",
	.max_conn_per_uid = "--max-conn-per-uid",
	.event_backlog_msgs = "--event-backlog",
	.event_backlog_bytes = "--event-backlog-bytes",
	.event_memory_bytes = "--event-memory",
	.event_subs_max = "--event-subscriptions",
	.trace_size = "--trace-size",
	.app_version = "the daemon's version",
};

// EAL's own log type until main() registers ours.
int shmchand_logtype = RTE_LOGTYPE_EAL;

// Descriptors the daemon wants at most: what the server may hold for its
// clients, and FDS_OWN_MAX for EAL, libevent and the pollers.
#define FDS_OWN_MAX 128
#define FDS_NEEDED (GR_API_SERVER_FDS_MAX + FDS_OWN_MAX)

// The soft limit of open files is often 1024, which GR_API_SERVER_MAX_CLIENTS
// connections alone would use up: raise it to the hard limit, as far as
// FDS_NEEDED. The server says at start what the limit lets it serve.
static void raise_fd_limit(void) {
	struct rlimit lim;

	if (getrlimit(RLIMIT_NOFILE, &lim) < 0 || lim.rlim_cur >= FDS_NEEDED)
		return;
	lim.rlim_cur = lim.rlim_max < FDS_NEEDED ? lim.rlim_max : FDS_NEEDED;
	if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
		LOG(WARNING, "cannot raise the open files limit: %s", strerror(errno));
}

static void on_stop_signal(evutil_socket_t sig, short what, void *arg) {
	(void)what;
	LOG(NOTICE, "signal %d: shutting down", (int)sig);
	event_base_loopbreak(arg);
}

// Serve on base until SIGINT or SIGTERM. Returns 0 or -errno.
static int serve(struct event_base *base) {
	struct gr_api_server_conf *srv = &shmchand_config.server;
	struct event *sigint, *sigterm;
	int ret = -ENOMEM;

	sigint = evsignal_new(base, SIGINT, on_stop_signal, base);
	sigterm = evsignal_new(base, SIGTERM, on_stop_signal, base);
	if (sigint == NULL || sigterm == NULL || evsignal_add(sigint, NULL) < 0 ||
	    evsignal_add(sigterm, NULL) < 0) {
		LOG(ERR, "cannot watch SIGINT and SIGTERM");
		goto out;
	}
	srv->base = base;
	ret = gr_api_server_start(srv);
	if (ret < 0)
		goto out;
	LOG(NOTICE,
	    "shmchand %s ready: socket %s, file prefix %s, hugepages %s, channels %s",
	    SHMCHAN_VERSION,
	    srv->sock_path,
	    shmchand_config.file_prefix,
	    srv->memzones ? "yes" : "no",
	    srv->shm_enabled ? "on" : "off");
	if (event_base_dispatch(base) < 0) {
		LOG(ERR, "event loop failed");
		ret = -EIO;
	}
	gr_api_server_stop();
out:
	if (sigint != NULL)
		event_free(sigint);
	if (sigterm != NULL)
		event_free(sigterm);
	return ret;
}

int main(int argc, char **argv) {
	struct gr_api_server_conf *srv = &shmchand_config.server;
	struct shmchand_config *cfg = &shmchand_config;
	int own_argc = argc, ret, status = EXIT_FAILURE;
	struct eal_args eal = {0};
	struct eal_files files = {0};
	struct eal_memcfg memcfg = {0};
	struct event_base *base;
	bool restore_cpus = false;
	bool shared_files, telemetry;
	cpu_set_t cpus;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			own_argc = i;
			break;
		}
	}
	gr_api_server_conf_init(srv);
	// The system daemon's own path, where its clients look by default,
	// not the library's default in EAL's runtime folder.
	srv->sock_path = GR_API_DEFAULT_SOCK_PATH;
	srv->log_type = "shmchand";
	srv->app_version = SHMCHAN_VERSION;
	srv->names = &option_names;
	ret = parse_options(own_argc, argv);
	if (ret == OPTIONS_HELP) {
		struct gr_api_server_conf defaults;

		gr_api_server_conf_init(&defaults);
		defaults.sock_path = GR_API_DEFAULT_SOCK_PATH;
		usage(&defaults);
		return EXIT_SUCCESS;
	}
	if (ret == OPTIONS_VERSION) {
		printf("shmchand %s\n", SHMCHAN_VERSION);
		return EXIT_SUCCESS;
	}
	if (ret < 0) {
		fprintf(stderr, "Try 'shmchand --help'.\n");
		return EXIT_FAILURE;
	}
	ret = rte_log_register_type_and_pick_level(
		"shmchand",
		cfg->verbose ? RTE_LOG_DEBUG : RTE_LOG_INFO
	);
	if (ret < 0) {
		fprintf(stderr, "shmchand: cannot register log type: %s\n", rte_strerror(-ret));
		return EXIT_FAILURE;
	}
	shmchand_logtype = ret;
	// The daemon's choice, not the server library's (which raises no
	// SIGPIPE): a log written to a pipe whose reader went away fails with
	// EPIPE instead of ending the daemon.
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	// Before EAL init: a daemon that cannot serve its socket (no folder for
	// it, or another daemon answers there) then creates no EAL file at all.
	if (sock_folder_check(srv->sock_path) < 0 || gr_api_server_socket_check(srv) < 0)
		return EXIT_FAILURE;

	if (own_argc < argc)
		ret = eal_args_build(&eal, argc - own_argc - 1, argv + own_argc + 1);
	else
		ret = eal_args_build(&eal, 0, NULL);
	if (ret < 0) {
		fprintf(stderr, "shmchand: out of memory\n");
		return EXIT_FAILURE;
	}
	// Read before rte_eal_init(), which reorders argv.
	ret = snprintf(
		cfg->file_prefix,
		sizeof(cfg->file_prefix),
		"%s",
		long_opt_value(eal.argc, eal.argv, "file-prefix", default_file_prefix())
	);
	if (ret < 0 || (size_t)ret >= sizeof(cfg->file_prefix)) {
		fprintf(stderr,
			"shmchand: --file-prefix is longer than %zu bytes\n",
			sizeof(cfg->file_prefix) - 1);
		goto free_args;
	}
	// Secondaries map the primary's hugepage files: not with --no-huge, and
	// not when EAL keeps no shared files (--in-memory, --no-shconf).
	// The last of --telemetry and --no-telemetry among EAL's arguments wins,
	// as in EAL; shmchand's own --telemetry put one there when neither was.
	telemetry = last_telemetry_opt(eal.argc, eal.argv);
	shared_files = !has_long_opt(eal.argc, eal.argv, "no-huge") &&
		       !has_long_opt(eal.argc, eal.argv, "in-memory") &&
		       !has_long_opt(eal.argc, eal.argv, "no-shconf");
	files.prefix = cfg->file_prefix;
	files.huge_dir = long_opt_value(eal.argc, eal.argv, "huge-dir", NULL);
	files.shared = !has_long_opt(eal.argc, eal.argv, "in-memory") &&
		       !has_long_opt(eal.argc, eal.argv, "no-shconf");
	files.hugepages = !has_long_opt(eal.argc, eal.argv, "no-huge");
	eal_runtime_dir(cfg->file_prefix, files.runtime_dir, sizeof(files.runtime_dir));
	// Without shared files EAL binds no multi-process socket; without
	// hugepages no secondary attaches.
	if (files.shared &&
	    eal_mp_socket_check(files.runtime_dir, cfg->file_prefix, files.hugepages) < 0)
		goto free_args;
	// EAL pins this thread to its main lcore. The daemon runs no data-plane
	// lcore: give the main thread (and the pollers it starts) back every CPU
	// it had, unless the user chose lcores.
	if (eal.default_lcores)
		restore_cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;

	LOG(DEBUG, "EAL arguments:");
	for (int i = 1; i < eal.argc; i++)
		LOG(DEBUG, "  %s", eal.argv[i]);
	if (rte_eal_init(eal.argc, eal.argv) < 0) {
		int err = rte_errno;
		bool hugepages_tried = !has_long_opt(eal.argc, eal.argv, "no-huge");

		eal_explain_failure(cfg->file_prefix, hugepages_tried);
		// What the failed init created, unless the prefix belongs to
		// another process (the likeliest reason it failed).
		eal_files_remove(&files);
		if (eal_retry_wanted(cfg->hugepages, hugepages_tried, err)) {
			LOG(NOTICE,
			    "hugepages auto: EAL could not get the hugepages that were free a "
			    "moment"
			    " ago (another process took them); starting again with --hugepages off"
			);
			ret = eal_retry_exec(argc, argv, own_argc);
			LOG(ERR, "cannot start again: %s", strerror(-ret));
		}
		goto free_args;
	}
	snprintf(files.runtime_dir, sizeof(files.runtime_dir), "%s", rte_eal_get_runtime_dir());
	eal_lock_find(&memcfg);
	if (restore_cpus && sched_setaffinity(0, sizeof(cpus), &cpus) < 0)
		LOG(WARNING, "cannot restore the main thread's CPU affinity: %s", strerror(errno));
	srv->memzones = shared_files && rte_eal_has_hugepages();
	srv->file_prefix = cfg->file_prefix;
	srv->telemetry = telemetry;

	base = event_base_new();
	if (base == NULL) {
		LOG(ERR, "cannot create the event loop");
	} else {
		if (serve(base) == 0)
			status = EXIT_SUCCESS;
		event_base_free(base);
	}
	if (eal_cleanup_may_run(&memcfg))
		rte_eal_cleanup();
	eal_memcfg_close(&memcfg);
	eal_files_release(&files);
free_args:
	free(eal.argv);
	return status;
}
