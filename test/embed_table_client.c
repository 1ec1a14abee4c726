// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// examples/embed_table, an application on libgr_api_server, served on the
// transport asked for: its own requests (set, get, their errors), the
// dispatch rules the library applies to them (short payload), the
// library's own requests beside them (GR_PING2, the shm module's stats, the
// program's info: GR_SHM_DAEMON_INFO), its change events, those of its
// handlers and those its own loop's timer publishes, and where the socket
// side runs: on the application's thread, or on the library's thread
// ("gr-api-server"), as the mode says.
//
// usage: embed_table_client SOCK TRANSPORT own|thread (under with_daemon.sh)

#include "check.h"
#include "embed_table.h"
#include "event_util.h"
#include "transport_arg.h"

#include <gr_api_client.h>
#include <gr_shm.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

// Events read at most while looking for the ones expected: the timer's come
// every EMBED_TABLE_TICK_MS beside them.
#define EVENTS_MAX 64
// Name of the library's own thread (server/server.c).
#define LIBRARY_THREAD_NAME "gr-api-server"

// Set key to value; returns the status (0 or an errno value).
static int set(struct gr_api_client *c, const char *key, uint64_t value) {
	struct embed_table_set_req req = {.value = value};

	snprintf(req.key, sizeof(req.key), "%s", key);
	return gr_api_client_send_recv_into(c, EMBED_TABLE_SET, sizeof(req), &req, NULL, 0) < 0
		       ? errno
		       : 0;
}

// The value of key, or -errno.
static int64_t get(struct gr_api_client *c, const char *key) {
	struct embed_table_get_req req;
	struct embed_table_get_resp resp;
	long len;

	snprintf(req.key, sizeof(req.key), "%s", key);
	len = gr_api_client_send_recv_into(
		c,
		EMBED_TABLE_GET,
		sizeof(req),
		&req,
		&resp,
		sizeof(resp)
	);
	if (len < 0)
		return -errno;
	CHECK(len == sizeof(resp), "get %s: %ld bytes", key, len);
	return (int64_t)resp.value;
}

// Threads of pid named name.
static unsigned threads_named(pid_t pid, const char *name) {
	char dir[64], path[PATH_MAX], comm[32];
	const struct dirent *e;
	unsigned n = 0;
	FILE *f;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	CHECK(d != NULL, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue; // the thread ended meanwhile
		if (fgets(comm, sizeof(comm), f) != NULL) {
			comm[strcspn(comm, "\n")] = '\0';
			n += strcmp(comm, name) == 0;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

// Read change events until key comes with value, counting the timer's on
// the way; they must count up.
static unsigned expect_change(struct gr_api_client *c, const char *key, uint64_t value) {
	struct embed_table_event_changed ev;
	uint64_t last_tick = 0;
	unsigned ticks = 0;

	for (unsigned i = 0; i < EVENTS_MAX; i++) {
		size_t len = event_expect(c, EMBED_TABLE_EVENT_CHANGED, &ev, sizeof(ev));

		CHECK(len == sizeof(ev), "change event of %zu bytes", len);
		CHECK(memchr(ev.key, '\0', sizeof(ev.key)) != NULL, "key not NUL-terminated");
		if (strcmp(ev.key, EMBED_TABLE_TICKS_KEY) == 0) {
			CHECK(ev.value > last_tick,
			      "ticks %llu after %llu",
			      (unsigned long long)ev.value,
			      (unsigned long long)last_tick);
			last_tick = ev.value;
			ticks++;
			if (ticks > 1 && strcmp(key, EMBED_TABLE_TICKS_KEY) == 0)
				return ticks;
			continue;
		}
		CHECK(strcmp(ev.key, key) == 0 && ev.value == value,
		      "change of %s to %llu, expected %s to %llu",
		      ev.key,
		      (unsigned long long)ev.value,
		      key,
		      (unsigned long long)value);
		return ticks;
	}
	CHECK(false, "no change of %s within %d events", key, EVENTS_MAX);
	return 0;
}

// GR_SHM_TYPE_LIST lists type, named name, in the module "embed_table".
static void type_listed(struct gr_api_client *c, uint32_t type, const char *name) {
	struct gr_shm_type_info info;
	unsigned found = 0;
	long id, len;

	id = gr_api_client_send(c, GR_SHM_TYPE_LIST, 0, NULL);
	CHECK(id > 0, "send GR_SHM_TYPE_LIST: %s", strerror(errno));
	while ((len = gr_api_client_recv_into(c, (uint32_t)id, &info, sizeof(info))) > 0) {
		CHECK(len == (long)sizeof(info), "GR_SHM_TYPE_LIST: a response of %ld bytes", len);
		if (info.type == type)
			found += strcmp(info.name, name) == 0 &&
				 strcmp(info.module, "embed_table") == 0;
	}
	CHECK(len == 0, "GR_SHM_TYPE_LIST: %s", strerror(errno));
	CHECK(found == 1, "GR_SHM_TYPE_LIST: %s listed %u times in module embed_table", name, found
	);
}

int main(int argc, char **argv) {
	uint8_t ping[GR_PING2_LEN], echo[GR_PING2_LEN];
	const char short_set[8] = "alpha";
	struct gr_shm_stats_resp stats;
	struct gr_shm_daemon_info info;
	struct gr_api_client *c;
	bool own_thread;
	pid_t daemon;

	CHECK(argc == 4, "usage: embed_table_client SOCK TRANSPORT own|thread");
	CHECK(strcmp(argv[3], "own") == 0 || strcmp(argv[3], "thread") == 0, "mode %s", argv[3]);
	own_thread = strcmp(argv[3], "thread") == 0;
	watchdog_start(TEST_WATCHDOG_S);
	daemon = daemon_pid_from_env();
	c = connect_forced(argv[1], argv[2], NULL);

	// The application's requests.
	CHECK(get(c, "alpha") == -ENOENT, "get of a key never set");
	CHECK(set(c, "alpha", 42) == 0, "set alpha");
	CHECK(get(c, "alpha") == 42, "alpha after its set");
	CHECK(set(c, "alpha", 43) == 0 && get(c, "alpha") == 43, "alpha set again");
	CHECK(set(c, "", 1) == EINVAL, "set of an empty key");
	// Shorter than the request's struct: the library refuses it before the
	// handler runs.
	CHECK(gr_api_client_send_recv_into(
		      c,
		      EMBED_TABLE_SET,
		      sizeof(short_set),
		      short_set,
		      NULL,
		      0
	      ) < 0 && errno == EMSGSIZE,
	      "short set: %s",
	      strerror(errno));

	// The library's own requests, beside them.
	for (unsigned i = 0; i < sizeof(ping); i++)
		ping[i] = (uint8_t)(i * 5 + 1);
	CHECK(gr_api_client_send_recv_into(c, GR_PING2, sizeof(ping), ping, echo, sizeof(echo)) ==
			      sizeof(echo) &&
		      memcmp(ping, echo, sizeof(ping)) == 0,
	      "GR_PING2");
	CHECK(gr_api_client_send_recv_into(c, GR_SHM_STATS, 0, NULL, &stats, sizeof(stats)) ==
		      sizeof(stats),
	      "GR_SHM_STATS: %s",
	      strerror(errno));
	CHECK(stats.channels == (gr_api_client_transport(c) == GR_API_TRANSPORT_SHM ? 1u : 0u),
	      "%u channels",
	      stats.channels);
	// The library serves it for any application: the program's name and
	// version, not shmchand's.
	CHECK(gr_api_client_send_recv_into(c, GR_SHM_DAEMON_INFO, 0, NULL, &info, sizeof(info)) ==
		      sizeof(info),
	      "GR_SHM_DAEMON_INFO: %s",
	      strerror(errno));
	CHECK(info.pid == daemon && (info.flags & GR_SHM_INFO_PROGRAM) &&
		      strcmp(info.program, "embed_table") == 0 &&
		      strcmp(info.version, "embed_table 1.0") == 0,
	      "GR_SHM_DAEMON_INFO: pid %d, program '%.31s', version '%.31s'",
	      info.pid,
	      info.program,
	      info.version);

	// Its types, listed by the library with its module's name.
	type_listed(c, EMBED_TABLE_GET, "EMBED_TABLE_GET");
	type_listed(c, EMBED_TABLE_SET, "EMBED_TABLE_SET");

	// Events: a handler's change, then the application's own timer's.
	event_subscribe(c, EMBED_TABLE_EVENT_CHANGED, false);
	CHECK(set(c, "beta", 7) == 0, "set beta");
	expect_change(c, "beta", 7);
	CHECK(expect_change(c, EMBED_TABLE_TICKS_KEY, 0) > 1, "ticks");
	CHECK(get(c, EMBED_TABLE_TICKS_KEY) > 1, "ticks in the table");

	// Where the socket side runs.
	CHECK(threads_named(daemon, LIBRARY_THREAD_NAME) == (own_thread ? 1u : 0u),
	      "%u threads named %s in the %s mode",
	      threads_named(daemon, LIBRARY_THREAD_NAME),
	      LIBRARY_THREAD_NAME,
	      argv[3]);
	gr_api_client_disconnect(c);
	printf("embed_table served on %s, socket side on %s\n",
	       argv[2],
	       own_thread ? "the library's thread" : "the application's loop");
	return 0;
}
