// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A Grout program compiled against Grout's declarations alone
// (test/grout_api/gr_api.h, v0.17.0 or, with GROUT_MAIN, main), linked
// against libgr_api_client: what relinking a Grout client gives.
//
// Against shmchand, on the transport GR_API_TRANSPORT forces: connect (and
// info on main), ping, ping2 and an echo checked, 10,000 sequential echoes,
// 10,000 pipelined ones received in reverse order of their ids, the stream
// loop over GR_LOG_LEVEL_LIST whole and with a break (the rest drained),
// events, and the errors: ENOTSUP (an unknown type), EMSGSIZE from the
// daemon (a short request) and from the library (a response shorter than
// its type's).
//
// Against a daemon as Grout's (test/fake_ctl_daemon.py --grout), with
// "grout MAX_IFACES": a forced shm transport fails with ENOTSUP, auto
// stays on the socket, info has the daemon's max_ifaces (main), the
// requests Grout does not serve fail with ENOTSUP, a stream's too, and a
// connection that subscribes to two event types, one after the other, gets
// the daemon's events in Grout's framing (the fake sends one of each type
// right after each subscribe is answered), then unsubscribes.
//
// usage: grout_abi SOCK [grout MAX_IFACES]

#include "gr_api.h"

#include "check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// shmchan's requests and events this test uses, by value: a Grout program
// that knows them would declare them so.
#define SHM_ECHO 0x53480005u // any payload, echoed
#define SHM_EVENT_PUBLISH 0x53480008u // publishes SHM_EVENT_TEST with the payload
#define SHM_EVENT_TEST 0x53488004u
// shmchan's extensions (gr_api_client.h), declared as such a program would.
int gr_api_client_poll_prepare(struct gr_api_client *);
int gr_api_client_poll_done(struct gr_api_client *);

// A module nobody serves.
#define UNKNOWN_TYPE GR_MSG_TYPE(0x7e57, 0x0001)

#define CALLS 10000
#define PIPELINE_BATCH 1000
// Long enough for a stream's rest to have arrived, had the break not
// drained it.
#define DRAIN_SETTLE_US 20000

static void ping2_fill(struct gr_ping2 *p, uint32_t seq) {
	for (size_t i = 0; i < sizeof(p->payload); i++)
		p->payload[i] = (char)(seq * 7 + i);
	memcpy(p->payload, &seq, sizeof(seq));
}

static void echo_check(const void *rx, uint32_t seq) {
	struct gr_ping2 want;
	ping2_fill(&want, seq);
	CHECK(rx != NULL && memcmp(rx, &want, sizeof(want)) == 0, "echo %u differs", seq);
}

static void connect_and_info(struct gr_api_client *c) {
	CHECK(c != NULL, "connect: %s", strerror(errno));
#if GROUT_MAIN
	const struct gr_hello_resp *info = gr_api_client_info(c);
	CHECK(info != NULL && info->max_ifaces == 0, "shmchand serves no interface");
#endif
	printf("connect%s: ok\n", GROUT_MAIN ? " and info" : "");
}

static void ping(struct gr_api_client *c) {
	struct gr_ping2 req;
	void *rx = NULL;

	CHECK(gr_api_client_ping(c) == 0, "ping: %s", strerror(errno));
	CHECK(gr_api_client_ping2(c) == 0, "ping2: %s", strerror(errno));
	ping2_fill(&req, 1);
	CHECK(gr_api_client_send_recv(c, GR_PING2, sizeof(req), &req, &rx) == 0,
	      "GR_PING2: %s",
	      strerror(errno));
	echo_check(rx, 1);
	free(rx);
	printf("ping, ping2, echo: ok\n");
}

static void sequential(struct gr_api_client *c) {
	for (uint32_t i = 0; i < CALLS; i++) {
		struct gr_ping2 req;
		void *rx = NULL;
		ping2_fill(&req, i);
		int ret = gr_api_client_send_recv(c, GR_PING2, sizeof(req), &req, &rx);
		CHECK(ret == 0, "call %u: %s", i, strerror(-ret));
		echo_check(rx, i);
		free(rx);
	}
	printf("%d sequential calls: ok\n", CALLS);
}

// Batches sent whole, then received from the last id to the first: every
// answer but the one waited for is kept by the library until asked for.
static void pipelined(struct gr_api_client *c) {
	static long ids[PIPELINE_BATCH];

	for (uint32_t base = 0; base < CALLS; base += PIPELINE_BATCH) {
		for (uint32_t j = 0; j < PIPELINE_BATCH; j++) {
			struct gr_ping2 req;
			ping2_fill(&req, base + j);
			ids[j] = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
			CHECK(ids[j] > 0, "send %u: %s", base + j, strerror((int)-ids[j]));
			CHECK(j == 0 || ids[j] > ids[j - 1], "ids grow");
		}
		for (uint32_t j = PIPELINE_BATCH; j-- > 0;) {
			void *rx = NULL;
			int ret = gr_api_client_recv(c, GR_PING2, (uint32_t)ids[j], &rx);
			CHECK(ret == 0, "recv %u: %s", base + j, strerror(-ret));
			echo_check(rx, base + j);
			free(rx);
		}
	}
	printf("%d pipelined calls, received out of order: ok\n", CALLS);
}

// Every log type, each checked; returns how many.
static unsigned log_levels(struct gr_api_client *c) {
	struct gr_log_level_list_req req = {.show_all = true};
	const struct gr_log_entry *e;
	unsigned n = 0;
	int ret;

	gr_api_client_stream_foreach (e, ret, c, GR_LOG_LEVEL_LIST, sizeof(req), &req) {
		CHECK(memchr(e->name, '\0', sizeof(e->name)) != NULL, "name not terminated");
		CHECK(e->level >= GR_LOG_LEVEL_MIN && e->level <= GR_LOG_LEVEL_MAX,
		      "%s: level %u",
		      e->name,
		      e->level);
		n++;
	}
	CHECK(ret == 0, "GR_LOG_LEVEL_LIST: %s", strerror(-ret));
	return n;
}

static void stream(struct gr_api_client *c) {
	struct gr_log_level_list_req req = {.show_all = true};
	const struct gr_log_entry *e;
	unsigned n = log_levels(c), seen = 0;
	int ret;

	CHECK(n > 1, "%u log types: a break needs more than one", n);
	gr_api_client_stream_foreach (e, ret, c, GR_LOG_LEVEL_LIST, sizeof(req), &req) {
		seen++;
		break;
	}
	CHECK(ret == 0 && seen == 1, "break: ret %d, %u seen", ret, seen);
	// Drained: nothing of that stream is left to arrive or to take.
	usleep(DRAIN_SETTLE_US);
	CHECK(gr_api_client_poll_prepare(c) == 0, "the broken stream left responses");
	CHECK(gr_api_client_poll_done(c) == 0, "poll_done: %s", strerror(errno));
	CHECK(log_levels(c) == n, "the stream changed after a break");
	printf("stream of %u log types, and a break: ok\n", n);
}

static void events(struct gr_api_client *c) {
	struct gr_event_subscribe_req sub = {.ev_type = SHM_EVENT_TEST};
	const char payload[] = "an event for a Grout client";
	struct gr_api_event *ev = NULL;

	CHECK(gr_api_client_send_recv(c, GR_EVENT_SUBSCRIBE, sizeof(sub), &sub, NULL) == 0,
	      "subscribe: %s",
	      strerror(errno));
	CHECK(gr_api_client_send_recv(c, SHM_EVENT_PUBLISH, sizeof(payload), payload, NULL) == 0,
	      "publish: %s",
	      strerror(errno));
	CHECK(gr_api_client_event_recv(c, &ev) == 0, "event_recv: %s", strerror(errno));
	CHECK(ev->ev_type == SHM_EVENT_TEST && ev->payload_len == sizeof(payload) &&
		      memcmp(ev + 1, payload, sizeof(payload)) == 0,
	      "event 0x%08x of %zu bytes",
	      ev->ev_type,
	      ev->payload_len);
	free(ev);
	CHECK(strcmp(gr_api_message_name(SHM_EVENT_TEST), "GR_SHM_EVENT_TEST") == 0,
	      "name %s",
	      gr_api_message_name(SHM_EVENT_TEST));
	CHECK(gr_api_client_send_recv(c, GR_EVENT_UNSUBSCRIBE, 0, NULL, NULL) == 0,
	      "unsubscribe: %s",
	      strerror(errno));
	printf("events: ok\n");
}

static void errors(struct gr_api_client *c) {
	char buf[sizeof(struct gr_ping2)] = {0};
	void *rx = NULL;
	int ret;

	ret = gr_api_client_send_recv(c, UNKNOWN_TYPE, 0, NULL, &rx);
	CHECK(ret == -ENOTSUP && errno == ENOTSUP && rx == NULL, "unknown type: %d", ret);
	CHECK(strcmp(gr_api_message_name(UNKNOWN_TYPE), "0x7e570001?") == 0,
	      "name %s",
	      gr_api_message_name(UNKNOWN_TYPE));
	// Shorter than the request: the daemon's EMSGSIZE.
	ret = gr_api_client_send_recv(c, GR_PING2, GR_PING2_REQ_SIZE / 2, buf, &rx);
	CHECK(ret == -EMSGSIZE && rx == NULL, "short request: %d", ret);
	// A 4-byte answer taken as GR_PING2's: the library's EMSGSIZE.
	long id = gr_api_client_send(c, SHM_ECHO, 4, buf);
	CHECK(id > 0, "send echo: %s", strerror((int)-id));
	ret = gr_api_client_recv(c, GR_PING2, (uint32_t)id, &rx);
	CHECK(ret == -EMSGSIZE && errno == EMSGSIZE && rx == NULL, "short response: %d", ret);
	CHECK(gr_api_client_ping(c) == 0, "the handle is usable after errors");
	printf("errors ENOTSUP, EMSGSIZE: ok\n");
}

// Two event types of a Grout module.
#define GROUT_EVENT_A GR_MSG_TYPE(0xacdc, 0x3003)
#define GROUT_EVENT_B GR_MSG_TYPE(0xacdc, 0x3004)

// Subscribe c to ev_type on a daemon as Grout's.
static void grout_subscribe(struct gr_api_client *c, uint32_t ev_type) {
	struct gr_event_subscribe_req sub = {.ev_type = ev_type};
	int ret = gr_api_client_send_recv(c, GR_EVENT_SUBSCRIBE, sizeof(sub), &sub, NULL);
	CHECK(ret == 0, "subscribe 0x%08x: %s", ev_type, strerror(-ret));
}

// The next event, which must be the fake daemon's of ev_type.
static void grout_event_expect(struct gr_api_client *c, uint32_t ev_type) {
	struct gr_api_event *ev = NULL;
	char want[32];
	int ret = gr_api_client_event_recv(c, &ev);

	CHECK(ret == 0, "event_recv: %s", strerror(-ret));
	snprintf(want, sizeof(want), "grout event %#010x", ev_type);
	CHECK(ev->ev_type == ev_type && ev->payload_len == strlen(want) &&
		      memcmp(ev + 1, want, strlen(want)) == 0,
	      "event 0x%08x of %zu bytes",
	      ev->ev_type,
	      ev->payload_len);
	free(ev);
}

// A daemon as Grout's: no channel, its own hello, ENOTSUP for the rest.
static void grout_daemon(const char *sock, unsigned max_ifaces) {
	struct gr_log_level_list_req req = {.show_all = false};
	const struct gr_log_entry *e;
	unsigned n = 0;
	int ret;

	CHECK(setenv("GR_API_TRANSPORT", "shm", 1) == 0, "setenv");
	CHECK(gr_api_client_connect(sock) == NULL && errno == ENOTSUP, "shm forced: no channel");
	CHECK(unsetenv("GR_API_TRANSPORT") == 0, "unsetenv");
	struct gr_api_client *c = gr_api_client_connect(sock);
	CHECK(c != NULL, "connect: %s", strerror(errno));
#if GROUT_MAIN
	CHECK(gr_api_client_info(c)->max_ifaces == max_ifaces,
	      "max_ifaces %u",
	      gr_api_client_info(c)->max_ifaces);
#else
	(void)max_ifaces;
#endif
	CHECK(gr_api_client_ping(c) == -ENOTSUP, "Grout serves no GR_PING");
	gr_api_client_stream_foreach (e, ret, c, GR_LOG_LEVEL_LIST, sizeof(req), &req)
		n++;
	CHECK(ret == -ENOTSUP && n == 0, "stream: ret %d, %u responses", ret, n);

	// Events on a connection of their own, as Grout wants.
	struct gr_api_client *events = gr_api_client_connect(sock);
	CHECK(events != NULL, "connect: %s", strerror(errno));
	grout_subscribe(events, GROUT_EVENT_A);
	grout_subscribe(events, GROUT_EVENT_B);
	grout_event_expect(events, GROUT_EVENT_A);
	grout_event_expect(events, GROUT_EVENT_B);
	CHECK(gr_api_client_send_recv(events, GR_EVENT_UNSUBSCRIBE, 0, NULL, NULL) == 0,
	      "unsubscribe: %s",
	      strerror(errno));
	// Responses again, after the unsubscribe.
	CHECK(gr_api_client_ping(events) == -ENOTSUP, "a request after unsubscribe");
	CHECK(gr_api_client_disconnect(events) == 0, "disconnect");
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect");
	printf("a Grout daemon: socket, hello response, ENOTSUP, Grout-framed events: ok\n");
}

int main(int argc, char **argv) {
	CHECK(argc == 2 || (argc == 4 && strcmp(argv[2], "grout") == 0),
	      "usage: %s SOCK [grout MAX_IFACES]",
	      argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	if (argc == 4) {
		grout_daemon(argv[1], (unsigned)strtoul(argv[3], NULL, 10));
		return 0;
	}
	struct gr_api_client *c = gr_api_client_connect(argv[1]);
	connect_and_info(c);
	ping(c);
	sequential(c);
	pipelined(c);
	stream(c);
	events(c);
	errors(c);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return 0;
}
