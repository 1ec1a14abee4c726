// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Framing of the socket transport: the client library over one end of a
// socketpair, the test playing the daemon on the other end. Responses split
// over many reads, merged in one, larger than the read-ahead buffer, out of
// order, streams, events, EOF, malformed input.

#include "fake_daemon.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <setjmp.h>

#include <cmocka.h>

// Pause between the bytes of a response written byte by byte, long enough
// for the client to read each byte on its own most of the time.
#define BYTE_DELAY_US 100
// A client read that waits longer than this fails the test instead of
// hanging it.
#define RECV_TIMEOUT_S 5
// Requests and responses of FLOOD_LEN bytes, far more than the socket
// buffers hold (about 200 KiB each way).
#define FLOOD_COUNT 32
#define FLOOD_LEN (64 * 1024)
// A flood still going after this long is a deadlock: SIGALRM ends the test.
#define FLOOD_ALARM_S 10

static int setup(void **state) {
	fake_daemon_setup(state);
	struct fake_daemon *d = *state;
	struct timeval tv = {.tv_sec = RECV_TIMEOUT_S};
	assert_int_equal(setsockopt(d->client->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	// Most tests answer ids they never send.
	fake_daemon_any_id(d);
	return 0;
}

// A growing buffer of wire bytes written by the fake daemon.
struct wire {
	uint8_t *buf;
	size_t len;
};

static void wire_put(struct wire *w, const void *data, size_t len) {
	w->buf = realloc(w->buf, w->len + len);
	assert_non_null(w->buf);
	memcpy(w->buf + w->len, data, len);
	w->len += len;
}

static void wire_resp(struct wire *w, uint32_t for_id, uint32_t status, const void *p, size_t len) {
	struct gr_api_response hdr = {.for_id = for_id, .status = status, .payload_len = len};
	wire_put(w, &hdr, sizeof(hdr));
	if (len > 0)
		wire_put(w, p, len);
}

static void wire_str(struct wire *w, uint32_t for_id, const char *s) {
	wire_resp(w, for_id, 0, s, strlen(s) + 1);
}

static void write_all(int fd, const void *buf, size_t len) {
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		assert_true(n > 0);
		buf = (const uint8_t *)buf + n;
		len -= (size_t)n;
	}
}

static void wire_flush(struct wire *w, int fd) {
	write_all(fd, w->buf, w->len);
	free(w->buf);
	*w = (struct wire){0};
}

// Writes wire bytes from a thread, whole or one byte at a time, so the test
// can receive while the writes happen.
struct writer {
	pthread_t thread;
	int fd;
	struct wire wire;
	bool byte_by_byte;
};

static void *writer_run(void *arg) {
	struct writer *wr = arg;
	if (!wr->byte_by_byte) {
		write_all(wr->fd, wr->wire.buf, wr->wire.len);
		return NULL;
	}
	for (size_t i = 0; i < wr->wire.len; i++) {
		write_all(wr->fd, wr->wire.buf + i, 1);
		usleep(BYTE_DELAY_US);
	}
	return NULL;
}

static void writer_start(struct writer *wr, int fd, bool byte_by_byte) {
	wr->fd = fd;
	wr->byte_by_byte = byte_by_byte;
	assert_int_equal(pthread_create(&wr->thread, NULL, writer_run, wr), 0);
}

static void writer_join(struct writer *wr) {
	assert_int_equal(pthread_join(wr->thread, NULL), 0);
	free(wr->wire.buf);
}

// Read one request on the daemon's end; returns its malloc'ed payload.
static void *read_req(int fd, struct gr_api_request *hdr) {
	fake_daemon_read_all(fd, hdr, sizeof(*hdr));
	void *payload = malloc(hdr->payload_len + 1);
	assert_non_null(payload);
	fake_daemon_read_all(fd, payload, hdr->payload_len);
	return payload;
}

static void expect_str(struct gr_api_client *c, uint32_t id, const char *want) {
	void *data = NULL;
	long len = gr_api_client_recv_len(c, id, &data);
	assert_int_equal(len, strlen(want) + 1);
	assert_string_equal(data, want);
	free(data);
}

static void expect_errno(long ret, int err) {
	assert_int_equal(ret, -1);
	assert_int_equal(errno, err);
}

// Grout's calls (gr_api_client_send()): the negative errno, and errno too.
static void expect_neg_errno(long ret, int err) {
	assert_int_equal(ret, -err);
	assert_int_equal(errno, err);
}

static void fill_pattern(uint8_t *buf, size_t len, unsigned seed) {
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 31 + seed);
}

static void split_byte_by_byte(void **state) {
	struct fake_daemon *d = *state;
	struct writer wr = {0};
	wire_str(&wr.wire, 1, "first response, split into single bytes");
	wire_str(&wr.wire, 2, "second one, its header split too");
	writer_start(&wr, d->sock, true);

	// 2 first: 1 is received whole, byte by byte, and stashed on the way.
	expect_str(d->client, 2, "second one, its header split too");
	expect_str(d->client, 1, "first response, split into single bytes");
	writer_join(&wr);
}

static void three_merged_in_one_write(void **state) {
	struct fake_daemon *d = *state;
	struct wire w = {0};
	wire_str(&w, 1, "one");
	wire_resp(&w, 2, 0, NULL, 0);
	wire_str(&w, 3, "three");
	wire_flush(&w, d->sock);

	expect_str(d->client, 1, "one");
	void *data = (void *)1;
	assert_int_equal(gr_api_client_recv_len(d->client, 2, &data), 0);
	assert_null(data);
	expect_str(d->client, 3, "three");
	assert_int_equal(client_stash_count(d->client), 0);
}

static void payload_larger_than_readahead(void **state) {
	struct fake_daemon *d = *state;
	const size_t big = GR_API_MAX_MSG_LEN;
	const size_t mid = CLIENT_READAHEAD_LEN + 1000;
	uint8_t *pattern = malloc(big);
	uint8_t *buf = malloc(big);
	assert_non_null(pattern);
	assert_non_null(buf);
	fill_pattern(pattern, big, 7);

	struct writer wr = {0};
	wire_str(&wr.wire, 1, "small before");
	wire_resp(&wr.wire, 2, 0, pattern, big);
	wire_str(&wr.wire, 3, "small after");
	wire_resp(&wr.wire, 4, 0, pattern, mid);
	wire_str(&wr.wire, 5, "last");
	writer_start(&wr, d->sock, false);

	expect_str(d->client, 1, "small before");
	void *data = NULL;
	assert_int_equal(gr_api_client_recv_len(d->client, 2, &data), big);
	assert_memory_equal(data, pattern, big);
	free(data);
	expect_str(d->client, 3, "small after");
	assert_int_equal(gr_api_client_recv_into(d->client, 4, buf, big), mid);
	assert_memory_equal(buf, pattern, mid);
	expect_str(d->client, 5, "last");
	writer_join(&wr);
	free(pattern);
	free(buf);
}

static void out_of_order(void **state) {
	struct fake_daemon *d = *state;
	struct gr_ping2 sent[3];
	for (unsigned i = 0; i < 3; i++) {
		fill_pattern((uint8_t *)sent[i].payload, sizeof(sent[i].payload), i + 1);
		long id = gr_api_client_send(d->client, GR_PING2, sizeof(sent[i]), &sent[i]);
		assert_int_equal(id, i + 1);
	}

	// The daemon reads the three requests, then answers 3, 1, 2.
	struct gr_api_request hdr[3];
	void *payload[3];
	for (unsigned i = 0; i < 3; i++) {
		payload[i] = read_req(d->sock, &hdr[i]);
		assert_int_equal(hdr[i].id, i + 1);
		assert_int_equal(hdr[i].type, GR_PING2);
		assert_int_equal(hdr[i].payload_len, GR_PING2_LEN);
		assert_memory_equal(payload[i], sent[i].payload, GR_PING2_LEN);
	}
	struct wire w = {0};
	const unsigned order[] = {2, 0, 1};
	for (unsigned i = 0; i < 3; i++)
		wire_resp(&w, hdr[order[i]].id, 0, payload[order[i]], GR_PING2_LEN);
	wire_flush(&w, d->sock);

	for (unsigned i = 0; i < 3; i++) {
		struct gr_ping2 got;
		long len = gr_api_client_recv_into(d->client, i + 1, &got, sizeof(got));
		assert_int_equal(len, GR_PING2_LEN);
		assert_memory_equal(got.payload, sent[i].payload, GR_PING2_LEN);
		free(payload[i]);
	}
	assert_int_equal(client_stash_count(d->client), 0);
}

static void stream_interleaved(void **state) {
	struct fake_daemon *d = *state;
	struct wire w = {0};
	wire_str(&w, 1, "stream a");
	wire_str(&w, 1, "stream b");
	wire_str(&w, 2, "other id");
	wire_str(&w, 1, "stream c");
	wire_resp(&w, 1, 0, NULL, 0);
	wire_flush(&w, d->sock);

	// Receiving 2 first stashes a and b; the stream still comes in order.
	expect_str(d->client, 2, "other id");
	assert_int_equal(client_stash_count(d->client), 2);
	const char *want[] = {"stream a", "stream b", "stream c"};
	for (unsigned i = 0; i < 3; i++) {
		void *data = NULL;
		size_t len = 0;
		assert_int_equal(gr_api_client_stream_next(d->client, 1, &data, &len), 1);
		assert_int_equal(len, strlen(want[i]) + 1);
		assert_string_equal(data, want[i]);
		free(data);
	}
	size_t len = 1;
	assert_int_equal(gr_api_client_stream_next(d->client, 1, NULL, &len), 0);
	assert_int_equal(len, 0);
	assert_int_equal(client_stash_count(d->client), 0);
}

static void wire_event(struct wire *w, size_t len) {
	uint8_t payload[sizeof(struct gr_api_event) + 64] = {0};
	assert_true(len <= 64);
	struct gr_api_event ev = {.ev_type = 0x12345678, .payload_len = len};
	memcpy(payload, &ev, sizeof(ev));
	memset(payload + sizeof(ev), 0xee, len);
	wire_resp(w, 0, 0, payload, sizeof(ev) + len);
}

static void event_skipped(void **state) {
	struct fake_daemon *d = *state;
	struct wire w = {0};
	wire_str(&w, 1, "before the event");
	wire_event(&w, 40);
	wire_event(&w, 0);
	wire_str(&w, 2, "after the event");
	wire_flush(&w, d->sock);

	expect_str(d->client, 2, "after the event");
	// Only the response to 1 was kept: the events were dropped.
	assert_int_equal(client_stash_count(d->client), 1);
	expect_str(d->client, 1, "before the event");
}

// A tagged event of len payload bytes whose first 4 bytes are seq.
static void wire_event_seq(struct wire *w, uint32_t seq, size_t len) {
	struct gr_api_event ev = {.ev_type = 0x12345678, .payload_len = len};
	uint8_t *payload = calloc(1, sizeof(ev) + len);
	assert_non_null(payload);
	assert_true(len >= sizeof(seq));
	memcpy(payload, &ev, sizeof(ev));
	memcpy(payload + sizeof(ev), &seq, sizeof(seq));
	wire_resp(w, 0, 0, payload, sizeof(ev) + len);
	free(payload);
}

// Take the next queued event, and check it is the event seq of len bytes.
static void expect_event_seq(struct gr_api_client *c, uint32_t seq, size_t len) {
	struct gr_api_event *ev = NULL;
	uint32_t got;
	assert_int_equal(gr_api_client_event_try_recv(c, &ev), 0);
	assert_int_equal(ev->ev_type, 0x12345678);
	assert_int_equal(ev->payload_len, len);
	memcpy(&got, ev + 1, sizeof(got));
	assert_int_equal(got, seq);
	free(ev);
}

static void expect_events_lost(struct gr_api_client *c, uint64_t count) {
	struct gr_api_event *ev = NULL;
	struct gr_shm_event_lost lost;
	assert_int_equal(gr_api_client_event_try_recv(c, &ev), 0);
	assert_int_equal(ev->ev_type, GR_SHM_EVENT_LOST);
	assert_int_equal(ev->payload_len, sizeof(lost));
	memcpy(&lost, ev + 1, sizeof(lost));
	assert_int_equal(lost.count, count);
	free(ev);
}

// n events of len bytes from seq first, then the string response for id,
// written from a thread (more than the socket buffers hold), received with
// gr_api_client_recv_len(): the events it reads on its way are queued.
static void events_then_response(struct fake_daemon *d, uint32_t first, unsigned n, size_t len) {
	struct writer wr = {0};
	for (unsigned i = 0; i < n; i++)
		wire_event_seq(&wr.wire, first + i, len);
	wire_str(&wr.wire, 1, "after the events");
	writer_start(&wr, d->sock, false);
	expect_str(d->client, 1, "after the events");
	writer_join(&wr);
}

// A program that takes its responses and not its events holds at most
// CLIENT_EVENTS_MAX of them: the next are dropped and counted, and once it
// takes one a GR_SHM_EVENT_LOST with the count follows the events kept.
static void events_bounded_by_count(void **state) {
	struct fake_daemon *d = *state;
	const unsigned extra = 5;
	struct gr_api_event *ev = NULL;

	events_then_response(d, 0, CLIENT_EVENTS_MAX + extra, 8);
	assert_int_equal(d->client->n_events, CLIENT_EVENTS_MAX);
	for (unsigned i = 0; i < CLIENT_EVENTS_MAX; i++)
		expect_event_seq(d->client, i, 8);
	expect_events_lost(d->client, extra);
	assert_int_equal(gr_api_client_event_try_recv(d->client, &ev), -EAGAIN);
	assert_int_equal(d->client->n_events, 0);
	assert_int_equal(d->client->event_bytes, 0);
}

// The same by bytes: events of 64 KiB fill CLIENT_EVENTS_MAX_BYTES long
// before the count. Events that come once there is room again follow the
// count of the lost ones.
static void events_bounded_by_bytes(void **state) {
	struct fake_daemon *d = *state;
	const size_t len = 64 * 1024;
	const unsigned fit = CLIENT_EVENTS_MAX_BYTES / (sizeof(struct gr_api_event) + len);
	const unsigned extra = 7;

	events_then_response(d, 0, fit + extra, len);
	assert_int_equal(d->client->n_events, fit);
	expect_event_seq(d->client, 0, len);
	// Room for one: the count of the lost ones is queued at once.
	events_then_response(d, 1000, 1, len);
	for (unsigned i = 1; i < fit; i++)
		expect_event_seq(d->client, i, len);
	expect_events_lost(d->client, extra);
	expect_event_seq(d->client, 1000, len);
	assert_int_equal(d->client->n_events, 0);
}

static void event_malformed(void **state) {
	struct fake_daemon *d = *state;
	struct wire w = {0};
	struct gr_api_event ev = {.ev_type = 1, .payload_len = 100};
	// Its header claims 100 bytes of payload, the response carries none.
	wire_resp(&w, 0, 0, &ev, sizeof(ev));
	wire_str(&w, 1, "never seen");
	wire_flush(&w, d->sock);

	expect_errno(gr_api_client_recv_len(d->client, 1, NULL), EBADMSG);
	expect_errno(gr_api_client_recv_len(d->client, 1, NULL), ECONNRESET);
}

static void eof_mid_message(void **state) {
	struct fake_daemon *d = *state;
	struct wire w = {0};
	wire_str(&w, 1, "whole");
	wire_str(&w, 3, "stashed");
	wire_str(&w, 2, "cut short");
	w.len -= 3;
	wire_flush(&w, d->sock);
	fake_daemon_close_sock(d);

	expect_str(d->client, 1, "whole");
	expect_errno(gr_api_client_recv_len(d->client, 2, NULL), ECONNRESET);
	// Every later call fails the same way, even for a stashed response.
	expect_errno(gr_api_client_recv_len(d->client, 2, NULL), ECONNRESET);
	expect_errno(gr_api_client_recv_len(d->client, 3, NULL), ECONNRESET);
	char buf[8];
	expect_errno(gr_api_client_recv_into(d->client, 3, buf, sizeof(buf)), ECONNRESET);
	expect_neg_errno(gr_api_client_send(d->client, GR_PING, 0, NULL), ECONNRESET);
}

static void eof_before_response(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_close_sock(d);
	expect_errno(gr_api_client_recv_len(d->client, 1, NULL), ECONNRESET);
	expect_errno(gr_api_client_recv_len(d->client, 1, NULL), ECONNRESET);
}

// No SIGPIPE handler is installed: a SIGPIPE would kill this test.
static void send_after_peer_closed(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_close_sock(d);
	struct gr_ping2 ping = {0};
	long ret = gr_api_client_send(d->client, GR_PING2, sizeof(ping), &ping);
	assert_int_equal(ret, -errno);
	assert_true(errno == EPIPE || errno == ECONNRESET);
	ret = gr_api_client_send(d->client, GR_PING, 0, NULL);
	assert_int_equal(ret, -errno);
	assert_true(errno == EPIPE || errno == ECONNRESET);
}

static void oversized_payload_len(void **state) {
	struct fake_daemon *d = *state;
	struct gr_api_response hdr = {
		.for_id = 1,
		.payload_len = GR_API_MAX_MSG_LEN + sizeof(struct gr_api_event) + 1,
	};
	write_all(d->sock, &hdr, sizeof(hdr));
	expect_errno(gr_api_client_recv_len(d->client, 1, NULL), EBADMSG);
	expect_errno(gr_api_client_recv_len(d->client, 1, NULL), ECONNRESET);
	expect_neg_errno(gr_api_client_send(d->client, GR_PING, 0, NULL), ECONNRESET);
}

static void recv_into_too_small(void **state) {
	struct fake_daemon *d = *state;
	uint8_t pattern[100];
	fill_pattern(pattern, sizeof(pattern), 3);
	struct wire w = {0};
	wire_resp(&w, 1, 0, pattern, sizeof(pattern));
	wire_str(&w, 2, "fits");
	wire_flush(&w, d->sock);

	char buf[50];
	expect_errno(gr_api_client_recv_into(d->client, 1, buf, sizeof(buf)), EMSGSIZE);
	// The dropped payload left the stream in step.
	assert_int_equal(gr_api_client_recv_into(d->client, 2, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "fits");
}

static void error_status(void **state) {
	struct fake_daemon *d = *state;
	struct wire w = {0};
	wire_resp(&w, 1, ENOTSUP, "dropped", 8);
	wire_resp(&w, 2, 0x80000000, NULL, 0);
	wire_str(&w, 3, "ok");
	wire_flush(&w, d->sock);

	void *data = (void *)1;
	expect_errno(gr_api_client_recv_len(d->client, 1, &data), ENOTSUP);
	assert_null(data);
	// A status that is no errno value.
	expect_errno(gr_api_client_recv_len(d->client, 2, NULL), EBADMSG);
	expect_str(d->client, 3, "ok");
}

// Reads one request on the daemon's end from a thread, while the client's
// send blocks on a full socket buffer.
struct reader {
	pthread_t thread;
	int fd;
	struct gr_api_request hdr;
	void *payload;
};

static void *reader_run(void *arg) {
	struct reader *rd = arg;
	rd->payload = read_req(rd->fd, &rd->hdr);
	return NULL;
}

// A request larger than the socket buffer leaves whole, header first.
static void big_request(void **state) {
	struct fake_daemon *d = *state;
	const size_t big = GR_API_MAX_MSG_LEN;
	uint8_t *pattern = malloc(big);
	assert_non_null(pattern);
	fill_pattern(pattern, big, 9);
	int sndbuf = 4096;
	assert_int_equal(
		setsockopt(d->client->sock, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)),
		0
	);

	struct reader rd = {.fd = d->sock};
	assert_int_equal(pthread_create(&rd.thread, NULL, reader_run, &rd), 0);
	assert_int_equal(gr_api_client_send(d->client, GR_PING2, big, pattern), 1);
	assert_int_equal(pthread_join(rd.thread, NULL), 0);
	assert_int_equal(rd.hdr.id, 1);
	assert_int_equal(rd.hdr.type, GR_PING2);
	assert_int_equal(rd.hdr.payload_len, big);
	assert_memory_equal(rd.payload, pattern, big);
	free(rd.payload);
	free(pattern);
}

// Writes its responses first and reads requests only once they are all
// written, like a daemon that stops reading a client whose responses pile up.
struct stubborn {
	pthread_t thread;
	int fd;
	uint8_t *payload; // FLOOD_LEN bytes
};

static void *stubborn_run(void *arg) {
	struct stubborn *st = arg;
	for (uint32_t id = 1; id <= FLOOD_COUNT; id++) {
		struct gr_api_response hdr = {.for_id = id, .payload_len = FLOOD_LEN};
		write_all(st->fd, &hdr, sizeof(hdr));
		write_all(st->fd, st->payload, FLOOD_LEN);
	}
	for (uint32_t id = 1; id <= FLOOD_COUNT; id++) {
		struct gr_api_request hdr;
		free(read_req(st->fd, &hdr));
	}
	return NULL;
}

// More requests than the socket buffers hold, sent before any response is
// read, to a daemon that reads no request until its responses are read: the
// sends must stash responses while they wait, or both sides wait forever.
static void send_drains_responses(void **state) {
	struct fake_daemon *d = *state;
	struct stubborn st = {.fd = d->sock, .payload = malloc(FLOOD_LEN)};
	assert_non_null(st.payload);
	fill_pattern((uint8_t *)st.payload, FLOOD_LEN, 11);
	alarm(FLOOD_ALARM_S);
	assert_int_equal(pthread_create(&st.thread, NULL, stubborn_run, &st), 0);
	for (uint32_t id = 1; id <= FLOOD_COUNT; id++)
		assert_int_equal(
			gr_api_client_send(d->client, GR_PING2, FLOOD_LEN, st.payload),
			id
		);
	assert_int_equal(pthread_join(st.thread, NULL), 0);
	alarm(0);
	// Most responses wait in the stash; the last ones may still be in the
	// socket, as the daemon wrote them before it read the last requests.
	assert_true(client_stash_count(d->client) > 0);
	for (uint32_t id = 1; id <= FLOOD_COUNT; id++) {
		void *data = NULL;
		assert_int_equal(gr_api_client_recv_len(d->client, id, &data), FLOOD_LEN);
		assert_memory_equal(data, st.payload, FLOOD_LEN);
		free(data);
	}
	free(st.payload);
}

static void send_bad_args(void **state) {
	struct fake_daemon *d = *state;
	uint8_t byte = 0;
	expect_neg_errno(
		gr_api_client_send(d->client, GR_PING, GR_API_MAX_MSG_LEN + 1, &byte),
		EINVAL
	);
	expect_neg_errno(gr_api_client_send(d->client, GR_PING, 1, NULL), EINVAL);
	expect_errno(gr_api_client_recv_len(d->client, 0, NULL), EINVAL);
}

// A test on a fake daemon whose client gives up a read after RECV_TIMEOUT_S.
#define FRAMING_TEST(func) cmocka_unit_test_setup_teardown(func, setup, fake_daemon_teardown)

int main(void) {
	const struct CMUnitTest tests[] = {
		FRAMING_TEST(split_byte_by_byte),
		FRAMING_TEST(three_merged_in_one_write),
		FRAMING_TEST(payload_larger_than_readahead),
		FRAMING_TEST(out_of_order),
		FRAMING_TEST(stream_interleaved),
		FRAMING_TEST(event_skipped),
		FRAMING_TEST(event_malformed),
		FRAMING_TEST(events_bounded_by_count),
		FRAMING_TEST(events_bounded_by_bytes),
		FRAMING_TEST(eof_mid_message),
		FRAMING_TEST(eof_before_response),
		FRAMING_TEST(send_after_peer_closed),
		FRAMING_TEST(oversized_payload_len),
		FRAMING_TEST(recv_into_too_small),
		FRAMING_TEST(error_status),
		FRAMING_TEST(big_request),
		FRAMING_TEST(send_drains_responses),
		FRAMING_TEST(send_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
