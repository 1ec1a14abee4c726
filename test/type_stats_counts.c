// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Per-request-type figures against the daemon, on one transport: after a
// known run, GR_SHM_TYPE_STATS counts each type's requests, errors and
// rejects exactly, and every histogram adds up to its count.
//
//   type_stats_counts SOCK socket|shm

#include "check.h"
#include "transport_arg.h"

#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdlib.h>

#define PINGS 50
#define ECHOES 7
#define DETACHES 3 // errors on either transport: ENOENT on the socket, EINVAL on a channel
#define SHORT_SETS 2 // GR_LOG_LEVEL_SET without its payload: rejected, EMSGSIZE
#define TYPES_MAX 256

struct types {
	struct gr_shm_type_stats t[TYPES_MAX];
	unsigned n;
};

static void types_get(struct gr_api_client *c, struct types *out) {
	const struct gr_shm_type_stats *t;
	int ret;

	out->n = 0;
	gr_api_client_stream_foreach (t, ret, c, GR_SHM_TYPE_STATS, 0, NULL) {
		CHECK(out->n < TYPES_MAX, "more than %d types", TYPES_MAX);
		out->t[out->n++] = *t;
	}
	CHECK(ret == 0, "GR_SHM_TYPE_STATS: %s", strerror(-ret));
}

static const struct gr_shm_type_stats *type_of(const struct types *ts, uint32_t type) {
	for (unsigned i = 0; i < ts->n; i++)
		if (ts->t[i].type == type)
			return &ts->t[i];
	CHECK(false, "type 0x%08x not listed", type);
	return NULL;
}

static uint64_t hist_sum(const uint64_t *hist) {
	uint64_t sum = 0;

	for (unsigned b = 0; b < GR_SHM_HIST_BUCKETS; b++)
		sum += hist[b];
	return sum;
}

// What type counted between before and after.
static void check_delta(
	const struct types *before,
	const struct types *after,
	uint32_t type,
	uint64_t count,
	uint64_t errors,
	uint64_t rejected
) {
	const struct gr_shm_type_stats *b = type_of(before, type), *a = type_of(after, type);

	CHECK(a->count - b->count == count,
	      "%s: %llu counted, %llu sent",
	      a->name,
	      (unsigned long long)(a->count - b->count),
	      (unsigned long long)count);
	CHECK(a->errors - b->errors == errors,
	      "%s: %llu errors, %llu expected",
	      a->name,
	      (unsigned long long)(a->errors - b->errors),
	      (unsigned long long)errors);
	CHECK(a->rejected - b->rejected == rejected,
	      "%s: %llu rejected, %llu expected",
	      a->name,
	      (unsigned long long)(a->rejected - b->rejected),
	      (unsigned long long)rejected);
}

int main(int argc, char **argv) {
	char payload[64] = "echo me";
	struct types before, after;
	struct gr_api_client *c;
	void *rx;
	int ret;

	CHECK(argc == 3, "usage: %s SOCK socket|shm", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	c = connect_forced(argv[1], argv[2], "type_stats_counts");
	types_get(c, &before);
	for (unsigned i = 0; i < PINGS; i++)
		CHECK(gr_api_client_ping(c) == 0, "ping: %s", strerror(errno));
	for (unsigned i = 0; i < ECHOES; i++) {
		rx = NULL;
		CHECK(gr_api_client_send_recv_len(c, GR_SHM_ECHO, sizeof(payload), payload, &rx) ==
			      sizeof(payload),
		      "echo: %s",
		      strerror(errno));
		free(rx);
	}
	for (unsigned i = 0; i < DETACHES; i++) {
		ret = gr_api_client_send_recv(c, GR_SHM_DETACH, 0, NULL, NULL);
		CHECK(ret == -ENOENT || ret == -EINVAL, "detach: %s", strerror(-ret));
	}
	for (unsigned i = 0; i < SHORT_SETS; i++) {
		ret = gr_api_client_send_recv(c, GR_LOG_LEVEL_SET, 0, NULL, NULL);
		CHECK(ret == -EMSGSIZE, "short log level set: %s", strerror(-ret));
	}
	types_get(c, &after);
	check_delta(&before, &after, GR_PING, PINGS, 0, 0);
	check_delta(&before, &after, GR_SHM_ECHO, ECHOES, 0, 0);
	check_delta(&before, &after, GR_SHM_DETACH, DETACHES, DETACHES, 0);
	check_delta(&before, &after, GR_LOG_LEVEL_SET, 0, 0, SHORT_SETS);
	// The stats request itself: one counted by the time the second listed.
	check_delta(&before, &after, GR_SHM_TYPE_STATS, 1, 0, 0);
	for (unsigned i = 0; i < after.n; i++) {
		const struct gr_shm_type_stats *t = &after.t[i];

		CHECK(t->buckets == GR_SHM_HIST_BUCKETS, "%s: %u buckets", t->name, t->buckets);
		CHECK(hist_sum(t->handle_hist) == t->count,
		      "%s: handling histogram holds %llu of %llu",
		      t->name,
		      (unsigned long long)hist_sum(t->handle_hist),
		      (unsigned long long)t->count);
		CHECK(hist_sum(t->queue_hist) == t->count,
		      "%s: queueing histogram holds %llu of %llu",
		      t->name,
		      (unsigned long long)hist_sum(t->queue_hist),
		      (unsigned long long)t->count);
		CHECK(t->errors <= t->count, "%s: more errors than requests", t->name);
	}
	gr_api_client_disconnect(c);
	printf("type_stats_counts %s: %u types, counts exact\n", argv[2], after.n);
	return 0;
}
