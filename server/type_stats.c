// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The TSC clock of the per-type figures and the trace, and the
// GR_SHM_TYPE_STATS request.

#include "type_stats.h"
#include "api.h"
#include "config.h"

#include <rte_cycles.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

uint64_t tsc_ns_mult;

// The instant tsc_to_epoch_ns() counts from, on both clocks.
static uint64_t epoch_tsc, epoch_ns;

// How long to measure the TSC against the monotonic clock without EAL: both
// clocks are read back to back at each end, so a microsecond between the
// reads is 0.01 % of the rate.
#define TSC_CALIBRATE_NS (10 * 1000 * 1000)

static uint64_t clock_ns(clockid_t clock) {
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t tsc_hz_measure(void) {
	struct timespec pause = {0, TSC_CALIBRATE_NS};
	uint64_t ns0 = clock_ns(CLOCK_MONOTONIC), tsc0 = rte_rdtsc(), ns1, tsc1;

	nanosleep(&pause, NULL);
	ns1 = clock_ns(CLOCK_MONOTONIC);
	tsc1 = rte_rdtsc();
	if (ns1 <= ns0)
		return 0;
	return (uint64_t)((unsigned __int128)(tsc1 - tsc0) * 1000000000ull / (ns1 - ns0));
}

void tsc_clock_init(void) {
	uint64_t hz = rte_get_tsc_hz();

	if (hz == 0)
		hz = tsc_hz_measure();
	if (hz == 0) {
		LOG(WARNING, "no TSC frequency: request times read 0");
		tsc_ns_mult = 0;
		return;
	}
	tsc_ns_mult = (uint64_t)(((unsigned __int128)1000000000ull << TSC_NS_SHIFT) / hz);
	epoch_tsc = rte_rdtsc();
	epoch_ns = clock_ns(CLOCK_REALTIME);
}

uint64_t tsc_to_epoch_ns(uint64_t tsc) {
	if (tsc >= epoch_tsc)
		return epoch_ns + tsc_to_ns(tsc - epoch_tsc);
	return epoch_ns - tsc_to_ns(epoch_tsc - tsc);
}

void type_stats_fill(
	struct gr_shm_type_stats *out,
	const struct type_stats *s,
	uint32_t type,
	const char *name
) {
	memset(out, 0, sizeof(*out));
	out->type = type;
	out->buckets = GR_SHM_HIST_BUCKETS;
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->count = s->count;
	out->errors = s->errors;
	out->rejected = s->rejected;
	out->deferred = s->deferred;
	out->handle_ns_sum = s->handle_ns_sum;
	out->queue_ns_sum = s->queue_ns_sum;
	memcpy(out->handle_hist, s->handle_hist, sizeof(out->handle_hist));
	memcpy(out->queue_hist, s->queue_hist, sizeof(out->queue_hist));
}

// One response per registered type. The registry cannot change meanwhile:
// registering takes the handler lock, which this handler holds.
static struct gr_api_out
type_stats_list(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct gr_api_handler *handler;
	const struct type_stats *s;
	struct gr_shm_type_stats out;
	int ret;

	(void)request;
	(void)len;
	for (unsigned i = 0; (handler = api_handler_at(i, &s)) != NULL; i++) {
		type_stats_fill(&out, s, handler->request_type, handler->name);
		ret = gr_api_send(ctx, sizeof(out), &out);
		if (ret < 0)
			return gr_api_out(-ret, 0, NULL);
	}
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler type_stats_handlers[] = {
	GR_API_HANDLER_INIT(GR_SHM_TYPE_STATS, type_stats_list),
};
API_HANDLER_TABLE(handlers_type_stats, type_stats_handlers);
