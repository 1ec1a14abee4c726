// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A subscriber that fills its backlog, takes everything, and fills it again
// 10,000 times begins to drop events 10,000 times: the publisher logs
// nothing (it may hold the handler lock), and the main loop logs one line
// at once and, when the daemon stops, one summary that counts the others.

#include "api.h"
#include "event.h"
#include "log_capture_test.h"
#include "config.h"

#include <gr_shm.h>

#include <event2/event.h>

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define TEST_BACKLOG_MSGS 4
#define TEST_BACKLOG_BYTES 4096
#define SUB_PID 4646
#define FLOOD 10000
#define NSEC_PER_SEC 1000000000ull

static void count_wake(void *arg) {
	(void)arg;
}

// One more event than the backlog holds (a run of drops begins), then take
// the events kept and the events-lost event: empty again.
static void fill_and_empty(struct event_sub *sub) {
	for (unsigned k = 0; k <= TEST_BACKLOG_MSGS; k++)
		gr_api_event_publish(GR_SHM_EVENT_TEST, &k, sizeof(k));
	while (event_sub_peek(sub) != NULL)
		event_sub_pop(sub);
}

static void drops_logged_by_the_main_loop_at_a_bounded_rate(void **state) {
	struct event_sub_opts opts = {.framing = EVENT_FRAMING_TAGGED};
	struct event_base *base = event_base_new();
	struct event_totals t;
	struct event_sub *sub;
	char want[128];

	(void)state;
	assert_non_null(base);
	assert_int_equal(event_module_init(base), 0);
	sub = event_sub_new(SUB_PID, EVENT_FRAMING_TAGGED, count_wake, NULL, NULL);
	assert_non_null(sub);
	assert_int_equal(event_subscribe(sub, GR_SHM_EVENT_TEST, &opts), 0);

	// The first run of drops: logged by the main loop, not the publisher.
	fill_and_empty(sub);
	assert_int_equal(log_lines("backlog", NULL), 0);
	assert_int_equal(event_base_loop(base, EVLOOP_NONBLOCK), 0);
	assert_int_equal(
		log_lines(
			"events: subscriber pid 4646: backlog full (4 events, ",
			"bytes): dropping its events"
		),
		1
	);

	// The others: a line a second at most, the main loop's turn
	// included.
	uint64_t start = log_capture_now_ns();
	for (unsigned i = 1; i < FLOOD; i++)
		fill_and_empty(sub);
	assert_int_equal(log_lines("backlog", NULL), 1);
	assert_int_equal(event_base_loop(base, EVLOOP_NONBLOCK), 0);
	unsigned seconds = (unsigned)((log_capture_now_ns() - start) / NSEC_PER_SEC);
	event_totals_get(&t);
	assert_int_equal(t.dropped, FLOOD);
	unsigned lines = log_lines("backlog", NULL);
	assert_true(lines >= 1 && lines <= 1 + 1 + seconds);

	// The daemon stops: what is left, in one line.
	event_sub_free(sub);
	event_module_fini();
	assert_int_equal(log_lines("backlog", NULL), lines + 1);
	if (seconds == 0) {
		snprintf(want, sizeof(want), "events: %u more backlogs full suppressed", FLOOD - 1);
		assert_int_equal(log_lines(want, "the last: subscriber pid 4646"), 1);
	}
	event_base_free(base);
}

// The server's defaults with small backlogs, and the log captured.
static int setup(void **state) {
	gr_api_server_conf_init(&server_conf);
	server_conf.event_backlog_msgs = TEST_BACKLOG_MSGS;
	server_conf.event_backlog_bytes = TEST_BACKLOG_BYTES;
	return log_capture_setup(state);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drops_logged_by_the_main_loop_at_a_bounded_rate),
	};
	return cmocka_run_group_tests(tests, setup, log_capture_teardown);
}
