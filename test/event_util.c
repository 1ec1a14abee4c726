// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "event_util.h"
#include "check.h"
#include "raw_sock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Between two looks at the daemon's totals.
#define EVENT_POLL_MS 10

void raw_subscribe(
	int fd,
	uint32_t id,
	uint32_t req_type,
	uint32_t ev_type,
	bool suppress_self,
	uint32_t status
) {
	uint8_t payload[WIRE_SUBSCRIBE_LEN] = {0};

	payload[0] = suppress_self ? 1 : 0;
	memcpy(payload + 4, &ev_type, sizeof(ev_type));
	CHECK(raw_send_request(fd, id, req_type, sizeof(payload), payload, sizeof(payload)) == 0,
	      "subscribe: connection closed");
	raw_expect_status(fd, id, status, "subscribe");
}

int raw_recv_grout_event(int fd, uint32_t *ev_type, void *buf, size_t cap, size_t *len) {
	uint8_t hdr[WIRE_EVENT_HDR_LEN];
	uint32_t pad;
	uint64_t plen;
	int ret = raw_recv_exact(fd, hdr, sizeof(hdr));

	if (ret != 1)
		return ret == 0 ? -ECONNRESET : ret;
	memcpy(ev_type, hdr, 4);
	memcpy(&pad, hdr + 4, 4);
	memcpy(&plen, hdr + 8, 8);
	CHECK(pad == 0, "event header padding is %#x, not zero", pad);
	CHECK(plen <= cap,
	      "event payload of %llu bytes, room for %zu",
	      (unsigned long long)plen,
	      cap);
	if (plen > 0)
		CHECK(raw_recv_exact(fd, buf, plen) == 1, "event payload cut");
	*len = plen;
	return 1;
}

struct gr_api_client *event_client(const char *sock, enum gr_api_transport transport) {
	struct gr_api_client_opts opts = GR_API_CLIENT_OPTS_INIT;
	opts.transport = transport;
	opts.version = program_invocation_short_name;
	struct gr_api_client *c = gr_api_client_connect_opts(sock, &opts);

	CHECK(c != NULL, "connect: %s", strerror(errno));
	CHECK(gr_api_client_transport(c) == transport,
	      "transport %d, asked for %d: %s",
	      gr_api_client_transport(c),
	      transport,
	      gr_api_client_transport_reason(c));
	return c;
}

void event_subscribe(struct gr_api_client *c, uint32_t ev_type, bool suppress_self) {
	struct gr_event_subscribe_req req = {
		.suppress_self_events = suppress_self,
		.ev_type = ev_type,
	};
	long ret = gr_api_client_send_recv_len(c, GR_EVENT_SUBSCRIBE, sizeof(req), &req, NULL);

	CHECK(ret == 0, "subscribe to %#x: %s", ev_type, strerror(errno));
}

void event_publish(struct gr_api_client *c, const void *payload, size_t len) {
	long ret = gr_api_client_send_recv_len(c, GR_SHM_EVENT_PUBLISH, len, payload, NULL);

	CHECK(ret == 0, "publish of %zu bytes: %s", len, strerror(errno));
}

void event_stats(struct gr_api_client *c, struct gr_shm_event_stats_resp *stats) {
	long ret = gr_api_client_recv_into(
		c,
		(uint32_t)gr_api_client_send(c, GR_SHM_EVENT_STATS, 0, NULL),
		stats,
		sizeof(*stats)
	);

	CHECK(ret == sizeof(*stats), "event stats: %ld: %s", ret, strerror(errno));
}

size_t event_expect(struct gr_api_client *c, uint32_t ev_type, void *buf, size_t cap) {
	struct gr_api_event *ev = NULL;
	int ret = gr_api_client_event_recv(c, &ev);

	CHECK(ret == 0, "event_recv: %d: %s", ret, strerror(-ret));
	CHECK(ev->ev_type == ev_type, "event %#x, expected %#x", ev->ev_type, ev_type);
	CHECK(ev->payload_len <= cap, "event of %zu bytes, room for %zu", ev->payload_len, cap);
	size_t len = ev->payload_len;
	if (len > 0)
		memcpy(buf, ev + 1, len);
	free(ev);
	return len;
}

void event_fill(uint8_t *buf, size_t len, uint32_t i) {
	for (size_t k = 0; k < len; k++)
		buf[k] = (uint8_t)(k * 7 + i);
	if (len >= sizeof(i))
		memcpy(buf, &i, sizeof(i));
}

bool event_check_fill(const uint8_t *buf, size_t len, uint32_t i) {
	uint32_t got;

	if (len >= sizeof(i)) {
		memcpy(&got, buf, sizeof(got));
		if (got != i)
			return false;
	}
	for (size_t k = sizeof(i); k < len; k++)
		if (buf[k] != (uint8_t)(k * 7 + i))
			return false;
	return true;
}

void event_expect_dropped(struct gr_api_client *c, uint64_t lost) {
	struct gr_shm_event_stats_resp stats;

	event_stats(c, &stats);
	CHECK(stats.dropped == lost,
	      "daemon dropped %llu, subscribers lost %llu",
	      (unsigned long long)stats.dropped,
	      (unsigned long long)lost);
}

uint32_t event_wait_subscriptions(struct gr_api_client *c, uint32_t want, unsigned timeout_ms) {
	struct gr_shm_event_stats_resp stats;

	for (unsigned waited = 0;; waited += EVENT_POLL_MS) {
		event_stats(c, &stats);
		if (stats.subscriptions == want || waited >= timeout_ms)
			return stats.subscriptions;
		usleep(EVENT_POLL_MS * 1000);
	}
}
