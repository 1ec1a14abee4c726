// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The faults a client repeats are logged once per interval, not once per
// request: 10,000 short payloads and 10,000 unknown types from one client
// make one line of each at once, and, once the client is gone, one summary
// of each that counts all the others; another client's first fault is
// logged at once all the same. Every request is still answered. So it goes
// for the log requests: 10,000 GR_LOG_LEVEL_SET of a bad level, of a bad
// pattern, of a good one that matches no log type (each answered with
// Grout's status) and GR_LOG_PACKETS_SET make a bounded number of lines.

#include "api.h"
#include "dispatch_test.h"
#include "log_capture_test.h"
#include "config.h"

#include <gr_shm.h>

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define FLOOD 10000
#define SHORT_PAYLOAD_LEN 10
#define UNKNOWN_TYPE GR_MSG_TYPE(0x7777, 1)
#define NSEC_PER_SEC 1000000000ull

struct counting_client {
	struct gr_api_ctx ctx;
	unsigned answers[EMSGSIZE + ENOTSUP + 1]; // by status
};

static int counting_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	struct counting_client *c = ctx->priv;

	(void)for_id;
	if (out->status < sizeof(c->answers) / sizeof(c->answers[0]))
		c->answers[out->status]++;
	return 0;
}

static const struct api_transport counting_transport = {.name = "test", .send = counting_send};

static void client_init(struct counting_client *c, pid_t pid) {
	struct gr_hello_req hello = {.api_version = GR_API_VERSION, .version = "test"};
	struct gr_api_request req = {.id = 1, .type = GR_HELLO, .payload_len = sizeof(hello)};

	memset(c, 0, sizeof(*c));
	c->ctx.transport = &counting_transport;
	c->ctx.priv = c;
	c->ctx.sock_fd = -1;
	c->ctx.peer_pid = pid;
	assert_int_equal(api_dispatch(&c->ctx, &req, &hello), 0);
	assert_int_equal(c->answers[0], 1);
}

static void flood_logged_once_per_interval(void **state) {
	uint8_t payload[SHORT_PAYLOAD_LEN] = {0};
	struct counting_client c, other;
	char want[128];

	(void)state;
	client_init(&c, 4242);
	client_init(&other, 4343);
	uint64_t start = log_capture_now_ns();
	for (uint32_t i = 0; i < FLOOD; i++) {
		struct gr_api_request req = {
			.id = 2 + i,
			.type = GR_PING2,
			.payload_len = sizeof(payload)};
		struct gr_api_request unknown = {.id = 2 + i, .type = UNKNOWN_TYPE};

		assert_int_equal(api_dispatch(&c.ctx, &req, payload), 0);
		assert_int_equal(api_dispatch(&c.ctx, &unknown, NULL), 0);
	}
	// One line a second may come while the loop runs on a loaded machine.
	unsigned seconds = (unsigned)((log_capture_now_ns() - start) / NSEC_PER_SEC);
	assert_int_equal(c.answers[EMSGSIZE], FLOOD);
	assert_int_equal(c.answers[ENOTSUP], FLOOD);
	unsigned short_lines = log_lines("client pid 4242: ", "payload is");
	unsigned unknown_lines = log_lines("client pid 4242: ", "unknown request type");
	assert_true(short_lines >= 1 && short_lines <= 1 + seconds);
	assert_true(unknown_lines >= 1 && unknown_lines <= 1 + seconds);
	assert_int_equal(
		log_lines(
			"client pid 4242: GR_PING2 payload is 10 bytes, expected at least 64",
			NULL
		),
		1
	);

	// The other client is not silenced by the first one's flood.
	struct gr_api_request req = {.id = 2, .type = GR_PING2, .payload_len = sizeof(payload)};
	assert_int_equal(api_dispatch(&other.ctx, &req, payload), 0);
	assert_int_equal(log_lines("client pid 4343: GR_PING2 payload is 10 bytes", NULL), 1);

	// Gone: the rest is summed up, one line per kind.
	api_faults_log(&c.ctx, true);
	if (seconds == 0) {
		snprintf(
			want,
			sizeof(want),
			"client pid 4242: %u more short-payload requests",
			FLOOD - 1
		);
		assert_int_equal(
			log_lines(want, "suppressed, the last: GR_PING2 payload is 10"),
			1
		);
		snprintf(
			want,
			sizeof(want),
			"client pid 4242: %u more requests of unknown",
			FLOOD - 1
		);
		assert_int_equal(log_lines(want, "the last: unknown request type 0x77770001"), 1);
	}
	assert_int_equal(log_lines("client pid 4242: ", "payload is"), short_lines + 1);
	assert_int_equal(log_lines("client pid 4242: ", "unknown request type"), unknown_lines + 1);
	// Nothing is left to say.
	unsigned lines = log_lines("client pid 4242: ", NULL);
	api_faults_log(&c.ctx, true);
	assert_int_equal(log_lines("client pid 4242: ", NULL), lines);
}

// pattern NULL: one with no NUL.
static void log_level_set_flood(struct counting_client *c, uint32_t level, const char *pattern) {
	struct gr_log_level_set_req set = {.level = level};
	struct gr_api_request req = {.type = GR_LOG_LEVEL_SET, .payload_len = sizeof(set)};

	if (pattern != NULL)
		snprintf(set.pattern, sizeof(set.pattern), "%s", pattern);
	else
		memset(set.pattern, 'x', sizeof(set.pattern));
	for (uint32_t i = 0; i < FLOOD; i++) {
		req.id = 2 + i;
		assert_int_equal(api_dispatch(&c->ctx, &req, &set), 0);
	}
}

static void log_requests_logged_once_per_interval(void **state) {
	struct gr_log_packets_set_req packets = {.enabled = true};
	struct gr_api_request req = {.type = GR_LOG_PACKETS_SET, .payload_len = sizeof(packets)};
	// Matches no log type: the test's own log level stays.
	const char *pattern = "nomatch.test*";
	struct counting_client c;

	(void)state;
	client_init(&c, 4545);
	uint64_t start = log_capture_now_ns();
	log_level_set_flood(&c, GR_LOG_LEVEL_MAX + 1, pattern);
	log_level_set_flood(&c, RTE_LOG_INFO, NULL);
	log_level_set_flood(&c, RTE_LOG_INFO, pattern);
	for (uint32_t i = 0; i < FLOOD; i++) {
		req.id = 2 + i;
		assert_int_equal(api_dispatch(&c.ctx, &req, &packets), 0);
	}
	unsigned seconds = (unsigned)((log_capture_now_ns() - start) / NSEC_PER_SEC);
	// Grout's statuses.
	assert_int_equal(c.answers[EINVAL], FLOOD);
	assert_int_equal(c.answers[ENAMETOOLONG], FLOOD);
	// The hello, and the sets of a pattern that matches nothing.
	assert_int_equal(c.answers[0], 1 + FLOOD);
	assert_int_equal(c.answers[ENOTSUP], FLOOD);

	static const char *const details[] = {
		"log level 9 is above 8",
		"log pattern not NUL-terminated",
		"log level pattern 'nomatch.test*' matches no log type: nothing changed",
		"GR_LOG_PACKETS_SET: the server has no datapath",
	};
	unsigned lines[sizeof(details) / sizeof(details[0])];
	for (unsigned k = 0; k < sizeof(details) / sizeof(details[0]); k++) {
		lines[k] = log_lines("client pid 4545: ", details[k]);
		assert_true(lines[k] >= 1 && lines[k] <= 1 + seconds);
	}
	// Gone: one summary of each kind; nothing is left to say after it.
	api_faults_log(&c.ctx, true);
	for (unsigned k = 0; k < sizeof(details) / sizeof(details[0]); k++)
		assert_int_equal(log_lines("client pid 4545: ", details[k]), lines[k] + 1);
	if (seconds == 0)
		assert_int_equal(
			log_lines("client pid 4545: 9999 more log level changes suppressed", NULL),
			1
		);
	// And the hello's line.
	unsigned all = log_lines("client pid 4545: ", NULL);
	assert_true(all <= 1 + 2 * (sizeof(details) / sizeof(details[0])) * (1 + seconds));
}

// The server's own handlers this test links, as gr_api_server_start()
// registers them, and the log captured.
static int setup(void **state) {
	assert_int_equal(dispatch_test_handlers(), 0);
	return log_capture_setup(state);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flood_logged_once_per_interval),
		cmocka_unit_test(log_requests_logged_once_per_interval),
	};
	return cmocka_run_group_tests(tests, setup, log_capture_teardown);
}
