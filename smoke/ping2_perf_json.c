// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf --json: one JSON object on stdout per run, of calls, of --idle
// or of --gap; make bench reads it (ping2_perf.h).

#include "ping2_perf.h"

#include <inttypes.h>

static void print_json_string(const char *s) {
	putchar('"');
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

// Print ", \"name\": value / calls" with the given format, or null when
// value is -1 (not measurable).
static void print_json_per_call(const char *name, int64_t value, double calls) {
	if (value >= 0)
		printf(", \"%s\": %.4f", name, (double)value / calls);
	else
		printf(", \"%s\": null", name);
}

// Print ", \"name\": value", or null when value is -1 (not measurable).
static void print_json_count(const char *name, int64_t value) {
	if (value >= 0)
		printf(", \"%s\": %" PRId64, name, value);
	else
		printf(", \"%s\": null", name);
}

// The fields every mode starts with: what was measured, and how.
static void print_json_head(
	const struct options *o,
	const char *mode,
	const char *transport,
	const char *reason,
	const char *backing
) {
	printf("{\"mode\": \"%s\", \"transport\": ", mode);
	print_json_string(transport);
	printf(", \"transport_reason\": ");
	print_json_string(reason);
	printf(", \"backing\": ");
	if (backing != NULL)
		print_json_string(backing);
	else
		printf("null");
	printf(", \"request\": \"%s\", \"clients\": %u, \"idle_channels\": %u, \"depth\": %u"
	       ", \"size\": %zu, \"event_loop\": %s",
	       request_name(o->size),
	       o->clients,
	       o->idle_channels,
	       o->depth,
	       o->size,
	       o->event_loop ? "true" : "false");
}

// The latency distribution: one [ns, fraction of calls at or below] point
// per non-empty histogram bucket (its midpoint, as the percentiles). Nine
// decimals: two buckets one call apart print apart up to a billion calls (a
// 1 s run makes 15 million).
static void print_json_cdf(const struct histogram *h) {
	uint64_t seen = 0;
	bool first = true;

	printf(", \"latency_cdf\": [");
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		if (h->buckets[i] == 0)
			continue;
		seen += h->buckets[i];
		uint64_t v = hist_value(i);
		printf("%s[%" PRIu64 ", %.9f]",
		       first ? "" : ", ",
		       v < h->max_ns ? v : h->max_ns,
		       (double)seen / (double)h->count);
		first = false;
	}
	printf("]");
}

// The clients' rates as list_name, and the fastest's over the slowest's as
// ratio_name (0 when a client made no call).
static void
print_json_spread(const char *list_name, const char *ratio_name, const double *rates, unsigned n) {
	double fastest = 0, slowest = 0;

	printf(", \"%s\": [", list_name);
	for (unsigned i = 0; i < n; i++) {
		printf("%s%.1f", i > 0 ? ", " : "", rates[i]);
		if (i == 0 || rates[i] > fastest)
			fastest = rates[i];
		if (i == 0 || rates[i] < slowest)
			slowest = rates[i];
	}
	printf("], \"%s\": %.3f", ratio_name, slowest > 0 ? fastest / slowest : 0.0);
}

void print_json(const struct options *o, const struct summary *sum) {
	double calls = (double)sum->calls;

	print_json_head(o, "calls", sum->transport, sum->reason, sum->backing);
	printf(", \"count\": %" PRIu64 ", \"seconds\": %.6f, \"calls_per_s\": %.1f",
	       sum->calls,
	       sum->seconds,
	       calls / sum->seconds);
	if (o->stamps)
		printf(", \"latency_ns\": {\"p50\": %" PRIu64 ", \"p99\": %" PRIu64
		       ", \"p999\": %" PRIu64 ", \"max\": %" PRIu64 "}",
		       hist_percentile(&sum->hist, 0.50),
		       hist_percentile(&sum->hist, 0.99),
		       hist_percentile(&sum->hist, 0.999),
		       sum->hist.max_ns);
	else
		printf(", \"latency_ns\": null");
	printf(", \"client_cpu_ns_per_call\": %.1f", (double)sum->client_cpu_ns / calls);
	if (sum->daemon.cpu_ns >= 0)
		printf(", \"daemon_cpu_ns_per_call\": %.1f", (double)sum->daemon.cpu_ns / calls);
	else
		printf(", \"daemon_cpu_ns_per_call\": null");
	printf(", \"client_vcsw_per_call\": %.4f", (double)sum->vcsw / calls);
	print_json_per_call("client_syscalls_per_call", sum->syscalls, calls);
	print_json_per_call("daemon_vcsw_per_call", sum->daemon.vcsw, calls);
	print_json_per_call("daemon_syscalls_per_call", sum->daemon.syscalls, calls);
	print_json_per_call("client_runq_wait_ns_per_call", sum->runq_wait_ns, calls);
	print_json_per_call("daemon_runq_wait_ns_per_call", sum->daemon.runq_wait_ns, calls);
	// The channel counters are the daemon's, all channels together: the
	// calls of this run only while nobody else uses the daemon.
	const struct gr_shm_counters *k = &sum->daemon.chan;
	bool chan = sum->daemon.have_chan;
	print_json_per_call("daemon_sleeps_per_call", chan ? (int64_t)k->sleeps : -1, calls);
	print_json_per_call(
		"daemon_doorbells_per_call",
		chan ? (int64_t)k->doorbells_rung : -1,
		calls
	);
	print_json_per_call("resp_ring_full_per_call", chan ? (int64_t)k->overflows : -1, calls);
	print_json_spread(
		"per_client_calls_per_s",
		"fastest_over_slowest",
		sum->client_rates,
		o->clients
	);
	print_json_spread(
		"per_client_calls_per_cpu_s",
		"fastest_over_slowest_per_cpu",
		sum->client_cpu_rates,
		o->clients
	);
	if (o->cdf)
		print_json_cdf(&sum->hist);
	printf("}\n");
}

void print_json_idle(const struct options *o, const struct summary *sum) {
	double idle_ns = o->idle_seconds * NSEC_PER_SEC;

	print_json_head(o, "idle", sum->transport, sum->reason, sum->backing);
	printf(", \"idle_seconds\": %.3f", o->idle_seconds);
	if (sum->daemon.cpu_ns >= 0)
		printf(", \"daemon_cpu_ns\": %" PRId64 ", \"daemon_cpu_core_fraction\": %.6f",
		       sum->daemon.cpu_ns,
		       (double)sum->daemon.cpu_ns / idle_ns);
	else
		printf(", \"daemon_cpu_ns\": null, \"daemon_cpu_core_fraction\": null");
	print_json_count("daemon_vcsw", sum->daemon.vcsw);
	print_json_count("daemon_syscalls", sum->daemon.syscalls);
	printf(", \"first_request_ns\": %" PRIu64, sum->first_ns);
	// Each round sleeps IDLE_GAP_MS (one voluntary context switch and a
	// system call or two); the rest is the client sleeping for its answer.
	printf(", \"client0_vcsw\": %" PRIu64, sum->client0_vcsw);
	print_json_count("client0_syscalls", sum->client0_syscalls);
	printf(", \"after_idle_ns\": {\"rounds\": %u, \"gap_ms\": %d, \"p50\": %" PRIu64
	       ", \"p99\": %" PRIu64 ", \"max\": %" PRIu64 "}}\n",
	       o->idle_rounds,
	       IDLE_GAP_MS,
	       hist_percentile(&sum->hist, 0.50),
	       hist_percentile(&sum->hist, 0.99),
	       sum->hist.max_ns);
}

// One transport's round trips after a gap.
static void print_json_gap_samples(const char *name, const struct gap_samples *g) {
	printf("\"%s\": {\"count\": %" PRIu64 ", \"p50\": %" PRIu64 ", \"p99\": %" PRIu64
	       ", \"max\": %" PRIu64 "}",
	       name,
	       g->count,
	       g->p50_ns,
	       g->p99_ns,
	       g->max_ns);
}

void print_json_gaps(const struct options *o, const struct gap_run *run) {
	print_json_head(o, "gap", "shm+socket", run->reason, run->backing);
	print_json_count("spin_us", o->spin_us);
	printf(", \"warmup\": %" PRIu64 ", \"seconds\": %.3f, \"gaps\": [", o->warmup, run->seconds
	);
	for (unsigned i = 0; i < o->n_gaps; i++) {
		const struct gap_result *g = &run->gaps[i];
		printf("%s{\"gap_ms\": %u, \"rounds\": %u, ",
		       i > 0 ? ", " : "",
		       g->gap_ms,
		       g->rounds);
		print_json_gap_samples("shm", &g->shm);
		printf(", ");
		print_json_gap_samples("socket", &g->socket);
		printf(", \"p50_ratio\": %.3f}", (double)g->shm.p50_ns / (double)g->socket.p50_ns);
	}
	printf("]}\n");
}

void print_json_beside(const struct options *o, const struct beside_run *run) {
	print_json_head(o, "beside-ring", "shm", "", run->backing);
	printf(", \"warmup\": %" PRIu64 ", \"seconds\": %.3f, \"pairs\": %u, \"block_calls\": %u"
	       ", \"block_warmup_us\": %llu",
	       o->warmup,
	       run->seconds,
	       run->pairs,
	       BESIDE_BLOCK_CALLS,
	       BESIDE_WARMUP_NS / 1000);
	printf(", \"ratio_p25\": %.4f, \"ratio_p50\": %.4f, \"ratio_p75\": %.4f",
	       run->ratio_p25,
	       run->ratio_p50,
	       run->ratio_p75);
	printf(", \"ring_ns\": {\"p50\": %.1f, \"min\": %.1f, \"max\": %.1f}",
	       run->ring_p50_ns,
	       run->ring_min_ns,
	       run->ring_max_ns);
	printf(", \"shm_ns\": {\"p50\": %.1f, \"min\": %.1f, \"max\": %.1f}",
	       run->shm_p50_ns,
	       run->shm_min_ns,
	       run->shm_max_ns);
	// --cdf: every pair, [ring ns, shm ns], in the order measured.
	if (o->cdf) {
		printf(", \"pairs_ns\": [");
		for (unsigned i = 0; i < run->pairs; i++)
			printf("%s[%.3f, %.3f]", i > 0 ? ", " : "", run->ring_ns[i], run->shm_ns[i]
			);
		printf("]");
	}
	printf("}\n");
}
