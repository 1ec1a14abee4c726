// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf: measure request round trips to shmchand on either transport.
//
// Each client process connects on its own, runs WARMUP requests, waits until
// every client is ready, then runs its share of COUNT requests (or requests
// for SECONDS, -T) with DEPTH in flight, verifying every response. The
// parent aggregates latency histograms, CPU time and context switches
// through one pipe per client and samples the daemon around the measured
// phase: its CPU time and voluntary context switches from /proc (every
// thread), its system calls with one tracepoint counter per thread.
// docs/performance.md draws its plots from the --json output (--cdf adds the
// latency distribution).
//
// --idle SECONDS measures the cost of idle clients instead: every client
// attaches and warms up, then all stay idle while the parent samples the
// daemon for SECONDS; then client 0 times its first request, and a few more
// each after a short idle gap, while the others stay attached.
//
// --idle-channels N attaches N more channels from the parent once the clients
// are ready, keeps them idle during the measured phase, and closes them at
// the end: what idle channels on the clients' poller cost a busy one.
//
// --gap MS[,MS...] measures the occasional call instead: one shm and one
// socket connection in this process, alternated call by call, each call
// after MS of silence.
//
// --beside-ring SECONDS measures the busy round trip beside the raw rte_ring
// ping-pong instead: blocks of each alternated, the ratio taken pair by pair.
//
// With --secondary each client process initialises EAL as a DPDK secondary
// of the daemon after it is forked (EAL cannot be shared across a fork), so
// the client library gives it a memzone channel instead of a memfd one.
//
// The pieces, one concern per file, are listed in ping2_perf.h.

#include "ping2_perf.h"

#include <stdlib.h>

const char *log_prefix = "ping2_perf";

int main(int argc, char **argv) {
	struct options o;

	parse_options(argc, argv, &o);
	if (o.n_gaps > 0) {
		static struct gap_run run;

		run_gaps(&o, &run);
		if (o.json)
			print_json_gaps(&o, &run);
		else
			print_human_gaps(&o, &run);
		return EXIT_SUCCESS;
	}

	if (o.beside_seconds > 0) {
		static struct beside_run run;

		run_beside_ring(&o, &run);
		if (o.json)
			print_json_beside(&o, &run);
		else
			print_human_beside(&o, &run);
		return EXIT_SUCCESS;
	}

	static struct summary sum;
	int rc = run_clients(&o, &sum);
	if (rc != EXIT_SUCCESS)
		return rc;
	if (o.idle_seconds > 0 && o.json)
		print_json_idle(&o, &sum);
	else if (o.idle_seconds > 0)
		print_human_idle(&o, &sum);
	else if (o.json)
		print_json(&o, &sum);
	else
		print_human(&o, &sum);
	return EXIT_SUCCESS;
}
