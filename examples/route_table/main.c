// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// route_table: a DPDK application that keeps IPv4 and IPv6 routes in
// rte_fib and rte_fib6, looks them up continuously on its workers, and
// serves its control API (route_table_api.h) with libgr_api_server, over
// the socket and over shared-memory channels (docs/route-table.md).
//
// usage: route_table [-s SOCK] [-r MAX_ROUTES4] [-R MAX_ROUTES6] [-p PAUSE_US]
//                    [-- EAL args]
//
// EAL runs without hugepages and without shared files (memfd channels
// only), on lcore 0 unless the EAL arguments after -- say otherwise: each
// EAL worker lcore runs a worker, and with none one thread of ours does.
// SIGINT or SIGTERM stops it: the server removes its socket, and it exits 0.

// sched_getaffinity(), sched_setaffinity().
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "fib_conf.h"
#include "route_table.h"

#include <gr_api_server.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <event2/event.h>

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_SOCK "/tmp/route_table.sock"
// Bounds of -r: a table of 16 routes is enough to show it full.
#define MAX_ROUTES_MIN 16
#define MAX_ROUTES_MAX (1u << 24)
// EAL arguments of ours, and room for the program name and the NULL.
#define EAL_OWN_ARGS 12

static void on_stop_signal(evutil_socket_t sig, short what, void *base) {
	(void)sig;
	(void)what;
	event_base_loopbreak(base);
}

static int usage(void) {
	fprintf(stderr,
		"usage: route_table [-s SOCK] [-r MAX_ROUTES4] [-R MAX_ROUTES6] [-p PAUSE_US]\n"
		"                   [-- EAL args]\n");
	return EXIT_FAILURE;
}

// An unsigned number of argv[i + 1] within [min, max], or -1.
static long number_arg(int argc, char **argv, int i, unsigned long min, unsigned long max) {
	unsigned long n;
	char *end;

	if (i + 1 >= argc)
		return -1;
	errno = 0;
	n = strtoul(argv[i + 1], &end, 10);
	if (errno != 0 || *end != '\0' || end == argv[i + 1] || n < min || n > max)
		return -1;
	return (long)n;
}

// The serving: the server on the loop's base, until a signal breaks it.
// This and the handlers are all of route_table's glue to libgr_api_server.
static int serve(const char *sock, struct event_base *base) {
	struct gr_api_server_conf conf;
	int ret;

	gr_api_server_conf_init(&conf);
	conf.sock_path = sock;
	conf.sock_mode = 0600;
	conf.log_type = "route_table";
	conf.app_version = "route_table 1.0";
	conf.base = base; // socket requests on this loop, channels on pollers
	ret = gr_api_server_start(&conf);
	if (ret < 0) {
		fprintf(stderr, "route_table: cannot serve %s: %s\n", sock, strerror(-ret));
		return ret;
	}
	printf("route_table: serving %s\n", sock);
	fflush(stdout);
	ret = event_base_dispatch(base) == 0 ? 0 : -EIO;
	// On the loop's thread, the loop stopped: what conf.base asks for.
	gr_api_server_stop();
	return ret;
}

int main(int argc, char **argv) {
	unsigned long max4 = FIB4_DEFAULT_MAX_ROUTES, max6 = FIB6_DEFAULT_MAX_ROUTES, pause_us = 0;
	char prefix[64], mem[32], runtime_dir[PATH_MAX], **eal;
	struct event *sigint = NULL, *sigterm = NULL;
	const char *sock = DEFAULT_SOCK;
	int status = EXIT_FAILURE, i, n = 0;
	struct event_base *base = NULL;
	bool workers = false;
	cpu_set_t cpus;
	long value;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
			sock = argv[++i];
		} else if (strcmp(argv[i], "-r") == 0 || strcmp(argv[i], "-R") == 0) {
			value = number_arg(argc, argv, i, MAX_ROUTES_MIN, MAX_ROUTES_MAX);
			if (value < 0)
				return usage();
			*(argv[i++][1] == 'r' ? &max4 : &max6) = (unsigned long)value;
		} else if (strcmp(argv[i], "-p") == 0) {
			value = number_arg(argc, argv, i++, 0, 1000000);
			if (value < 0)
				return usage();
			pause_us = (unsigned long)value;
		} else {
			return usage();
		}
	}
	if (i < argc)
		i++; // past --
	eal = calloc(EAL_OWN_ARGS + argc - i + 1, sizeof(*eal));
	if (eal == NULL)
		return EXIT_FAILURE;
	snprintf(prefix, sizeof(prefix), "route_table-%d", (int)getpid());
	snprintf(mem, sizeof(mem), "%lu", fib_eal_mem_mb((uint32_t)max4, (uint32_t)max6));
	eal[n++] = argv[0];
	eal[n++] = "--no-huge";
	eal[n++] = "--no-shconf";
	eal[n++] = "-m";
	eal[n++] = mem;
	eal[n++] = "--no-pci";
	eal[n++] = "--no-telemetry";
	eal[n++] = "-l";
	eal[n++] = "0";
	eal[n++] = "--file-prefix";
	eal[n++] = prefix;
	eal[n++] = "--log-level=lib.eal:notice";
	for (; i < argc; i++)
		eal[n++] = argv[i];

	// EAL pins this thread to its main lcore; the server's pollers and
	// our worker thread are made from it and would inherit that: give it
	// back the CPUs it had.
	if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0 || rte_eal_init(n, eal) < 0) {
		fprintf(stderr, "route_table: EAL init failed: %s\n", rte_strerror(rte_errno));
		free(eal);
		return EXIT_FAILURE;
	}
	if (sched_setaffinity(0, sizeof(cpus), &cpus) < 0)
		perror("route_table: sched_setaffinity");
	base = event_base_new();
	if (base != NULL) {
		sigint = evsignal_new(base, SIGINT, on_stop_signal, base);
		sigterm = evsignal_new(base, SIGTERM, on_stop_signal, base);
	}
	if (sigint == NULL || sigterm == NULL || evsignal_add(sigint, NULL) < 0 ||
	    evsignal_add(sigterm, NULL) < 0) {
		fprintf(stderr, "route_table: cannot set up the loop\n");
		goto out;
	}
	if (tables_init((uint32_t)max4, (uint32_t)max6) < 0 || deletes_init(base) < 0)
		goto out;
	workers = workers_start((unsigned)pause_us) == 0;
	if (workers && serve(sock, base) == 0)
		status = EXIT_SUCCESS;
out:
	if (workers)
		workers_stop();
	deletes_fini();
	tables_fini();
	if (sigint != NULL)
		event_free(sigint);
	if (sigterm != NULL)
		event_free(sigterm);
	if (base != NULL)
		event_base_free(base);
	// EAL leaves its runtime folder, empty without shared files.
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (rmdir(runtime_dir) < 0)
		perror("route_table: removing EAL's runtime folder");
	free(eal);
	return status;
}
