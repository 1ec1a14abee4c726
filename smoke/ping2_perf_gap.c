// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf --gap: the occasional call. Most calls a controller makes come
// after silence, when both ends may have stopped spinning and their CPUs
// gone idle. One shm connection and one socket connection in this process,
// warmed up, then for each gap its rounds of: gap, shm call, gap, socket
// call. The transports alternate call by call, so that both see the same
// machine (its load, where its vCPUs are) within milliseconds, and each
// call comes after the same silence of the whole process (ping2_perf.h).

#include "ping2_perf.h"

#include <rte_eal.h>
#include <rte_errno.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

// The transports of a round, in the order they call.
enum gap_transport {
	GAP_SHM,
	GAP_SOCKET,
	GAP_TRANSPORTS,
};

static const enum gr_api_transport gap_transports[GAP_TRANSPORTS] = {
	[GAP_SHM] = GR_API_TRANSPORT_SHM,
	[GAP_SOCKET] = GR_API_TRANSPORT_SOCKET,
};

static int compare_ns(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

// Sort the n round trips in ns and sum them up into *out.
static void gap_summarise(uint64_t *ns, unsigned n, struct gap_samples *out) {
	qsort(ns, n, sizeof(*ns), compare_ns);
	out->count = n;
	out->p50_ns = samples_percentile(ns, n, 0.50);
	out->p99_ns = samples_percentile(ns, n, 0.99);
	out->max_ns = ns[n - 1];
}

// The rounds of one gap into *res.
static void gap_measure(
	const struct options *o,
	struct client_state *s,
	unsigned gap_ms,
	struct gap_result *res
) {
	unsigned rounds = gap_rounds(o, gap_ms);
	uint64_t *ns[GAP_TRANSPORTS];

	for (int t = 0; t < GAP_TRANSPORTS; t++) {
		ns[t] = calloc(rounds, sizeof(*ns[t]));
		if (ns[t] == NULL)
			fail("%s", strerror(ENOMEM));
	}
	for (unsigned r = 0; r < rounds; r++) {
		for (int t = 0; t < GAP_TRANSPORTS; t++) {
			sleep_ns(gap_ms * NSEC_PER_MSEC);
			ns[t][r] = call_alone(&s[t]);
		}
	}
	res->gap_ms = gap_ms;
	res->rounds = rounds;
	gap_summarise(ns[GAP_SHM], rounds, &res->shm);
	gap_summarise(ns[GAP_SOCKET], rounds, &res->socket);
	for (int t = 0; t < GAP_TRANSPORTS; t++)
		free(ns[t]);
	if (!o->quiet)
		fprintf(stderr,
			"%s: after %u ms gaps, %u rounds: p50 shm %.1f us, socket %.1f us\n",
			log_prefix,
			gap_ms,
			rounds,
			(double)res->shm.p50_ns / 1e3,
			(double)res->socket.p50_ns / 1e3);
}

void run_gaps(struct options *o, struct gap_run *run) {
	struct client_state s[GAP_TRANSPORTS];
	struct gr_shm_daemon_info info;
	uint32_t memzones_before = 0;

	if (o->secondary) {
		secondary_prepare(o, daemon_info(o, &info) ? &info : NULL);
		if (!daemon_stats(o, NULL, &memzones_before))
			fail("--secondary: the daemon does not tell its memzones (GR_SHM_STATS)");
		secondary_init(o, 0);
	}
	tsc_calibrate();
	for (int t = 0; t < GAP_TRANSPORTS; t++) {
		uint32_t backing;
		struct gr_api_client *c = connect_measured(o, gap_transports[t], &backing);

		client_state_init(&s[t], o, c);
		if (t == GAP_SHM) {
			run->backing = backing_name(backing);
			snprintf(
				run->reason,
				sizeof(run->reason),
				"%s",
				gr_api_client_transport_reason(c)
			);
		}
	}
	for (int t = 0; t < GAP_TRANSPORTS; t++)
		run_calls(&s[t], o->warmup, 0, NULL, false);

	uint64_t start = now_ns();
	for (unsigned g = 0; g < o->n_gaps; g++)
		gap_measure(o, s, o->gaps_ms[g], &run->gaps[g]);
	run->seconds = (double)(now_ns() - start) / NSEC_PER_SEC;

	for (int t = 0; t < GAP_TRANSPORTS; t++) {
		if (gr_api_client_disconnect(s[t].client) < 0)
			fail("disconnect: %s", strerror(errno));
		client_state_release(&s[t]);
	}
	// As a client process's (client_main()): EAL cleans up once the daemon
	// has freed the channel's memzone.
	if (o->secondary) {
		wait_memzones_freed(o, memzones_before);
		if (rte_eal_cleanup() < 0)
			fail("EAL cleanup: %s", rte_strerror(rte_errno));
	}
}
