// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// route_inject --reference: the insertions route_inject sends to
// route_table, made into an rte_fib (rte_fib6) of this process, configured
// as route_table's (fib_conf.h), with no server, no nexthop check and no
// event: the most a control API could reach.

#include "fib_conf.h"
#include "route_inject.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// EAL arguments of ours and the NULL.
#define EAL_ARGS 14

static int eal_start(uint32_t max4, uint32_t max6) {
	char prefix[64], mem[32], *eal[EAL_ARGS];
	int n = 0;

	snprintf(prefix, sizeof(prefix), "route_inject-%d", (int)getpid());
	snprintf(mem, sizeof(mem), "%lu", fib_eal_mem_mb(max4, max6));
	eal[n++] = "route_inject";
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
	eal[n] = NULL;
	if (rte_eal_init(n, eal) < 0) {
		fprintf(stderr, "route_inject: EAL init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

int inject_reference(const struct inject_opts *opts, double *seconds) {
	struct rte_fib_conf conf4;
	struct rte_fib6_conf conf6;
	struct rte_fib *fib4 = NULL;
	struct rte_fib6 *fib6 = NULL;
	struct route_table_route r;
	struct route_gen gen;
	int ret = 0;
	double start;
	uint32_t i;

	// Only the family's table: the other one's is left at its minimum.
	uint32_t max4 = opts->family == ROUTE_TABLE_AF_IP4 ? opts->max_routes : 1;
	uint32_t max6 = opts->family == ROUTE_TABLE_AF_IP6 ? opts->max_routes : 1;

	if (eal_start(max4, max6) < 0)
		return -1;
	fib_conf_fill(max4, max6, &conf4, &conf6);
	if (opts->family == ROUTE_TABLE_AF_IP4)
		fib4 = rte_fib_create("route_inject4", SOCKET_ID_ANY, &conf4);
	else
		fib6 = rte_fib6_create("route_inject6", SOCKET_ID_ANY, &conf6);
	if (fib4 == NULL && fib6 == NULL) {
		fprintf(stderr,
			"route_inject: cannot create the table: %s\n",
			rte_strerror(rte_errno));
		rte_eal_cleanup();
		return -1;
	}
	route_gen_init(&gen, opts->family, opts->seed);
	start = inject_now();
	for (i = 0; i < opts->count && ret == 0; i++) {
		route_gen_next(&gen, i, &r);
		if (fib4 != NULL)
			ret = rte_fib_add(fib4, ntohl(r.dest.ip4), r.dest.prefixlen, r.nh_id);
		else
			ret = rte_fib6_add(fib6, r.dest.ip6, r.dest.prefixlen, r.nh_id);
	}
	*seconds = inject_now() - start;
	if (ret < 0)
		fprintf(stderr, "route_inject: route %u refused: %s\n", i - 1, strerror(-ret));
	rte_fib_free(fib4);
	rte_fib6_free(fib6);
	rte_eal_cleanup();
	return ret < 0 ? -1 : 0;
}
