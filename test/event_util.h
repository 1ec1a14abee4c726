// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Helpers of the event tests. The raw ones speak Grout's wire layout byte by
// byte (no struct of ours), as a Grout client would; the others go through
// the client library.

#pragma once

#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Grout's numbers, from its wire layout.
#define WIRE_GR_EVENT_SUBSCRIBE 0xcafe1985u
#define WIRE_GR_EVENT_UNSUBSCRIBE 0xcafe1986u
#define WIRE_GR_EVENT_ALL 0xffffffffu
#define WIRE_SUBSCRIBE_LEN 8 // bool, 3 bytes of padding, u32 ev_type
#define WIRE_EVENT_HDR_LEN 16 // u32 ev_type, 4 bytes of zero, u64 payload_len

// Send a subscribe of type req_type (Grout's or the shm module's) for
// ev_type, as its 8 wire bytes, and expect status.
void raw_subscribe(
	int fd,
	uint32_t id,
	uint32_t req_type,
	uint32_t ev_type,
	bool suppress_self,
	uint32_t status
);

// Read one event in Grout's socket framing: the 16-byte header (checking
// its padding is zero), then the payload into buf (at most cap bytes, else
// the test fails). Returns 1 with *ev_type and *len, or -EAGAIN if nothing
// came within the socket's timeout.
int raw_recv_grout_event(int fd, uint32_t *ev_type, void *buf, size_t cap, size_t *len);

// Connect with the client library on transport.
struct gr_api_client *event_client(const char *sock, enum gr_api_transport transport);

// Subscribe c to ev_type; the call must succeed.
void event_subscribe(struct gr_api_client *c, uint32_t ev_type, bool suppress_self);

// GR_SHM_EVENT_PUBLISH with len bytes of payload; must succeed.
void event_publish(struct gr_api_client *c, const void *payload, size_t len);

// The daemon's event totals.
void event_stats(struct gr_api_client *c, struct gr_shm_event_stats_resp *stats);

// The daemon's dropped total must be what the subscribers were told they
// lost.
void event_expect_dropped(struct gr_api_client *c, uint64_t lost);

// The next event of c, which must be of ev_type with len bytes; its payload
// is copied to buf (cap bytes). Returns the payload length.
size_t event_expect(struct gr_api_client *c, uint32_t ev_type, void *buf, size_t cap);

// Payload i of a sequence: its first 4 bytes are i, the rest a pattern.
void event_fill(uint8_t *buf, size_t len, uint32_t i);
bool event_check_fill(const uint8_t *buf, size_t len, uint32_t i);

// Poll the daemon's totals until subscriptions is want, for at most
// timeout_ms. Returns the last value seen.
uint32_t event_wait_subscriptions(struct gr_api_client *c, uint32_t want, unsigned timeout_ms);
