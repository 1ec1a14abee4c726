// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's text output, for a reader: a run of calls, of --idle or of
// --gap (ping2_perf.h).

#include "ping2_perf.h"

#include <inttypes.h>

static void format_ns(char *buf, size_t len, uint64_t ns) {
	if (ns < 10000)
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	else if (ns < 10 * NSEC_PER_SEC / 1000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
}

static void print_head(const struct options *o, const struct summary *sum) {
	printf("transport %s%s%s%s, %u client%s, depth %u, %s of %zu bytes%s\n",
	       sum->transport,
	       sum->backing != NULL ? " (" : "",
	       sum->backing != NULL ? sum->backing : "",
	       sum->backing != NULL ? ")" : "",
	       o->clients,
	       o->clients > 1 ? "s" : "",
	       o->depth,
	       request_name(o->size),
	       o->size,
	       o->event_loop ? ", waited for in an event loop" : "");
	if (sum->reason[0] != '\0')
		printf("%s: %s\n",
		       sum->backing != NULL ? "memfd channel" : "not on shm",
		       sum->reason);
}

void print_human(const struct options *o, const struct summary *sum) {
	char p50[32], p99[32], p999[32], max[32];
	double calls = (double)sum->calls;

	format_ns(p50, sizeof(p50), hist_percentile(&sum->hist, 0.50));
	format_ns(p99, sizeof(p99), hist_percentile(&sum->hist, 0.99));
	format_ns(p999, sizeof(p999), hist_percentile(&sum->hist, 0.999));
	format_ns(max, sizeof(max), sum->hist.max_ns);

	print_head(o, sum);
	printf("%" PRIu64 " calls in %.3f s: %.0f calls/s\n",
	       sum->calls,
	       sum->seconds,
	       calls / sum->seconds);
	if (o->stamps)
		printf("latency p50 %s, p99 %s, p99.9 %s, max %s\n", p50, p99, p999, max);
	else
		printf("latency: not stamped (--no-stamps)\n");
	printf("per call: client cpu %.0f ns", (double)sum->client_cpu_ns / calls);
	if (sum->daemon.cpu_ns >= 0)
		printf(", daemon cpu %.0f ns", (double)sum->daemon.cpu_ns / calls);
	printf(", client vcsw %.3f", (double)sum->vcsw / calls);
	if (sum->daemon.vcsw >= 0)
		printf(", daemon vcsw %.3f", (double)sum->daemon.vcsw / calls);
	if (sum->syscalls >= 0)
		printf(", client syscalls %.3f", (double)sum->syscalls / calls);
	if (sum->daemon.syscalls >= 0)
		printf(", daemon syscalls %.3f", (double)sum->daemon.syscalls / calls);
	if (sum->runq_wait_ns >= 0)
		printf(", client wait for a CPU %.0f ns", (double)sum->runq_wait_ns / calls);
	if (sum->daemon.runq_wait_ns >= 0)
		printf(", daemon wait for a CPU %.0f ns", (double)sum->daemon.runq_wait_ns / calls);
	printf("\n");
}

void print_human_idle(const struct options *o, const struct summary *sum) {
	char first[32], p50[32], max[32];

	format_ns(first, sizeof(first), sum->first_ns);
	format_ns(p50, sizeof(p50), hist_percentile(&sum->hist, 0.50));
	format_ns(max, sizeof(max), sum->hist.max_ns);
	print_head(o, sum);
	printf("%u idle client%s for %.1f s: daemon",
	       o->clients,
	       o->clients > 1 ? "s" : "",
	       o->idle_seconds);
	if (sum->daemon.cpu_ns >= 0)
		printf(" cpu %.3f ms (%.4f%% of a core)",
		       (double)sum->daemon.cpu_ns / 1e6,
		       100.0 * (double)sum->daemon.cpu_ns / (o->idle_seconds * NSEC_PER_SEC));
	if (sum->daemon.vcsw >= 0)
		printf(", %" PRId64 " voluntary context switches", sum->daemon.vcsw);
	if (sum->daemon.syscalls >= 0)
		printf(", %" PRId64 " system calls", sum->daemon.syscalls);
	printf("\nfirst request after idling: %s; after %d ms idle gaps (%u rounds): p50 %s, max "
	       "%s\n",
	       first,
	       IDLE_GAP_MS,
	       o->idle_rounds,
	       p50,
	       max);
}

// "P50 / P99" of one transport's round trips after a gap.
static void format_gap_samples(char *buf, size_t len, const struct gap_samples *g) {
	char p50[32], p99[32];

	format_ns(p50, sizeof(p50), g->p50_ns);
	format_ns(p99, sizeof(p99), g->p99_ns);
	snprintf(buf, len, "%s / %s", p50, p99);
}

void print_human_gaps(const struct options *o, const struct gap_run *run) {
	printf("shm (%s) and socket, one connection each, alternated call by call: %s of %zu "
	       "bytes\n",
	       run->backing != NULL ? run->backing : "?",
	       request_name(o->size),
	       o->size);
	if (run->reason[0] != '\0')
		printf("%s channel: %s\n", run->backing != NULL ? run->backing : "shm", run->reason
		);
	printf("%-10s %6s  %-24s %-24s %s\n",
	       "after",
	       "rounds",
	       "shm p50 / p99",
	       "socket p50 / p99",
	       "shm/socket p50");
	for (unsigned i = 0; i < o->n_gaps; i++) {
		const struct gap_result *g = &run->gaps[i];
		char gap[32], shm[80], sock[80];

		snprintf(gap, sizeof(gap), "%u ms", g->gap_ms);
		format_gap_samples(shm, sizeof(shm), &g->shm);
		format_gap_samples(sock, sizeof(sock), &g->socket);
		printf("%-10s %6u  %-24s %-24s %.2f\n",
		       gap,
		       g->rounds,
		       shm,
		       sock,
		       (double)g->shm.p50_ns / (double)g->socket.p50_ns);
	}
}

void print_human_beside(const struct options *o, const struct beside_run *run) {
	printf("shm (%s) %s of %zu bytes beside the raw rte_ring ping-pong, %u pairs of "
	       "blocks of %u round trips in %.1f s\n",
	       run->backing != NULL ? run->backing : "?",
	       request_name(o->size),
	       o->size,
	       run->pairs,
	       BESIDE_BLOCK_CALLS,
	       run->seconds);
	printf("%-8s %10s %10s %10s\n", "", "p50", "min", "max");
	printf("%-8s %7.1f ns %7.1f ns %7.1f ns\n",
	       "ring",
	       run->ring_p50_ns,
	       run->ring_min_ns,
	       run->ring_max_ns);
	printf("%-8s %7.1f ns %7.1f ns %7.1f ns\n",
	       "shm",
	       run->shm_p50_ns,
	       run->shm_min_ns,
	       run->shm_max_ns);
	printf("shm / ring, pair by pair: p50 %.3f (p25 %.3f, p75 %.3f)\n",
	       run->ratio_p50,
	       run->ratio_p25,
	       run->ratio_p75);
}
