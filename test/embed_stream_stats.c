// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "embed_stream_stats.h"
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct embed_stream_lazy_stats_resp embed_stream_stats_get(struct gr_api_client *c) {
	struct embed_stream_lazy_stats_resp stats;
	void *rx = NULL;
	int ret = gr_api_client_send_recv(c, EMBED_STREAM_LAZY_STATS, 0, NULL, &rx);

	CHECK(ret == 0 && rx != NULL, "EMBED_STREAM_LAZY_STATS: %s", strerror(errno));
	memcpy(&stats, rx, sizeof(stats));
	free(rx);
	return stats;
}
