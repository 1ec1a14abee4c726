// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A client's faults: recorded under the handler lock by the thread that
// serves it (api_fault()), logged after the lock at a bounded rate
// (api_faults_log()), so that nothing a client can repeat costs a log line
// under the lock every poller waits on.

#include "api.h"
#include "config.h"

#include <gr_shm.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void api_fault(
	struct gr_api_ctx *ctx,
	enum api_fault kind,
	const char *name,
	uint32_t arg0,
	uint32_t arg1
) {
	struct api_fault_note *note = &ctx->faults[kind];

	log_limit_count(&note->limit);
	note->name = name;
	note->args[0] = arg0;
	note->args[1] = arg1;
	ctx->faults_pending = true;
}

void api_fault_text(struct gr_api_ctx *ctx, enum api_fault kind, const char *fmt, ...) {
	va_list ap;

	api_fault(ctx, kind, NULL, 0, 0);
	va_start(ap, fmt);
	vsnprintf(ctx->faults[kind].text, sizeof(ctx->faults[kind].text), fmt, ap);
	va_end(ap);
}

// How each kind is logged: its level, what a summary counts, and the detail
// of one occurrence.
static const struct {
	uint32_t level;
	const char *what;
} fault_kinds[API_FAULTS] = {
	[API_FAULT_BEFORE_HELLO] = {RTE_LOG_INFO, "requests before GR_HELLO"},
	// Grout clients probe for modules: not worth more than a debug line.
	[API_FAULT_UNKNOWN_TYPE] = {RTE_LOG_DEBUG, "requests of unknown types"},
	[API_FAULT_SHORT_PAYLOAD] = {RTE_LOG_INFO, "short-payload requests"},
	[API_FAULT_HELLO_VERSION] = {RTE_LOG_NOTICE, "hellos of another API version"},
	[API_FAULT_HELLO_STRING] = {RTE_LOG_NOTICE, "hellos with an unterminated version string"},
	[API_FAULT_ATTACH_LAYOUT] = {RTE_LOG_NOTICE, "attaches of another layout version"},
	[API_FAULT_ATTACH_BACKINGS] = {RTE_LOG_NOTICE, "attaches for backings not offered"},
	[API_FAULT_LOG_LEVEL] = {RTE_LOG_NOTICE, "log level sets of a level out of range"},
	[API_FAULT_LOG_PATTERN] = {RTE_LOG_NOTICE, "log level sets of a bad pattern"},
	[API_FAULT_LOG_LEVEL_SET] = {RTE_LOG_INFO, "log level changes"},
	// Grout clients may ask for it: no more than a line at info.
	[API_FAULT_LOG_PACKETS] = {RTE_LOG_INFO, "GR_LOG_PACKETS_SET requests"},
	[API_FAULT_SUBSCRIBE_FRAMING] = {RTE_LOG_NOTICE, "subscribes in the other framing"},
	[API_FAULT_SUBSCRIBE_LIMIT] = {RTE_LOG_NOTICE, "subscribes past the limit"},
	[API_FAULT_SUBSCRIBE_CHANNEL] = {RTE_LOG_NOTICE, "subscribes on the socket of a channel"},
	[API_FAULT_ATTACH_SUBSCRIBED] = {RTE_LOG_NOTICE, "attaches with events on the socket"},
	[API_FAULT_CHANNEL_ATTACHED] = {RTE_LOG_INFO, "channels attached"},
	[API_FAULT_CHANNEL_GIVEN_BACK] = {RTE_LOG_INFO, "channels given back"},
	[API_FAULT_MEMZONES_IN_USE] = {RTE_LOG_NOTICE, "attaches with every memzone in use"},
	[API_FAULT_ATTACH_FDS] = {RTE_LOG_WARNING, "attaches past the open files limit"},
	[API_FAULT_TRACE_DENIED] = {RTE_LOG_WARNING, "trace requests refused (EPERM)"},
	[API_FAULT_TRACE_SET] = {RTE_LOG_NOTICE, "trace switches"},
};

// Longest detail of one fault (fault_detail()).
#define FAULT_DETAIL_LEN 160

static void fault_detail(char *buf, enum api_fault kind, const struct api_fault_note *note) {
	const uint32_t *a = note->args;

	switch (kind) {
	case API_FAULT_BEFORE_HELLO:
		snprintf(buf, FAULT_DETAIL_LEN, "request type 0x%08x before GR_HELLO", a[0]);
		break;
	case API_FAULT_UNKNOWN_TYPE:
		snprintf(buf, FAULT_DETAIL_LEN, "unknown request type 0x%08x", a[0]);
		break;
	case API_FAULT_SHORT_PAYLOAD:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"%s payload is %u bytes, expected at least %u",
			note->name,
			a[0],
			a[1]
		);
		break;
	case API_FAULT_HELLO_VERSION:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"API version %u; the server speaks %u, and Grout's %u and %u",
			a[0],
			a[1],
			GR_API_VERSION_GROUT_0_17,
			GR_API_VERSION_GROUT_MAIN
		);
		break;
	case API_FAULT_HELLO_STRING:
		snprintf(buf, FAULT_DETAIL_LEN, "version string not NUL-terminated");
		break;
	case API_FAULT_ATTACH_LAYOUT:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"attach refused: layout version %u, ours %u",
			a[0],
			a[1]
		);
		break;
	case API_FAULT_ATTACH_BACKINGS:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"attach refused: asks for backings 0x%x, offered 0x%x%s",
			a[0],
			a[1],
			a[1] & GR_SHM_BACKING_MEMZONE ? "" : " (no memzones offered: memfd only)"
		);
		break;
	case API_FAULT_LOG_LEVEL:
		snprintf(buf, FAULT_DETAIL_LEN, "log level %u is above %d", a[0], GR_LOG_LEVEL_MAX);
		break;
	case API_FAULT_LOG_PATTERN:
		snprintf(buf, FAULT_DETAIL_LEN, "log pattern not NUL-terminated");
		break;
	case API_FAULT_LOG_PACKETS:
		snprintf(buf, FAULT_DETAIL_LEN, "GR_LOG_PACKETS_SET: the server has no datapath");
		break;
	case API_FAULT_SUBSCRIBE_FRAMING:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"subscribe in the other framing while subscribed: unsubscribe first"
		);
		break;
	case API_FAULT_SUBSCRIBE_LIMIT:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"more than %u subscriptions (%s)",
			a[0],
			server_names.event_subs_max
		);
		break;
	case API_FAULT_SUBSCRIBE_CHANNEL:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"subscribe on the socket while a channel is attached: events go over the"
			" channel"
		);
		break;
	case API_FAULT_ATTACH_SUBSCRIBED:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"attach while subscribed on the socket: unsubscribe first, or stay on the"
			" socket"
		);
		break;
	case API_FAULT_MEMZONES_IN_USE:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"all %u memzone channels in use: memfd instead",
			a[0]
		);
		break;
	case API_FAULT_ATTACH_FDS:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"attach refused (ENFILE): %u descriptors held for clients, room for %u with"
			" this one's: stays on the socket",
			a[0],
			a[1]
		);
		break;
	case API_FAULT_TRACE_DENIED:
		snprintf(
			buf,
			FAULT_DETAIL_LEN,
			"request type 0x%08x of the API trace refused (EPERM): uid %u is neither"
			" 0 nor the server's %u",
			a[0],
			a[1],
			(unsigned)geteuid()
		);
		break;
	case API_FAULT_LOG_LEVEL_SET:
	case API_FAULT_TRACE_SET:
	case API_FAULT_CHANNEL_ATTACHED:
	case API_FAULT_CHANNEL_GIVEN_BACK:
		snprintf(buf, FAULT_DETAIL_LEN, "%s", note->text);
		break;
	case API_FAULTS:
		buf[0] = '\0';
		break;
	}
}

void api_faults_log(struct gr_api_ctx *ctx, bool final) {
	char detail[FAULT_DETAIL_LEN];
	bool pending = false;
	uint64_t now, n;

	if (!ctx->faults_pending)
		return;
	now = log_limit_now_ns();
	for (unsigned kind = 0; kind < API_FAULTS; kind++) {
		struct api_fault_note *note = &ctx->faults[kind];

		n = log_limit_due(&note->limit, now, final);
		pending |= note->limit.pending > 0;
		if (n == 0)
			continue;
		fault_detail(detail, kind, note);
		if (n == 1)
			rte_log(fault_kinds[kind].level,
				server_logtype,
				"%s: %s client pid %d: %s\n",
				server_log_name,
				ctx->transport->name,
				(int)ctx->peer_pid,
				detail);
		else
			rte_log(fault_kinds[kind].level,
				server_logtype,
				"%s: %s client pid %d: %" PRIu64 " %s%s%s, the last: %s\n",
				server_log_name,
				ctx->transport->name,
				(int)ctx->peer_pid,
				n,
				note->logged ? "more " : "",
				fault_kinds[kind].what,
				note->logged ? " suppressed" : "",
				detail);
		note->logged = true;
	}
	ctx->faults_pending = pending;
}
