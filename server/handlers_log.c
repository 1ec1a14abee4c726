// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Grout's log requests: list the log types and their levels, set levels by
// pattern. shmchand has no datapath, so packet logging is not served.

#include "api.h"
#include "log_escape.h"
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The log types, as rte_log_dump() lists them ("id N: NAME, level is ..."):
// DPDK has no other way to walk them. A dump of 200 types and its parse
// cost some 50 us, ten times the sending of their entries, under the
// handler lock that every client waits on: the list is kept between
// requests. DPDK never unregisters a type and gives a new one the next id,
// so the list holds until rte_log_get_level() answers for the first id it
// refused when the list was made. Handler lock held.
struct log_type_name {
	unsigned id;
	char name[GR_LOG_NAME_LEN];
};
static struct {
	struct log_type_name *types;
	unsigned n, cap;
	unsigned ids; // rte_log_get_level() refused this id before the dump
} log_types;

// Dump and parse the log types again. Returns 0 or -errno (the old list
// is kept then).
static int log_types_load(void) {
	char name[GR_LOG_NAME_LEN];
	char *buf = NULL, *line, *save;
	unsigned ids = log_types.ids, id;
	size_t len = 0;
	FILE *f;

	// The ids known before the dump: a type registered meanwhile shows in
	// the next request's check, and is loaded then.
	while (rte_log_get_level(ids) >= 0)
		ids++;
	f = open_memstream(&buf, &len);
	if (f == NULL) {
		LOG(ERR, "open_memstream: %s", strerror(errno));
		return -errno;
	}
	rte_log_dump(f);
	fclose(f);
	log_types.n = 0;
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "id %u: %63[^,]", &id, name) != 2)
			continue;
		if (log_types.n == log_types.cap) {
			unsigned cap = log_types.cap > 0 ? 2 * log_types.cap : 256;
			struct log_type_name *types =
				realloc(log_types.types, cap * sizeof(*types));
			if (types == NULL) {
				LOG(ERR, "no memory for %u log types", cap);
				free(buf);
				log_types.ids = 0; // load again next time
				return -ENOMEM;
			}
			log_types.types = types;
			log_types.cap = cap;
		}
		log_types.types[log_types.n].id = id;
		snprintf(log_types.types[log_types.n].name, GR_LOG_NAME_LEN, "%s", name);
		log_types.n++;
	}
	free(buf);
	log_types.ids = ids;
	return 0;
}

// Call fn for every log type, with its id and name, until fn returns
// non-zero. Returns 0, fn's last non-zero value, or -errno.
static int log_types_each(int (*fn)(unsigned id, const char *name, void *arg), void *arg) {
	int ret = 0;

	if (log_types.ids == 0 || rte_log_get_level(log_types.ids) >= 0) {
		ret = log_types_load();
		if (ret < 0)
			return ret;
	}
	for (unsigned i = 0; i < log_types.n && ret == 0; i++)
		ret = fn(log_types.types[i].id, log_types.types[i].name, arg);
	return ret;
}

struct log_list {
	struct gr_api_ctx *ctx;
	const char *prefix; // NULL: every type
};

// One entry of GR_LOG_LEVEL_LIST: a type whose name starts with the prefix.
static int log_list_one(unsigned id, const char *name, void *arg) {
	const struct log_list *list = arg;
	struct gr_log_entry entry;
	int level;

	if (list->prefix != NULL && strncmp(name, list->prefix, strlen(list->prefix)) != 0)
		return 0;
	level = rte_log_get_level(id);
	if (level < 0)
		return 0;
	memset(&entry, 0, sizeof(entry));
	snprintf(entry.name, sizeof(entry.name), "%s", name);
	entry.level = (uint32_t)level;
	return gr_api_send(list->ctx, sizeof(entry), &entry);
}

static struct gr_api_out log_level_list(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct gr_log_level_list_req *req = request;
	struct log_list list = {.ctx = ctx, .prefix = req->show_all ? NULL : server_log_name};
	int ret;

	(void)len;
	ret = log_types_each(log_list_one, &list);
	return gr_api_out(ret < 0 ? (uint32_t)-ret : 0, 0, NULL);
}

struct log_set {
	const char *pattern;
	uint32_t level;
	unsigned matched;
};

// Set the level of one type if its name matches the glob pattern.
static int log_set_one(unsigned id, const char *name, void *arg) {
	struct log_set *set = arg;

	if (fnmatch(set->pattern, name, 0) != 0)
		return 0;
	if (rte_log_set_level(id, set->level) < 0)
		return -EINVAL;
	set->matched++;
	return 0;
}

// A client can send these at will: what they do is logged through the
// client's faults, outside the handler lock and at a bounded rate. The
// statuses are Grout's (main/log.c), which its clients expect: a pattern
// not NUL-terminated is ENAMETOOLONG, a level above GR_LOG_LEVEL_MAX
// EINVAL (0, which silences a type, is taken), anything else 0. The levels
// of the types registered now that match are set one by one, as
// rte_log_set_level_pattern() sets them, but counted: a pattern that
// matches no log type (an empty one among them) changes nothing, which the
// log says (DPDK keeps no pattern for the types registered later, so it
// never will); shmchanctl says it too, from the list of types.
static struct gr_api_out log_level_set(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct gr_log_level_set_req *req = request;
	char pattern[LOG_ESCAPE_LEN(sizeof(req->pattern))];
	struct log_set set = {.pattern = req->pattern, .level = req->level};
	int ret;

	(void)len;
	if (memchr(req->pattern, '\0', sizeof(req->pattern)) == NULL) {
		api_fault(ctx, API_FAULT_LOG_PATTERN, NULL, 0, 0);
		return gr_api_out(ENAMETOOLONG, 0, NULL);
	}
	if (req->level > GR_LOG_LEVEL_MAX) {
		api_fault(ctx, API_FAULT_LOG_LEVEL, NULL, req->level, 0);
		return gr_api_out(EINVAL, 0, NULL);
	}
	ret = log_types_each(log_set_one, &set);
	if (ret < 0)
		return gr_api_out((uint32_t)-ret, 0, NULL);
	log_escape(pattern, sizeof(pattern), req->pattern);
	if (set.matched == 0) {
		api_fault_text(
			ctx,
			API_FAULT_LOG_LEVEL_SET,
			"log level pattern '%s' matches no log type: nothing changed",
			pattern
		);
		return gr_api_out(0, 0, NULL);
	}
	api_fault_text(
		ctx,
		API_FAULT_LOG_LEVEL_SET,
		"log level of '%s' (%u log types) set to %u",
		pattern,
		set.matched,
		req->level
	);
	return gr_api_out(0, 0, NULL);
}

// No datapath, no packets to log: said rather than pretended.
static struct gr_api_out
log_packets_set(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	api_fault(ctx, API_FAULT_LOG_PACKETS, NULL, 0, 0);
	return gr_api_out(ENOTSUP, 0, NULL);
}

static struct gr_api_handler handlers_log_array[] = {
	GR_API_HANDLER_INIT(GR_LOG_LEVEL_LIST, log_level_list),
	GR_API_HANDLER_INIT(GR_LOG_LEVEL_SET, log_level_set),
	GR_API_HANDLER_INIT(GR_LOG_PACKETS_SET, log_packets_set),
};
API_HANDLER_TABLE(handlers_log, handlers_log_array);
