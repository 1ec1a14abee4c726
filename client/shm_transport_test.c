// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The shared-memory transport: requests and responses through a real
// channel served by a fake poller thread (shmchan's server functions), with
// and without a spin budget. Payload sizes, many round trips through the
// doorbells, out-of-order answers, streams with events, a full request ring
// while responses pile up, and the lease (EOF on the socket) noticed while
// sleeping and while spinning. The fake poller sleeps with no timeout, for
// requests and for room: a doorbell the client forgets to ring hangs a test
// (ended by its alarm).

#include "fake_daemon.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// Requests the fake poller understands, in a module of the test's own.
#define TEST_MODULE 0x7e57
#define TEST_ECHO GR_MSG_TYPE(TEST_MODULE, 1) // echo the payload
#define TEST_HOLD GR_MSG_TYPE(TEST_MODULE, 2) // answered only by TEST_FLUSH
#define TEST_FLUSH GR_MSG_TYPE(TEST_MODULE, 3) // answer held ones newest first, then this
#define TEST_STREAM GR_MSG_TYPE(TEST_MODULE, 4) // an event, STREAM_LEN data responses, end
#define TEST_SILENT GR_MSG_TYPE(TEST_MODULE, 5) // never answered
#define TEST_LATE GR_MSG_TYPE(TEST_MODULE, 6) // echo the payload LATE_US later

#define STREAM_LEN 3
#define HOLD_MAX 16
// Spin budget of the spinning variants: long enough to catch the fake
// poller's answer, short enough to sleep between tests.
#define SPIN_US 200
// Spin budget that outlasts a lease test: only the lease check can end it.
#define LONG_SPIN_US 5000000
// The lease tests close the socket after this delay, so that the client is
// already waiting (asleep or spinning) when it happens.
#define CLOSE_DELAY_MS 50
// ... and expect the client to notice well before this.
#define LEASE_NOTICE_MAX_MS 2000
// Request ring full: this many requests of this size, about eight times
// what the request ring holds, sent before any response is read.
#define FLOOD_COUNT 64
#define FLOOD_LEN (32 * 1024)
// Round trips of the ping-pong tests.
#define PING_PONGS 2000
// The fake poller answers TEST_LATE this long after it took it: a client
// without a spin budget is asleep by then, and is rung. Calls of the tests
// that count the rings left in the doorbell.
#define LATE_US 3000
#define LATE_CALLS 40
// A test still running after this long is stuck (a lost wake-up, a
// deadlock): SIGALRM ends the program rather than the suite's timeout.
#define TEST_ALARM_S 10

// A failed check in the poller thread: cmocka cannot fail a test from
// another thread, so abort the whole test program.
#define POLLER_CHECK(cond)                                                                         \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "poller: %s:%d: %s\n", __FILE__, __LINE__, #cond);         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

struct held {
	uint32_t id;
	uint32_t len;
	uint8_t payload[GR_PING2_LEN];
};

struct poller {
	struct fake_daemon d;
	pthread_t thread;
	int stop_fd; // eventfd: the test asks the poller to stop
	atomic_bool stop;
	uint8_t *req; // SHMCHAN_MSG_MAX bytes
	struct held held[HOLD_MAX];
	unsigned n_held;
	atomic_uint room_waits; // sleeps waiting for room in the response ring
	atomic_uint served; // requests handled
};

static void poller_send(struct poller *p, uint32_t for_id, const void *payload, size_t len) {
	struct gr_api_response hdr = {.for_id = for_id, .payload_len = len};
	int ret;
	// A full response ring waits for the client to drain it, as the real
	// daemon does (it stops reading requests meanwhile): asleep, with no
	// timeout, until the client rings for room. A client that forgets to
	// ring leaves this test stuck until its alarm.
	while ((ret = shmchan_server_enqueue(p->d.server, &hdr, sizeof(hdr), payload, len)) ==
		       -ENOBUFS &&
	       !atomic_load(&p->stop)) {
		shmchan_server_flush(p->d.server);
		shmchan_server_doorbell_arm_room(p->d.server);
		ret = shmchan_server_enqueue(p->d.server, &hdr, sizeof(hdr), payload, len);
		if (ret != -ENOBUFS) {
			shmchan_server_doorbell_disarm(p->d.server);
			break;
		}
		atomic_fetch_add(&p->room_waits, 1);
		fake_daemon_doorbell_sleep(&p->d, p->stop_fd);
	}
	POLLER_CHECK(ret == 0 || atomic_load(&p->stop));
}

static void poller_event(struct poller *p) {
	uint8_t payload[sizeof(struct gr_api_event) + 8] = {0};
	struct gr_api_event ev = {.ev_type = 0xe7e7, .payload_len = 8};
	memcpy(payload, &ev, sizeof(ev));
	poller_send(p, 0, payload, sizeof(payload));
}

static void poller_handle(struct poller *p, int n) {
	struct gr_api_request hdr;
	POLLER_CHECK(n >= (int)sizeof(hdr));
	memcpy(&hdr, p->req, sizeof(hdr));
	POLLER_CHECK(hdr.payload_len == n - sizeof(hdr));
	const uint8_t *payload = p->req + sizeof(hdr);

	switch (hdr.type) {
	case TEST_ECHO:
		poller_send(p, hdr.id, payload, hdr.payload_len);
		break;
	case TEST_HOLD:
		POLLER_CHECK(p->n_held < HOLD_MAX && hdr.payload_len <= GR_PING2_LEN);
		p->held[p->n_held].id = hdr.id;
		p->held[p->n_held].len = hdr.payload_len;
		memcpy(p->held[p->n_held].payload, payload, hdr.payload_len);
		p->n_held++;
		break;
	case TEST_FLUSH:
		while (p->n_held > 0) {
			const struct held *h = &p->held[--p->n_held];
			poller_send(p, h->id, h->payload, h->len);
		}
		poller_send(p, hdr.id, NULL, 0);
		break;
	case TEST_STREAM:
		poller_event(p);
		for (uint32_t i = 1; i <= STREAM_LEN; i++)
			poller_send(p, hdr.id, &i, sizeof(i));
		poller_send(p, hdr.id, NULL, 0);
		break;
	case TEST_LATE:
		usleep(LATE_US);
		poller_send(p, hdr.id, payload, hdr.payload_len);
		break;
	case TEST_SILENT:
		break;
	default:
		POLLER_CHECK(!"unknown request type");
	}
}

// fake_daemon_serve()'s handler: one request, counted once answered.
static void poller_serve_one(void *arg, int n) {
	struct poller *p = arg;
	poller_handle(p, n);
	atomic_fetch_add(&p->served, 1);
}

// The daemon's poller loop, reduced to one channel.
static void *poller_run(void *arg) {
	struct poller *p = arg;
	fake_daemon_serve(&p->d, p->req, &p->stop, p->stop_fd, NULL, poller_serve_one, p);
	return NULL;
}

static int setup_spin(void **state, int spin_us) {
	struct poller *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->req = malloc(SHMCHAN_MSG_MAX);
	assert_non_null(p->req);
	p->stop_fd = eventfd(0, EFD_CLOEXEC);
	assert_true(p->stop_fd >= 0);
	fake_daemon_init(&p->d, spin_us);
	fake_daemon_attach(&p->d);
	assert_int_equal(pthread_create(&p->thread, NULL, poller_run, p), 0);
	*state = p;
	alarm(TEST_ALARM_S);
	return 0;
}

static int setup_sleep(void **state) {
	return setup_spin(state, 0);
}

static int setup_spinning(void **state) {
	return setup_spin(state, SPIN_US);
}

static int setup_long_spin(void **state) {
	return setup_spin(state, LONG_SPIN_US);
}

static int teardown(void **state) {
	struct poller *p = *state;
	uint64_t one = 1;
	alarm(0);
	atomic_store(&p->stop, true);
	assert_int_equal(write(p->stop_fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(pthread_join(p->thread, NULL), 0);
	fake_daemon_fini(&p->d);
	close(p->stop_fd);
	free(p->req);
	free(p);
	return 0;
}

static void fill_pattern(uint8_t *buf, size_t len, unsigned seed) {
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 13 + seed);
}

static void echo_sizes(void **state) {
	struct poller *p = *state;
	const size_t sizes[] = {0, 1, 12, GR_PING2_LEN, 1000, 16384, 65536, GR_API_MAX_MSG_LEN};
	uint8_t *pattern = malloc(GR_API_MAX_MSG_LEN);
	assert_non_null(pattern);
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill_pattern(pattern, sizes[i], i);
		void *data = NULL;
		long len = gr_api_client_send_recv_len(
			p->d.client,
			TEST_ECHO,
			sizes[i],
			pattern,
			&data
		);
		assert_int_equal(len, sizes[i]);
		if (sizes[i] > 0)
			assert_memory_equal(data, pattern, sizes[i]);
		else
			assert_null(data);
		free(data);
	}
	free(pattern);
}

static void ping_pong(void **state) {
	struct poller *p = *state;
	struct gr_ping2 ping, pong;
	for (unsigned i = 0; i < PING_PONGS; i++) {
		fill_pattern((uint8_t *)ping.payload, sizeof(ping.payload), i);
		long id = gr_api_client_send(p->d.client, TEST_ECHO, sizeof(ping), &ping);
		assert_true(id > 0);
		long len = gr_api_client_recv_into(p->d.client, (uint32_t)id, &pong, sizeof(pong));
		assert_int_equal(len, sizeof(pong));
		assert_memory_equal(pong.payload, ping.payload, sizeof(ping.payload));
	}
}

static void out_of_order(void **state) {
	struct poller *p = *state;
	struct gr_ping2 sent[3], got;
	long ids[3];
	for (unsigned i = 0; i < 3; i++) {
		fill_pattern((uint8_t *)sent[i].payload, sizeof(sent[i].payload), 100 + i);
		ids[i] = gr_api_client_send(p->d.client, TEST_HOLD, sizeof(sent[i]), &sent[i]);
		assert_true(ids[i] > 0);
	}
	long flush = gr_api_client_send(p->d.client, TEST_FLUSH, 0, NULL);
	assert_true(flush > 0);
	// Answered 3, 2, 1, flush: received 1, 2, 3 from the stash.
	for (unsigned i = 0; i < 3; i++) {
		long len =
			gr_api_client_recv_into(p->d.client, (uint32_t)ids[i], &got, sizeof(got));
		assert_int_equal(len, sizeof(got));
		assert_memory_equal(got.payload, sent[i].payload, sizeof(got.payload));
	}
	assert_int_equal(gr_api_client_recv_len(p->d.client, (uint32_t)flush, NULL), 0);
	assert_int_equal(client_stash_count(p->d.client), 0);
}

static void stream_with_event(void **state) {
	struct poller *p = *state;
	long id = gr_api_client_send(p->d.client, TEST_STREAM, 0, NULL);
	assert_true(id > 0);
	for (uint32_t i = 1; i <= STREAM_LEN; i++) {
		void *data = NULL;
		size_t len = 0;
		assert_int_equal(
			gr_api_client_stream_next(p->d.client, (uint32_t)id, &data, &len),
			1
		);
		assert_int_equal(len, sizeof(i));
		assert_memory_equal(data, &i, sizeof(i));
		free(data);
	}
	assert_int_equal(gr_api_client_stream_next(p->d.client, (uint32_t)id, NULL, NULL), 0);
	assert_int_equal(client_stash_count(p->d.client), 0);
}

// More requests than the request ring holds, none received before all are
// sent: the poller stops reading requests while the response ring is full,
// so the client's sends must drain responses to the stash as they wait.
static void full_request_ring(void **state) {
	struct poller *p = *state;
	uint8_t *pattern = malloc(FLOOD_LEN);
	assert_non_null(pattern);
	long ids[FLOOD_COUNT];
	for (unsigned i = 0; i < FLOOD_COUNT; i++) {
		fill_pattern(pattern, FLOOD_LEN, i);
		ids[i] = gr_api_client_send(p->d.client, TEST_ECHO, FLOOD_LEN, pattern);
		assert_true(ids[i] > 0);
	}
	assert_true(client_stash_count(p->d.client) > 0);
	for (unsigned i = 0; i < FLOOD_COUNT; i++) {
		void *data = NULL;
		fill_pattern(pattern, FLOOD_LEN, i);
		assert_int_equal(
			gr_api_client_recv_len(p->d.client, (uint32_t)ids[i], &data),
			FLOOD_LEN
		);
		assert_memory_equal(data, pattern, FLOOD_LEN);
		free(data);
	}
	assert_int_equal(client_stash_count(p->d.client), 0);
	// The poller did wait for room, and was rung out of it.
	assert_true(atomic_load(&p->room_waits) > 0);
	free(pattern);
}

// A batch of send_more wakes a sleeping daemon only when flushed: the
// fake poller sleeps with no timeout, so an unflushed request stays
// unanswered, and a flushed one (gr_api_client_flush(), or a receive that
// has to wait) is answered.
static void send_more_batch(void **state) {
	struct poller *p = *state;
	struct gr_ping2 ping = {0}, pong;
	long ids[4];

	// One round trip, then the poller goes to sleep.
	ids[0] = gr_api_client_send(p->d.client, TEST_ECHO, sizeof(ping), &ping);
	assert_int_equal(
		gr_api_client_recv_into(p->d.client, (uint32_t)ids[0], &pong, sizeof(pong)),
		sizeof(pong)
	);
	usleep(20 * 1000);
	unsigned served = atomic_load(&p->served);

	for (unsigned i = 0; i < 4; i++) {
		fill_pattern((uint8_t *)ping.payload, sizeof(ping.payload), i);
		ids[i] = gr_api_client_send_more(p->d.client, TEST_ECHO, sizeof(ping), &ping);
		assert_true(ids[i] > 0);
	}
	usleep(50 * 1000);
	assert_int_equal(atomic_load(&p->served), served);
	assert_int_equal(gr_api_client_flush(p->d.client), 0);
	for (unsigned i = 0; i < 4; i++) {
		fill_pattern((uint8_t *)ping.payload, sizeof(ping.payload), i);
		assert_int_equal(
			gr_api_client_recv_into(p->d.client, (uint32_t)ids[i], &pong, sizeof(pong)),
			sizeof(pong)
		);
		assert_memory_equal(pong.payload, ping.payload, sizeof(ping.payload));
	}

	// No explicit flush: the receive that has to wait sends the batch.
	usleep(20 * 1000);
	ids[0] = gr_api_client_send_more(p->d.client, TEST_ECHO, sizeof(ping), &ping);
	assert_int_equal(
		gr_api_client_recv_into(p->d.client, (uint32_t)ids[0], &pong, sizeof(pong)),
		sizeof(pong)
	);
	assert_int_equal(gr_api_client_flush(NULL), -1);
	assert_int_equal(errno, EINVAL);
}

static void recv_into_too_small(void **state) {
	struct poller *p = *state;
	uint8_t big[200], small[100];
	fill_pattern(big, sizeof(big), 5);
	long id1 = gr_api_client_send(p->d.client, TEST_ECHO, sizeof(big), big);
	long id2 = gr_api_client_send(p->d.client, TEST_ECHO, sizeof(small), big);
	assert_int_equal(
		gr_api_client_recv_into(p->d.client, (uint32_t)id1, small, sizeof(small)),
		-1
	);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(
		gr_api_client_recv_into(p->d.client, (uint32_t)id2, small, sizeof(small)),
		sizeof(small)
	);
	assert_memory_equal(small, big, sizeof(small));
}

static uint64_t now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void *close_later(void *arg) {
	struct fake_daemon *d = arg;
	usleep(CLOSE_DELAY_MS * 1000);
	fake_daemon_close_sock(d);
	return NULL;
}

// The daemon closes the socket while the client waits for an answer that
// will never come: the wait ends with ECONNRESET, and so does every later
// call.
// Rings queued in the client's response doorbell: bytes not drained.
static int doorbell_queued(const struct poller *p) {
	int queued = -1;
	assert_int_equal(ioctl(shmchan_client_resp_fd(p->d.client->chan), FIONREAD, &queued), 0);
	return queued;
}

// LATE_CALLS calls the client sleeps through: each answered, the daemon's
// rings counted. Returns the most rings left queued after a call, and in
// *left how many calls left more than one.
static int late_calls(struct poller *p, unsigned *left) {
	uint64_t rung = shmchan_server_stats(p->d.server)->doorbells_rung;
	struct gr_ping2 ping, pong;
	int most = 0;
	*left = 0;
	for (unsigned i = 0; i < LATE_CALLS; i++) {
		fill_pattern((uint8_t *)ping.payload, sizeof(ping.payload), i);
		long id = gr_api_client_send(p->d.client, TEST_LATE, sizeof(ping), &ping);
		assert_true(id > 0);
		assert_int_equal(
			gr_api_client_recv_into(p->d.client, (uint32_t)id, &pong, sizeof(pong)),
			sizeof(pong)
		);
		assert_memory_equal(pong.payload, ping.payload, sizeof(ping.payload));
		int queued = doorbell_queued(p);
		most = queued > most ? queued : most;
		*left += queued > 1;
	}
	rung = shmchan_server_stats(p->d.server)->doorbells_rung - rung;
	// Asleep for most answers (a client descheduled for LATE_US before it
	// armed is not rung): else this test says nothing.
	assert_true(rung >= LATE_CALLS / 2);
	return most;
}

// A client that sleeps for its answers leaves the rings that woke it in its
// doorbell, which its edge-triggered wait does not need drained, and drains
// them before a later sleep: after CLIENT_BELL_DRAIN_WAKES wake-ups at most,
// and not much sooner, so most calls leave more than one (a call and its
// answer count two rings at most, far from CLIENT_BELL_DRAIN_RINGS). Each
// call still gets its answer: a ring queued behind others still wakes the
// next sleep. (A client that drained after each wake-up leaves none; one
// that counted every request it ever sent as a possible ring drains before
// each sleep after a few calls, and leaves one.)
static void rings_left_queued(void **state) {
	struct poller *p = *state;
	unsigned left;
	int most = late_calls(p, &left);
	assert_true(most <= CLIENT_BELL_DRAIN_WAKES);
	if (left < LATE_CALLS / 2)
		fail_msg("%u calls of %u left more than one ring queued", left, LATE_CALLS);
}

// When the blocking waits cannot make their epoll instance (no descriptor
// left for it), they poll() the doorbell and the socket as before, and
// drain the doorbell after each ring: every call is answered, and no ring
// is left queued.
static void rings_drained_without_epoll(void **state) {
	struct poller *p = *state;
	struct rlimit was, none;
	unsigned left;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	// The descriptors open now (the listing's own, "." and ".." aside): a
	// new one would exceed the limit, and epoll_create1() fails (EMFILE).
	none = was;
	none.rlim_cur = fake_daemon_count_fds() - 3;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &none), 0);
	int most = late_calls(p, &left);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
	assert_int_equal(p->d.client->sleep_fd, CLIENT_SLEEP_FD_NONE);
	assert_int_equal(most, 0);
}

static void lease_lost(void **state) {
	struct poller *p = *state;
	long id = gr_api_client_send(p->d.client, TEST_SILENT, 0, NULL);
	assert_true(id > 0);
	pthread_t closer;
	assert_int_equal(pthread_create(&closer, NULL, close_later, &p->d), 0);
	uint64_t start = now_ms();
	assert_int_equal(gr_api_client_recv_len(p->d.client, (uint32_t)id, NULL), -1);
	assert_int_equal(errno, ECONNRESET);
	uint64_t waited = now_ms() - start;
	assert_int_equal(pthread_join(closer, NULL), 0);
	if (waited > LEASE_NOTICE_MAX_MS)
		fail_msg("lost lease noticed after %ju ms", (uintmax_t)waited);

	assert_int_equal(gr_api_client_recv_len(p->d.client, (uint32_t)id, NULL), -1);
	assert_int_equal(errno, ECONNRESET);
	assert_int_equal(gr_api_client_send(p->d.client, TEST_ECHO, 0, NULL), -ECONNRESET);
	assert_int_equal(errno, ECONNRESET);
}

// A test under a name saying which spin budget it runs with.
#define SPIN_TEST(func, setup)                                                                     \
	{ #func "/" #setup, func, setup, teardown, NULL }

int main(void) {
	const struct CMUnitTest tests[] = {
		SPIN_TEST(echo_sizes, setup_sleep),
		SPIN_TEST(echo_sizes, setup_spinning),
		SPIN_TEST(ping_pong, setup_sleep),
		SPIN_TEST(ping_pong, setup_spinning),
		SPIN_TEST(out_of_order, setup_spinning),
		SPIN_TEST(stream_with_event, setup_sleep),
		SPIN_TEST(full_request_ring, setup_sleep),
		SPIN_TEST(full_request_ring, setup_spinning),
		SPIN_TEST(send_more_batch, setup_sleep),
		SPIN_TEST(send_more_batch, setup_spinning),
		SPIN_TEST(recv_into_too_small, setup_spinning),
		SPIN_TEST(rings_left_queued, setup_sleep),
		SPIN_TEST(rings_drained_without_epoll, setup_sleep),
		// Asleep in poll(): the socket is watched beside the doorbell.
		SPIN_TEST(lease_lost, setup_sleep),
		// Spinning far longer than the test: only the lease check ends it.
		SPIN_TEST(lease_lost, setup_long_spin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
