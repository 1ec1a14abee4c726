// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's calls on one connection: the TSC clock that stamps them,
// the window of requests in flight, the checks of every response, and the
// connection itself (ping2_perf.h).

#include "ping2_perf.h"

#include <rte_cycles.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

// Progress goes to stderr this often during the measured phase.
#define PROGRESS_INTERVAL_NS NSEC_PER_SEC
// The clock is read for progress once every PROGRESS_CHECK_MASK + 1 calls.
#define PROGRESS_CHECK_MASK 0xff
// Bytes of the per-request sequence number stamped at the start of a payload.
#define STAMP_LEN sizeof(uint64_t)

// The per-call stamps come from the TSC, scaled to CLOCK_MONOTONIC
// nanoseconds: clock_gettime() costs 25-35 ns through the vDSO here, and two
// per call would be a tenth of a pipelined call's client time. Calibrated
// once per client process, over TSC_CALIBRATE_NS.
#define TSC_CALIBRATE_NS (20 * NSEC_PER_MSEC)
static struct {
	uint64_t tsc0, ns0;
	double ns_per_tick;
} tsc_clock;

void tsc_calibrate(void) {
	uint64_t ns0 = now_ns(), tsc0 = rte_rdtsc(), ns1, tsc1;

	do {
		ns1 = now_ns();
		tsc1 = rte_rdtsc();
	} while (ns1 - ns0 < TSC_CALIBRATE_NS);
	tsc_clock.tsc0 = tsc0;
	tsc_clock.ns0 = ns0;
	tsc_clock.ns_per_tick = (double)(ns1 - ns0) / (double)(tsc1 - tsc0);
}

// now_ns(), cheaper: after tsc_calibrate().
static uint64_t call_ns(void) {
	return tsc_clock.ns0 +
	       (uint64_t)((double)(rte_rdtsc() - tsc_clock.tsc0) * tsc_clock.ns_per_tick);
}

const char *transport_name(enum gr_api_transport t) {
	switch (t) {
	case GR_API_TRANSPORT_SOCKET:
		return "socket";
	case GR_API_TRANSPORT_SHM:
		return "shm";
	case GR_API_TRANSPORT_AUTO:
		break;
	}
	return "auto";
}

// The request a payload size stands for: 0 is GR_PING, 64 is GR_PING2, any
// other size is GR_SHM_ECHO.
static uint32_t request_type(size_t size) {
	if (size == 0)
		return GR_PING;
	if (size == GR_PING2_LEN)
		return GR_PING2;
	return GR_SHM_ECHO;
}

const char *request_name(size_t size) {
	if (size == 0)
		return "GR_PING";
	if (size == GR_PING2_LEN)
		return "GR_PING2";
	return "GR_SHM_ECHO";
}

// One request in flight.
struct inflight {
	uint32_t id;
	uint64_t seq;
	uint64_t sent_ns;
};

void client_state_init(struct client_state *s, const struct options *o, struct gr_api_client *c) {
	*s = (struct client_state){
		.opts = o,
		.client = c,
		.type = request_type(o->size),
		.epoll_fd = -1,
	};
	s->tx = malloc(o->size > 0 ? o->size : 1);
	s->rx = malloc(GR_API_MAX_MSG_LEN);
	s->fifo = calloc(o->depth, sizeof(*s->fifo));
	if (s->tx == NULL || s->rx == NULL || s->fifo == NULL)
		fail("%s", strerror(ENOMEM));
	payload_fill(s->tx, o->size);
}

void client_state_release(struct client_state *s) {
	free(s->tx);
	free(s->rx);
	free(s->fifo);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
}

static size_t stamp_len(size_t size) {
	return size < STAMP_LEN ? size : STAMP_LEN;
}

// Send the next request, stamped as sent at sent_ns: the clock read just
// before (a receive's, when the send follows it).
static void send_one(struct client_state *s, uint64_t sent_ns) {
	size_t size = s->opts->size;
	uint64_t seq = s->next_seq++;
	unsigned tail = s->head + s->used;
	struct inflight *slot = &s->fifo[tail < s->opts->depth ? tail : tail - s->opts->depth];

	memcpy(s->tx, &seq, stamp_len(size));
	slot->seq = seq;
	slot->sent_ns = sent_ns;
	// Pipelined, the requests go as a batch: the next receive that has to
	// wait flushes them (one fence, and one doorbell if the daemon sleeps).
	long id = s->opts->depth > 1 ? gr_api_client_send_more(s->client, s->type, size, s->tx)
				     : gr_api_client_send(s->client, s->type, size, s->tx);
	if (id <= 0 || id > UINT32_MAX)
		fail("send %s #%" PRIu64 ": %s", request_name(size), seq, strerror(errno));
	slot->id = (uint32_t)id;
	s->used++;
}

// The loop's epoll, holding gr_api_client_fd(), made on the first wait (a
// client process connects after client_state_init()).
static void event_loop_open(struct client_state *s) {
	int fd = gr_api_client_fd(s->client);
	struct epoll_event ev = {.events = EPOLLIN};

	if (fd < 0)
		fail("gr_api_client_fd: %s", strerror(errno));
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epoll_fd < 0 || epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		fail("epoll for the client's fd: %s", strerror(errno));
}

// Wait until the client's fd is readable, at most the handle's timeout (as
// a blocking receive waits). Returns 0, or -1 with errno (ETIMEDOUT: no
// wake-up came).
static int event_loop_wait(struct client_state *s) {
	struct epoll_event got;
	int n;

	if (s->epoll_fd < 0)
		event_loop_open(s);
	do
		n = epoll_wait(s->epoll_fd, &got, 1, gr_api_client_timeout_ms(s->client));
	while (n < 0 && errno == EINTR);
	if (n == 0)
		errno = ETIMEDOUT;
	return n > 0 ? 0 : -1;
}

// --event-loop: the response to id into s->rx as an event-loop controller
// takes it (docs/event-loop.md): try_recv_into(); when nothing is there,
// poll_prepare(), epoll_wait() only when it returns 0, poll_done(), and look
// again. Returns what gr_api_client_recv_into() would: the length, or -1
// with errno.
static long recv_event_loop(struct client_state *s, uint32_t id) {
	for (;;) {
		long len = gr_api_client_try_recv_into(s->client, id, s->rx, GR_API_MAX_MSG_LEN);
		if (len >= 0 || errno != EAGAIN)
			return len;
		int ready = gr_api_client_poll_prepare(s->client);
		if (ready < 0)
			return -1;
		if (ready == 0 && event_loop_wait(s) < 0) {
			int err = errno;
			gr_api_client_poll_done(s->client);
			errno = err;
			return -1;
		}
		if (gr_api_client_poll_done(s->client) < 0)
			return -1;
	}
}

// Receive the oldest request's response into s->rx, stamp s->last_ns (with
// stamps; run_calls() keeps it without), and
// take its slot out of the window into *call. Returns the response's length;
// check_response() checks it.
static long recv_oldest(struct client_state *s, struct inflight *call) {
	*call = s->fifo[s->head];
	long len =
		s->opts->event_loop
			? recv_event_loop(s, call->id)
			: gr_api_client_recv_into(s->client, call->id, s->rx, GR_API_MAX_MSG_LEN);
	if (s->opts->stamps)
		s->last_ns = call_ns();
	if (len < 0)
		fail("request %" PRIu32 " (%s #%" PRIu64 "): %s",
		     call->id,
		     request_name(s->opts->size),
		     call->seq,
		     strerror(errno));
	if (++s->head == s->opts->depth)
		s->head = 0;
	s->used--;
	return len;
}

// The response in s->rx, len bytes, must answer call: its length, its stamp
// and the rest of its payload. Runs after the next request left (s->rx and
// the payload beyond the stamp are untouched by a send).
static void check_response(const struct client_state *s, const struct inflight *call, long len) {
	size_t size = s->opts->size;

	if ((size_t)len != size)
		fail("request %" PRIu32 ": response of %ld bytes, expected %zu", call->id, len, size
		);
	if (memcmp(s->rx, &call->seq, stamp_len(size)) != 0)
		fail("request %" PRIu32 ": response carries another request's payload", call->id);
	if (size > STAMP_LEN && memcmp(s->rx + STAMP_LEN, s->tx + STAMP_LEN, size - STAMP_LEN) != 0)
		fail("request %" PRIu32 ": response payload differs from the request", call->id);
}

uint64_t run_calls(
	struct client_state *s,
	uint64_t calls,
	uint64_t deadline_ns,
	struct histogram *hist,
	bool progress
) {
	uint64_t sent = 0, done = 0;
	uint64_t start = call_ns();
	uint64_t next_progress = start + PROGRESS_INTERVAL_NS;

	s->last_ns = start;
	while (sent < calls && s->used < s->opts->depth) {
		send_one(s, call_ns());
		sent++;
	}
	while (s->used > 0) {
		struct inflight call;
		long len = recv_oldest(s, &call);
		// The next request leaves first, stamped with the clock read that
		// ended this one; the checks and the bookkeeping of this one run
		// while it is in flight, not between a response and the next
		// request, where they would add to every round trip measured.
		if (sent < calls && (deadline_ns == 0 || s->last_ns < deadline_ns)) {
			send_one(s, s->last_ns);
			sent++;
		}
		check_response(s, &call, len);
		done++;
		if (!s->opts->stamps) {
			if ((done & NO_STAMPS_CLOCK_MASK) == 0)
				s->last_ns = call_ns();
		} else if (hist != NULL) {
			hist_add(hist, s->last_ns - call.sent_ns);
		}
		if (progress && (done & PROGRESS_CHECK_MASK) == 0 && s->last_ns >= next_progress) {
			uint64_t t = s->last_ns;
			fprintf(stderr, "%s: %" PRIu64, log_prefix, done);
			if (deadline_ns == 0)
				fprintf(stderr, "/%" PRIu64, calls);
			fprintf(stderr,
				" calls, %.0f calls/s\n",
				(double)done * NSEC_PER_SEC / (double)(t - start));
			next_progress = t + PROGRESS_INTERVAL_NS;
		}
	}
	return done;
}

uint64_t call_alone(struct client_state *s) {
	struct inflight call;

	send_one(s, call_ns());
	long len = recv_oldest(s, &call);
	check_response(s, &call, len);
	return s->last_ns - call.sent_ns;
}

struct gr_api_client *connect_client(const struct options *o, enum gr_api_transport t) {
	struct gr_api_client_opts copts = {
		.transport = t,
		.spin_us = o->spin_us,
		.version = "ping2_perf",
	};
	return gr_api_client_connect_opts(o->sock_path, &copts);
}

// Say why a forced shm connect failed: an auto connect that stays on the
// socket carries the reason.
static void explain_no_shm(const struct options *o) {
	struct gr_api_client *c = connect_client(o, GR_API_TRANSPORT_AUTO);
	if (c == NULL)
		return;
	if (gr_api_client_transport(c) != GR_API_TRANSPORT_SHM)
		fprintf(stderr,
			"%s: shm not available: %s\n",
			log_prefix,
			gr_api_client_transport_reason(c));
	gr_api_client_disconnect(c);
}

struct gr_api_client *
connect_measured(const struct options *o, enum gr_api_transport t, uint32_t *backing) {
	struct gr_api_client *c = connect_client(o, t);

	if (c == NULL) {
		int err = errno;
		if (err == ENOTSUP && t == GR_API_TRANSPORT_SHM)
			explain_no_shm(o);
		fail("connect %s (transport %s): %s", o->sock_path, transport_name(t), strerror(err)
		);
	}
	*backing = channel_backing(c);
	// A run that asked for secondaries measures memzone channels or nothing.
	if (o->secondary && t != GR_API_TRANSPORT_SOCKET && *backing != GR_SHM_BACKING_MEMZONE)
		fail("--secondary, but no memzone channel: %s", gr_api_client_transport_reason(c));
	return c;
}

// From the GR_SHM_CHANNEL_LIST entry whose client_pid is ours.
uint32_t channel_backing(struct gr_api_client *c) {
	struct gr_shm_channel_info *info;
	uint32_t backing = 0;
	size_t len;
	int ret;

	if (gr_api_client_transport(c) != GR_API_TRANSPORT_SHM)
		return 0;
	long id = gr_api_client_send(c, GR_SHM_CHANNEL_LIST, 0, NULL);
	if (id <= 0)
		fail("send GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, (void **)&info, &len)) == 1) {
		if (len != sizeof(*info))
			fail("GR_SHM_CHANNEL_LIST: entry of %zu bytes, expected %zu",
			     len,
			     sizeof(*info));
		if (info->client_pid == getpid())
			backing = info->backing;
		free(info);
	}
	if (ret < 0)
		fail("GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	if (backing == 0)
		fail("GR_SHM_CHANNEL_LIST lists no channel of pid %d", (int)getpid());
	return backing;
}

const char *backing_name(uint32_t backing) {
	switch (backing) {
	case 0:
		return NULL;
	case GR_SHM_BACKING_MEMZONE:
		return "memzone";
	case GR_SHM_BACKING_MEMFD:
		return "memfd";
	default:
		return "mixed";
	}
}
