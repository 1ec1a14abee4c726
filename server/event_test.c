// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The event module alone, without a daemon: no copy for a type nobody
// subscribes to; one wake per backlog that goes from empty to not; one copy
// per subscriber even through two subscriptions; the backlog bounds in
// events and in bytes, the events-lost event queued behind the events kept
// once there is room, and taking no room from the events after it; the
// bound of the events all backlogs hold together, each counted once;
// the largest holders of that memory giving back their newest events so
// that a subscriber that reads gets its own;
// suppress_self against the pid of the request being handled; GR_EVENT_ALL
// of a Grout client without shm-module events; EBUSY, ENOSPC, and nothing
// left behind by unsubscribing; dropped subscriptions that count no more at
// once and leave the table a batch per turn of the main loop.

#include "api.h"
#include "event.h"
#include "config.h"

#include <gr_api.h>
#include <gr_shm.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define TEST_BACKLOG_MSGS 4
#define TEST_BACKLOG_BYTES 4096
#define TEST_SUBS_MAX 1024
// Rounds of two publishes and one take on a backlog of one event.
#define ONE_SLOT_ROUNDS 100
// Payload of the events of the memory bound test, and how many of them the
// bound holds.
#define MEMORY_EVENT_LEN 100
#define MEMORY_EVENTS 3
// Readers-never-pay test: subscribers that never read, and the events
// published (their backlogs hold them all but for the memory bound).
#define NON_READERS 4
#define NON_READER_PUBLISHED 20
// An event type of this test's own.
#define OTHER_EVENT_TYPE GR_MSG_TYPE(0x7e59, 1)
// Loop turns that remove every dropped subscription, at most.
#define REAP_TURNS_MAX 64
#define SUB_PID 100
#define OTHER_PID 200
// A request of this test publishes an event from inside a handler.
#define TEST_PUBLISH_REQ GR_MSG_TYPE(0x7e58, 1)

static unsigned wakes;

static void count_wake(void *arg) {
	(void)arg;
	wakes++;
}

static struct event_sub *new_sub(pid_t pid) {
	struct event_sub *sub = event_sub_new(pid, EVENT_FRAMING_TAGGED, count_wake, NULL, NULL);
	assert_non_null(sub);
	return sub;
}

static void subscribe(struct event_sub *sub, uint32_t ev_type, bool suppress, int expect) {
	struct event_sub_opts opts = {.framing = EVENT_FRAMING_TAGGED, .suppress_self = suppress};
	assert_int_equal(event_subscribe(sub, ev_type, &opts), expect);
}

// The type and payload length of the oldest queued event, then pop it.
static uint32_t take(struct event_sub *sub, uint64_t *payload_len) {
	const struct event_msg *m = event_sub_peek(sub);
	struct gr_api_response resp;
	struct gr_api_event ev;
	uint32_t len;

	assert_non_null(m);
	const uint8_t *b = event_msg_bytes(m, EVENT_FRAMING_TAGGED, &len);
	memcpy(&resp, b, sizeof(resp));
	memcpy(&ev, b + sizeof(resp), sizeof(ev));
	assert_int_equal(resp.for_id, 0);
	assert_int_equal(resp.payload_len, len - sizeof(resp));
	assert_int_equal(ev.payload_len, len - sizeof(resp) - sizeof(ev));
	if (payload_len != NULL)
		*payload_len = ev.payload_len;
	uint32_t type = ev.ev_type;
	if (type == GR_SHM_EVENT_LOST) {
		struct gr_shm_event_lost lost;
		memcpy(&lost, b + sizeof(resp) + sizeof(ev), sizeof(lost));
		if (payload_len != NULL)
			*payload_len = lost.count; // the count, for the caller
	}
	event_sub_pop(sub);
	return type;
}

// The first 4 bytes of the oldest queued event's payload: its sequence
// number, as the tests that number their events put it.
static uint32_t peek_seq(struct event_sub *sub) {
	const struct event_msg *m = event_sub_peek(sub);
	uint32_t len, seq;

	assert_non_null(m);
	const uint8_t *b = event_msg_bytes(m, EVENT_FRAMING_TAGGED, &len);
	assert_true(
		len >= sizeof(struct gr_api_response) + sizeof(struct gr_api_event) + sizeof(seq)
	);
	memcpy(&seq, b + sizeof(struct gr_api_response) + sizeof(struct gr_api_event), sizeof(seq));
	return seq;
}

static void nobody_subscribed_costs_nothing(void **state) {
	struct event_totals t;

	(void)state;
	gr_api_event_publish(GR_SHM_EVENT_TEST, "x", 1);
	event_totals_get(&t);
	assert_int_equal(t.published, 0);
	assert_int_equal(t.queued, 0);
}

static void one_wake_and_one_copy(void **state) {
	struct event_sub *a = new_sub(SUB_PID), *b = new_sub(SUB_PID);

	(void)state;
	wakes = 0;
	subscribe(a, GR_SHM_EVENT_TEST, false, 0);
	subscribe(a, GR_EVENT_ALL, false, 0);
	subscribe(b, GR_EVENT_ALL, false, 0);
	gr_api_event_publish(GR_SHM_EVENT_TEST, "abc", 3);
	gr_api_event_publish(GR_SHM_EVENT_TEST, "de", 2);
	assert_int_equal(wakes, 2); // each backlog once, on its first event
	uint64_t len;
	assert_int_equal(take(a, &len), GR_SHM_EVENT_TEST);
	assert_int_equal(len, 3);
	assert_int_equal(take(a, &len), GR_SHM_EVENT_TEST);
	assert_int_equal(len, 2);
	assert_null(event_sub_peek(a)); // not doubled by the second subscription
	assert_int_equal(take(b, NULL), GR_SHM_EVENT_TEST);
	assert_int_equal(take(b, NULL), GR_SHM_EVENT_TEST);
	assert_false(event_sub_pending(b));
	event_sub_free(a);
	event_sub_free(b);
}

static void full_backlog_loses_then_says_so(void **state) {
	struct event_sub *slow = new_sub(SUB_PID), *fast = new_sub(SUB_PID);
	struct event_totals t0, t1;
	uint64_t n;

	(void)state;
	subscribe(slow, GR_SHM_EVENT_TEST, false, 0);
	subscribe(fast, GR_SHM_EVENT_TEST, false, 0);
	event_totals_get(&t0);
	for (unsigned i = 0; i < TEST_BACKLOG_MSGS + 3; i++) {
		gr_api_event_publish(GR_SHM_EVENT_TEST, &i, sizeof(i));
		assert_int_equal(take(fast, NULL), GR_SHM_EVENT_TEST); // unaffected
	}
	event_totals_get(&t1);
	assert_int_equal(t1.dropped - t0.dropped, 3);
	// Taking one makes room: the lost event goes behind the three kept.
	for (unsigned i = 0; i < TEST_BACKLOG_MSGS; i++)
		assert_int_equal(take(slow, NULL), GR_SHM_EVENT_TEST);
	assert_int_equal(take(slow, &n), GR_SHM_EVENT_LOST);
	assert_int_equal(n, 3);
	assert_null(event_sub_peek(slow));
	event_sub_free(slow);
	event_sub_free(fast);
}

static void byte_bound(void **state) {
	static uint8_t big[TEST_BACKLOG_BYTES];
	struct event_sub *sub = new_sub(SUB_PID);
	uint64_t n;

	(void)state;
	subscribe(sub, GR_SHM_EVENT_TEST, false, 0);
	gr_api_event_publish(GR_SHM_EVENT_TEST, big, TEST_BACKLOG_BYTES / 2);
	gr_api_event_publish(GR_SHM_EVENT_TEST, big, TEST_BACKLOG_BYTES / 2); // over the bytes
	assert_int_equal(take(sub, NULL), GR_SHM_EVENT_TEST);
	assert_int_equal(take(sub, &n), GR_SHM_EVENT_LOST);
	assert_int_equal(n, 1);
	event_sub_free(sub);
}

static struct gr_api_out
publish_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	gr_api_event_publish(GR_SHM_EVENT_TEST, NULL, 0);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler publish_api = {
	.name = "TEST_PUBLISH_REQ",
	.request_type = TEST_PUBLISH_REQ,
	.callback = publish_handler,
};

static int discard_send(struct gr_api_ctx *ctx, uint32_t for_id, const struct gr_api_out *out) {
	(void)ctx;
	(void)for_id;
	(void)out;
	return 0;
}

static void publish_as(pid_t pid) {
	static const struct api_transport transport = {.name = "test", .send = discard_send};
	struct gr_api_ctx ctx = {.transport = &transport, .hello_done = true, .peer_pid = pid};
	struct gr_api_request req = {.id = 1, .type = TEST_PUBLISH_REQ};

	assert_int_equal(api_dispatch(&ctx, &req, NULL), 0);
}

static void suppress_self_by_pid(void **state) {
	struct event_sub *sub = new_sub(SUB_PID);

	(void)state;
	subscribe(sub, GR_SHM_EVENT_TEST, true, 0);
	publish_as(SUB_PID);
	assert_null(event_sub_peek(sub));
	publish_as(OTHER_PID);
	assert_int_equal(take(sub, NULL), GR_SHM_EVENT_TEST);
	// Outside a handler (pid 0) nothing is suppressed.
	gr_api_event_publish(GR_SHM_EVENT_TEST, NULL, 0);
	assert_int_equal(take(sub, NULL), GR_SHM_EVENT_TEST);
	subscribe(sub, GR_SHM_EVENT_TEST, false, 0); // an update
	publish_as(SUB_PID);
	assert_int_equal(take(sub, NULL), GR_SHM_EVENT_TEST);
	event_sub_free(sub);
}

static void grout_all_skips_shm_module(void **state) {
	struct event_sub *sub = new_sub(SUB_PID);
	struct event_sub_opts opts = {.framing = EVENT_FRAMING_GROUT, .grout_types_only = true};
	uint32_t len;

	(void)state;
	assert_int_equal(event_subscribe(sub, GR_EVENT_ALL, &opts), 0);
	gr_api_event_publish(GR_SHM_EVENT_TEST, NULL, 0);
	assert_null(event_sub_peek(sub));
	gr_api_event_publish(GR_MSG_TYPE(0xacdc, 0x1001), NULL, 0); // another module's
	const struct event_msg *m = event_sub_peek(sub);
	assert_non_null(m);
	event_msg_bytes(m, EVENT_FRAMING_GROUT, &len);
	assert_int_equal(len, sizeof(struct gr_api_event)); // no response header
	event_sub_pop(sub);
	event_sub_free(sub);
}

static void bad_subscriptions_and_cleanup(void **state) {
	struct event_sub *sub = new_sub(SUB_PID);
	struct event_sub_opts grout = {.framing = EVENT_FRAMING_GROUT};
	struct event_totals t;

	(void)state;
	subscribe(sub, GR_SHM_EVENT_TEST, false, 0);
	assert_int_equal(event_subscribe(sub, GR_SHM_EVENT_LOST, &grout), -EBUSY);
	for (uint32_t i = 1; i < TEST_SUBS_MAX; i++)
		subscribe(sub, GR_MSG_TYPE(0x7000, i), false, 0);
	subscribe(sub, GR_MSG_TYPE(0x7001, 0), false, -ENOSPC);
	event_totals_get(&t);
	assert_int_equal(t.subscriptions, TEST_SUBS_MAX);
	assert_int_equal(t.subscribers, 1);
	event_unsubscribe_all(sub);
	event_totals_get(&t);
	assert_int_equal(t.subscriptions, 0);
	assert_int_equal(t.subscribers, 0);
	// With no subscription and an empty backlog, the framing may change.
	assert_int_equal(event_subscribe(sub, GR_SHM_EVENT_LOST, &grout), 0);
	event_sub_free(sub);
	event_totals_get(&t);
	assert_int_equal(t.subscriptions, 0);
}

// Events published faster than a backlog of one is read: the events-lost
// event takes no room from the events, so half of what is taken are events,
// and what is kept and what is counted lost add up to what was published.
static void lost_event_leaves_room(void **state) {
	struct event_sub *sub;
	uint64_t kept = 0, lost = 0, n;
	uint32_t published = 0;

	(void)state;
	server_conf.event_backlog_msgs = 1;
	sub = new_sub(SUB_PID);
	server_conf.event_backlog_msgs = TEST_BACKLOG_MSGS;
	subscribe(sub, GR_SHM_EVENT_TEST, false, 0);
	for (unsigned i = 0; i < ONE_SLOT_ROUNDS; i++) {
		gr_api_event_publish(GR_SHM_EVENT_TEST, &published, sizeof(published));
		published++;
		gr_api_event_publish(GR_SHM_EVENT_TEST, &published, sizeof(published));
		published++;
		if (take(sub, &n) == GR_SHM_EVENT_LOST)
			lost += n;
		else
			kept++;
	}
	while (event_sub_peek(sub) != NULL) {
		if (take(sub, &n) == GR_SHM_EVENT_LOST)
			lost += n;
		else
			kept++;
	}
	assert_int_equal(kept + lost, published);
	assert_true(kept >= ONE_SLOT_ROUNDS / 2);
	event_sub_free(sub);
}

// The bound of the events all backlogs hold: an event held by two backlogs
// counts once; past the bound, the larger holder gives back its newest
// event to make room for the smaller one's, though it frees nothing when
// the smaller one holds it too; then the new event is lost for both, and
// each is told exactly how many it lost.
static void memory_bound_for_all_backlogs(void **state) {
	static uint8_t payload[MEMORY_EVENT_LEN];
	struct event_sub *a = new_sub(SUB_PID), *b = new_sub(OTHER_PID);
	size_t one = sizeof(struct event_msg) + sizeof(struct gr_api_response) +
		     sizeof(struct gr_api_event) + MEMORY_EVENT_LEN;
	size_t memory_default = server_conf.event_memory_bytes;
	struct event_totals t;
	uint64_t n, dropped;

	(void)state;
	event_totals_get(&t);
	dropped = t.dropped;
	server_conf.event_memory_bytes = MEMORY_EVENTS * one;
	subscribe(a, GR_SHM_EVENT_TEST, false, 0);
	subscribe(b, GR_SHM_EVENT_TEST, false, 0);
	for (unsigned i = 0; i < MEMORY_EVENTS - 1; i++)
		gr_api_event_publish(GR_SHM_EVENT_TEST, payload, sizeof(payload));
	event_totals_get(&t);
	assert_int_equal(t.held_bytes, (MEMORY_EVENTS - 1) * one);
	// a takes its own: b still holds them.
	assert_int_equal(take(a, NULL), GR_SHM_EVENT_TEST);
	assert_int_equal(take(a, NULL), GR_SHM_EVENT_TEST);
	gr_api_event_publish(GR_SHM_EVENT_TEST, payload, sizeof(payload)); // the last that fits
	// b (3 events) gives back its newest for a (1): a holds it too, so
	// the memory stays full, and the new event is lost for both.
	gr_api_event_publish(GR_SHM_EVENT_TEST, payload, sizeof(payload));
	event_totals_get(&t);
	assert_int_equal(t.held_bytes, MEMORY_EVENTS * one);
	assert_int_equal(t.dropped - dropped, 3);
	for (unsigned i = 0; i < MEMORY_EVENTS - 1; i++)
		assert_int_equal(take(b, NULL), GR_SHM_EVENT_TEST);
	assert_int_equal(take(b, &n), GR_SHM_EVENT_LOST);
	assert_int_equal(n, 2);
	assert_int_equal(take(a, NULL), GR_SHM_EVENT_TEST);
	assert_int_equal(take(a, &n), GR_SHM_EVENT_LOST);
	assert_int_equal(n, 1);
	event_totals_get(&t);
	assert_int_equal(t.held_bytes, 0);
	server_conf.event_memory_bytes = memory_default;
	event_sub_free(a);
	event_sub_free(b);
}

// Subscribers that never read hold the whole event memory: a subscriber
// that reads still gets every event, as they give back their newest events
// (the largest holder first, never the oldest, which its consumer may be
// writing); and each of them is told exactly how many it lost, after the
// events it kept.
static void readers_never_pay_for_non_readers(void **state) {
	static uint8_t payload[MEMORY_EVENT_LEN];
	struct event_sub *idle[NON_READERS], *reader = new_sub(SUB_PID);
	size_t one = sizeof(struct event_msg) + sizeof(struct gr_api_response) +
		     sizeof(struct gr_api_event) + MEMORY_EVENT_LEN;
	size_t memory_default = server_conf.event_memory_bytes;
	unsigned backlog_default = server_conf.event_backlog_msgs;
	uint64_t kept[NON_READERS] = {0}, lost[NON_READERS] = {0}, n, dropped;
	struct event_totals t;

	(void)state;
	event_totals_get(&t);
	dropped = t.dropped;
	server_conf.event_memory_bytes = MEMORY_EVENTS * one;
	server_conf.event_backlog_msgs = NON_READER_PUBLISHED;
	for (unsigned k = 0; k < NON_READERS; k++) {
		idle[k] = new_sub(OTHER_PID + k);
		subscribe(idle[k], GR_SHM_EVENT_TEST, false, 0);
	}
	server_conf.event_backlog_msgs = backlog_default;
	subscribe(reader, GR_SHM_EVENT_TEST, false, 0);
	for (uint32_t i = 0; i < NON_READER_PUBLISHED; i++) {
		memcpy(payload, &i, sizeof(i));
		gr_api_event_publish(GR_SHM_EVENT_TEST, payload, sizeof(payload));
		assert_int_equal(peek_seq(reader), i);
		assert_int_equal(take(reader, NULL), GR_SHM_EVENT_TEST);
		assert_null(event_sub_peek(reader));
		event_totals_get(&t);
		assert_true(t.held_bytes <= MEMORY_EVENTS * one);
	}
	// Each non-reader: the events it kept in order, and the counts of
	// those it lost filling the gaps exactly.
	for (unsigned k = 0; k < NON_READERS; k++) {
		uint64_t next = 0;

		while (event_sub_peek(idle[k]) != NULL) {
			uint32_t seq = peek_seq(idle[k]);

			if (take(idle[k], &n) == GR_SHM_EVENT_LOST) {
				lost[k] += n;
				next += n;
			} else {
				assert_int_equal(seq, next);
				kept[k]++;
				next++;
			}
		}
		assert_int_equal(next, NON_READER_PUBLISHED);
		assert_true(kept[k] >= 1 && lost[k] > 0);
		dropped += lost[k];
	}
	event_totals_get(&t);
	assert_int_equal(t.dropped, dropped);
	assert_int_equal(t.held_bytes, 0);
	server_conf.event_memory_bytes = memory_default;
	for (unsigned k = 0; k < NON_READERS; k++)
		event_sub_free(idle[k]);
	event_sub_free(reader);
}

// The seq-numbered events of type published, the seq from *seq on.
static void publish_seq(uint32_t type, uint32_t *seq) {
	static uint8_t payload[MEMORY_EVENT_LEN];

	memcpy(payload, seq, sizeof(*seq));
	(*seq)++;
	assert_int_equal(gr_api_event_publish(type, payload, sizeof(payload)), 0);
}

// A subscriber whose newest entry is its events-lost event gives back: that
// event goes first, its count kept, then the event before it; the one
// events-lost event it gets later says them all, after the events it kept.
static void given_back_notice_keeps_count(void **state) {
	size_t one = sizeof(struct event_msg) + sizeof(struct gr_api_response) +
		     sizeof(struct gr_api_event) + MEMORY_EVENT_LEN;
	size_t memory_default = server_conf.event_memory_bytes;
	struct event_sub *a = new_sub(SUB_PID), *reader = new_sub(OTHER_PID),
			 *other = new_sub(OTHER_PID + 1);
	uint32_t seq = 0, other_seq = 0;
	uint64_t n;

	(void)state;
	server_conf.event_memory_bytes = MEMORY_EVENTS * one;
	subscribe(other, OTHER_EVENT_TYPE, false, 0);
	publish_seq(OTHER_EVENT_TYPE, &other_seq);
	subscribe(a, GR_SHM_EVENT_TEST, false, 0);
	publish_seq(GR_SHM_EVENT_TEST, &seq);
	publish_seq(GR_SHM_EVENT_TEST, &seq);
	// The memory is full, and a the largest holder: a loses event 2, and
	// is told once other took its event: a holds 0, 1 and a notice.
	publish_seq(GR_SHM_EVENT_TEST, &seq);
	assert_int_equal(take(other, NULL), OTHER_EVENT_TYPE);
	publish_seq(OTHER_EVENT_TYPE, &other_seq);
	// Full again: a gives back its notice, then event 1, for the reader's
	// event 3, and loses that one too.
	subscribe(reader, GR_SHM_EVENT_TEST, false, 0);
	publish_seq(GR_SHM_EVENT_TEST, &seq);
	assert_int_equal(peek_seq(reader), 3);
	assert_int_equal(take(reader, NULL), GR_SHM_EVENT_TEST);
	assert_int_equal(peek_seq(a), 0);
	assert_int_equal(take(a, NULL), GR_SHM_EVENT_TEST);
	assert_int_equal(take(a, &n), GR_SHM_EVENT_LOST);
	assert_int_equal(n, 3);
	assert_null(event_sub_peek(a));
	assert_int_equal(peek_seq(other), 1);
	assert_int_equal(take(other, NULL), OTHER_EVENT_TYPE);
	server_conf.event_memory_bytes = memory_default;
	event_sub_free(a);
	event_sub_free(reader);
	event_sub_free(other);
}

static void loop_turn(struct event_base *base) {
	assert_int_not_equal(event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK), -1);
}

// Dropping a client's subscriptions takes them out of use at once, and out
// of the table a batch per turn of the main loop, never all in one hold of
// the lock; a subscribe removes a few of its own dropped ones first; a
// subscriber freed meanwhile goes with its last one.
static void dropped_subscriptions_leave_in_batches(void **state) {
	struct event_base *base = event_base_new();
	struct event_sub *sub, *other;
	struct event_totals t;
	uint32_t left;
	unsigned turns;

	(void)state;
	assert_non_null(base);
	assert_int_equal(event_module_init(base), 0);
	sub = new_sub(SUB_PID);
	other = new_sub(OTHER_PID);
	for (uint32_t i = 0; i < TEST_SUBS_MAX; i++)
		subscribe(sub, GR_MSG_TYPE(0x7100, i), false, 0);
	subscribe(other, GR_MSG_TYPE(0x7100, 0), false, 0);
	event_unsubscribe_all(sub);
	event_totals_get(&t);
	assert_int_equal(t.subscriptions, 1);
	assert_int_equal(t.subscriptions_removing, TEST_SUBS_MAX);
	// Out of use already: only other gets it.
	gr_api_event_publish(GR_MSG_TYPE(0x7100, 0), NULL, 0);
	assert_null(event_sub_peek(sub));
	assert_int_equal(take(other, NULL), GR_MSG_TYPE(0x7100, 0));
	// A new subscription: two dropped ones removed first.
	subscribe(sub, GR_MSG_TYPE(0x7101, 0), false, 0);
	event_totals_get(&t);
	assert_int_equal(t.subscriptions_removing, TEST_SUBS_MAX - 2);
	event_sub_free(sub); // freed with its last dropped subscription
	left = t.subscriptions_removing + 1;
	for (turns = 0; left > 0 && turns < REAP_TURNS_MAX; turns++) {
		loop_turn(base);
		event_totals_get(&t);
		assert_true(left - t.subscriptions_removing <= TEST_SUBS_MAX / 2);
		left = t.subscriptions_removing;
	}
	assert_int_equal(left, 0);
	assert_true(turns > 2);
	event_totals_get(&t);
	assert_int_equal(t.subscriptions, 1);
	event_sub_free(other);
	event_module_fini();
	event_base_free(base);
}

// The server's defaults, with small backlogs and many subscriptions.
static int setup(void **state) {
	(void)state;
	gr_api_server_conf_init(&server_conf);
	server_conf.event_backlog_msgs = TEST_BACKLOG_MSGS;
	server_conf.event_backlog_bytes = TEST_BACKLOG_BYTES;
	server_conf.event_subs_max = TEST_SUBS_MAX;
	return 0;
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nobody_subscribed_costs_nothing),
		cmocka_unit_test(one_wake_and_one_copy),
		cmocka_unit_test(full_backlog_loses_then_says_so),
		cmocka_unit_test(byte_bound),
		cmocka_unit_test(suppress_self_by_pid),
		cmocka_unit_test(grout_all_skips_shm_module),
		cmocka_unit_test(bad_subscriptions_and_cleanup),
		cmocka_unit_test(lost_event_leaves_room),
		cmocka_unit_test(memory_bound_for_all_backlogs),
		cmocka_unit_test(readers_never_pay_for_non_readers),
		cmocka_unit_test(given_back_notice_keeps_count),
		cmocka_unit_test(dropped_subscriptions_leave_in_batches),
	};

	gr_api_server_handler_register(&publish_api);
	return cmocka_run_group_tests(tests, setup, NULL);
}
