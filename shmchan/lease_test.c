// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The client's lease on its region: once the daemon detached the channel
// (shmchan_server_detach()), or laid the region out again for another
// channel (a recycled memzone, of another generation), every ring operation
// of the old client fails with -ECONNRESET and writes nothing into the
// region; the new channel's client is not disturbed. The region lives in
// plain process memory: no EAL is needed.

#include "client.h"
#include "server.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

// Generations of the first channel of the region and of the next one.
#define GEN_FIRST 5
#define GEN_NEXT 6
// A request and a response of the tests: a header and some payload.
#define MSG_LEN 40

struct lease {
	struct shmchan_geometry g;
	struct shmchan_mem mem;
	struct shmchan_server *srv;
	struct shmchan_client *cli;
	struct shmchan_ctrl *ctrl;
	struct rte_ring *req_ring;
	struct rte_ring *resp_ring;
	uint8_t msg[MSG_LEN];
	uint8_t buf[SHMCHAN_MSG_MAX];
};

// A channel of generation gen on the region of l: server, then client.
static void channel_open(struct lease *l, uint32_t gen, struct shmchan_client **cli) {
	l->g.generation = gen;
	assert_int_equal(shmchan_server_create(&l->mem, &l->g, &l->srv), 0);
	assert_int_equal(
		shmchan_client_open(
			&l->g,
			l->mem.base,
			-1,
			dup(shmchan_server_req_fd(l->srv)),
			dup(shmchan_server_resp_fd(l->srv)),
			cli
		),
		0
	);
}

static int lease_setup(void **state) {
	struct lease *l = calloc(1, sizeof(*l));
	uint8_t *base;

	assert_non_null(l);
	assert_int_equal(shmchan_geometry_init(&l->g, SHMCHAN_RING_CELLS), 0);
	base = aligned_alloc(SHMCHAN_REGION_ALIGN, l->g.region_size);
	assert_non_null(base);
	l->mem = (struct shmchan_mem){
		.backing = SHMCHAN_BACKING_MEMZONE,
		.base = base,
		.size = l->g.region_size,
		.fd = -1,
		.name = "lease_test",
	};
	channel_open(l, GEN_FIRST, &l->cli);
	l->ctrl = (struct shmchan_ctrl *)base;
	l->req_ring = (struct rte_ring *)(base + l->g.req_ring_off);
	l->resp_ring = (struct rte_ring *)(base + l->g.resp_ring_off);
	for (size_t i = 0; i < sizeof(l->msg); i++)
		l->msg[i] = (uint8_t)(i * 7 + 1);
	*state = l;
	return 0;
}

static int lease_teardown(void **state) {
	struct lease *l = *state;

	shmchan_client_close(l->cli);
	shmchan_server_destroy(l->srv);
	free(l->mem.base);
	free(l);
	return 0;
}

static int client_send(struct shmchan_client *cli, const uint8_t *msg) {
	return shmchan_client_send(
		cli,
		msg,
		SHMCHAN_MSG_MIN,
		msg + SHMCHAN_MSG_MIN,
		MSG_LEN - SHMCHAN_MSG_MIN
	);
}

static int server_send(struct shmchan_server *srv, const uint8_t *msg) {
	return shmchan_server_send(
		srv,
		msg,
		SHMCHAN_MSG_MIN,
		msg + SHMCHAN_MSG_MIN,
		MSG_LEN - SHMCHAN_MSG_MIN
	);
}

// Every ring operation of cli fails with -ECONNRESET and moves nothing in
// the region: no index, no flag.
static void assert_lease_lost(struct lease *l, struct shmchan_client *cli) {
	uint32_t req_tail = l->req_ring->prod.tail, resp_tail = l->resp_ring->cons.tail;
	uint32_t sleeping = l->ctrl->client_sleeping;

	assert_int_equal(client_send(cli, l->msg), -ECONNRESET);
	assert_true(strstr(shmchan_last_error(), "detached") != NULL);
	assert_int_equal(
		shmchan_client_enqueue(cli, l->msg, SHMCHAN_MSG_MIN, NULL, 0),
		-ECONNRESET
	);
	assert_int_equal(shmchan_client_recv(cli, l->buf, sizeof(l->buf)), -ECONNRESET);
	assert_int_equal(shmchan_client_peek_len(cli), -ECONNRESET);
	// A waiting caller re-checks and tries again, to get the error.
	assert_true(shmchan_client_has_response(cli));
	assert_true(shmchan_client_can_enqueue(cli, MSG_LEN));
	shmchan_client_doorbell_arm(cli);
	assert_int_equal(l->ctrl->client_sleeping, sleeping);
	shmchan_client_doorbell_disarm(cli);
	assert_int_equal(l->ctrl->client_sleeping, sleeping);

	assert_int_equal(l->req_ring->prod.tail, req_tail);
	assert_int_equal(l->resp_ring->cons.tail, resp_tail);
}

static void test_layout(void **state) {
	struct lease *l = *state;

	assert_int_equal(l->ctrl->state, SHMCHAN_STATE_UP);
	assert_int_equal(l->ctrl->generation, GEN_FIRST);
	// On line 0, with the setup fields: not on a line the hot path writes.
	assert_true(offsetof(struct shmchan_ctrl, generation) < SHMCHAN_CACHE_LINE);
	assert_true(offsetof(struct shmchan_ctrl, state) < SHMCHAN_CACHE_LINE);
}

// Detached while a response waits: the client no longer takes it, nor sends.
static void test_detached(void **state) {
	struct lease *l = *state;

	assert_int_equal(client_send(l->cli, l->msg), 0);
	assert_int_equal(shmchan_server_recv(l->srv, l->buf, sizeof(l->buf)), MSG_LEN);
	assert_int_equal(server_send(l->srv, l->msg), 0);

	shmchan_server_detach(l->srv);
	assert_int_equal(l->ctrl->state, SHMCHAN_STATE_DETACHED);
	assert_lease_lost(l, l->cli);
	// Idempotent.
	shmchan_server_detach(l->srv);
	assert_int_equal(l->ctrl->state, SHMCHAN_STATE_DETACHED);
	assert_lease_lost(l, l->cli);
	assert_int_equal(shmchan_server_recv(l->srv, l->buf, sizeof(l->buf)), 0);
}

// While the region is laid out again (wiped: state 0).
static void test_region_wiped(void **state) {
	struct lease *l = *state;

	l->ctrl->state = 0;
	assert_lease_lost(l, l->cli);
}

// The region given to the next channel, of another generation, as a
// recycled memzone: the old client cannot reach the new channel's rings or
// flags; the new client and the daemon see only each other's messages.
static void test_recycled(void **state) {
	struct lease *l = *state;
	struct shmchan_client *next = NULL;
	uint8_t other[MSG_LEN];

	shmchan_server_detach(l->srv);
	shmchan_server_destroy(l->srv);
	channel_open(l, GEN_NEXT, &next);
	assert_int_equal(l->ctrl->state, SHMCHAN_STATE_UP);
	assert_int_equal(l->ctrl->generation, GEN_NEXT);

	// The new client sleeps, waiting for a response: the old one must not
	// clear its flag.
	shmchan_client_doorbell_arm(next);
	assert_int_equal(l->ctrl->client_sleeping, 1);
	assert_lease_lost(l, l->cli);
	assert_int_equal(l->ctrl->client_sleeping, 1);
	shmchan_client_doorbell_disarm(next);

	memset(other, 0x5a, sizeof(other));
	assert_int_equal(server_send(l->srv, other), 0);
	assert_lease_lost(l, l->cli);
	assert_int_equal(shmchan_client_recv(next, l->buf, sizeof(l->buf)), MSG_LEN);
	assert_memory_equal(l->buf, other, MSG_LEN);

	assert_int_equal(client_send(next, other), 0);
	assert_lease_lost(l, l->cli);
	assert_int_equal(shmchan_server_recv(l->srv, l->buf, sizeof(l->buf)), MSG_LEN);
	assert_memory_equal(l->buf, other, MSG_LEN);
	assert_int_equal(shmchan_server_recv(l->srv, l->buf, sizeof(l->buf)), 0);
	assert_int_equal(shmchan_server_stats(l->srv)->requests, 1);
	shmchan_client_close(next);
}

// Opening checks the lease too.
static void test_open(void **state) {
	struct lease *l = *state;
	struct shmchan_client *cli = NULL;
	struct shmchan_geometry g = l->g;
	int req_fd = shmchan_server_req_fd(l->srv), resp_fd = shmchan_server_resp_fd(l->srv);

	g.generation = GEN_NEXT;
	assert_int_equal(
		shmchan_client_open(&g, l->mem.base, -1, req_fd, resp_fd, &cli),
		-ECONNRESET
	);
	shmchan_server_detach(l->srv);
	assert_int_equal(
		shmchan_client_open(&l->g, l->mem.base, -1, req_fd, resp_fd, &cli),
		-ECONNRESET
	);
	assert_null(cli);
}

int main(void) {
#define LEASE_TEST(f) cmocka_unit_test_setup_teardown(f, lease_setup, lease_teardown)
	const struct CMUnitTest tests[] = {
		LEASE_TEST(test_layout),
		LEASE_TEST(test_detached),
		LEASE_TEST(test_region_wiped),
		LEASE_TEST(test_recycled),
		LEASE_TEST(test_open),
	};
#undef LEASE_TEST

	return cmocka_run_group_tests(tests, NULL, NULL);
}
