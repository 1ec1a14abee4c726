// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Per-request-type figures (GR_SHM_TYPE_STATS): the log2 buckets, the TSC
// conversion, and, through api_dispatch() with a fake transport, counts,
// errors, rejected and deferred requests exact, histograms that add up to
// the count, and the request that streams them.

#include "api.h"
#include "deferred.h"
#include "dispatch_test.h"
#include "fake_transport_test.h"
#include "type_stats.h"

#include <gr_shm.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define TEST_MODULE 0x7e57
// Answers with the status its 4-byte payload holds.
#define TEST_STATUS GR_MSG_TYPE(TEST_MODULE, 0x11)
// Defers; the test answers.
#define TEST_DEFER GR_MSG_TYPE(TEST_MODULE, 0x12)

#define DEFERRED_MAX 4
#define TYPES_MAX 64

struct fake_client {
	struct gr_api_ctx ctx;
	unsigned responses;
	uint32_t last_status;
	// GR_SHM_TYPE_STATS responses.
	struct gr_shm_type_stats types[TYPES_MAX];
	unsigned n_types;
};

static struct gr_api_deferred *deferred[DEFERRED_MAX];
static unsigned n_deferred;

static int fake_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	struct fake_client *client = ctx->priv;

	(void)for_id;
	client->responses++;
	client->last_status = out->status;
	if (out->len == sizeof(struct gr_shm_type_stats) && client->n_types < TYPES_MAX)
		memcpy(&client->types[client->n_types++], out->payload, out->len);
	return 0;
}

static const struct api_transport fake_transport = FAKE_TRANSPORT(fake_send);

static struct gr_api_out defer_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	assert_true(n_deferred < DEFERRED_MAX);
	deferred[n_deferred] = gr_api_defer(ctx);
	assert_non_null(deferred[n_deferred]);
	n_deferred++;
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler status_h = FAKE_STATUS_HANDLER(TEST_STATUS);
static struct gr_api_handler defer_h = {
	.name = "TEST_DEFER",
	.request_type = TEST_DEFER,
	.callback = defer_handler,
};

static void client_init(struct fake_client *client) {
	struct gr_hello_req hello = {.api_version = GR_API_VERSION};
	struct gr_api_request req = {.id = 1, .type = GR_HELLO, .payload_len = sizeof(hello)};

	memset(client, 0, sizeof(*client));
	client->ctx.transport = &fake_transport;
	client->ctx.priv = client;
	client->ctx.sock_fd = -1;
	strcpy(hello.version, "type_stats_test");
	assert_int_equal(api_dispatch(&client->ctx, &req, &hello), 0);
	assert_int_equal(client->last_status, 0);
}

static void dispatch(struct fake_client *client, uint32_t type, uint32_t len, const void *payload) {
	struct gr_api_request req = {.id = 2, .type = type, .payload_len = len};

	assert_int_equal(api_dispatch(&client->ctx, &req, payload), 0);
}

// The figures of type, as the registry holds them.
static const struct type_stats *stats_of(uint32_t type) {
	const struct gr_api_handler *handler;
	const struct type_stats *s;

	for (unsigned i = 0; (handler = api_handler_at(i, &s)) != NULL; i++)
		if (handler->request_type == type)
			return s;
	fail_msg("type 0x%08x not registered", type);
	return NULL;
}

static uint64_t hist_sum(const uint64_t *hist) {
	uint64_t sum = 0;

	for (unsigned b = 0; b < GR_SHM_HIST_BUCKETS; b++)
		sum += hist[b];
	return sum;
}

static int setup(void **state) {
	(void)state;
	tsc_clock_init();
	assert_int_equal(dispatch_test_handlers(), 0);
	assert_int_equal(api_table_register(&handlers_type_stats), 0);
	assert_int_equal(gr_api_server_handler_register(&status_h), 0);
	assert_int_equal(gr_api_server_handler_register(&defer_h), 0);
	return 0;
}

static void buckets_are_log2_ns(void **state) {
	(void)state;
	assert_int_equal(hist_bucket(0), 0);
	assert_int_equal(hist_bucket(1), 0);
	assert_int_equal(hist_bucket(2), 1);
	assert_int_equal(hist_bucket(3), 1);
	assert_int_equal(hist_bucket(1023), 9);
	assert_int_equal(hist_bucket(1024), 10);
	assert_int_equal(hist_bucket((1ull << 31) - 1), 30);
	assert_int_equal(hist_bucket(1ull << 31), GR_SHM_HIST_BUCKETS - 1);
	assert_int_equal(hist_bucket(UINT64_MAX), GR_SHM_HIST_BUCKETS - 1);
}

static void tsc_converts_without_overflow(void **state) {
	uint64_t mult = tsc_ns_mult;

	(void)state;
	// 2 GHz: two cycles a nanosecond.
	tsc_ns_mult = ((uint64_t)1000000000 << TSC_NS_SHIFT) / 2000000000;
	assert_int_equal(tsc_to_ns(2000), 1000);
	// An hour of cycles, past what 64 bits of cycles times the multiplier hold.
	assert_int_equal(tsc_to_ns(2000000000ull * 3600), 1000000000ull * 3600);
	tsc_ns_mult = mult;
}

static void counts_errors_and_rejects_are_exact(void **state) {
	const uint32_t ok = 0, einval = EINVAL;
	const struct type_stats *s = stats_of(TEST_STATUS);
	struct fake_client client;

	(void)state;
	client_init(&client);
	for (unsigned i = 0; i < 10; i++)
		dispatch(&client, TEST_STATUS, sizeof(ok), &ok);
	for (unsigned i = 0; i < 3; i++)
		dispatch(&client, TEST_STATUS, sizeof(einval), &einval);
	// Shorter than request_len: EMSGSIZE before the handler.
	for (unsigned i = 0; i < 2; i++)
		dispatch(&client, TEST_STATUS, 0, NULL);
	assert_int_equal(client.last_status, EMSGSIZE);
	// Unknown: counted nowhere.
	dispatch(&client, GR_MSG_TYPE(TEST_MODULE, 0x7f), 0, NULL);
	assert_int_equal(s->count, 13);
	assert_int_equal(s->errors, 3);
	assert_int_equal(s->rejected, 2);
	assert_int_equal(s->deferred, 0);
	assert_int_equal(hist_sum(s->handle_hist), 13);
	assert_int_equal(hist_sum(s->queue_hist), 13);
	assert_true(stats_of(GR_HELLO)->count >= 1);
}

static void deferred_counts_its_reply_error(void **state) {
	const struct type_stats *s = stats_of(TEST_DEFER);
	struct fake_client client;

	(void)state;
	client_init(&client);
	n_deferred = 0;
	dispatch(&client, TEST_DEFER, 0, NULL);
	dispatch(&client, TEST_DEFER, 0, NULL);
	assert_int_equal(client.responses, 1); // the hello's only
	assert_int_equal(s->count, 2);
	assert_int_equal(s->deferred, 2);
	assert_int_equal(s->errors, 0);
	assert_int_equal(gr_api_deferred_reply(deferred[0], 0, 0, NULL), 0);
	assert_int_equal(gr_api_deferred_reply(deferred[1], EIO, 0, NULL), 0);
	assert_int_equal(api_deferred_flush(&client.ctx), 2);
	assert_int_equal(client.responses, 3);
	assert_int_equal(s->count, 2);
	assert_int_equal(s->errors, 1);
	assert_int_equal(hist_sum(s->handle_hist), 2);
	api_deferred_close(&client.ctx);
	api_deferred_release(&client.ctx);
}

static void type_stats_request_streams_every_type(void **state) {
	const struct gr_shm_type_stats *status_stats = NULL;
	const struct gr_api_handler *handler;
	const struct type_stats *s;
	struct fake_client client;
	unsigned n = 0;

	(void)state;
	client_init(&client);
	dispatch(&client, GR_SHM_TYPE_STATS, 0, NULL);
	while (api_handler_at(n, &s) != NULL)
		n++;
	assert_int_equal(client.n_types, n);
	assert_int_equal(client.last_status, 0); // the stream's end
	for (unsigned i = 0; i < client.n_types; i++) {
		handler = api_handler_at(i, &s);
		assert_int_equal(client.types[i].type, handler->request_type);
		assert_string_equal(client.types[i].name, handler->name);
		assert_int_equal(client.types[i].buckets, GR_SHM_HIST_BUCKETS);
		assert_int_equal(hist_sum(client.types[i].handle_hist), client.types[i].count);
		assert_int_equal(hist_sum(client.types[i].queue_hist), client.types[i].count);
		if (client.types[i].type == TEST_STATUS)
			status_stats = &client.types[i];
	}
	assert_non_null(status_stats);
	assert_int_equal(status_stats->count, stats_of(TEST_STATUS)->count);
	assert_int_equal(status_stats->errors, stats_of(TEST_STATUS)->errors);
}

static void reset_forgets_every_figure(void **state) {
	const uint32_t ok = 0;
	struct fake_client client;

	(void)state;
	client_init(&client);
	dispatch(&client, TEST_STATUS, sizeof(ok), &ok);
	assert_true(stats_of(TEST_STATUS)->count > 0);
	api_type_stats_reset();
	assert_int_equal(stats_of(TEST_STATUS)->count, 0);
	assert_int_equal(hist_sum(stats_of(TEST_STATUS)->handle_hist), 0);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buckets_are_log2_ns),
		cmocka_unit_test(tsc_converts_without_overflow),
		cmocka_unit_test(counts_errors_and_rejects_are_exact),
		cmocka_unit_test(deferred_counts_its_reply_error),
		cmocka_unit_test(type_stats_request_streams_every_type),
		cmocka_unit_test(reset_forgets_every_figure),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
