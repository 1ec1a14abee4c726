// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's output on stdout: one JSON object with --json (make bench reads it), else text.

#include "ping2_perf.h"
#define NS_TEXTS 8 // ns_text()'s buffers: as many as one printf takes

static void json_string(const char *key, const char *s) {
	printf(", \"%s\": %s", key, s == NULL ? "null" : "\"");
	for (; s != NULL && *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	printf("%s", s == NULL ? "" : "\"");
}

static void json_ratio(const char *name, int64_t value, double per, int decimals) {
	json_field(name, value >= 0, "%.*f", decimals, (double)value / per);
}

// ", \"name\": {\"key\": value, ...}", the keys space-separated.
static void json_object(const char *name, const char *keys, int decimals, const double *values) {
	printf(", \"%s\": {", name);
	for (int i = 0, len; *keys != '\0'; i++, keys += len + (keys[len] == ' ')) {
		len = (int)strcspn(keys, " ");
		printf("%s\"%.*s\": %.*f", i > 0 ? ", " : "", len, keys, decimals, values[i]);
	}
	printf("}");
}

// What was measured, and how: every JSON object starts with it.
static void json_head(const struct options *o, const char *mode, const char *const what[3]) {
	printf("{\"mode\": \"%s\"", mode);
	json_string("transport", what[0]);
	json_string("transport_reason", what[1]);
	json_string("backing", what[2]);
	printf(", \"request\": \"%s\", \"clients\": %u", request_name(o->size), o->clients);
	printf(", \"idle_channels\": %u, \"depth\": %u", o->idle_channels, o->depth);
	printf(", \"size\": %zu, \"event_loop\": %s", o->size, o->event_loop ? "true" : "false");
}

static const char *ns_text(uint64_t ns) { // for a reader, in one of NS_TEXTS rotating buffers
	static char texts[NS_TEXTS][32];
	static unsigned next;
	char *text = texts[next++ % NS_TEXTS];
	bool ms = ns >= 10 * NSEC_PER_SEC / 1000;
	if (ns < 10000)
		snprintf(text, 32, "%" PRIu64 " ns", ns);
	else
		snprintf(text, 32, "%.1f %s", (double)ns / (ms ? 1e6 : 1e3), ms ? "ms" : "us");
	return text;
}

// Costs per call: JSON client_X_per_call and daemon_X_per_call (null: unknown), or a text line.
static void print_costs(const struct options *o, const struct summary *sum) {
	const struct daemon_probe *d = &sum->daemon;
	const struct cost {
		const char *json, *text, *unit;
		int64_t client, daemon;
		int json_decimals, text_decimals;
	} costs[] = {
		{"cpu_ns", "cpu", " ns", (int64_t)sum->client_cpu_ns, d->cpu_ns, 1, 0},
		{"vcsw", "vcsw", "", (int64_t)sum->vcsw, d->vcsw, 4, 3},
		{"syscalls", "syscalls", "", sum->syscalls, d->syscalls, 4, 3},
		{"runq_wait_ns", "wait for a CPU", " ns", sum->runq_wait_ns, d->runq_wait_ns, 4, 0},
	};
	static const unsigned json_order[] = {0, 1, 2, 4, 3, 5, 6, 7}; // as they always came
	double calls = (double)sum->calls;
	char name[64];
	printf("%s", o->json ? "" : "per call:");
	for (unsigned n = 0; n < 8; n++) {
		unsigned i = o->json ? json_order[n] : n; // cost i / 2, the client's if i is even
		const struct cost *c = &costs[i / 2];
		const char *who = i % 2 ? "daemon" : "client", *sep = n > 0 ? "," : "";
		int64_t v = i % 2 ? c->daemon : c->client;
		int decimals = o->json ? c->json_decimals : c->text_decimals;
		snprintf(name, sizeof(name), "%s_%s_per_call", who, c->json);
		if (o->json)
			json_ratio(name, v, calls, decimals);
		else if (v >= 0)
			printf("%s %s %s %.*f%s", sep, who, c->text, decimals, v / calls, c->unit);
	}
	printf("%s", o->json ? "" : "\n");
}

// The clients' rates (per s of run or of CPU time), fastest / slowest (0: a client made no call).
static void json_spread(const double *rates, unsigned n, bool cpu) {
	double fastest = rates[0], slowest = rates[0];
	printf(", \"per_client_calls_per_%ss\": [", cpu ? "cpu_" : "");
	for (unsigned i = 0; i < n; i++) {
		printf("%s%.1f", i > 0 ? ", " : "", rates[i]);
		fastest = rates[i] > fastest ? rates[i] : fastest;
		slowest = rates[i] < slowest ? rates[i] : slowest;
	}
	double ratio = slowest > 0 ? fastest / slowest : 0.0;
	printf("], \"fastest_over_slowest%s\": %.3f", cpu ? "_per_cpu" : "", ratio);
}

// Nine decimals: buckets a call apart print apart up to a billion calls (1 s makes 15 million).
static void json_cdf(const struct histogram *h) {
	uint64_t seen = 0;
	printf(", \"latency_cdf\": [");
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		if (h->buckets[i] == 0)
			continue;
		printf("%s[%" PRIu64 ", ", seen > 0 ? ", " : "", hist_value(h, i));
		seen += h->buckets[i];
		printf("%.9f]", (double)seen / (double)h->count);
	}
	printf("]");
}

static void text_head(const struct options *o, const struct summary *sum) {
	const char *b = sum->backing;
	printf("transport %s%s%s%s", sum->transport, b ? " (" : "", b ? b : "", b ? ")" : "");
	printf(", %u client%s, depth %u", o->clients, o->clients > 1 ? "s" : "", o->depth);
	printf(", %s of %zu bytes", request_name(o->size), o->size);
	printf("%s\n", o->event_loop ? ", waited for in an event loop" : "");
	if (sum->reason[0] != '\0')
		printf("%s: %s\n", b ? "memfd channel" : "not on shm", sum->reason);
}

static void print_idle(const struct options *o, const struct summary *sum) {
	const struct daemon_probe *d = &sum->daemon;
	const struct histogram *h = &sum->hist;
	double idle = o->idle_seconds * NSEC_PER_SEC, cpu = (double)d->cpu_ns;
	double after[] = {o->idle_rounds, IDLE_GAP_MS, hist_percentile(h, 0.50), 0, h->max_ns};
	if (!o->json) {
		text_head(o, sum);
		printf("%u idle client%s", o->clients, o->clients > 1 ? "s" : "");
		printf(" for %.1f s: daemon", o->idle_seconds);
		if (d->cpu_ns >= 0)
			printf(" cpu %.3f ms (%.4f%% of a core)", cpu / 1e6, 100.0 * cpu / idle);
		if (d->vcsw >= 0)
			printf(", %" PRId64 " voluntary context switches", d->vcsw);
		if (d->syscalls >= 0)
			printf(", %" PRId64 " system calls", d->syscalls);
		printf("\nfirst request after idling: %s;", ns_text(sum->first_ns));
		printf(" after %d ms idle gaps (%u rounds)", IDLE_GAP_MS, o->idle_rounds);
		printf(": p50 %s, max %s\n", ns_text(after[2]), ns_text(h->max_ns));
		return;
	}
	json_head(o, "idle", (const char *[]){sum->transport, sum->reason, sum->backing});
	printf(", \"idle_seconds\": %.3f", o->idle_seconds);
	json_ratio("daemon_cpu_ns", d->cpu_ns, 1, 0);
	json_ratio("daemon_cpu_core_fraction", d->cpu_ns, idle, 6);
	json_ratio("daemon_vcsw", d->vcsw, 1, 0);
	json_ratio("daemon_syscalls", d->syscalls, 1, 0);
	printf(", \"first_request_ns\": %" PRIu64, sum->first_ns);
	// Each round sleeps IDLE_GAP_MS (a switch, a system call or two); the rest awaits answers.
	printf(", \"client0_vcsw\": %" PRIu64, sum->client0_vcsw);
	json_ratio("client0_syscalls", sum->client0_syscalls, 1, 0);
	after[3] = hist_percentile(h, 0.99);
	json_object("after_idle_ns", "rounds gap_ms p50 p99 max", 0, after);
	printf("}\n");
}

void print_summary(const struct options *o, const struct summary *sum) {
	const struct histogram *h = &sum->hist;
	const struct gr_shm_counters *k = sum->daemon.have_chan ? &sum->daemon.chan.total : NULL;
	double calls = (double)sum->calls, rate = calls / sum->seconds;
	double latency[] = {
		hist_percentile(h, 0.50),
		hist_percentile(h, 0.99),
		hist_percentile(h, 0.999),
		h->max_ns};
	if (o->idle_seconds > 0) {
		print_idle(o, sum);
		return;
	}
	if (!o->json) {
		text_head(o, sum);
		printf("%" PRIu64 " calls in %.3f s", sum->calls, sum->seconds);
		printf(": %.0f calls/s\n", rate);
		if (o->stamps) {
			printf("latency p50 %s, p99 %s", ns_text(latency[0]), ns_text(latency[1]));
			printf(", p99.9 %s, max %s\n", ns_text(latency[2]), ns_text(latency[3]));
		} else {
			printf("latency: not stamped (--no-stamps)\n");
		}
		print_costs(o, sum);
		return;
	}
	json_head(o, "calls", (const char *[]){sum->transport, sum->reason, sum->backing});
	printf(", \"count\": %" PRIu64 ", \"seconds\": %.6f", sum->calls, sum->seconds);
	printf(", \"calls_per_s\": %.1f", rate);
	if (o->stamps)
		json_object("latency_ns", "p50 p99 p999 max", 0, latency);
	else
		printf(", \"latency_ns\": null");
	print_costs(o, sum);
	// The daemon's channel counters, all channels: this run's only while nobody else calls.
	json_ratio("daemon_sleeps_per_call", k ? (int64_t)k->sleeps : -1, calls, 4);
	json_ratio("daemon_doorbells_per_call", k ? (int64_t)k->doorbells_rung : -1, calls, 4);
	json_ratio("resp_ring_full_per_call", k ? (int64_t)k->overflows : -1, calls, 4);
	json_spread(sum->client_rates, o->clients, false);
	json_spread(sum->client_cpu_rates, o->clients, true);
	if (o->cdf)
		json_cdf(h);
	printf("}\n");
}

void print_gaps(const struct options *o, const struct gap_run *run) {
	const char *b = run->backing;
	if (o->json) {
		json_head(o, "gap", (const char *[]){"shm+socket", run->reason, b});
		json_ratio("spin_us", o->spin_us, 1, 0);
		printf(", \"warmup\": %" PRIu64 ", \"seconds\": %.3f", o->warmup, run->seconds);
		printf(", \"gaps\": [");
	} else {
		printf("shm (%s) and socket, one connection each, ", b ? b : "?");
		printf("alternated call by call: %s", request_name(o->size));
		printf(" of %zu bytes\n", o->size);
		if (run->reason[0] != '\0')
			printf("%s channel: %s\n", b ? b : "shm", run->reason);
		printf("%-10s %6s  %-24s ", "after", "rounds", "shm p50 / p99");
		printf("%-24s %s\n", "socket p50 / p99", "shm/socket p50");
	}
	for (unsigned i = 0; i < o->n_gaps; i++) {
		const struct latency_samples *g[2] = {&run->gaps[i].shm, &run->gaps[i].socket};
		unsigned gap_ms = run->gaps[i].gap_ms, rounds = run->gaps[i].rounds;
		double ratio = (double)g[0]->p50_ns / (double)g[1]->p50_ns;
		char t[3][80];
		if (o->json)
			printf("%s{\"gap_ms\": %u, \"rounds\": %u", i ? ", " : "", gap_ms, rounds);
		for (int j = 0; j < 2; j++) {
			double v[] = {g[j]->count, g[j]->p50_ns, g[j]->p99_ns, g[j]->max_ns};
			if (o->json)
				json_object(j ? "socket" : "shm", "count p50 p99 max", 0, v);
			snprintf(t[1 + j], 80, "%s / %s", ns_text(v[1]), ns_text(v[2]));
		}
		snprintf(t[0], 80, "%u ms", gap_ms);
		if (o->json)
			printf(", \"p50_ratio\": %.3f}", ratio);
		else
			printf("%-10s %6u  %-24s %-24s %.2f\n", t[0], rounds, t[1], t[2], ratio);
	}
	printf("%s", o->json ? "]}\n" : "");
}

void print_beside(const struct options *o, const struct beside_run *run) {
	const double *ring = run->ring, *shm = run->shm;
	const char *b = run->backing ? run->backing : "?";
	if (!o->json) {
		printf("shm (%s) %s of %zu bytes", b, request_name(o->size), o->size);
		printf(" beside the raw rte_ring ping-pong, %u pairs of blocks", run->pairs);
		printf(" of %u round trips in %.1f s\n", BESIDE_BLOCK_CALLS, run->seconds);
		printf("%-8s %10s %10s %10s\n", "", "p50", "min", "max");
		printf("%-8s %7.1f ns %7.1f ns %7.1f ns\n", "ring", ring[0], ring[1], ring[2]);
		printf("%-8s %7.1f ns %7.1f ns %7.1f ns\n", "shm", shm[0], shm[1], shm[2]);
		printf("shm / ring, pair by pair: p50 %.3f", run->ratio[1]);
		printf(" (p25 %.3f, p75 %.3f)\n", run->ratio[0], run->ratio[2]);
		return;
	}
	json_head(o, "beside-ring", (const char *[]){"shm", "", run->backing});
	printf(", \"warmup\": %" PRIu64 ", \"seconds\": %.3f", o->warmup, run->seconds);
	printf(", \"pairs\": %u, \"block_calls\": %u", run->pairs, BESIDE_BLOCK_CALLS);
	printf(", \"block_warmup_us\": %llu", BESIDE_WARMUP_NS / 1000);
	printf(", \"ratio_p25\": %.4f, \"ratio_p50\": %.4f", run->ratio[0], run->ratio[1]);
	printf(", \"ratio_p75\": %.4f", run->ratio[2]);
	json_object("ring_ns", "p50 min max", 1, ring);
	json_object("shm_ns", "p50 min max", 1, shm);
	printf("%s", o->cdf ? ", \"pairs_ns\": [" : ""); // --cdf: [ring ns, shm ns] of each pair
	for (unsigned i = 0; o->cdf && i < run->pairs; i++)
		printf("%s[%.3f, %.3f]", i ? ", " : "", run->ring_ns[i], run->shm_ns[i]);
	printf("%s}\n", o->cdf ? "]" : "");
}

// Not json_head()'s keys, which describe calls: the run's own; sub_spin_us -1 is the adaptive spin.
void print_events(const struct options *o, const struct events_run *run) {
	const struct latency_samples *l = &run->latency;
	const char *t = transport_name(o->transport);
	if (!o->json) {
		printf("%-6s %2u subscribers %6zu B", t, o->clients, o->size);
		printf(" depth %3u spin ", o->depth);
		printf(o->spin_us < 0 ? "adaptive" : "%d us", o->spin_us);
		printf(": %" PRIu64 " delivered, %" PRIu64 " lost", run->delivered, run->lost);
		printf(", %.0f events/s", run->events_per_s);
		printf(", latency p50 %.1f us p99 %.1f us", l->p50_ns / 1e3, l->p99_ns / 1e3);
		printf(" max %.1f us\n", l->max_ns / 1e3);
		return;
	}
	printf("{\"mode\": \"events\", \"transport\": \"%s\", \"subscribers\": %u", t, o->clients);
	printf(", \"payload\": %zu, \"depth\": %u", o->size, o->depth);
	printf(", \"sub_spin_us\": %d, \"published\": %" PRIu64, o->spin_us, o->count);
	printf(", \"delivered\": %" PRIu64 ", \"lost\": %" PRIu64, run->delivered, run->lost);
	printf(", \"events_per_s\": %.0f, \"p50_ns\": %" PRIu64, run->events_per_s, l->p50_ns);
	printf(", \"p99_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64 "}\n", l->p99_ns, l->max_ns);
}
