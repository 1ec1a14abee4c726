// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// GR_SHM_DAEMON_INFO reports the program's name, version and start, and
// what the server library runs with: its configuration, the backings it
// offers, its limits and the pollers' nice value, each field from the right
// source.

#include "handlers_info.h"

#include <gr_shm.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

// A server's info as gr_api_server_info_get() fills it, every field told
// apart from the others.
static struct gr_api_server_info server_info(void) {
	struct gr_api_server_info s;

	memset(&s, 0, sizeof(s));
	gr_api_server_conf_init(&s.conf);
	s.conf.pollers = 3;
	s.conf.spin_us = 77;
	s.conf.file_prefix = "hx-test";
	s.conf.max_conn_per_pid = 11;
	s.conf.max_conn_per_uid = 0;
	s.conf.event_backlog_msgs = 13;
	s.conf.event_backlog_bytes = 8192;
	s.conf.event_subs_max = 99;
	s.conf.event_memory_bytes = (size_t)5 << 32;
	s.conf.poller_nice = -20;
	s.backings = GR_SHM_BACKING_MEMFD;
	s.memzone_channels = 7;
	s.poller_nice = 7;
	s.uptime_ms = 5042;
	s.max_clients = 1001;
	s.max_msg_len = 1002;
	s.channel_batch = 1003;
	s.channel_backlog_bytes = 1004;
	s.channel_slow_ms = 1005;
	s.sock_output_high = 1006;
	s.sock_output_stall_s = 1007;
	return s;
}

static void info_reports_config(void **state) {
	struct gr_api_server_info s = server_info();
	struct gr_shm_daemon_info info;

	(void)state;
	server_daemon_info(&s, &info);
	assert_int_equal(info.pid, getpid());
	assert_int_equal(info.pollers, 3);
	assert_int_equal(info.poller_spin_us, 77);
	assert_string_equal(info.file_prefix, "hx-test");
	assert_int_equal(info.backings, GR_SHM_BACKING_MEMFD);
}

// The fields appended after the first release: version, uptime, flags and
// the limits, the per-peer connection limits and event backlog bounds too.
static void info_reports_version_uptime_limits(void **state) {
	struct gr_api_server_info s = server_info();
	struct gr_shm_daemon_info info;

	(void)state;
	s.conf.memzones = true;
	s.conf.telemetry = true;
	s.start_time = 1700000000;
	s.conf.app_version = "7.1-app";
	server_daemon_info(&s, &info);
	assert_string_equal(info.version, "7.1-app");
	assert_string_equal(info.program, "server_handlers_info_test");
	assert_string_equal(info.server_version, SHMCHAN_VERSION);
	assert_int_equal(info.uptime_ms, 5042);
	assert_int_equal(info.start_time, 1700000000);
	assert_int_equal(
		info.flags,
		GR_SHM_INFO_HUGEPAGES | GR_SHM_INFO_TELEMETRY | GR_SHM_INFO_POLLER_NICE |
			GR_SHM_INFO_EVENT_BOUNDS | GR_SHM_INFO_PROGRAM
	);
	assert_int_equal(info.memzone_channels, 7);
	assert_int_equal(info.max_clients, 1001);
	assert_int_equal(info.max_msg_len, 1002);
	assert_int_equal(info.channel_batch, 1003);
	assert_int_equal(info.channel_backlog_bytes, 1004);
	assert_int_equal(info.channel_slow_ms, 1005);
	assert_int_equal(info.sock_output_high, 1006);
	assert_int_equal(info.sock_output_stall_s, 1007);
	assert_int_equal(info.reserved, 0);
	assert_int_equal(info.max_conn_per_pid, 11);
	assert_int_equal(info.max_conn_per_uid, 0);
	assert_int_equal(info.event_backlog, 13);
	assert_int_equal(info.event_backlog_bytes, 8192);
	assert_int_equal(info.event_subs_max, 99);
	assert_int_equal(info.reserved2, 0);
	assert_int_equal(info.event_memory_bytes, (uint64_t)5 << 32);

	s.conf.memzones = false;
	s.conf.telemetry = false;
	s.conf.app_version = NULL;
	server_daemon_info(&s, &info);
	assert_int_equal(
		info.flags,
		GR_SHM_INFO_POLLER_NICE | GR_SHM_INFO_EVENT_BOUNDS | GR_SHM_INFO_PROGRAM
	);
	// An application that gives no version: none, not the library's.
	assert_string_equal(info.version, "");
}

// The pollers' nice value: what the first poller runs at, as the server
// read it, and what the options asked for.
static void info_reports_poller_nice(void **state) {
	struct gr_api_server_info s = server_info();
	struct gr_shm_daemon_info info;

	(void)state;
	server_daemon_info(&s, &info);
	assert_true(info.flags & GR_SHM_INFO_POLLER_NICE);
	assert_int_equal(info.poller_nice, 7);
	assert_int_equal(info.poller_nice_wanted, -20);
	s.conf.poller_nice = GR_API_SERVER_NICE_OFF;
	server_daemon_info(&s, &info);
	assert_int_equal(info.poller_nice_wanted, GR_SHM_POLLER_NICE_OFF);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(info_reports_config),
		cmocka_unit_test(info_reports_version_uptime_limits),
		cmocka_unit_test(info_reports_poller_nice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
