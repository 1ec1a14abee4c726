// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// GR_SHM_DAEMON_INFO reports the daemon's configuration and the backings it
// offers; GR_SHM_ECHO echoes any payload from 0 to GR_API_MAX_MSG_LEN bytes.

#include "api.h"
#include "channel.h"
#include "shmchand.h"
#include "sock.h"

#include <gr_shm.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

// Normally defined by main.c, which this test does not link.
struct shmchand_config shmchand_config;
int shmchand_logtype = RTE_LOGTYPE_USER1;

// The last response the fake transport was asked to send.
static struct {
	uint32_t for_id;
	uint32_t status;
	uint32_t len;
	uint8_t *payload;
} last;

static int fake_send(struct api_ctx *ctx, uint32_t for_id, const struct api_out *out) {
	(void)ctx;
	free(last.payload);
	last.for_id = for_id;
	last.status = out->status;
	last.len = out->len;
	last.payload = NULL;
	if (out->len > 0) {
		last.payload = malloc(out->len);
		assert_non_null(last.payload);
		memcpy(last.payload, out->payload, out->len);
	}
	return 0;
}

static const struct api_transport fake_transport = {.name = "fake", .send = fake_send};

static void request(uint32_t id, uint32_t type, uint32_t len, const void *payload) {
	struct api_ctx ctx = {.transport = &fake_transport, .hello_done = true, .sock_fd = -1};
	struct gr_api_request req = {.id = id, .type = type, .payload_len = len};

	assert_int_equal(api_dispatch(&ctx, &req, payload), 0);
	assert_int_equal(last.for_id, id);
}

static void config_defaults(void) {
	memset(&shmchand_config, 0, sizeof(shmchand_config));
	shmchand_config.pollers = 3;
	shmchand_config.spin_us = 77;
	shmchand_config.shm_enabled = true;
	strcpy(shmchand_config.file_prefix, "hx-test");
}

static const struct gr_shm_daemon_info *daemon_info(void) {
	request(9, GR_SHM_DAEMON_INFO, 0, NULL);
	assert_int_equal(last.status, 0);
	assert_int_equal(last.len, sizeof(struct gr_shm_daemon_info));
	return (const void *)last.payload;
}

static void info_reports_config(void **state) {
	const struct gr_shm_daemon_info *info;

	(void)state;
	config_defaults();
	info = daemon_info();
	assert_int_equal(info->pid, getpid());
	assert_int_equal(info->pollers, 3);
	assert_int_equal(info->poller_spin_us, 77);
	assert_string_equal(info->file_prefix, "hx-test");
}

static void info_backings_follow_hugepages(void **state) {
	(void)state;
	config_defaults();
	shmchand_config.have_hugepages = false;
	assert_int_equal(daemon_info()->backings, GR_SHM_BACKING_MEMFD);
	shmchand_config.have_hugepages = true;
	assert_int_equal(daemon_info()->backings, GR_SHM_BACKING_MEMFD | GR_SHM_BACKING_MEMZONE);
}

static void info_no_shm_offers_nothing(void **state) {
	(void)state;
	config_defaults();
	shmchand_config.have_hugepages = true;
	shmchand_config.shm_enabled = false;
	assert_int_equal(daemon_info()->backings, 0);
}

// The fields appended after the first release: version, uptime, flags and
// the limits, the per-peer connection limits and event backlog bounds too.
static void info_reports_version_uptime_limits(void **state) {
	const struct gr_shm_daemon_info *info;
	// An uptime of a little over 5 s, told by the start instant.
	const uint64_t started_ago_ns = 5000000000ull + 42;

	(void)state;
	config_defaults();
	shmchand_config.have_hugepages = true;
	shmchand_config.telemetry = true;
	shmchand_config.memzone_channels = 7;
	shmchand_config.start_ns = shmchand_monotonic_ns() - started_ago_ns;
	shmchand_config.start_time = 1700000000;
	shmchand_config.max_conn_per_pid = 11;
	shmchand_config.max_conn_per_uid = 0;
	shmchand_config.event_backlog_msgs = 13;
	shmchand_config.event_backlog_bytes = 8192;
	info = daemon_info();
	assert_string_equal(info->version, SHMCHAN_VERSION);
	assert_in_range(info->uptime_ms, 5000, 5000 + 60000);
	assert_int_equal(info->start_time, 1700000000);
	assert_int_equal(
		info->flags,
		GR_SHM_INFO_HUGEPAGES | GR_SHM_INFO_TELEMETRY | GR_SHM_INFO_POLLER_NICE
	);
	assert_int_equal(info->memzone_channels, 7);
	assert_int_equal(info->max_clients, SOCK_MAX_CLIENTS);
	assert_int_equal(info->max_msg_len, GR_API_MAX_MSG_LEN);
	assert_int_equal(info->channel_batch, CHANNEL_BATCH);
	assert_int_equal(info->channel_backlog_bytes, CHANNEL_BACKLOG_MAX_BYTES);
	assert_int_equal(info->channel_slow_ms, CHANNEL_SLOW_LIMIT_MS);
	assert_int_equal(info->sock_output_high, SOCK_OUTPUT_HIGH);
	assert_int_equal(info->sock_output_stall_s, SOCK_OUTPUT_STALL_SEC);
	assert_int_equal(info->reserved, 0);
	assert_int_equal(info->max_conn_per_pid, 11);
	assert_int_equal(info->max_conn_per_uid, 0);
	assert_int_equal(info->event_backlog, 13);
	assert_int_equal(info->event_backlog_bytes, 8192);

	shmchand_config.have_hugepages = false;
	shmchand_config.telemetry = false;
	assert_int_equal(daemon_info()->flags, GR_SHM_INFO_POLLER_NICE);
}

static void echo_any_length(void **state) {
	static const uint32_t lengths[] = {0, 1, 64, 4097, GR_API_MAX_MSG_LEN};
	uint8_t *payload = malloc(GR_API_MAX_MSG_LEN);

	(void)state;
	assert_non_null(payload);
	for (uint32_t i = 0; i < GR_API_MAX_MSG_LEN; i++)
		payload[i] = (uint8_t)(i ^ (i >> 8));
	for (unsigned i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		request(i + 1, GR_SHM_ECHO, lengths[i], lengths[i] > 0 ? payload : NULL);
		assert_int_equal(last.status, 0);
		assert_int_equal(last.len, lengths[i]);
		if (lengths[i] > 0)
			assert_memory_equal(last.payload, payload, lengths[i]);
	}
	free(payload);
}

static int free_last(void **state) {
	(void)state;
	free(last.payload);
	last.payload = NULL;
	return 0;
}

// The pollers' nice value: what the first poller's thread runs at, read
// from the kernel (here this thread stands for it, at a nice value anyone
// may take), and what the options asked for.
static void info_reports_poller_nice(void **state) {
	const struct gr_shm_daemon_info *info;

	(void)state;
	config_defaults();
	shmchand_config.poller_nice = -20;
	assert_int_equal(setpriority(PRIO_PROCESS, (id_t)gettid(), 7), 0);
	atomic_store(&shmchand_config.poller0_tid, (int)gettid());
	info = daemon_info();
	assert_true(info->flags & GR_SHM_INFO_POLLER_NICE);
	assert_int_equal(info->poller_nice, 7);
	assert_int_equal(info->poller_nice_wanted, -20);
	shmchand_config.poller_nice = SHMCHAND_POLLER_NICE_OFF;
	assert_int_equal(daemon_info()->poller_nice_wanted, GR_SHM_POLLER_NICE_OFF);
	atomic_store(&shmchand_config.poller0_tid, 0);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(info_reports_config),
		cmocka_unit_test(info_backings_follow_hugepages),
		cmocka_unit_test(info_no_shm_offers_nothing),
		cmocka_unit_test(info_reports_version_uptime_limits),
		cmocka_unit_test(info_reports_poller_nice),
		cmocka_unit_test(echo_any_length),
	};

	return cmocka_run_group_tests(tests, NULL, free_last);
}
