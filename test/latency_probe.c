// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// How well the daemon serves a well-behaved client right now: GR_PING2 round
// trips, one at a time, every echo checked, for a given time. Prints one line
// of key=value figures: calls, calls per second, and latency percentiles.
// test/shm_hostile.sh runs it before and during a hostile client's doorbell
// flood. Any error, or a round trip over PROBE_STALL_MS, fails it.
//
// usage: latency_probe SOCK socket|shm MS

#include "check.h"
#include "transport_arg.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Round trips recorded at most; more are counted, not kept.
#define PROBE_SAMPLES_MAX (4u << 20)
// A round trip this long is a stall, whatever the load.
#define PROBE_STALL_MS 2000
#define NSEC_PER_MSEC 1000000ull

static int cmp_u64(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

// The p-th percentile (0..100) of n sorted samples, in microseconds.
static double percentile_us(const uint64_t *sorted, size_t n, double p) {
	size_t i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
	return (double)sorted[i] / 1e3;
}

int main(int argc, char **argv) {
	struct gr_api_client_opts opts = {.spin_us = -1, .version = "latency_probe"};
	struct gr_ping2 tx, rx;

	CHECK(argc == 4, "usage: %s SOCK socket|shm MS", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	opts.transport = transport_arg(argv[2]);
	char *end;
	unsigned long ms = strtoul(argv[3], &end, 10);
	CHECK(*end == '\0' && ms > 0, "MS '%s' is not a positive number", argv[3]);

	struct gr_api_client *c = gr_api_client_connect_opts(argv[1], &opts);
	CHECK(c != NULL, "connect %s (%s): %s", argv[1], argv[2], strerror(errno));
	uint64_t *samples = malloc(PROBE_SAMPLES_MAX * sizeof(*samples));
	CHECK(samples != NULL, "malloc");

	uint64_t calls = 0, start = monotonic_ns(), stop = start + ms * NSEC_PER_MSEC, now = start;
	while (now < stop) {
		memcpy(tx.payload, &calls, sizeof(calls));
		memset(tx.payload + sizeof(calls),
		       (int)(calls & 0xff),
		       sizeof(tx.payload) - sizeof(calls));
		long id = gr_api_client_send(c, GR_PING2, sizeof(tx), &tx);
		CHECK(id > 0, "send GR_PING2 #%" PRIu64 ": %s", calls, strerror(errno));
		long len = gr_api_client_recv_into(c, (uint32_t)id, &rx, sizeof(rx));
		uint64_t t = monotonic_ns();
		CHECK(len == (long)sizeof(rx),
		      "GR_PING2 #%" PRIu64 ": %ld: %s",
		      calls,
		      len,
		      strerror(errno));
		CHECK(memcmp(&rx, &tx, sizeof(rx)) == 0,
		      "GR_PING2 #%" PRIu64 ": echo differs",
		      calls);
		CHECK(t - now < PROBE_STALL_MS * NSEC_PER_MSEC,
		      "GR_PING2 #%" PRIu64 " took %.1f ms",
		      calls,
		      (double)(t - now) / 1e6);
		if (calls < PROBE_SAMPLES_MAX)
			samples[calls] = t - now;
		calls++;
		now = t;
	}
	size_t n = calls < PROBE_SAMPLES_MAX ? calls : PROBE_SAMPLES_MAX;
	qsort(samples, n, sizeof(*samples), cmp_u64);
	printf("transport=%s calls=%" PRIu64 " calls_per_s=%.0f p50_us=%.1f p99_us=%.1f"
	       " p999_us=%.1f max_us=%.1f\n",
	       argv[2],
	       calls,
	       (double)calls / ((double)(now - start) / 1e9),
	       percentile_us(samples, n, 50),
	       percentile_us(samples, n, 99),
	       percentile_us(samples, n, 99.9),
	       percentile_us(samples, n, 100));
	free(samples);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
