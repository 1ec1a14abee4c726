// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// An event nobody subscribes to costs nothing: it is not even copied (the
// daemon's published and queued totals stay at zero). Subscriptions end
// with GR_EVENT_UNSUBSCRIBE, with a disconnect (socket and
// channel) and with a subscriber killed with SIGKILL: the daemon's
// subscription count goes back to zero each time. Then 10,000 subscribe and
// unsubscribe cycles on one channel leave no subscription behind and do
// not grow the daemon's resident memory.
//
// usage: event_subscription_cleanup SOCK (under test/with_daemon.sh)

#include "check.h"
#include "event_util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// A channel's subscriptions go with the channel, after the pollers' grace
// period: milliseconds; this is generous for a loaded machine.
#define CLEANUP_TIMEOUT_MS 5000
#define CYCLES 10000
// Cycles before the memory baseline is taken (allocator warm-up).
#define WARMUP_CYCLES 1000
// Growth allowed over 9,000 cycles: a leak of one subscription (tens of
// bytes) per cycle would pass 256 KiB; the allocator's noise stays far below.
#define RSS_GROWTH_MAX_KB 256

static long daemon_rss_kb(pid_t pid) {
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	CHECK(f != NULL, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	CHECK(kb > 0, "no VmRSS in %s", path);
	return kb;
}

static void expect_subscriptions(struct gr_api_client *mon, uint32_t want, const char *what) {
	uint32_t got = event_wait_subscriptions(mon, want, CLEANUP_TIMEOUT_MS);
	CHECK(got == want, "%s: %u subscriptions, expected %u", what, got, want);
	printf("%s: %u subscriptions: ok\n", what, want);
}

static void check_unsubscribed_publish(struct gr_api_client *mon) {
	struct gr_shm_event_stats_resp stats;

	event_publish(mon, "nobody", sizeof("nobody"));
	event_stats(mon, &stats);
	CHECK(stats.published == 0 && stats.queued == 0,
	      "an event without subscribers: published %llu, queued %llu",
	      (unsigned long long)stats.published,
	      (unsigned long long)stats.queued);
	printf("event without subscribers: not copied: ok\n");
}

static void check_unsubscribe(const char *sock, struct gr_api_client *mon) {
	struct gr_api_client *c = event_client(sock, GR_API_TRANSPORT_SOCKET);

	event_subscribe(c, GR_SHM_EVENT_TEST, false);
	event_subscribe(c, GR_EVENT_ALL, true);
	event_subscribe(c, GR_SHM_EVENT_TEST, true); // an update, not a third
	expect_subscriptions(mon, 2, "subscribed");
	CHECK(gr_api_client_send_recv_len(c, GR_EVENT_UNSUBSCRIBE, 0, NULL, NULL) == 0,
	      "unsubscribe: %s",
	      strerror(errno));
	expect_subscriptions(mon, 0, "GR_EVENT_UNSUBSCRIBE");
	gr_api_client_disconnect(c);
}

static void check_disconnect(const char *sock, struct gr_api_client *mon, enum gr_api_transport t) {
	struct gr_api_client *c = event_client(sock, t);

	event_subscribe(c, GR_SHM_EVENT_TEST, false);
	event_subscribe(c, GR_SHM_EVENT_CHANNEL_ATTACHED, false);
	expect_subscriptions(mon, 2, "subscribed");
	gr_api_client_disconnect(c);
	expect_subscriptions(
		mon,
		0,
		t == GR_API_TRANSPORT_SHM ? "channel disconnected" : "socket disconnected"
	);
}

static void check_kill(const char *sock, struct gr_api_client *mon) {
	int ready[2];
	char byte = 0;

	CHECK(pipe(ready) == 0, "pipe");
	pid_t child = child_fork();
	CHECK(child >= 0, "fork");
	if (child == 0) {
		struct gr_api_client *c = event_client(sock, GR_API_TRANSPORT_SHM);
		event_subscribe(c, GR_SHM_EVENT_TEST, false);
		event_subscribe(c, GR_EVENT_ALL, false);
		(void)!write(ready[1], &byte, 1);
		pause();
		_exit(0);
	}
	CHECK(read(ready[0], &byte, 1) == 1, "child did not subscribe");
	expect_subscriptions(mon, 2, "child subscribed");
	kill(child, SIGKILL);
	child_reap(child);
	expect_subscriptions(mon, 0, "subscriber killed with SIGKILL");
	close(ready[0]);
	close(ready[1]);
}

static void check_cycles(const char *sock, struct gr_api_client *mon) {
	struct gr_api_client *c = event_client(sock, GR_API_TRANSPORT_SHM);
	pid_t daemon = daemon_pid_from_env();
	long base_kb = 0;

	for (unsigned i = 0; i < CYCLES; i++) {
		if (i == WARMUP_CYCLES)
			base_kb = daemon_rss_kb(daemon);
		event_subscribe(c, GR_MSG_TYPE(GR_SHM_MODULE, 0x9000 + i % 64), i % 2 == 0);
		CHECK(gr_api_client_send_recv_len(c, GR_EVENT_UNSUBSCRIBE, 0, NULL, NULL) == 0,
		      "unsubscribe %u: %s",
		      i,
		      strerror(errno));
	}
	long end_kb = daemon_rss_kb(daemon);
	expect_subscriptions(mon, 0, "after 10000 cycles");
	// AddressSanitizer keeps freed memory in quarantine, so the RSS of a
	// sanitized daemon grows anyway; there LeakSanitizer checks the
	// daemon's memory at its exit instead.
	if (getenv("ASAN_OPTIONS") != NULL) {
		printf("%d subscribe/unsubscribe cycles: RSS not compared (sanitized build): ok\n",
		       CYCLES);
		gr_api_client_disconnect(c);
		return;
	}
	CHECK(end_kb - base_kb <= RSS_GROWTH_MAX_KB,
	      "daemon RSS grew from %ld to %ld kB",
	      base_kb,
	      end_kb);
	printf("%d subscribe/unsubscribe cycles: RSS %ld -> %ld kB: ok\n", CYCLES, base_kb, end_kb);
	gr_api_client_disconnect(c);
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	children_guard();
	struct gr_api_client *mon = event_client(argv[1], GR_API_TRANSPORT_SOCKET);

	expect_subscriptions(mon, 0, "at start");
	check_unsubscribed_publish(mon);
	check_unsubscribe(argv[1], mon);
	check_disconnect(argv[1], mon, GR_API_TRANSPORT_SOCKET);
	check_disconnect(argv[1], mon, GR_API_TRANSPORT_SHM);
	check_kill(argv[1], mon);
	check_cycles(argv[1], mon);
	gr_api_client_disconnect(mon);
	return 0;
}
