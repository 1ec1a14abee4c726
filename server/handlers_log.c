// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Grout's log requests: list the log types and their levels, set levels by
// pattern. The server has no datapath, so packet logging is not served.

#include "api.h"
#include "log_escape.h"
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Send one entry per line of rte_log_dump() ("id N: NAME, level is ...")
// whose name starts with prefix (NULL: every one). Returns 0 or -errno.
static int log_send_types(struct gr_api_ctx *ctx, const char *prefix) {
	char name[GR_LOG_NAME_LEN];
	struct gr_log_entry entry;
	char *buf = NULL, *line, *save;
	size_t len = 0;
	unsigned id;
	int ret = 0, level;
	FILE *f;

	f = open_memstream(&buf, &len);
	if (f == NULL) {
		LOG(ERR, "open_memstream: %s", strerror(errno));
		return -errno;
	}
	rte_log_dump(f);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "id %u: %63[^,]", &id, name) != 2)
			continue;
		if (prefix != NULL && strncmp(name, prefix, strlen(prefix)) != 0)
			continue;
		level = rte_log_get_level(id);
		if (level < 0)
			continue;
		memset(&entry, 0, sizeof(entry));
		snprintf(entry.name, sizeof(entry.name), "%s", name);
		entry.level = (uint32_t)level;
		ret = gr_api_send(ctx, sizeof(entry), &entry);
		if (ret < 0)
			break;
	}
	free(buf);
	return ret;
}

static struct gr_api_out log_level_list(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct gr_log_level_list_req *req = request;
	int ret;

	(void)len;
	ret = log_send_types(ctx, req->show_all ? NULL : server_log_name);
	return gr_api_out(ret < 0 ? (uint32_t)-ret : 0, 0, NULL);
}

// A client can send these at will: what they do is logged through the
// client's faults, outside the handler lock and at a bounded rate.
static struct gr_api_out log_level_set(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct gr_log_level_set_req *req = request;
	char pattern[LOG_ESCAPE_LEN(sizeof(req->pattern))];

	(void)len;
	if (req->level < GR_LOG_LEVEL_MIN || req->level > GR_LOG_LEVEL_MAX) {
		api_fault(ctx, API_FAULT_LOG_LEVEL, NULL, req->level, 0);
		return gr_api_out(EINVAL, 0, NULL);
	}
	if (memchr(req->pattern, '\0', sizeof(req->pattern)) == NULL || req->pattern[0] == '\0') {
		api_fault(ctx, API_FAULT_LOG_PATTERN, NULL, 0, 0);
		return gr_api_out(EINVAL, 0, NULL);
	}
	// rte_log refuses a level past RTE_LOG_MAX only, checked above.
	if (rte_log_set_level_pattern(req->pattern, req->level) < 0)
		return gr_api_out(EINVAL, 0, NULL);
	api_fault_text(
		ctx,
		API_FAULT_LOG_LEVEL_SET,
		"log level of '%s' set to %u",
		log_escape(pattern, sizeof(pattern), req->pattern),
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
