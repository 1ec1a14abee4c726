// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The doorbell: a consumer that arms its need-wakeup flag, fences, re-checks
// its ring and sleeps is always woken when a message arrives, and a producer
// makes no system call while the consumer is awake.
//
// The flag semantics are checked single-threaded first. Then two threads hand
// handoffs messages over (HANDOFFS, HANDOFFS_CI under CI=true), in each
// direction, with random pauses on both sides
// so that the producer publishes at every point of the consumer's arming
// sequence. Every message carries a sequence number: loss or reordering
// fails. A lost wake-up leaves the consumer asleep with a message in its
// ring until the next message rings again; so the producer often waits for
// its last message to be taken before it sends another, and a lost wake-up
// then leaves the consumer asleep for good. The consumer's sleep has a
// timeout after which a non-empty ring is reported as a lost wake-up, and an
// alarm() ends the whole test if anything else hangs. Removing any of the
// four fences of the protocol makes this test fail within seconds.

#include "region.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

// Hand-offs per direction: make test's, and CI's (CI=true), which has the
// time for more.
#define HANDOFFS 250000u
#define HANDOFFS_CI 1000000u
static uint32_t handoffs = HANDOFFS;
// A consumer asleep this long with a message in its ring missed a wake-up.
#define LOST_WAKEUP_MS 5000
// Whole-test backstop, below the meson timeout (90 s).
#define ALARM_SECONDS 75
// Requests the daemon's consumer takes before it ends a batch (server/channel.h
// CHANNEL_BATCH).
#define POLLER_BATCH 32
// Longest payload of a hand-off message: messages of 1 to 4 cells.
#define PAYLOAD_MAX 48
// Largest eventfd counter value (eventfd(2)): a write then fails with EAGAIN.
#define EVENTFD_MAX UINT64_C(0xfffffffffffffffe)
// Rings of a response doorbell nobody drains: far more than its socket's send
// buffer holds (a few hundred one-byte buffers), so the last ones find it full.
#define UNDRAINED_RINGS 20000

struct chan {
	struct shmchan_geometry g;
	struct shmchan_mem mem;
	struct shmchan_server *srv;
	struct shmchan_client *cli;
	struct shmchan_ctrl *ctrl; // the daemon's view of the control block
};

static int chan_setup(void **state) {
	struct chan *ch = calloc(1, sizeof(*ch));
	int srv_req_fd, srv_resp_fd;

	assert_non_null(ch);
	assert_int_equal(shmchan_geometry_init(&ch->g, SHMCHAN_RING_CELLS), 0);
	assert_int_equal(shmchan_memfd_create(&ch->mem, "doorbell_test", ch->g.region_size), 0);
	assert_int_equal(shmchan_server_create(&ch->mem, &ch->g, &ch->srv), 0);
	srv_req_fd = shmchan_server_req_fd(ch->srv);
	srv_resp_fd = shmchan_server_resp_fd(ch->srv);
	// The client gets its own mapping, as it would from the fd passed at attach.
	assert_int_equal(
		shmchan_client_open(
			&ch->g,
			NULL,
			dup(ch->mem.fd),
			dup(srv_req_fd),
			dup(srv_resp_fd),
			&ch->cli
		),
		0
	);
	ch->ctrl = ch->mem.base;
	*state = ch;
	return 0;
}

static int chan_teardown(void **state) {
	struct chan *ch = *state;

	shmchan_client_close(ch->cli);
	shmchan_server_destroy(ch->srv);
	shmchan_memfd_destroy(&ch->mem);
	free(ch);
	return 0;
}

// Read an eventfd (non-blocking): its counter, or 0 if nobody rang.
static uint64_t doorbell_count(int fd) {
	uint64_t count;

	if (read(fd, &count, sizeof(count)) != sizeof(count)) {
		assert_int_equal(errno, EAGAIN);
		return 0;
	}
	return count;
}

static bool fd_readable(int fd) {
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, 0) == 1;
}

static void send_request(struct chan *ch) {
	uint8_t msg[SHMCHAN_MSG_MIN] = {0};

	assert_int_equal(shmchan_client_send(ch->cli, msg, sizeof(msg), NULL, 0), 0);
}

static void send_response(struct chan *ch) {
	uint8_t msg[SHMCHAN_MSG_MIN] = {0};

	assert_int_equal(shmchan_server_send(ch->srv, msg, sizeof(msg), NULL, 0), 0);
}

// ---- flag semantics, one thread ----

// The daemon starts armed: the client's first request rings, with no poller
// having run yet. Once the daemon disarms, requests make no system call.
static void test_request_doorbell(void **state) {
	struct chan *ch = *state;
	int req_fd = shmchan_server_req_fd(ch->srv);
	uint8_t buf[SHMCHAN_MSG_MAX];

	send_request(ch);
	send_request(ch);
	assert_int_equal(doorbell_count(req_fd), 2);

	shmchan_server_doorbell_disarm(ch->srv);
	assert_int_equal(ch->ctrl->daemon_sleeping, 0);
	send_request(ch);
	assert_int_equal(doorbell_count(req_fd), 0);

	shmchan_server_doorbell_arm(ch->srv);
	assert_int_equal(ch->ctrl->daemon_sleeping, SHMCHAN_WAIT_REQUEST);
	assert_true(shmchan_server_has_request(ch->srv)); // the caller's re-check finds work
	assert_int_equal(shmchan_server_stats(ch->srv)->sleeps, 1);
	send_request(ch);
	assert_int_equal(doorbell_count(req_fd), 1);

	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(shmchan_server_recv(ch->srv, buf, sizeof(buf)), SHMCHAN_MSG_MIN);
	assert_false(shmchan_server_has_request(ch->srv));
}

// The daemon rings the client only while the client sleeps, and counts it.
static void test_response_doorbell(void **state) {
	struct chan *ch = *state;
	int resp_fd = shmchan_client_resp_fd(ch->cli);

	send_response(ch);
	assert_false(fd_readable(resp_fd));
	assert_int_equal(shmchan_server_stats(ch->srv)->doorbells_rung, 0);

	shmchan_client_doorbell_arm(ch->cli);
	assert_int_equal(ch->ctrl->client_sleeping, 1);
	assert_true(shmchan_client_has_response(ch->cli)); // the caller's re-check finds work
	send_response(ch);
	assert_true(fd_readable(resp_fd));
	assert_int_equal(shmchan_server_stats(ch->srv)->doorbells_rung, 1);
	shmchan_client_doorbell_drain(ch->cli);
	assert_false(fd_readable(resp_fd));
	// Draining a doorbell nobody rang neither blocks nor fails.
	shmchan_client_doorbell_drain(ch->cli);

	shmchan_client_doorbell_disarm(ch->cli);
	assert_int_equal(ch->ctrl->client_sleeping, 0);
	send_response(ch);
	assert_false(fd_readable(resp_fd));
	assert_int_equal(shmchan_server_stats(ch->srv)->doorbells_rung, 1);
	assert_int_equal(shmchan_server_stats(ch->srv)->responses, 3);
}

// A client can saturate its request doorbell eventfd: its rings then fail
// with EAGAIN, which it does not treat as an error, and nobody blocks.
// Its response doorbell it cannot saturate: the daemon's end is shut for
// reading, so a client's write fails, whatever the flags of its own end.
static void test_saturated_doorbells(void **state) {
	struct chan *ch = *state;
	int resp_fd = shmchan_client_resp_fd(ch->cli);
	uint64_t top = EVENTFD_MAX;

	assert_int_equal(write(shmchan_server_req_fd(ch->srv), &top, sizeof(top)), sizeof(top));
	assert_int_equal(fcntl(resp_fd, F_SETFL, 0), 0);
	assert_int_equal(send(resp_fd, &top, sizeof(top), MSG_NOSIGNAL), -1);
	assert_int_equal(errno, EPIPE);
	shmchan_client_doorbell_arm(ch->cli);
	send_response(ch);
	send_request(ch); // the daemon is armed since create
	assert_int_equal(shmchan_server_stats(ch->srv)->responses, 1);
	assert_int_equal(doorbell_count(shmchan_server_req_fd(ch->srv)), EVENTFD_MAX);
}

// Rings queued on a doorbell, read with FIONREAD.
static int rings_queued(int fd) {
	int n = -1;

	assert_int_equal(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

// A sleeping client that never drains its doorbell: the daemon's rings fill
// the socket's buffer, and the later ones fail at once (the client is readable
// anyway) instead of blocking, even with O_NONBLOCK cleared on the client's
// end. Draining then takes every ring, SHMCHAN_DOORBELL_DRAIN_MAX a drain.
static void test_undrained_response_doorbell(void **state) {
	struct chan *ch = *state;
	int resp_fd = shmchan_client_resp_fd(ch->cli);
	uint8_t buf[SHMCHAN_MSG_MAX];
	int queued, drains = 0;

	assert_int_equal(fcntl(resp_fd, F_SETFL, 0), 0);
	shmchan_client_doorbell_arm(ch->cli);
	for (unsigned i = 0; i < UNDRAINED_RINGS; i++) {
		send_response(ch);
		assert_int_equal(shmchan_client_recv(ch->cli, buf, sizeof(buf)), SHMCHAN_MSG_MIN);
	}
	assert_int_equal(shmchan_server_stats(ch->srv)->doorbells_rung, UNDRAINED_RINGS);
	assert_true(fd_readable(resp_fd));
	queued = rings_queued(resp_fd);
	while (fd_readable(resp_fd)) {
		shmchan_client_doorbell_drain(ch->cli);
		drains++;
		assert_true(drains <= queued / SHMCHAN_DOORBELL_DRAIN_MAX + 1);
	}
	shmchan_client_doorbell_disarm(ch->cli);
}

// A daemon that writes its end of the response doorbell without end (a
// hostile one, which passes a socketpair of its own as the doorbell and
// writes it by the 64 KiB): one drain takes SHMCHAN_DOORBELL_DRAIN_MAX rings
// and returns, however much waits, and the rest keeps the doorbell readable
// for the next wait. Before, a drain read until the socket was empty, which
// such a daemon can put off for ever.
static void test_flooded_response_doorbell(void **state) {
	static uint8_t flood[64 * 1024];
	struct chan *ch = *state;
	struct shmchan_client *cli;
	int pair[2], before;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
	assert_int_equal(
		shmchan_client_open(
			&ch->g,
			NULL,
			dup(ch->mem.fd),
			dup(shmchan_server_req_fd(ch->srv)),
			pair[1],
			&cli
		),
		0
	);
	assert_int_equal(send(pair[0], flood, sizeof(flood), MSG_DONTWAIT), sizeof(flood));
	before = rings_queued(pair[1]);
	assert_true(before > 2 * SHMCHAN_DOORBELL_DRAIN_MAX);
	shmchan_client_doorbell_drain(cli);
	assert_int_equal(rings_queued(pair[1]), before - SHMCHAN_DOORBELL_DRAIN_MAX);
	assert_true(fd_readable(pair[1]));
	shmchan_client_close(cli);
	close(pair[0]);
}

// The daemon sleeps on its doorbell with edge-triggered epoll and never
// reads it: every ring must still be a new event.
static void test_request_doorbell_edge_triggered(void **state) {
	struct chan *ch = *state;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
	int ep = epoll_create1(EPOLL_CLOEXEC);

	assert_true(ep >= 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, shmchan_server_req_fd(ch->srv), &ev), 0);
	assert_int_equal(epoll_wait(ep, &ev, 1, 0), 0);
	for (unsigned i = 0; i < 3; i++) {
		send_request(ch);
		assert_int_equal(epoll_wait(ep, &ev, 1, 0), 1);
		assert_int_equal(epoll_wait(ep, &ev, 1, 0), 0);
	}
	close(ep);
}

// A batch rings at most once, at its flush: enqueues alone never ring, and
// a flush with nothing moved since the last one does nothing.
static void test_batch_flush(void **state) {
	struct chan *ch = *state;
	int req_fd = shmchan_server_req_fd(ch->srv);
	int resp_fd = shmchan_client_resp_fd(ch->cli);
	uint8_t msg[SHMCHAN_MSG_MIN] = {0}, buf[SHMCHAN_MSG_MAX];

	// The daemon is armed since create.
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(shmchan_client_enqueue(ch->cli, msg, sizeof(msg), NULL, 0), 0);
	assert_int_equal(doorbell_count(req_fd), 0);
	shmchan_client_flush(ch->cli);
	assert_int_equal(doorbell_count(req_fd), 1);
	shmchan_client_flush(ch->cli);
	assert_int_equal(doorbell_count(req_fd), 0);

	shmchan_client_doorbell_arm(ch->cli);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(shmchan_server_recv(ch->srv, buf, sizeof(buf)), SHMCHAN_MSG_MIN);
		assert_int_equal(shmchan_server_enqueue(ch->srv, msg, sizeof(msg), NULL, 0), 0);
	}
	assert_false(fd_readable(resp_fd));
	shmchan_server_flush(ch->srv);
	assert_true(fd_readable(resp_fd));
	shmchan_client_doorbell_drain(ch->cli);
	shmchan_server_flush(ch->srv);
	assert_false(fd_readable(resp_fd));
	assert_int_equal(shmchan_server_stats(ch->srv)->doorbells_rung, 1);
}

// A client waiting for room in its request ring sleeps on its own doorbell:
// the daemon's flush rings it when it took requests, with no response
// published.
static void test_room_freed_rings_client(void **state) {
	struct chan *ch = *state;
	int resp_fd = shmchan_client_resp_fd(ch->cli);
	uint8_t buf[SHMCHAN_MSG_MAX];

	send_request(ch);
	shmchan_client_doorbell_arm(ch->cli);
	assert_int_equal(shmchan_server_recv(ch->srv, buf, sizeof(buf)), SHMCHAN_MSG_MIN);
	assert_false(fd_readable(resp_fd));
	shmchan_server_flush(ch->srv);
	assert_true(fd_readable(resp_fd));
	assert_int_equal(shmchan_server_stats(ch->srv)->responses, 0);
	assert_true(shmchan_client_can_enqueue(ch->cli, SHMCHAN_MSG_MAX));
	assert_false(shmchan_client_can_enqueue(ch->cli, SHMCHAN_MSG_MAX + 1));
}

// A daemon waiting for room in the response ring says so in its flag; the
// client rings it when it checks for that (room_check) and when it arms
// (after its fence), and not for a daemon that waits for a request, whose
// doorbell only a request rings.
static void test_room_wanted_rings_daemon(void **state) {
	struct chan *ch = *state;
	int req_fd = shmchan_server_req_fd(ch->srv);

	assert_int_equal(ch->ctrl->daemon_sleeping, SHMCHAN_WAIT_REQUEST);
	shmchan_client_room_check(ch->cli);
	shmchan_client_doorbell_arm(ch->cli);
	shmchan_client_doorbell_disarm(ch->cli);
	assert_int_equal(doorbell_count(req_fd), 0);

	shmchan_server_doorbell_arm_room(ch->srv);
	assert_int_equal(ch->ctrl->daemon_sleeping, SHMCHAN_WAIT_ROOM);
	assert_int_equal(shmchan_server_stats(ch->srv)->sleeps, 1);
	shmchan_client_room_check(ch->cli);
	assert_int_equal(doorbell_count(req_fd), 1);
	shmchan_client_doorbell_arm(ch->cli);
	assert_int_equal(doorbell_count(req_fd), 1);
	shmchan_client_doorbell_disarm(ch->cli);

	shmchan_server_doorbell_disarm(ch->srv);
	shmchan_client_room_check(ch->cli);
	shmchan_client_doorbell_arm(ch->cli);
	assert_int_equal(doorbell_count(req_fd), 0);
}

// The same from the client's takes (room_made): a daemon waiting for room
// is rung once the client has taken an eighth of the ring since it last
// rang from there, not at each response taken while the daemon wakes; and
// never while the daemon waits for no room.
static void test_room_made_rings_once_per_eighth(void **state) {
	static uint8_t buf[SHMCHAN_MSG_MAX];
	struct chan *ch = *state;
	int req_fd = shmchan_server_req_fd(ch->srv);
	uint32_t share = (ch->g.ring_cells - 1) / 8;
	uint32_t per_take = SHMCHAN_MSG_CELLS(SHMCHAN_MSG_MIN);
	uint32_t takes = (share + per_take - 1) / per_take;
	uint64_t rings = 0;

	// What the channel's setup left on the doorbell.
	(void)doorbell_count(req_fd);
	shmchan_server_doorbell_arm_room(ch->srv);
	for (uint32_t i = 1; i <= 2 * takes; i++) {
		send_response(ch);
		assert_int_equal(shmchan_client_recv(ch->cli, buf, sizeof(buf)), SHMCHAN_MSG_MIN);
		shmchan_client_room_made(ch->cli);
		rings = doorbell_count(req_fd);
		assert_int_equal(rings, i == takes || i == 2 * takes ? 1 : 0);
	}
	shmchan_server_doorbell_disarm(ch->srv);
	for (uint32_t i = 1; i <= 2 * takes; i++) {
		send_response(ch);
		assert_int_equal(shmchan_client_recv(ch->cli, buf, sizeof(buf)), SHMCHAN_MSG_MIN);
		shmchan_client_room_made(ch->cli);
	}
	assert_int_equal(doorbell_count(req_fd), 0);
}

// ---- hand-offs, two threads ----

struct handoff {
	struct chan *ch;
	uint32_t consumed; // messages taken so far: written by the consumer, read by the producer
	uint64_t sleeps; // consumer: times it slept on the eventfd
	uint64_t rechecks; // consumer: times the re-check after arming found a message
	uint64_t full; // producer: sends refused, ring full (read by the consumer)
	uint64_t waits; // producer: times it waited for the consumer to take its message
};

// The run alternates phases of PHASE_LEN messages. In a ping-pong phase the
// producer often waits until the consumer took its last message before it
// sends the next: a wake-up lost then is not healed by a later message, the
// consumer stays asleep with the message and the test fails. In a streaming
// phase it sends without waiting, and the consumer stops once until the ring
// is full, so that hand-offs also run through a full ring.
#define PHASE_LEN 16384
// How long a stop waits for the ring to fill at most, and how it polls.
#define FULL_STOP_MAX_US 2000000
#define FULL_STOP_POLL_US 100

static bool ping_pong_phase(uint32_t seq) {
	return (seq / PHASE_LEN) % 2 == 0;
}

// A little into every fourth streaming phase.
static bool time_to_stop(uint32_t consumed) {
	return consumed % (8 * PHASE_LEN) == PHASE_LEN + 100;
}

static void stop_until_full(struct handoff *h) {
	uint64_t full = __atomic_load_n(&h->full, __ATOMIC_RELAXED);

	for (unsigned waited = 0; waited < FULL_STOP_MAX_US; waited += FULL_STOP_POLL_US) {
		if (__atomic_load_n(&h->full, __ATOMIC_RELAXED) != full)
			return;
		usleep(FULL_STOP_POLL_US);
	}
}

static void mark_consumed(struct handoff *h, uint32_t n) {
	__atomic_store_n(&h->consumed, n, __ATOMIC_RELEASE);
	if (time_to_stop(n))
		stop_until_full(h);
}

static void on_alarm(int sig) {
	static const char msg[] = "doorbell_test: alarm: a thread hangs (lost wake-up?)\n";
	ssize_t ret = write(STDERR_FILENO, msg, sizeof(msg) - 1);

	(void)sig;
	(void)ret;
	_exit(EXIT_FAILURE);
}

// cmocka's assertions are not for other threads: fail the process at once.
static void __attribute__((noreturn, format(printf, 1, 2))) fail_now(const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "doorbell_test: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	_exit(EXIT_FAILURE);
}

// Random pauses, so that the other side meets us at every step of its
// sequence: often a short busy wait, sometimes a yield, rarely a sleep of
// some tens of microseconds. The producer pauses more than the consumer, so
// that the consumer keeps emptying its ring and going to sleep.
struct jitter {
	uint32_t busy_one_in; // a busy wait of up to busy_max pauses, one time in this many
	uint32_t busy_max; // a power of two
	uint32_t yield_one_in;
	uint32_t sleep_one_in;
};

static const struct jitter producer_jitter = {4, 1024, 256, 4096};
static const struct jitter consumer_jitter = {32, 256, 1024, 16384};

static uint32_t xorshift32(uint32_t *s) {
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void jitter(uint32_t *rng, const struct jitter *j) {
	uint32_t r = xorshift32(rng);

	if (r % j->busy_one_in == 0) {
		for (uint32_t i = xorshift32(rng) & (j->busy_max - 1); i > 0; i--)
			__builtin_ia32_pause();
	}
	if (r % j->yield_one_in == 1)
		sched_yield();
	if (r % j->sleep_one_in == 2)
		usleep(xorshift32(rng) % 64);
}

// How many empty polls before arming: none a quarter of the time, so the
// consumer often arms right after draining, when the producer is busiest.
static uint32_t spin_budget(uint32_t *rng) {
	uint32_t r = xorshift32(rng);

	return (r & 3) == 0 ? 0 : (r >> 8) & 127;
}

// Message seq: a header (seq, type, payload length) and seq % PAYLOAD_MAX
// bytes of payload derived from seq.
struct handoff_hdr {
	uint32_t seq;
	uint32_t type;
	uint32_t payload_len;
};

static size_t handoff_fill(uint32_t seq, struct handoff_hdr *hdr, uint8_t *payload) {
	hdr->seq = seq;
	hdr->type = ~seq;
	hdr->payload_len = seq % PAYLOAD_MAX;
	for (uint32_t i = 0; i < hdr->payload_len; i++)
		payload[i] = (uint8_t)(seq + i);
	return hdr->payload_len;
}

static void handoff_check(uint32_t expected, const uint8_t *msg, int len) {
	struct handoff_hdr hdr, want;
	uint8_t payload[PAYLOAD_MAX];

	handoff_fill(expected, &want, payload);
	if (len != (int)(sizeof(hdr) + want.payload_len))
		fail_now(
			"message %u: %d bytes, expected %zu",
			expected,
			len,
			sizeof(hdr) + want.payload_len
		);
	memcpy(&hdr, msg, sizeof(hdr));
	if (hdr.seq != expected || hdr.type != want.type || hdr.payload_len != want.payload_len)
		fail_now("expected message %u, got %u (lost or reordered)", expected, hdr.seq);
	if (memcmp(msg + sizeof(hdr), payload, want.payload_len) != 0)
		fail_now("message %u: payload corrupted", expected);
}

// A producer enqueues without the doorbell and ends a batch with a flush
// (fence, then the doorbell if the consumer sleeps), as the poller and the
// client library do: after a random number of messages, before it waits for
// the consumer, and when the ring is full.
struct producer_ops {
	int (*enqueue)(struct chan *, const struct handoff_hdr *, const uint8_t *, size_t);
	void (*flush)(struct chan *);
};

static int
server_enqueue(struct chan *ch, const struct handoff_hdr *hdr, const uint8_t *payload, size_t len) {
	return shmchan_server_enqueue(ch->srv, hdr, sizeof(*hdr), payload, len);
}

static void server_flush(struct chan *ch) {
	shmchan_server_flush(ch->srv);
}

static int
client_enqueue(struct chan *ch, const struct handoff_hdr *hdr, const uint8_t *payload, size_t len) {
	return shmchan_client_enqueue(ch->cli, hdr, sizeof(*hdr), payload, len);
}

static void client_flush(struct chan *ch) {
	shmchan_client_flush(ch->cli);
}

static const struct producer_ops server_ops = {server_enqueue, server_flush};
static const struct producer_ops client_ops = {client_enqueue, client_flush};

static void produce(struct handoff *h, const struct producer_ops *ops, uint32_t rng) {
	uint8_t payload[PAYLOAD_MAX];
	struct handoff_hdr hdr;

	for (uint32_t seq = 0; seq < handoffs; seq++) {
		size_t len = handoff_fill(seq, &hdr, payload);
		int ret;

		while ((ret = ops->enqueue(h->ch, &hdr, payload, len)) == -ENOBUFS) {
			__atomic_store_n(&h->full, h->full + 1, __ATOMIC_RELAXED);
			ops->flush(h->ch);
			sched_yield();
		}
		if (ret < 0)
			fail_now("send %u: %s", seq, strerror(-ret));
		// Batches of 1 to 4 messages.
		if ((xorshift32(&rng) & 3) == 0)
			ops->flush(h->ch);
		if (ping_pong_phase(seq) && (xorshift32(&rng) & 1)) {
			h->waits++;
			ops->flush(h->ch);
			while (__atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE) <= seq)
				__builtin_ia32_pause();
		}
		jitter(&rng, &producer_jitter);
	}
	ops->flush(h->ch);
}

static void *server_producer(void *arg) {
	produce(arg, &server_ops, 0x9e3779b9);
	return NULL;
}

static void *client_producer(void *arg) {
	produce(arg, &client_ops, 0x85ebca6b);
	return NULL;
}

// The client's consumer loop: drain, spin, arm, re-check, sleep in poll().
static void *client_consumer(void *arg) {
	struct handoff *h = arg;
	struct shmchan_client *cli = h->ch->cli;
	struct pollfd pfd = {.fd = shmchan_client_resp_fd(cli), .events = POLLIN};
	uint8_t buf[SHMCHAN_MSG_MAX];
	uint32_t rng = 0xc2b2ae35;
	uint32_t expected = 0, spins = 0;

	while (expected < handoffs) {
		int len = shmchan_client_recv(cli, buf, sizeof(buf));

		if (len > 0) {
			handoff_check(expected++, buf, len);
			mark_consumed(h, expected);
			spins = spin_budget(&rng);
			jitter(&rng, &consumer_jitter);
			continue;
		}
		if (len < 0)
			fail_now("client recv: %s", strerror(-len));
		if (spins > 0) {
			spins--;
			__builtin_ia32_pause();
			continue;
		}
		shmchan_client_doorbell_arm(cli);
		if (shmchan_client_has_response(cli)) {
			h->rechecks++;
			shmchan_client_doorbell_disarm(cli);
			continue;
		}
		h->sleeps++;
		while (poll(&pfd, 1, LOST_WAKEUP_MS) == 0)
			if (shmchan_client_has_response(cli))
				fail_now(
					"lost wake-up: client asleep with message %u in its ring",
					expected
				);
		shmchan_client_doorbell_drain(cli);
		shmchan_client_doorbell_disarm(cli);
	}
	return NULL;
}

// The daemon's consumer loop: as the poller, with edge-triggered epoll and
// no read of the eventfd.
static void *server_consumer(void *arg) {
	struct handoff *h = arg;
	struct shmchan_server *srv = h->ch->srv;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
	static uint8_t buf[SHMCHAN_MSG_MAX];
	uint32_t rng = 0x27d4eb2f;
	uint32_t expected = 0, spins = 0, batch = 0;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, shmchan_server_req_fd(srv), &ev) < 0)
		fail_now("epoll: %s", strerror(errno));
	while (expected < handoffs) {
		int len = shmchan_server_recv(srv, buf, sizeof(buf));

		if (len > 0) {
			handoff_check(expected++, buf, len);
			mark_consumed(h, expected);
			// The cells taken go back to the client at the end of a
			// batch, as the poller's pass ends.
			if (++batch == POLLER_BATCH) {
				shmchan_server_flush(srv);
				batch = 0;
			}
			spins = spin_budget(&rng);
			jitter(&rng, &consumer_jitter);
			continue;
		}
		if (len < 0)
			fail_now("server recv: %s (%s)", strerror(-len), shmchan_last_error());
		shmchan_server_flush(srv);
		batch = 0;
		if (spins > 0) {
			spins--;
			__builtin_ia32_pause();
			continue;
		}
		shmchan_server_doorbell_arm(srv);
		if (shmchan_server_has_request(srv)) {
			h->rechecks++;
			shmchan_server_doorbell_disarm(srv);
			continue;
		}
		h->sleeps++;
		while (epoll_wait(ep, &ev, 1, LOST_WAKEUP_MS) == 0)
			if (shmchan_server_has_request(srv))
				fail_now(
					"lost wake-up: daemon asleep with request %u in its ring",
					expected
				);
		shmchan_server_doorbell_disarm(srv);
	}
	close(ep);
	return NULL;
}

static void run_handoffs(struct chan *ch, void *(*producer)(void *), void *(*consumer)(void *)) {
	struct handoff h = {.ch = ch};
	pthread_t prod, cons;

	signal(SIGALRM, on_alarm);
	alarm(ALARM_SECONDS);
	assert_int_equal(pthread_create(&cons, NULL, consumer, &h), 0);
	assert_int_equal(pthread_create(&prod, NULL, producer, &h), 0);
	assert_int_equal(pthread_join(prod, NULL), 0);
	assert_int_equal(pthread_join(cons, NULL), 0);
	alarm(0);

	printf("# %u hand-offs: consumer slept %" PRIu64 " times, re-check caught %" PRIu64
	       "; producer waited %" PRIu64 " times, found the ring full %" PRIu64 " times\n",
	       handoffs,
	       h.sleeps,
	       h.rechecks,
	       h.waits,
	       h.full);
	// The sleep and full-ring paths must have been exercised, or the test
	// proves little.
	assert_true(h.sleeps > handoffs / 1000);
	assert_true(h.full > 0);
}

static void test_handoff_server_to_client(void **state) {
	struct chan *ch = *state;

	run_handoffs(ch, server_producer, client_consumer);
	assert_int_equal(shmchan_server_stats(ch->srv)->responses, handoffs);
	assert_false(shmchan_client_has_response(ch->cli));
}

static void test_handoff_client_to_server(void **state) {
	struct chan *ch = *state;

	run_handoffs(ch, client_producer, server_consumer);
	assert_int_equal(shmchan_server_stats(ch->srv)->requests, handoffs);
	assert_false(shmchan_server_has_request(ch->srv));
}

int main(void) {
	const char *ci = getenv("CI");
	if (ci != NULL && strcmp(ci, "true") == 0)
		handoffs = HANDOFFS_CI;
#define CHAN_TEST(f) cmocka_unit_test_setup_teardown(f, chan_setup, chan_teardown)
	const struct CMUnitTest tests[] = {
		CHAN_TEST(test_request_doorbell),
		CHAN_TEST(test_response_doorbell),
		CHAN_TEST(test_saturated_doorbells),
		CHAN_TEST(test_undrained_response_doorbell),
		CHAN_TEST(test_flooded_response_doorbell),
		CHAN_TEST(test_request_doorbell_edge_triggered),
		CHAN_TEST(test_batch_flush),
		CHAN_TEST(test_room_freed_rings_client),
		CHAN_TEST(test_room_wanted_rings_daemon),
		CHAN_TEST(test_room_made_rings_once_per_eighth),
		CHAN_TEST(test_handoff_server_to_client),
		CHAN_TEST(test_handoff_client_to_server),
	};
#undef CHAN_TEST

	return cmocka_run_group_tests(tests, NULL, NULL);
}
