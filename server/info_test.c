// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What gr_api_server_info_get() reports: the configuration in force, the
// backings offered (none without shm, memzones only when asked for), the
// first poller's nice value as the kernel reads it, the uptime, and the
// server's fixed bounds.

#include "channel.h"
#include "config.h"
#include "sock.h"

#include <gr_shm.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

static struct gr_api_server_info info(void) {
	struct gr_api_server_info i;

	server_info_fill(&i);
	return i;
}

static void reports_conf_and_bounds(void **state) {
	struct gr_api_server_info i;

	(void)state;
	gr_api_server_conf_init(&server_conf);
	server_conf.pollers = 3;
	server_state.memzone_channels = 7;
	i = info();
	assert_int_equal(i.conf.pollers, 3);
	// The default: resolved at start, in EAL's runtime folder.
	assert_null(i.conf.sock_path);
	assert_int_equal(i.memzone_channels, 7);
	assert_int_equal(i.max_clients, GR_API_SERVER_MAX_CLIENTS);
	assert_int_equal(i.max_msg_len, GR_API_MAX_MSG_LEN);
	assert_int_equal(i.channel_batch, CHANNEL_TURN_RESPONSES);
	assert_int_equal(i.channel_backlog_bytes, CHANNEL_BACKLOG_MAX_BYTES);
	assert_int_equal(i.channel_slow_ms, CHANNEL_SLOW_LIMIT_MS);
	assert_int_equal(i.sock_output_high, SOCK_OUTPUT_HIGH);
	assert_int_equal(i.sock_output_stall_s, SOCK_OUTPUT_STALL_SEC);
}

static void backings_follow_shm_and_memzones(void **state) {
	(void)state;
	gr_api_server_conf_init(&server_conf);
	assert_int_equal(info().backings, GR_SHM_BACKING_MEMFD);
	server_conf.memzones = true;
	assert_int_equal(info().backings, GR_SHM_BACKING_MEMFD | GR_SHM_BACKING_MEMZONE);
	server_conf.shm_enabled = false;
	assert_int_equal(info().backings, 0);
}

// An uptime of a little over 5 s, told by the start instant, and the start
// on the wall clock.
static void uptime_from_start(void **state) {
	(void)state;
	server_state.start_ns = server_monotonic_ns() - 5000000042ull;
	server_state.start_time = 1700000000;
	assert_in_range(info().uptime_ms, 5000, 5000 + 60000);
	assert_int_equal(info().start_time, 1700000000);
}

// What the first poller's thread runs at, read from the kernel (here this
// thread stands for it, at a nice value anyone may take); before the
// pollers run, the process's.
static void poller_nice_of_the_first_poller(void **state) {
	(void)state;
	assert_int_equal(setpriority(PRIO_PROCESS, (id_t)gettid(), 7), 0);
	atomic_store(&server_state.poller0_tid, (int)gettid());
	assert_int_equal(info().poller_nice, 7);
	atomic_store(&server_state.poller0_tid, 0);
	assert_int_equal(info().poller_nice, getpriority(PRIO_PROCESS, (id_t)getpid()));
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reports_conf_and_bounds),
		cmocka_unit_test(backings_follow_shm_and_memzones),
		cmocka_unit_test(uptime_from_start),
		cmocka_unit_test(poller_nice_of_the_first_poller),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
