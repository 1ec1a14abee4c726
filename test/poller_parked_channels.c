// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Idle channels beside a busy one on one poller: the busy client keeps
// GR_PING2 requests in flight all along, so the poller never runs out of
// work, and parks the channels that stay idle (it looks at them only a few
// per pass). Each idle channel in turn then sends one request, after a gap
// long enough for it to be parked again: every one must be answered while
// the busy client goes on, well before the poller would run out of work and
// re-check every channel (no request left on a parked channel), and the
// channel list must count exactly what each channel sent.
//
// usage: poller_parked_channels SOCK

#include "check.h"
#include "ping2_load.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

// Idle channels, below the daemon's --max-conn-per-pid default (64) with
// the busy and the control connections.
#define N_IDLE 40
// Requests on each idle channel, one at a time.
#define ROUNDS 10
// Silence before each request of an idle channel: thousands of passes of the
// busy poller, so the channel is parked again.
#define GAP_US 2000
// The busy client's requests in flight.
#define BUSY_DEPTH 4
// The daemon's spin budget (-S in test/meson.build): the poller sleeps (and
// so arms and re-checks every channel) only after this long without work.
#define DAEMON_SPIN_MS 1000
// A parked channel is looked at within a few hundred passes of the busy
// poller (microseconds); a loaded machine may deschedule either side for
// milliseconds. An answer this late came only when the poller ran out of
// work and re-checked every channel before sleeping: the busy poller left
// the request on its parked channel.
#define SLOW_MS 700
_Static_assert(SLOW_MS < DAEMON_SPIN_MS, "the bound must tell the two apart");

static volatile sig_atomic_t busy_stop;
static _Atomic uint64_t busy_done;

static void *busy_main(void *arg) {
	ping2_load(arg, BUSY_DEPTH, &busy_stop, &busy_done);
	return NULL;
}

static struct gr_api_client *shm_connect(const char *sock) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SHM,
		.spin_us = -1,
		.version = "poller_parked_channels",
	};
	struct gr_api_client *c = gr_api_client_connect_opts(sock, &opts);

	CHECK(c != NULL, "connect over shm: %s", strerror(errno));
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SHM, "not on shm");
	return c;
}

int main(int argc, char **argv) {
	struct gr_api_client *idle[N_IDLE];
	pthread_t busy;
	unsigned listed = 0;

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);

	struct gr_api_client *b = shm_connect(argv[1]);
	for (unsigned i = 0; i < N_IDLE; i++)
		idle[i] = shm_connect(argv[1]);
	CHECK(pthread_create(&busy, NULL, busy_main, b) == 0, "pthread_create");

	for (unsigned r = 0; r < ROUNDS; r++) {
		for (unsigned i = 0; i < N_IDLE; i++) {
			usleep(GAP_US);
			uint64_t start = monotonic_ns();
			long len = gr_api_client_send_recv_len(idle[i], GR_PING, 0, NULL, NULL);
			uint64_t ms = (monotonic_ns() - start) / 1000000;
			CHECK(len == 0,
			      "idle channel %u, round %u: %ld: %s",
			      i,
			      r,
			      len,
			      strerror(errno));
			CHECK(ms < SLOW_MS,
			      "idle channel %u, round %u: answered after %" PRIu64
			      " ms (busy client at %" PRIu64 " echoes): left on its parked channel",
			      i,
			      r,
			      ms,
			      atomic_load(&busy_done));
		}
	}
	busy_stop = 1;
	pthread_join(busy, NULL);
	CHECK(atomic_load(&busy_done) > 0, "the busy client made no call");

	struct gr_api_client *ctl = gr_api_client_connect_opts(
		argv[1],
		&(struct gr_api_client_opts){.transport = GR_API_TRANSPORT_SOCKET}
	);
	CHECK(ctl != NULL, "connect the control client: %s", strerror(errno));
	long id = gr_api_client_send(ctl, GR_SHM_CHANNEL_LIST, 0, NULL);
	CHECK(id > 0, "send GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	uint64_t busy_requests = 0;
	unsigned idle_listed = 0;
	void *rx;
	size_t len;
	int ret;
	while ((ret = gr_api_client_stream_next(ctl, (uint32_t)id, &rx, &len)) == 1) {
		struct gr_shm_channel_info info;
		CHECK(len == sizeof(info), "channel info of %zu bytes", len);
		memcpy(&info, rx, sizeof(info));
		free(rx);
		CHECK(info.state == GR_SHM_CHANNEL_UP, "channel %s: state %u", info.name, info.state
		);
		listed++;
		if (info.counters.requests == ROUNDS)
			idle_listed++;
		else
			busy_requests = info.counters.requests;
	}
	CHECK(ret == 0, "GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	CHECK(listed == N_IDLE + 1, "%u channels listed, %d attached", listed, N_IDLE + 1);
	CHECK(idle_listed == N_IDLE, "%u channels with %d requests", idle_listed, ROUNDS);
	CHECK(busy_requests == atomic_load(&busy_done),
	      "busy channel: %" PRIu64 " requests, %" PRIu64 " echoes",
	      busy_requests,
	      atomic_load(&busy_done));

	for (unsigned i = 0; i < N_IDLE; i++)
		CHECK(gr_api_client_disconnect(idle[i]) == 0, "disconnect: %s", strerror(errno));
	CHECK(gr_api_client_disconnect(b) == 0, "disconnect: %s", strerror(errno));
	CHECK(gr_api_client_disconnect(ctl) == 0, "disconnect: %s", strerror(errno));
	printf("%d requests on %d parked channels beside %" PRIu64 " busy calls: all answered\n",
	       ROUNDS * N_IDLE,
	       N_IDLE,
	       busy_requests);
	return EXIT_SUCCESS;
}
