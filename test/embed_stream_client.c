// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "embed_stream_client.h"
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint32_t
embed_stream_lazy_begin(struct gr_api_client *c, uint32_t responses, uint32_t len, int reads) {
	struct embed_stream_lazy_req req = {.responses = responses, .len = len};
	long id = gr_api_client_send(c, EMBED_STREAM_LAZY, sizeof(req), &req);
	void *rx;
	size_t rx_len;

	CHECK(id > 0, "send EMBED_STREAM_LAZY: %s", strerror(errno));
	for (int i = 0; i < reads; i++) {
		CHECK(gr_api_client_stream_next(c, (uint32_t)id, &rx, &rx_len) == 1,
		      "response %d: %s",
		      i,
		      strerror(errno));
		free(rx);
	}
	return (uint32_t)id;
}

struct embed_stream_lazy_stats_resp embed_stream_stats_get(struct gr_api_client *c) {
	struct embed_stream_lazy_stats_resp stats;
	void *rx = NULL;
	int ret = gr_api_client_send_recv(c, EMBED_STREAM_LAZY_STATS, 0, NULL, &rx);

	CHECK(ret == 0 && rx != NULL, "EMBED_STREAM_LAZY_STATS: %s", strerror(errno));
	memcpy(&stats, rx, sizeof(stats));
	free(rx);
	return stats;
}
