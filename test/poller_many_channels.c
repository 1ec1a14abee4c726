// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Many channels on pollers that sleep (shmchand -S 0, client spin 0): one
// GR_PING2 at a time, each on another channel than the last, so that every
// request is a hand-off to a poller that armed all of its channels with one
// fence and went to sleep. No request may be slept on (a lost wake-up): a
// stall watch fails the test as soon as one waits for longer than a loaded
// machine explains. Then GR_SHM_CHANNEL_LIST must list every channel, spread
// over every poller, each with exactly the requests sent on it, and the
// pollers must have slept.
//
// usage: poller_many_channels SOCK POLLERS

#include "check.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

// Below the daemon's --max-conn-per-pid default (64), with room for the
// control connection.
#define N_CHANNELS 48
// Hand-offs: every channel this many times.
#define ROUNDS 300
// Step between the channels of two consecutive requests: prime to
// N_CHANNELS, so that every channel is visited once per round and the next
// one is never the last one's neighbour in the poller's list.
#define CHANNEL_STRIDE 7
// A hand-off costs a wake-up of a sleeping poller (tens of microseconds, a
// few milliseconds on a loaded machine). No answer for this long is a request
// slept on.
#define STALL_MS 3000
#define STALL_CHECK_MS 50
// shmchand's most pollers (-p).
#define MAX_POLLERS 16

static _Atomic uint64_t handoffs_done;
static _Atomic bool finished;
static _Atomic unsigned waiting_on;

static void *stall_watch(void *arg) {
	uint64_t last = 0, last_ns = monotonic_ns();

	(void)arg;
	while (!atomic_load(&finished)) {
		usleep(STALL_CHECK_MS * 1000);
		uint64_t now = atomic_load(&handoffs_done);
		uint64_t now_ns = monotonic_ns();
		if (now != last) {
			last = now;
			last_ns = now_ns;
		} else if (now_ns - last_ns > STALL_MS * 1000000ull) {
			fprintf(stderr,
				"hand-off %" PRIu64
				" to channel %u: no answer for %d ms: slept on\n",
				now,
				atomic_load(&waiting_on),
				STALL_MS);
			_exit(EXIT_FAILURE);
		}
	}
	return NULL;
}

static void ping2(struct gr_api_client *c, unsigned channel, uint64_t seq) {
	struct gr_ping2 req, resp;

	memset(&req, 0, sizeof(req));
	memcpy(req.payload, &seq, sizeof(seq));
	req.payload[sizeof(seq)] = (uint8_t)channel;
	long id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
	CHECK(id > 0, "channel %u: send: %s", channel, strerror(errno));
	long len = gr_api_client_recv_into(c, (uint32_t)id, &resp, sizeof(resp));
	CHECK(len == (long)sizeof(resp), "channel %u: recv: %ld: %s", channel, len, strerror(errno)
	);
	CHECK(memcmp(&req, &resp, sizeof(req)) == 0, "channel %u: echo differs", channel);
}

int main(int argc, char **argv) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SHM,
		.spin_us = 0,
		.version = "poller_many_channels",
	};
	struct gr_api_client *chans[N_CHANNELS];
	unsigned per_poller[MAX_POLLERS] = {0};
	struct gr_shm_stats_resp stats;
	unsigned listed = 0;
	pthread_t watch;

	CHECK(argc == 3, "usage: %s SOCK POLLERS", argv[0]);
	unsigned pollers = (unsigned)atoi(argv[2]);
	CHECK(pollers >= 1 && pollers <= MAX_POLLERS, "POLLERS %s", argv[2]);
	watchdog_start(TEST_WATCHDOG_S);

	for (unsigned i = 0; i < N_CHANNELS; i++) {
		chans[i] = gr_api_client_connect_opts(argv[1], &opts);
		CHECK(chans[i] != NULL, "connect %u over shm: %s", i, strerror(errno));
		CHECK(gr_api_client_transport(chans[i]) == GR_API_TRANSPORT_SHM,
		      "client %u not on shm",
		      i);
	}

	CHECK(pthread_create(&watch, NULL, stall_watch, NULL) == 0, "pthread_create");
	unsigned ch = 0;
	for (uint64_t seq = 0; seq < (uint64_t)ROUNDS * N_CHANNELS; seq++) {
		atomic_store(&waiting_on, ch);
		ping2(chans[ch], ch, seq);
		atomic_fetch_add(&handoffs_done, 1);
		ch = (ch + CHANNEL_STRIDE) % N_CHANNELS;
	}
	atomic_store(&finished, true);
	pthread_join(watch, NULL);

	// Every channel listed, UP, with the requests sent on it, on a poller
	// that exists; every poller serves some.
	struct gr_api_client *ctl = gr_api_client_connect_opts(
		argv[1],
		&(struct gr_api_client_opts){.transport = GR_API_TRANSPORT_SOCKET}
	);
	CHECK(ctl != NULL, "connect the control client: %s", strerror(errno));
	long id = gr_api_client_send(ctl, GR_SHM_CHANNEL_LIST, 0, NULL);
	CHECK(id > 0, "send GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	void *rx;
	size_t len;
	int ret;
	while ((ret = gr_api_client_stream_next(ctl, (uint32_t)id, &rx, &len)) == 1) {
		struct gr_shm_channel_info info;
		CHECK(len == sizeof(info), "channel info of %zu bytes", len);
		memcpy(&info, rx, sizeof(info));
		free(rx);
		CHECK(info.client_pid == getpid(), "a channel of pid %d", (int)info.client_pid);
		CHECK(info.state == GR_SHM_CHANNEL_UP, "channel %s: state %u", info.name, info.state
		);
		CHECK(info.poller < pollers, "channel %s: poller %u", info.name, info.poller);
		CHECK(info.counters.requests == ROUNDS,
		      "channel %s: %" PRIu64 " requests, %d sent",
		      info.name,
		      info.counters.requests,
		      ROUNDS);
		per_poller[info.poller]++;
		listed++;
	}
	CHECK(ret == 0, "GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	CHECK(listed == N_CHANNELS, "%u channels listed, %d attached", listed, N_CHANNELS);
	for (unsigned p = 0; p < pollers; p++)
		CHECK(per_poller[p] > 0, "poller %u serves no channel", p);

	id = gr_api_client_send(ctl, GR_SHM_STATS, 0, NULL);
	CHECK(id > 0, "send GR_SHM_STATS: %s", strerror(errno));
	len = (size_t)gr_api_client_recv_into(ctl, (uint32_t)id, &stats, sizeof(stats));
	CHECK(len == sizeof(stats), "GR_SHM_STATS: %s", strerror(errno));
	CHECK(stats.channels == N_CHANNELS, "GR_SHM_STATS: %u channels", stats.channels);
	CHECK(stats.total.requests == (uint64_t)ROUNDS * N_CHANNELS,
	      "GR_SHM_STATS: %" PRIu64 " requests",
	      stats.total.requests);
	// Each hand-off found the pollers asleep at least now and then: they
	// armed the channels (the count is per channel armed).
	CHECK(stats.total.sleeps >= N_CHANNELS, "only %" PRIu64 " sleeps", stats.total.sleeps);

	for (unsigned i = 0; i < N_CHANNELS; i++)
		CHECK(gr_api_client_disconnect(chans[i]) == 0, "disconnect: %s", strerror(errno));
	CHECK(gr_api_client_disconnect(ctl) == 0, "disconnect: %s", strerror(errno));
	printf("%d hand-offs over %d channels on %u poller(s): none slept on\n",
	       ROUNDS * N_CHANNELS,
	       N_CHANNELS,
	       pollers);
	return EXIT_SUCCESS;
}
