// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A DPDK application that serves its own control API with libgr_api_server:
// a table of counters in an rte_hash, two requests of its own module to set
// and get them (embed_table.h), an event published on every change, and a
// libevent loop of its own with a timer that counts "ticks" in the table.
// Clients reach it with the client library (or Python) over the socket and
// over a shared-memory channel, as they reach shmchand, which is built the
// same way.
//
// By default the server runs the socket side on this program's own event
// base (Grout's model); with --library-thread, on a thread of the library's
// (DPDK telemetry's model), while this program's loop runs its timer alone.
// Either way the handlers and the timer never touch the table at once: the
// handlers run under the server's handler lock, which the timer takes too.
//
// usage: embed_table [-s SOCK] [--library-thread] [-- EAL args]
// build: cc embed_table.c $(pkg-config --cflags --libs gr_api_server)
//
// EAL runs without hugepages and without shared files (no DPDK secondary can
// attach: memfd channels only); EAL arguments after -- come after those.
// SIGINT or SIGTERM stops it: the server removes its socket, and it exits 0.

// sched_getaffinity(), sched_setaffinity().
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "embed_table.h"

#include <gr_api_server.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>

#include <event2/event.h>

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_SOCK "/tmp/embed_table.sock"
// Entries the table holds at most.
#define TABLE_ENTRIES 1024
// EAL arguments of ours, and room for the program name and the NULL.
#define EAL_OWN_ARGS 12

// The table: written by the handlers (under the handler lock) and by the
// timer (which takes that lock), on whichever threads those run.
static struct rte_hash *table;

// A key of a request as the table keys it: the bytes up to the NUL, zeros
// after (a client may leave anything there). Returns 0, or -EINVAL for an
// empty key or one with no NUL.
static int key_of(const char raw[EMBED_TABLE_KEY_LEN], char key[EMBED_TABLE_KEY_LEN]) {
	size_t len = strnlen(raw, EMBED_TABLE_KEY_LEN);

	if (len == 0 || len == EMBED_TABLE_KEY_LEN)
		return -EINVAL;
	memset(key, 0, EMBED_TABLE_KEY_LEN);
	memcpy(key, raw, len);
	return 0;
}

static void publish_change(const char key[EMBED_TABLE_KEY_LEN], uint64_t value) {
	struct embed_table_event_changed ev = {.value = value};

	memcpy(ev.key, key, sizeof(ev.key));
	// No subscriber, or one that reads too slowly, costs nothing here.
	if (gr_api_event_publish(EMBED_TABLE_EVENT_CHANGED, &ev, sizeof(ev)) < 0)
		fprintf(stderr, "embed_table: cannot publish the change of %s\n", key);
}

// A handler: under the handler lock, on the server's socket thread or a
// poller. Registered by a constructor, beside the table it changes.
static struct gr_api_out table_set(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct embed_table_set_req *req = request;
	char key[EMBED_TABLE_KEY_LEN];
	int ret;

	(void)len;
	(void)ctx;
	if (key_of(req->key, key) < 0)
		return gr_api_out(EINVAL, 0, NULL);
	ret = rte_hash_add_key_data(table, key, (void *)(uintptr_t)req->value);
	if (ret < 0)
		return gr_api_out((uint32_t)-ret, 0, NULL);
	// Inside the handler: a subscriber that suppresses its own events
	// does not get the change it asked for.
	publish_change(key, req->value);
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(EMBED_TABLE_SET, table_set);

// Registered by an explicit call in main(). The response is malloc'ed: the
// server frees it once sent.
static struct gr_api_out table_get(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct embed_table_get_req *req = request;
	struct embed_table_get_resp *resp;
	char key[EMBED_TABLE_KEY_LEN];
	void *data;

	(void)len;
	(void)ctx;
	if (key_of(req->key, key) < 0)
		return gr_api_out(EINVAL, 0, NULL);
	if (rte_hash_lookup_data(table, key, &data) < 0)
		return gr_api_out(ENOENT, 0, NULL);
	resp = malloc(sizeof(*resp));
	if (resp == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	resp->value = (uintptr_t)data;
	return gr_api_out(0, sizeof(*resp), resp);
}
static struct gr_api_handler table_get_handler = GR_API_HANDLER_INIT(EMBED_TABLE_GET, table_get);

// The application's own work on the table, on its own thread: under the
// handler lock, so that no handler runs meanwhile; the event is published
// after, outside it.
static void on_tick(evutil_socket_t fd, short what, void *arg) {
	char key[EMBED_TABLE_KEY_LEN] = EMBED_TABLE_TICKS_KEY;
	uint64_t ticks = 0;
	void *data;
	int ret;

	(void)fd;
	(void)what;
	(void)arg;
	gr_api_server_lock();
	if (rte_hash_lookup_data(table, key, &data) >= 0)
		ticks = (uintptr_t)data;
	ticks++;
	ret = rte_hash_add_key_data(table, key, (void *)(uintptr_t)ticks);
	gr_api_server_unlock();
	if (ret == 0)
		publish_change(key, ticks);
}

static void on_stop_signal(evutil_socket_t sig, short what, void *base) {
	(void)sig;
	(void)what;
	event_base_loopbreak(base);
}

// The EAL arguments: the program's name, ours, then the user's argc of argv
// (EAL takes the last of each).
static int
eal_args(char *name, int argc, char **argv, char **eal, char *prefix, size_t prefix_len) {
	int n = 0;

	snprintf(prefix, prefix_len, "embed_table-%d", (int)getpid());
	eal[n++] = name;
	eal[n++] = "--no-huge";
	eal[n++] = "--no-shconf";
	eal[n++] = "-m";
	eal[n++] = "64";
	eal[n++] = "--no-pci";
	eal[n++] = "--no-telemetry";
	eal[n++] = "-l";
	eal[n++] = "0";
	eal[n++] = "--file-prefix";
	eal[n++] = prefix;
	eal[n++] = "--log-level=lib.eal:notice";
	for (int i = 0; i < argc; i++)
		eal[n++] = argv[i];
	eal[n] = NULL;
	return n;
}

static int usage(void) {
	fprintf(stderr, "usage: embed_table [-s SOCK] [--library-thread] [-- EAL args]\n");
	return EXIT_FAILURE;
}

int main(int argc, char **argv) {
	const char *sock = DEFAULT_SOCK;
	bool library_thread = false;
	struct rte_hash_parameters params = {
		.name = "embed_table",
		.entries = TABLE_ENTRIES,
		.key_len = EMBED_TABLE_KEY_LEN,
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
	};
	struct gr_api_server_conf conf;
	struct event *tick, *sigint, *sigterm;
	struct timeval period = {.tv_usec = EMBED_TABLE_TICK_MS * 1000};
	struct event_base *base;
	int status = EXIT_FAILURE, i, ret, eal_argc;
	char prefix[64], runtime_dir[PATH_MAX], **eal;
	cpu_set_t cpus;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			sock = argv[++i];
		else if (strcmp(argv[i], "--library-thread") == 0)
			library_thread = true;
		else
			return usage();
	}
	if (i < argc)
		i++; // past --
	eal = calloc(EAL_OWN_ARGS + argc - i + 1, sizeof(*eal));
	if (eal == NULL)
		return EXIT_FAILURE;
	eal_argc = eal_args(argv[0], argc - i, argv + i, eal, prefix, sizeof(prefix));

	// EAL pins this thread to lcore 0; the server's threads (pollers, and
	// its own with --library-thread) are made from it and would inherit
	// that: give it back the CPUs it had.
	if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0 || rte_eal_init(eal_argc, eal) < 0) {
		fprintf(stderr, "embed_table: EAL init failed: %s\n", rte_strerror(rte_errno));
		free(eal);
		return EXIT_FAILURE;
	}
	if (sched_setaffinity(0, sizeof(cpus), &cpus) < 0)
		perror("embed_table: sched_setaffinity");
	table = rte_hash_create(&params);
	base = event_base_new();
	tick = base != NULL ? event_new(base, -1, EV_PERSIST, on_tick, NULL) : NULL;
	sigint = base != NULL ? evsignal_new(base, SIGINT, on_stop_signal, base) : NULL;
	sigterm = base != NULL ? evsignal_new(base, SIGTERM, on_stop_signal, base) : NULL;
	if (table == NULL || tick == NULL || sigint == NULL || sigterm == NULL ||
	    evsignal_add(sigint, NULL) < 0 || evsignal_add(sigterm, NULL) < 0) {
		fprintf(stderr, "embed_table: cannot set up the table or the loop\n");
		goto out;
	}

	gr_api_server_conf_init(&conf);
	conf.sock_path = sock;
	conf.sock_mode = 0600;
	conf.log_type = "embed_table";
	conf.app_version = "embed_table 1.0";
	conf.base = library_thread ? NULL : base;
	ret = gr_api_server_handler_register(&table_get_handler);
	// What shmchanctl types calls the module of its requests.
	if (ret == 0)
		ret = gr_api_server_module_name(EMBED_TABLE_MODULE, "embed_table");
	if (ret == 0)
		ret = gr_api_server_start(&conf);
	if (ret < 0) {
		fprintf(stderr, "embed_table: cannot serve %s: %s\n", sock, strerror(-ret));
		goto out;
	}
	printf("embed_table: serving %s, socket side on %s\n",
	       sock,
	       library_thread ? "the library's thread" : "this program's loop");
	fflush(stdout);
	evtimer_add(tick, &period);
	if (event_base_dispatch(base) == 0)
		status = EXIT_SUCCESS;
	// On the loop's thread, the loop stopped: what conf.base asks for.
	gr_api_server_stop();
out:
	if (tick != NULL)
		event_free(tick);
	if (sigint != NULL)
		event_free(sigint);
	if (sigterm != NULL)
		event_free(sigterm);
	if (base != NULL)
		event_base_free(base);
	rte_hash_free(table);
	// EAL leaves its runtime folder, empty without shared files.
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (rmdir(runtime_dir) < 0)
		perror("embed_table: removing EAL's runtime folder");
	free(eal);
	return status;
}
