// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Grout's log requests through the client library: GR_LOG_LEVEL_LIST streams
// the daemon's own log types (every DPDK one with show_all);
// GR_LOG_LEVEL_SET changes a level by pattern, seen in the next list, and
// answers as Grout's does: a level above 8 is EINVAL, an unterminated
// pattern ENAMETOOLONG, a pattern that matches no log type (an empty one
// among them) 0, changing nothing; a short payload is EMSGSIZE;
// GR_LOG_PACKETS_SET is ENOTSUP (no datapath).
//
// usage: log_levels SOCK (under test/with_daemon.sh)

#include "check.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define OWN_TYPE "shmchand"
#define DPDK_TYPE "lib.eal"
// rte_log levels used: debug and info.
#define LEVEL_DEBUG 8
#define LEVEL_INFO 7
#define LIST_MAX 4096

// Count the entries of a list; *level is that of name (0 if absent).
static unsigned list(struct gr_api_client *c, bool show_all, const char *name, uint32_t *level) {
	struct gr_log_level_list_req req = {.show_all = show_all};
	unsigned n = 0;
	void *rx;
	size_t len;
	int ret;

	*level = 0;
	long id = gr_api_client_send(c, GR_LOG_LEVEL_LIST, sizeof(req), &req);
	CHECK(id > 0, "list: %s", strerror(errno));
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, &rx, &len)) == 1) {
		struct gr_log_entry e;
		CHECK(len == sizeof(e), "entry of %zu bytes", len);
		memcpy(&e, rx, sizeof(e));
		free(rx);
		CHECK(memchr(e.name, '\0', sizeof(e.name)) != NULL, "name not terminated");
		CHECK(e.level >= GR_LOG_LEVEL_MIN && e.level <= GR_LOG_LEVEL_MAX,
		      "%s: level %u",
		      e.name,
		      e.level);
		if (strcmp(e.name, name) == 0)
			*level = e.level;
		CHECK(++n < LIST_MAX, "list does not end");
	}
	CHECK(ret == 0, "list: %s", strerror(errno));
	return n;
}

static void
set(struct gr_api_client *c, const char *pattern, size_t plen, uint32_t level, int err) {
	struct gr_log_level_set_req req = {.level = level};
	memcpy(req.pattern, pattern, plen);
	long ret = gr_api_client_send_recv_len(c, GR_LOG_LEVEL_SET, sizeof(req), &req, NULL);
	if (err == 0)
		CHECK(ret == 0, "set %.*s %u: %s", (int)plen, pattern, level, strerror(errno));
	else
		CHECK(ret < 0 && errno == err,
		      "set %.*s %u: %ld (%s), expected %s",
		      (int)plen,
		      pattern,
		      level,
		      ret,
		      strerror(errno),
		      strerror(err));
}

int main(int argc, char **argv) {
	char unterminated[GR_LOG_NAME_LEN];
	uint32_t level;

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	struct gr_api_client *c = gr_api_client_connect(argv[1]);
	CHECK(c != NULL, "connect: %s", strerror(errno));

	unsigned own = list(c, false, OWN_TYPE, &level);
	CHECK(own >= 1 && level != 0, "own list: %u entries, %s level %u", own, OWN_TYPE, level);
	unsigned all = list(c, true, DPDK_TYPE, &level);
	CHECK(all > own && level != 0, "show_all: %u entries, %s level %u", all, DPDK_TYPE, level);
	printf("list: %u own types, %u with show_all: ok\n", own, all);

	set(c, OWN_TYPE, sizeof(OWN_TYPE), LEVEL_DEBUG, 0);
	list(c, false, OWN_TYPE, &level);
	CHECK(level == LEVEL_DEBUG, "%s at %u after set %d", OWN_TYPE, level, LEVEL_DEBUG);
	set(c, "shmch*", sizeof("shmch*"), LEVEL_INFO, 0);
	list(c, false, OWN_TYPE, &level);
	CHECK(level == LEVEL_INFO, "%s at %u after pattern set %d", OWN_TYPE, level, LEVEL_INFO);
	printf("set by name and by pattern: ok\n");

	set(c, OWN_TYPE, sizeof(OWN_TYPE), GR_LOG_LEVEL_MAX + 1, EINVAL);
	memset(unterminated, 'x', sizeof(unterminated));
	set(c, unterminated, sizeof(unterminated), LEVEL_INFO, ENAMETOOLONG);
	list(c, false, OWN_TYPE, &level);
	CHECK(level == LEVEL_INFO, "a refused set changed the level to %u", level);
	CHECK(gr_api_client_send_recv_len(c, GR_LOG_LEVEL_SET, 10, "shmchand\0\0", NULL) < 0 &&
		      errno == EMSGSIZE,
	      "short set: %s",
	      strerror(errno));
	printf("level 9: EINVAL, unterminated pattern: ENAMETOOLONG, short payload: EMSGSIZE:"
	       " ok\n");

	set(c, "nosuch*", sizeof("nosuch*"), LEVEL_INFO, 0);
	set(c, "", 1, LEVEL_DEBUG, 0);
	// Level 0 is Grout's too: of a pattern that matches nothing here.
	set(c, "nosuch*", sizeof("nosuch*"), 0, 0);
	list(c, false, OWN_TYPE, &level);
	CHECK(level == LEVEL_INFO, "a pattern that matched nothing changed the level to %u", level);
	printf("a pattern that matches nothing, an empty one: 0, nothing changed: ok\n");

	struct gr_log_packets_set_req pk = {.enabled = true};
	CHECK(gr_api_client_send_recv_len(c, GR_LOG_PACKETS_SET, sizeof(pk), &pk, NULL) < 0 &&
		      errno == ENOTSUP,
	      "log packets: %s",
	      strerror(errno));
	printf("log packets: ENOTSUP: ok\n");
	gr_api_client_disconnect(c);
	return 0;
}
