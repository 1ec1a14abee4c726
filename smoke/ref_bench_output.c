// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench's output: one line of text, or one JSON object with --json, which
// make bench reads (ref_bench.h).

#include "ref_bench.h"

#include <inttypes.h>
#include <stdio.h>

void print_result(const struct ctx *c, const struct result *r) {
	const struct options *o = c->o;
	const struct bench *b = o->bench;
	double ops = (double)r->ops;
	double ns_per_op = (double)r->elapsed_ns / ops;
	// The follower's totals cover its warmup operations too.
	double follower_ops = (double)(c->sh->follower_ops > 0 ? c->sh->follower_ops : 1);

	if (!o->json) {
		printf("%s", b->name);
		if (b->sizes)
			printf(", %zu bytes (%u cells)", o->size, c->cells);
		if (b->pipelined)
			printf(", %u in flight", o->depth);
		if (o->pin)
			printf(", CPUs %d,%d", o->cpus[0], o->cpus[1]);
		if (o->gap_us > 0)
			printf(", %" PRIu64 " us idle before each (slowest %.1f us)",
			       o->gap_us,
			       (double)r->gap_max_ns / 1e3);
		printf(": %" PRIu64 " in %.3f s: %.1f ns per %s, %.0f/s\n",
		       r->ops,
		       (double)r->elapsed_ns / NSEC_PER_SEC,
		       ns_per_op,
		       b->unit,
		       ops * NSEC_PER_SEC / (double)r->elapsed_ns);
		return;
	}
	printf("{\"test\": \"%s\", \"unit\": \"%s\"", b->name, b->unit);
	if (b->sizes)
		printf(", \"size\": %zu, \"cells\": %u", o->size, c->cells);
	else
		printf(", \"size\": null, \"cells\": null");
	if (b->pipelined)
		printf(", \"depth\": %u", o->depth);
	else
		printf(", \"depth\": null");
	if (o->pin)
		printf(", \"cpus\": [%d, %d]", o->cpus[0], o->cpus[1]);
	else
		printf(", \"cpus\": null");
	if (o->gap_us > 0)
		printf(", \"gap_us\": %" PRIu64 ", \"max_ns\": %" PRIu64, o->gap_us, r->gap_max_ns);
	else
		printf(", \"gap_us\": null, \"max_ns\": null");
	printf(", \"count\": %" PRIu64
	       ", \"seconds\": %.6f, \"ns_per_op\": %.2f, \"ops_per_s\": %.1f",
	       r->ops,
	       (double)r->elapsed_ns / NSEC_PER_SEC,
	       ns_per_op,
	       ops * NSEC_PER_SEC / (double)r->elapsed_ns);
	printf(", \"leader_cpu_ns_per_op\": %.2f, \"leader_vcsw_per_op\": %.4f",
	       (double)r->leader_cpu_ns / ops,
	       (double)r->leader_vcsw / ops);
	if (b->two_processes)
		printf(", \"follower_cpu_ns_per_op\": %.2f, \"follower_vcsw_per_op\": %.4f}\n",
		       (double)c->sh->follower_cpu_ns / follower_ops,
		       (double)c->sh->follower_vcsw / follower_ops);
	else
		printf(", \"follower_cpu_ns_per_op\": null, \"follower_vcsw_per_op\": null}\n");
}
