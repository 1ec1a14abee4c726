// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The slow-client limit (2 s, CHANNEL_SLOW_LIMIT_MS in server/channel.h)
// detaches a client that stopped reading, never one that reads slowly, and a
// consumer index that moves backwards is corruption, not slowness.
//
// Both cases start the same way, on a raw channel client (test/raw_chan.h):
// FILL_PINGS pipelined GR_PINGs (one cell each way), then one GR_SHM_ECHO of
// 128 KiB whose response cannot fit in the room the pings' responses left,
// so it waits in the daemon's backlog, and the daemon reads no more requests.
//   slow reader   takes one response every SLOW_READ_GAP_MS for SLOW_READ_MS,
//                 longer than the limit: each take frees one cell, never
//                 enough for the echo, so no backlogged response moves; the
//                 lease must stay open. Then it takes everything, the echo
//                 included, and the channel still serves.
//   backwards     moves the response ring's consumer index back, behind what
//                 the daemon saw, and rings: detached as corrupt (counted
//                 so), not as slow.
//
// usage: shm_slow_reader SOCK (under test/with_daemon.sh)

#include "check.h"
#include "raw_chan.h"

#include <client.h>

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Responses of one cell in the ring before the echo: 12000 of the ring's
// 16383 cells, leaving fewer than the echo's 8194.
#define FILL_PINGS 12000
#define ECHO_LEN GR_API_MAX_MSG_LEN
// The slow reader's pace, and how long it keeps it: past the 2 s limit,
// with room for a loaded machine's late wake-ups.
#define SLOW_READ_GAP_MS 50
#define SLOW_READ_MS 3500
// Bounds: the daemon answering the pings, a response, the detach of a
// corrupt channel, and the stats' update after a detach.
#define FILL_BOUND_MS 5000
#define RESP_BOUND_MS 3000
#define DETACH_BOUND_MS 3000
#define POLL_US 1000
#define NSEC_PER_MSEC 1000000ull

static uint8_t msg[SHMCHAN_MSG_MAX];
static uint8_t echo_payload[ECHO_LEN];

static uint32_t resp_ring_used(const struct raw_chan *rc) {
	const struct rte_ring *r = rc->chan->resp.shared;
	return __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE) - r->cons.tail;
}

// Attach, send the pings and the echo, and wait until the pings' responses
// fill the response ring (the echo's then waits in the daemon's backlog).
// Returns the echo's id.
static uint32_t fill(struct raw_chan *rc, const char *sock_path) {
	raw_chan_attach(rc, sock_path);
	for (unsigned i = 0; i < FILL_PINGS; i++)
		raw_chan_send(rc, GR_PING, NULL, 0);
	for (unsigned i = 0; i < ECHO_LEN; i++)
		echo_payload[i] = (uint8_t)(i * 7 + 1);
	uint32_t echo_id = raw_chan_send(rc, GR_SHM_ECHO, echo_payload, ECHO_LEN);

	uint64_t deadline = monotonic_ns() + FILL_BOUND_MS * NSEC_PER_MSEC;
	while (resp_ring_used(rc) < FILL_PINGS) {
		CHECK(monotonic_ns() < deadline,
		      "%u of %u ping responses in the ring",
		      resp_ring_used(rc),
		      FILL_PINGS);
		CHECK(!raw_chan_lease_ended(rc, 1), "detached while filling its ring");
	}
	CHECK(resp_ring_used(rc) == FILL_PINGS,
	      "%u cells in the response ring: the echo's response went in",
	      resp_ring_used(rc));
	return echo_id;
}

static void expect_ping_response(struct raw_chan *rc, unsigned i) {
	struct gr_api_response hdr;
	int n = raw_chan_recv(rc, msg, sizeof(msg), RESP_BOUND_MS);

	CHECK(n == (int)sizeof(hdr), "response %u: %d bytes", i, n);
	memcpy(&hdr, msg, sizeof(hdr));
	CHECK(hdr.status == 0 && hdr.payload_len == 0, "response %u: status %u", i, hdr.status);
}

static struct gr_shm_stats_resp stats(struct gr_api_client *ctl) {
	struct gr_shm_stats_resp s;
	void *rx = NULL;
	long len = gr_api_client_send_recv_len(ctl, GR_SHM_STATS, 0, NULL, &rx);
	CHECK(len == (long)sizeof(s), "GR_SHM_STATS: %ld: %s", len, strerror(errno));
	memcpy(&s, rx, sizeof(s));
	free(rx);
	return s;
}

static void slow_reader(const char *sock_path) {
	struct gr_api_response hdr;
	struct raw_chan rc;
	unsigned taken = 0;

	uint32_t echo_id = fill(&rc, sock_path);
	uint64_t start = monotonic_ns(), end = start + SLOW_READ_MS * NSEC_PER_MSEC;
	while (monotonic_ns() < end) {
		usleep(SLOW_READ_GAP_MS * 1000);
		expect_ping_response(&rc, taken++);
		CHECK(!raw_chan_lease_ended(&rc, 0),
		      "slow reader detached after %u responses, %.0f ms",
		      taken,
		      (double)(monotonic_ns() - start) / 1e6);
	}
	printf("slow reader: %u responses taken, one every %d ms for %d ms: still attached\n",
	       taken,
	       SLOW_READ_GAP_MS,
	       SLOW_READ_MS);
	while (taken < FILL_PINGS)
		expect_ping_response(&rc, taken++);
	int n = raw_chan_recv(&rc, msg, sizeof(msg), RESP_BOUND_MS);
	CHECK(n == (int)(sizeof(hdr) + ECHO_LEN), "echo response of %d bytes", n);
	memcpy(&hdr, msg, sizeof(hdr));
	CHECK(hdr.for_id == echo_id && hdr.status == 0, "echo response for %u", hdr.for_id);
	CHECK(memcmp(msg + sizeof(hdr), echo_payload, ECHO_LEN) == 0, "echo payload differs");
	raw_chan_send(&rc, GR_PING, NULL, 0);
	expect_ping_response(&rc, taken);
	CHECK(!raw_chan_lease_ended(&rc, 0), "detached after it read everything");
	raw_chan_close(&rc);
}

static void backwards(const char *sock_path, struct gr_api_client *ctl) {
	struct gr_shm_stats_resp before = stats(ctl), after;
	struct raw_chan rc;

	fill(&rc, sock_path);
	struct rte_ring *r = rc.chan->resp.shared;
	uint32_t tail = r->cons.tail;
	// Behind everything the client ever took: the daemon saw at least this
	// tail when it found the ring full.
	__atomic_store_n(&r->cons.head, tail - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r->cons.tail, tail - 1, __ATOMIC_RELEASE);
	// Tell the daemon, waiting for room, to look.
	shmchan_client_doorbell_arm(rc.chan);
	uint64_t start = monotonic_ns();
	CHECK(raw_chan_lease_ended(&rc, DETACH_BOUND_MS), "not detached");
	printf("backwards: consumer index %" PRIu32 " -> %" PRIu32 ", detached after %.1f ms\n",
	       tail,
	       tail - 1,
	       (double)(monotonic_ns() - start) / 1e6);
	raw_chan_close(&rc);

	uint64_t deadline = monotonic_ns() + DETACH_BOUND_MS * NSEC_PER_MSEC;
	while ((after = stats(ctl)).total.detaches == before.total.detaches) {
		CHECK(monotonic_ns() < deadline, "the detach is not counted");
		usleep(POLL_US);
	}
	CHECK(after.total.detach_corrupt == before.total.detach_corrupt + 1 &&
		      after.total.detach_slow == before.total.detach_slow,
	      "detached as corrupt %" PRIu64 " times, as slow %" PRIu64 " times",
	      after.total.detach_corrupt - before.total.detach_corrupt,
	      after.total.detach_slow - before.total.detach_slow);
}

int main(int argc, char **argv) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SOCKET,
		.spin_us = -1,
		.version = "shm_slow_reader",
	};

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	struct gr_api_client *ctl = gr_api_client_connect_opts(argv[1], &opts);
	CHECK(ctl != NULL, "connect %s: %s", argv[1], strerror(errno));

	slow_reader(argv[1]);
	struct gr_shm_stats_resp s = stats(ctl);
	CHECK(s.total.detach_slow == 0 && s.total.detach_corrupt == 0,
	      "slow reader: %" PRIu64 " slow and %" PRIu64 " corrupt detaches",
	      s.total.detach_slow,
	      s.total.detach_corrupt);
	backwards(argv[1], ctl);

	CHECK(gr_api_client_disconnect(ctl) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
