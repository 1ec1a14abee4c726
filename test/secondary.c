// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "secondary.h"
#include "check.h"

#include <gr_api.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Polling period of secondary_wait_stats().
#define WAIT_POLL_US 2000
// Room for the --lcores value: "N@(" and a list of CPUs.
#define LCORES_ARG_LEN 1024

void secondary_daemon_info(const char *sock_path, struct gr_shm_daemon_info *info) {
	struct gr_api_client *c = secondary_connect(sock_path, GR_API_TRANSPORT_SOCKET, "info");

	long id = gr_api_client_send(c, GR_SHM_DAEMON_INFO, 0, NULL);
	CHECK(id > 0, "send GR_SHM_DAEMON_INFO: %s", strerror(errno));
	long len = gr_api_client_recv_into(c, (uint32_t)id, info, sizeof(*info));
	CHECK(len == (long)sizeof(*info), "GR_SHM_DAEMON_INFO: %ld: %s", len, strerror(errno));
	info->file_prefix[sizeof(info->file_prefix) - 1] = '\0';
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
}

// The EAL --lcores value: lcore id 1 + pid % (RTE_MAX_LCORE - 1) (never 0,
// the daemon's), on every CPU this process may run on.
static void lcores_arg(char *buf, size_t len) {
	cpu_set_t cpus;
	int n;

	CHECK(sched_getaffinity(0, sizeof(cpus), &cpus) == 0,
	      "sched_getaffinity: %s",
	      strerror(errno));
	n = snprintf(buf, len, "%u@(", 1 + (unsigned)getpid() % (RTE_MAX_LCORE - 1));
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, &cpus))
			n += snprintf(
				buf + n,
				len - (size_t)n,
				"%s%d",
				buf[n - 1] == '(' ? "" : ",",
				cpu
			);
		CHECK((size_t)n < len - 1, "too many CPUs for the --lcores argument");
	}
	snprintf(buf + n, len - (size_t)n, ")");
}

void secondary_eal_init(const char *sock_path) {
	struct gr_shm_daemon_info info;
	char lcores[LCORES_ARG_LEN];

	secondary_daemon_info(sock_path, &info);
	CHECK(info.backings & GR_SHM_BACKING_MEMZONE,
	      "the daemon (file prefix %s) offers backings %#x, no memzone: does it run with"
	      " hugepages?",
	      info.file_prefix,
	      info.backings);
	lcores_arg(lcores, sizeof(lcores));
	char *argv[] = {
		"shmchan-test",
		"--proc-type=secondary",
		"--file-prefix",
		info.file_prefix,
		"--lcores",
		lcores,
		"--no-pci",
		"--no-telemetry",
		"--log-level=*:warning",
		NULL,
	};
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
	CHECK(rte_eal_init(argc, argv) >= 0,
	      "EAL init as a secondary of file prefix %s (lcores %s): %s",
	      info.file_prefix,
	      lcores,
	      rte_errno != 0 ? rte_strerror(rte_errno) : "see the EAL messages above");
	CHECK(rte_eal_process_type() == RTE_PROC_SECONDARY, "EAL is not a secondary");
}

struct gr_api_client *
secondary_connect(const char *sock_path, enum gr_api_transport transport, const char *who) {
	struct gr_api_client_opts opts = {.transport = transport, .spin_us = -1, .version = who};
	struct gr_api_client *c = gr_api_client_connect_opts(sock_path, &opts);

	CHECK(c != NULL, "%s: connect %s: %s", who, sock_path, strerror(errno));
	return c;
}

struct gr_api_client *
secondary_connect_on(const char *sock_path, enum transport t, const char *who) {
	enum gr_api_transport api = t == T_SOCKET ? GR_API_TRANSPORT_SOCKET : GR_API_TRANSPORT_SHM;

	return secondary_connect(sock_path, api, who);
}

void secondary_expect_backing(struct gr_api_client *c, enum transport t, const char *who) {
	if (t == T_SOCKET)
		return;
	uint32_t backing = secondary_channel_list(c, getpid(), NULL);
	uint32_t want = t == T_MEMFD ? GR_SHM_BACKING_MEMFD : GR_SHM_BACKING_MEMZONE;
	CHECK(backing == want,
	      "%s: %s channel: backing %#x, expected %#x",
	      who,
	      transport_names[t],
	      backing,
	      want);
}

void secondary_stats(struct gr_api_client *c, struct gr_shm_stats_resp *stats) {
	long id = gr_api_client_send(c, GR_SHM_STATS, 0, NULL);
	CHECK(id > 0, "send GR_SHM_STATS: %s", strerror(errno));
	long len = gr_api_client_recv_into(c, (uint32_t)id, stats, sizeof(*stats));
	CHECK(len == (long)sizeof(*stats), "GR_SHM_STATS: %ld: %s", len, strerror(errno));
}

uint32_t
secondary_channel_list(struct gr_api_client *c, pid_t pid, struct secondary_channels *counts) {
	struct gr_shm_channel_info *info;
	uint32_t backing = 0;
	size_t len;
	int ret;

	if (counts != NULL)
		*counts = (struct secondary_channels){0};
	long id = gr_api_client_send(c, GR_SHM_CHANNEL_LIST, 0, NULL);
	CHECK(id > 0, "send GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, (void **)&info, &len)) == 1) {
		CHECK(len == sizeof(*info), "channel list entry of %zu bytes", len);
		if (info->client_pid == pid) {
			CHECK(backing == 0, "pid %d has two channels", (int)pid);
			backing = info->backing;
		}
		if (counts != NULL) {
			counts->total++;
			if (info->backing == GR_SHM_BACKING_MEMZONE)
				counts->memzone++;
			else if (info->backing == GR_SHM_BACKING_MEMFD)
				counts->memfd++;
		}
		free(info);
	}
	CHECK(ret == 0, "GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	return backing;
}

void secondary_payload_fill(uint8_t *buf, size_t size, uint64_t seq) {
	for (size_t i = 0; i < size; i++)
		buf[i] = (uint8_t)(seq * 31 + i * 7);
	memcpy(buf, &seq, size < sizeof(seq) ? size : sizeof(seq));
}

struct in_flight {
	uint32_t id;
	uint64_t seq;
};

static void pipeline_send(
	struct gr_api_client *c,
	uint32_t type,
	uint8_t *tx,
	size_t size,
	struct in_flight *f,
	uint64_t seq
) {
	secondary_payload_fill(tx, size, seq);
	long id = gr_api_client_send(c, type, size, size > 0 ? tx : NULL);
	CHECK(id > 0, "send %#x #%llu: %s", type, (unsigned long long)seq, strerror(errno));
	f->id = (uint32_t)id;
	f->seq = seq;
}

static void pipeline_check(
	struct gr_api_client *c,
	uint32_t type,
	uint8_t *want,
	uint8_t *got,
	size_t size,
	const struct in_flight *f
) {
	long len = gr_api_client_recv_into(c, f->id, got, size);
	CHECK(len == (long)size,
	      "request %#x #%llu (id %u): returned %ld, expected %zu: %s",
	      type,
	      (unsigned long long)f->seq,
	      f->id,
	      len,
	      size,
	      len < 0 ? strerror(errno) : "wrong length");
	secondary_payload_fill(want, size, f->seq);
	CHECK(memcmp(got, want, size) == 0,
	      "request %#x #%llu (id %u): echo differs from the request",
	      type,
	      (unsigned long long)f->seq,
	      f->id);
}

void secondary_pipeline(struct gr_api_client *c, uint32_t type, size_t size, unsigned calls) {
	struct in_flight flight[SECONDARY_DEPTH];
	uint8_t *tx = malloc(size + 1), *want = malloc(size + 1), *got = malloc(size + 1);
	unsigned sent = 0;

	CHECK(tx != NULL && want != NULL && got != NULL, "out of memory");
	if (type != GR_PING && type != GR_PING2)
		type = GR_SHM_ECHO;
	while (sent < calls && sent < SECONDARY_DEPTH) {
		pipeline_send(c, type, tx, size, &flight[sent], sent);
		sent++;
	}
	// Oldest first: the slot of the answer received takes the next request.
	for (unsigned done = 0; done < calls; done++) {
		struct in_flight *f = &flight[done % SECONDARY_DEPTH];
		pipeline_check(c, type, want, got, size, f);
		if (sent < calls) {
			pipeline_send(c, type, tx, size, f, sent);
			sent++;
		}
	}
	free(tx);
	free(want);
	free(got);
}

void secondary_wait_stats(
	struct gr_api_client *c,
	uint32_t memzones,
	uint32_t channels,
	unsigned wait_ms,
	struct gr_shm_stats_resp *last
) {
	uint64_t deadline = monotonic_ns() + (uint64_t)wait_ms * 1000000;

	for (;;) {
		secondary_stats(c, last);
		if (last->memzones == memzones && last->channels == channels)
			return;
		CHECK(monotonic_ns() < deadline,
		      "after %u ms the daemon has %u memzones and %u channels, expected %u and %u",
		      wait_ms,
		      last->memzones,
		      last->channels,
		      memzones,
		      channels);
		usleep(WAIT_POLL_US);
	}
}
