// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// route_inject: what its files share (route_inject.c: options, the client
// run and the report; route_inject_reference.c: the same insertions into
// tables of its own process; route_inject_list.c: the table listed).

#pragma once

#include "route_gen.h"

#include <stdbool.h>
#include <stdint.h>

struct inject_opts {
	uint8_t family; // ROUTE_TABLE_AF_IP4 or _IP6
	const char *sock;
	uint32_t count;
	unsigned depth; // requests in flight
	const char *transport; // auto, shm or socket
	bool json;
	bool reference;
	bool list; // list the table instead
	uint64_t seed;
	uint32_t max_routes; // of --reference's tables
};

// Insert opts->count routes into an rte_fib (or rte_fib6) configured as
// route_table's, in this process; sets *seconds to the insertions' time.
// Returns 0, or -1 with the reason printed.
int inject_reference(const struct inject_opts *opts, double *seconds);

struct gr_api_client;

// Connect to opts->sock on opts->transport; NULL with the reason printed.
struct gr_api_client *inject_connect(const struct inject_opts *opts);

// List the routes of opts->family; sets *seconds to the stream's time,
// *transport to the one used and *listed to the routes received. Returns
// 0, or -1 with the reason printed.
int inject_list(
	const struct inject_opts *opts,
	double *seconds,
	const char **transport,
	uint32_t *listed
);

// Seconds of the monotonic clock.
double inject_now(void);
