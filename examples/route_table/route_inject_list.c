// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// route_inject --list: the stream of every route of a family
// (ROUTE_TABLE_ROUTE_LIST), received whole and timed, as a client that
// reads back a full table would.

#include "route_inject.h"

#include <gr_api_client.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int inject_list(
	const struct inject_opts *o,
	double *seconds,
	const char **transport,
	uint32_t *listed
) {
	struct route_table_route_list_req req = {.family = o->family};
	struct gr_api_client *c = inject_connect(o);
	double start;
	void *payload;
	size_t len;
	long id;
	int ret;

	if (c == NULL)
		return -1;
	*transport = gr_api_client_transport(c) == GR_API_TRANSPORT_SHM ? "shm" : "socket";
	*listed = 0;
	start = inject_now();
	id = gr_api_client_send(c, ROUTE_TABLE_ROUTE_LIST, sizeof(req), &req);
	if (id < 0) {
		fprintf(stderr, "route_inject: list: %s\n", strerror((int)-id));
		gr_api_client_disconnect(c);
		return -1;
	}
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, &payload, &len)) == 1) {
		free(payload);
		if (len != sizeof(struct route_table_route)) {
			fprintf(stderr, "route_inject: a listed route of %zu bytes\n", len);
			gr_api_client_disconnect(c);
			return -1;
		}
		(*listed)++;
	}
	*seconds = inject_now() - start;
	if (ret < 0)
		fprintf(stderr, "route_inject: list after %u routes: %s\n", *listed, strerror(errno)
		);
	gr_api_client_disconnect(c);
	return ret < 0 ? -1 : 0;
}
