// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Figures per registered request type (GR_SHM_TYPE_STATS): count, errors,
// and log2 histograms of the handler's run and of the wait before it, in
// nanoseconds. Kept by api_dispatch_locked() under the handler lock, from
// TSC reads: the times are converted once per request by a multiply and a
// shift, no division, no system call.

#pragma once

#include <gr_shm.h>

#include <stdbool.h>
#include <stdint.h>

// What the server did with one request type. Written and read under the
// handler lock only.
struct type_stats {
	uint64_t count;
	uint64_t errors;
	uint64_t rejected;
	uint64_t deferred;
	uint64_t handle_ns_sum;
	uint64_t queue_ns_sum;
	uint64_t handle_hist[GR_SHM_HIST_BUCKETS];
	uint64_t queue_hist[GR_SHM_HIST_BUCKETS];
};

// TSC cycles to nanoseconds: ns = cycles * tsc_ns_mult >> TSC_NS_SHIFT.
#define TSC_NS_SHIFT 32
extern uint64_t tsc_ns_mult;

// Learn the TSC's frequency: rte_get_tsc_hz() once EAL runs, else measured
// against CLOCK_MONOTONIC over a few milliseconds (a program without EAL,
// the unit tests). Also takes the instant that tsc_to_epoch_ns() counts
// from. Called by gr_api_server_start(); before it every time is 0.
void tsc_clock_init(void);

static inline uint64_t tsc_to_ns(uint64_t cycles) {
	return (uint64_t)(((unsigned __int128)cycles * tsc_ns_mult) >> TSC_NS_SHIFT);
}

// A TSC value as nanoseconds since the Unix epoch (for the trace).
uint64_t tsc_to_epoch_ns(uint64_t tsc);

// The histogram bucket of a time (GR_SHM_HIST_BUCKETS in gr_shm.h).
static inline unsigned hist_bucket(uint64_t ns) {
	unsigned b;

	if (ns < 2)
		return 0;
	b = 63 - (unsigned)__builtin_clzll(ns);
	return b < GR_SHM_HIST_BUCKETS ? b : GR_SHM_HIST_BUCKETS - 1;
}

// A request whose handler ran: queue_cycles waiting, handle_cycles running.
static inline void type_stats_record(
	struct type_stats *s,
	uint64_t queue_cycles,
	uint64_t handle_cycles,
	bool error,
	bool deferred
) {
	uint64_t queue_ns = tsc_to_ns(queue_cycles), handle_ns = tsc_to_ns(handle_cycles);

	s->count++;
	s->errors += error;
	s->deferred += deferred;
	s->queue_ns_sum += queue_ns;
	s->handle_ns_sum += handle_ns;
	s->queue_hist[hist_bucket(queue_ns)]++;
	s->handle_hist[hist_bucket(handle_ns)]++;
}

// Fill out from s, for the handler named name of request type type.
void type_stats_fill(
	struct gr_shm_type_stats *out,
	const struct type_stats *s,
	uint32_t type,
	const char *name
);
