// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Prints the layout of the structs and the values of the constants that the
// Python package (python/shmchan/) declares, one "name value" a line, as the
// C compiler sees them in the headers. python/tests/test_layout.py compares
// them with the package's, so the two cannot drift apart.

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <stddef.h>
#include <stdio.h>

#define SIZE(s) printf("sizeof %s %zu\n", #s, sizeof(struct s))
#define FIELD(s, f) printf("offsetof %s.%s %zu\n", #s, #f, offsetof(struct s, f))
#define CONST(c) printf("const %s %llu\n", #c, (unsigned long long)(c))

int main(void) {
	SIZE(gr_api_client_opts);
	FIELD(gr_api_client_opts, transport);
	FIELD(gr_api_client_opts, spin_us);
	FIELD(gr_api_client_opts, version);
	FIELD(gr_api_client_opts, timeout_ms);
	SIZE(gr_api_event);
	FIELD(gr_api_event, ev_type);
	FIELD(gr_api_event, reserved);
	FIELD(gr_api_event, payload_len);
	SIZE(gr_event_subscribe_req);
	FIELD(gr_event_subscribe_req, suppress_self_events);
	FIELD(gr_event_subscribe_req, ev_type);
	SIZE(gr_api_request);
	FIELD(gr_api_request, id);
	FIELD(gr_api_request, type);
	FIELD(gr_api_request, payload_len);
	SIZE(gr_api_response);
	FIELD(gr_api_response, for_id);
	FIELD(gr_api_response, status);
	FIELD(gr_api_response, payload_len);
	SIZE(gr_shm_event_channel);
	FIELD(gr_shm_event_channel, pid);
	FIELD(gr_shm_event_channel, backing);
	FIELD(gr_shm_event_channel, name);
	SIZE(gr_shm_event_channel_detached);
	FIELD(gr_shm_event_channel_detached, pid);
	FIELD(gr_shm_event_channel_detached, reason);
	FIELD(gr_shm_event_channel_detached, name);
	SIZE(gr_shm_event_lost);
	FIELD(gr_shm_event_lost, count);

	CONST(GR_API_TRANSPORT_AUTO);
	CONST(GR_API_TRANSPORT_SOCKET);
	CONST(GR_API_TRANSPORT_SHM);
	CONST(GR_API_VERSION);
	CONST(GR_API_MAX_MSG_LEN);
	CONST(GR_PING2_LEN);
	CONST(GR_EVENT_ALL);
	CONST(GR_MAIN_MODULE);
	CONST(GR_HELLO);
	CONST(GR_LOG_PACKETS_SET);
	CONST(GR_LOG_LEVEL_LIST);
	CONST(GR_LOG_LEVEL_SET);
	CONST(GR_EVENT_SUBSCRIBE);
	CONST(GR_EVENT_UNSUBSCRIBE);
	CONST(GR_PING);
	CONST(GR_PING2);
	CONST(GR_SHM_MODULE);
	CONST(GR_SHM_ATTACH);
	CONST(GR_SHM_STATS);
	CONST(GR_SHM_CHANNEL_LIST);
	CONST(GR_SHM_DAEMON_INFO);
	CONST(GR_SHM_ECHO);
	CONST(GR_SHM_CLIENT_LIST);
	CONST(GR_SHM_EVENT_SUBSCRIBE);
	CONST(GR_SHM_EVENT_PUBLISH);
	CONST(GR_SHM_EVENT_STATS);
	CONST(GR_SHM_DETACH);
	CONST(GR_SHM_TYPE_LIST);
	CONST(GR_SHM_TYPE_STATS);
	CONST(GR_SHM_TRACE_SET);
	CONST(GR_SHM_TRACE_DUMP);
	CONST(GR_SHM_TRACE_INFO);
	CONST(GR_SHM_TRACE_ON);
	CONST(GR_SHM_TRACE_CAPTURE);
	CONST(GR_SHM_TRACE_CLEAR);
	CONST(GR_SHM_TRANSPORT_SOCKET);
	CONST(GR_SHM_TRANSPORT_SHM);
	CONST(GR_SHM_BACKING_MEMFD);
	CONST(GR_SHM_BACKING_MEMZONE);
	CONST(GR_SHM_NAME_LEN);
	CONST(GR_SHM_DETACH_LEASE);
	CONST(GR_SHM_DETACH_CORRUPT);
	CONST(GR_SHM_DETACH_SLOW);
	CONST(GR_SHM_DETACH_REQUEST);
	CONST(GR_SHM_EVENT_CHANNEL_ATTACHED);
	CONST(GR_SHM_EVENT_CHANNEL_DETACHED);
	CONST(GR_SHM_EVENT_LOST);
	CONST(GR_SHM_EVENT_TEST);
	CONST(GR_LOG_NAME_LEN);
	CONST(GR_LOG_LEVEL_MIN);
	CONST(GR_LOG_LEVEL_MAX);
	return 0;
}
