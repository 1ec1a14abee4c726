// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// route_inject: feed route_table a BGP-like table and say how fast it went,
// as Grout's route injector does for Grout: nexthops first, then COUNT
// routes of a real table's prefix lengths (route_gen.h), one request a
// route, DEPTH of them in flight, on the client library's transport.
// --reference makes the same insertions into tables of its own process;
// --list times the stream of every route of the family instead.
//
// usage: route_inject [-4|-6] [-s SOCK] [-n COUNT] [-d DEPTH]
//                     [-t auto|shm|socket] [--seed N] [--json]
//                     [--reference [-r MAX_ROUTES] | --list]

#include "fib_conf.h"
#include "route_inject.h"

#include <gr_api_client.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_SOCK "/tmp/route_table.sock"
#define DEFAULT_COUNT 10000
// Requests in flight at most: far past what a request ring holds, where
// more would only wait.
#define DEPTH_MAX 4096

double inject_now(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int usage(int status) {
	fprintf(stderr,
		"usage: route_inject [-4|-6] [-s SOCK] [-n COUNT] [-d DEPTH] [-t auto|shm|socket]\n"
		"                    [--seed N] [--json] [--reference [-r MAX_ROUTES] | --list]\n"
		"  -4, -6        IPv4 (default) or IPv6 routes\n"
		"  -s SOCK       route_table's socket (default %s)\n"
		"  -n COUNT      routes to add (default %u)\n"
		"  -d DEPTH      requests in flight, 1 to %u (default 1)\n"
		"  -t TRANSPORT  auto (default: GR_API_TRANSPORT, else shm when it can), shm, "
		"socket\n"
		"  --seed N      order of the prefix lengths; 0 (default) is Grout's\n"
		"  --json        one line of JSON\n"
		"  --reference   the same insertions into tables of this process, no server\n"
		"  --list        list the family's routes instead, and time the stream\n"
		"  -r N          routes --reference's table holds (default route_table's: %u, "
		"%u)\n",
		DEFAULT_SOCK,
		DEFAULT_COUNT,
		DEPTH_MAX,
		FIB4_DEFAULT_MAX_ROUTES,
		FIB6_DEFAULT_MAX_ROUTES);
	return status;
}

static int number(const char *s, unsigned long long max, unsigned long long *n) {
	char *end;

	errno = 0;
	*n = strtoull(s, &end, 0);
	return errno == 0 && *end == '\0' && end != s && *n <= max ? 0 : -1;
}

static int parse(int argc, char **argv, struct inject_opts *o) {
	enum { OPT_JSON = 256, OPT_REFERENCE, OPT_SEED, OPT_LIST };
	static const struct option longs[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"reference", no_argument, NULL, OPT_REFERENCE},
		{"list", no_argument, NULL, OPT_LIST},
		{"seed", required_argument, NULL, OPT_SEED},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned long long n;
	int c;

	*o = (struct inject_opts){
		.family = ROUTE_TABLE_AF_IP4,
		.sock = DEFAULT_SOCK,
		.count = DEFAULT_COUNT,
		.depth = 1,
		.transport = "auto",
	};
	while ((c = getopt_long(argc, argv, "46s:n:d:t:r:h", longs, NULL)) != -1) {
		switch (c) {
		case '4':
			o->family = ROUTE_TABLE_AF_IP4;
			break;
		case '6':
			o->family = ROUTE_TABLE_AF_IP6;
			break;
		case 's':
			o->sock = optarg;
			break;
		case 'n':
			if (number(optarg, UINT32_MAX, &n) < 0)
				return usage(-1);
			o->count = (uint32_t)n;
			break;
		case 'd':
			if (number(optarg, DEPTH_MAX, &n) < 0 || n == 0)
				return usage(-1);
			o->depth = (unsigned)n;
			break;
		case 't':
			if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "shm") != 0 &&
			    strcmp(optarg, "socket") != 0)
				return usage(-1);
			o->transport = optarg;
			break;
		case 'r':
			if (number(optarg, INT32_MAX, &n) < 0 || n == 0)
				return usage(-1);
			o->max_routes = (uint32_t)n;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_REFERENCE:
			o->reference = true;
			break;
		case OPT_LIST:
			o->list = true;
			break;
		case OPT_SEED:
			if (number(optarg, UINT64_MAX, &n) < 0)
				return usage(-1);
			o->seed = n;
			break;
		case 'h':
			usage(0);
			exit(EXIT_SUCCESS);
		default:
			return usage(-1);
		}
	}
	if (o->max_routes == 0)
		o->max_routes = o->family == ROUTE_TABLE_AF_IP4 ? FIB4_DEFAULT_MAX_ROUTES
								: FIB6_DEFAULT_MAX_ROUTES;
	return optind == argc && !(o->list && o->reference) ? 0 : usage(-1);
}

struct gr_api_client *inject_connect(const struct inject_opts *o) {
	// The defaults of gr_api_client_connect(), the adaptive spin among
	// them, and the transport asked for.
	struct gr_api_client_opts copts = GR_API_CLIENT_OPTS_INIT;
	struct gr_api_client *c;

	if (strcmp(o->transport, "shm") == 0)
		copts.transport = GR_API_TRANSPORT_SHM;
	else if (strcmp(o->transport, "socket") == 0)
		copts.transport = GR_API_TRANSPORT_SOCKET;
	c = gr_api_client_connect_opts(o->sock, &copts);
	if (c == NULL)
		fprintf(stderr, "route_inject: %s: %s\n", o->sock, gr_api_client_last_error());
	return c;
}

static int stats_get(struct gr_api_client *c, struct route_table_stats_resp *stats) {
	void *resp = NULL;
	int ret = gr_api_client_send_recv(c, ROUTE_TABLE_STATS, 0, NULL, &resp);

	if (ret < 0 || resp == NULL) {
		fprintf(stderr, "route_inject: stats: %s\n", strerror(ret < 0 ? -ret : EBADMSG));
		free(resp);
		return -1;
	}
	memcpy(stats, resp, sizeof(*stats));
	free(resp);
	return 0;
}

// The nexthops the routes use; those there already (an earlier run) do.
static int nexthops_add(struct gr_api_client *c) {
	struct route_table_nh_add_req req = {0};
	int ret;

	for (uint32_t id = 1; id <= ROUTE_GEN_NEXTHOPS; id++) {
		req.nh_id = id;
		req.port = (uint16_t)(id % 4);
		ret = gr_api_client_send_recv(c, ROUTE_TABLE_NH_ADD, sizeof(req), &req, NULL);
		if (ret < 0 && ret != -EEXIST) {
			fprintf(stderr, "route_inject: nexthop %u: %s\n", id, strerror(-ret));
			return -1;
		}
	}
	return 0;
}

static int route_failed(uint32_t i, int ret) {
	fprintf(stderr, "route_inject: route %u: %s\n", i, strerror(-ret));
	return -1;
}

// COUNT routes, one request each: with send_recv at depth 1, else DEPTH
// sent ahead of the responses, each answer making room for the next.
static int inject(struct gr_api_client *c, const struct inject_opts *o) {
	struct route_table_route r;
	uint32_t sent = 0, done = 0;
	struct route_gen gen;
	uint32_t *ids;
	long id;
	int ret;

	route_gen_init(&gen, o->family, o->seed);
	if (o->depth == 1) {
		for (uint32_t i = 0; i < o->count; i++) {
			route_gen_next(&gen, i, &r);
			ret = gr_api_client_send_recv(
				c,
				ROUTE_TABLE_ROUTE_ADD,
				sizeof(r),
				&r,
				NULL
			);
			if (ret < 0)
				return route_failed(i, ret);
		}
		return 0;
	}
	ids = calloc(o->depth, sizeof(*ids));
	if (ids == NULL)
		return -1;
	while (done < o->count) {
		while (sent < o->count && sent - done < o->depth) {
			route_gen_next(&gen, sent, &r);
			id = gr_api_client_send(c, ROUTE_TABLE_ROUTE_ADD, sizeof(r), &r);
			if (id < 0) {
				free(ids);
				return route_failed(sent, (int)id);
			}
			ids[sent++ % o->depth] = (uint32_t)id;
		}
		ret = gr_api_client_recv(c, ROUTE_TABLE_ROUTE_ADD, ids[done % o->depth], NULL);
		if (ret < 0) {
			free(ids);
			return route_failed(done, ret);
		}
		done++;
	}
	free(ids);
	return 0;
}

// Inject through route_table; *installed: the routes its table gained.
static int run_client(
	const struct inject_opts *o,
	double *seconds,
	const char **transport,
	uint32_t *installed
) {
	struct route_table_stats_resp before, after;
	struct gr_api_client *c = inject_connect(o);
	double start;
	int ret = -1;

	if (c == NULL)
		return -1;
	*transport = gr_api_client_transport(c) == GR_API_TRANSPORT_SHM ? "shm" : "socket";
	if (nexthops_add(c) == 0 && stats_get(c, &before) == 0) {
		start = inject_now();
		ret = inject(c, o);
		*seconds = inject_now() - start;
		if (ret == 0 && stats_get(c, &after) == 0) {
			*installed = o->family == ROUTE_TABLE_AF_IP4
					     ? after.routes4 - before.routes4
					     : after.routes6 - before.routes6;
		} else {
			ret = -1;
		}
	}
	gr_api_client_disconnect(c);
	return ret;
}

int main(int argc, char **argv) {
	const char *transport = "reference";
	struct inject_opts o;
	uint32_t installed;
	double seconds = 0, rate;
	struct route_gen gen;
	int ret;

	if (parse(argc, argv, &o) < 0)
		return EXIT_FAILURE;
	if (!o.json && !o.list) {
		route_gen_init(&gen, o.family, o.seed);
		printf("injecting %u %s routes over %u nexthops, %u in flight\n",
		       o.count,
		       o.family == ROUTE_TABLE_AF_IP4 ? "IPv4" : "IPv6",
		       ROUTE_GEN_NEXTHOPS,
		       o.depth);
		for (unsigned b = 0; b < gen.n_buckets; b++)
			printf("/%-5u %10llu %8.1f%%\n",
			       gen.prefixlen[b],
			       (unsigned long long)o.count * gen.weight[b] / ROUTE_GEN_SLOTS,
			       gen.weight[b] / 10.0);
		fflush(stdout);
	}
	if (o.reference) {
		ret = inject_reference(&o, &seconds);
		installed = o.count;
	} else if (o.list) {
		ret = inject_list(&o, &seconds, &transport, &installed);
		o.count = installed;
	} else {
		ret = run_client(&o, &seconds, &transport, &installed);
	}
	if (ret < 0)
		return EXIT_FAILURE;
	if (installed < o.count) {
		fprintf(stderr, "route_inject: only %u of %u routes installed\n", installed, o.count
		);
		return EXIT_FAILURE;
	}
	rate = seconds > 0 ? o.count / seconds : 0;
	if (o.json)
		printf("{\"tool\": \"route_inject\", \"mode\": \"%s\", \"family\": %u, "
		       "\"count\": %u, \"depth\": %u, "
		       "\"transport\": \"%s\", \"seed\": %llu, \"nexthops\": %u, "
		       "\"installed\": %u, \"seconds\": %.6f, \"routes_per_s\": %.1f}\n",
		       o.list ? "list" : "add",
		       o.family,
		       o.count,
		       o.depth,
		       transport,
		       (unsigned long long)o.seed,
		       ROUTE_GEN_NEXTHOPS,
		       installed,
		       seconds,
		       rate);
	else
		printf("%s: %u routes in %.3fs (%.1f routes/s) over %s\n",
		       o.list ? "listed" : "added",
		       o.count,
		       seconds,
		       rate,
		       transport);
	return EXIT_SUCCESS;
}
