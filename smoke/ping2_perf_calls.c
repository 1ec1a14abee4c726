// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ping2_perf's calls on a connection: TSC stamps, latency histogram, window in flight, checks.

#include "ping2_perf.h"
#include <rte_cycles.h>
#include <sys/epoll.h>

#define PROGRESS_CHECK_MASK 0xff // the clock checked for progress every 256 calls
#define STAMP_LEN sizeof(uint64_t) // the sequence number at the start of a payload
#define TSC_CALIBRATE_NS (20 * NSEC_PER_MSEC)

// TSC stamps: two clock_gettime() (25-35 ns each) a call would be a tenth of a pipelined call.
static struct tsc_clock {
	uint64_t tsc0, ns0;
	double ns_per_tick;
} tsc_clock;

struct inflight {
	uint32_t id;
	uint64_t seq, sent_ns;
};

void tsc_calibrate(void) {
	uint64_t ns0 = now_ns(), tsc0 = rte_rdtsc(), ns1, tsc1;
	do {
		ns1 = now_ns();
		tsc1 = rte_rdtsc();
	} while (ns1 - ns0 < TSC_CALIBRATE_NS);
	tsc_clock = (struct tsc_clock){tsc0, ns0, (double)(ns1 - ns0) / (double)(tsc1 - tsc0)};
}

static uint64_t call_ns(void) {
	double ticks = (double)(rte_rdtsc() - tsc_clock.tsc0);
	return tsc_clock.ns0 + (uint64_t)(ticks * tsc_clock.ns_per_tick);
}

void *calloc_or_fail(size_t n, size_t size) {
	void *p = calloc(n, size);
	FAIL_IF(p == NULL, "%s", strerror(ENOMEM));
	return p;
}

uint64_t hist_value(const struct histogram *h, unsigned index) {
	unsigned group = index / HIST_SUB_BUCKETS;
	uint64_t sub = index % HIST_SUB_BUCKETS, v = sub;
	if (group > 0)
		v = ((HIST_SUB_BUCKETS + sub) << (group - 1)) + (1ull << (group - 1)) / 2;
	return v < h->max_ns ? v : h->max_ns;
}

void hist_merge(struct histogram *into, const struct histogram *from) {
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		into->buckets[i] += from->buckets[i];
	into->count += from->count;
	into->max_ns = from->max_ns > into->max_ns ? from->max_ns : into->max_ns;
}

uint64_t percentile_rank(uint64_t count, double fraction) {
	double exact_rank = fraction * (double)count;
	uint64_t rank = (uint64_t)exact_rank;
	return (double)rank < exact_rank || rank == 0 ? rank + 1 : rank;
}

uint64_t hist_percentile(const struct histogram *h, double fraction) {
	uint64_t rank = percentile_rank(h->count, fraction), seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		if ((seen += h->buckets[i]) >= rank)
			return hist_value(h, i);
	return h->max_ns;
}

uint64_t samples_percentile(const uint64_t *sorted, size_t n, double fraction) {
	uint64_t rank = percentile_rank(n, fraction);
	return n == 0 ? 0 : sorted[rank <= n ? rank - 1 : n - 1];
}

const char *transport_name(enum gr_api_transport t) {
	static const char *const names[] = {"auto", "socket", "shm"}; // the enum's order
	return t < 3 ? names[t] : "auto";
}

const char *request_name(size_t size) {
	return size == 0 ? "GR_PING" : (size == GR_PING2_LEN ? "GR_PING2" : "GR_SHM_ECHO");
}

const char *backing_name(uint32_t backing) {
	static const char *const names[] = {NULL, "memfd", "memzone"}; // GR_SHM_BACKING_* bits
	return backing < 3 ? names[backing] : "mixed";
}

void client_state_init(struct client_state *s, const struct options *o, struct gr_api_client *c) {
	*s = (struct client_state){.opts = o, .client = c, .epoll_fd = -1};
	s->type = o->size == 0 ? GR_PING : (o->size == GR_PING2_LEN ? GR_PING2 : GR_SHM_ECHO);
	s->tx = malloc(o->size > 0 ? o->size : 1);
	s->rx = malloc(GR_API_MAX_MSG_LEN);
	s->fifo = calloc(o->depth, sizeof(*s->fifo));
	FAIL_IF(s->tx == NULL || s->rx == NULL || s->fifo == NULL, "%s", strerror(ENOMEM));
	payload_fill(s->tx, o->size);
}

void client_state_close(struct client_state *s) {
	FAIL_IF(gr_api_client_disconnect(s->client) < 0, "disconnect: %s", strerror(errno));
	free(s->tx);
	free(s->rx);
	free(s->fifo);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
}

static size_t stamp_len(size_t size) {
	return size < STAMP_LEN ? size : STAMP_LEN;
}

// sent_ns: the clock read just before (a receive's, when the send follows it).
static void send_one(struct client_state *s, uint64_t sent_ns) {
	unsigned tail = s->head + s->used, depth = s->opts->depth;
	struct inflight *slot = &s->fifo[tail < depth ? tail : tail - depth];
	uint64_t seq = s->next_seq++;
	size_t size = s->opts->size;
	long id;
	memcpy(s->tx, &seq, stamp_len(size));
	slot->seq = seq;
	slot->sent_ns = sent_ns;
	// Pipelined, a batch: the next receive that waits flushes it (one fence, a doorbell).
	if (depth > 1)
		id = gr_api_client_send_more(s->client, s->type, size, s->tx);
	else
		id = gr_api_client_send(s->client, s->type, size, s->tx);
	if (id <= 0 || id > UINT32_MAX)
		fail("send %s #%" PRIu64 ": %s", request_name(size), seq, strerror(errno));
	slot->id = (uint32_t)id;
	s->used++;
}

// At most the handle's timeout; the epoll is made at the first wait (clients connect later).
static int event_loop_wait(struct client_state *s) {
	struct epoll_event ev = {.events = EPOLLIN};
	int fd = s->epoll_fd < 0 ? gr_api_client_fd(s->client) : 0, n = 0;
	FAIL_IF(fd < 0, "gr_api_client_fd: %s", strerror(errno));
	if (s->epoll_fd < 0 && (s->epoll_fd = epoll_create1(EPOLL_CLOEXEC)) >= 0)
		n = epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
	FAIL_IF(s->epoll_fd < 0 || n < 0, "epoll for the client's fd: %s", strerror(errno));
	do
		n = epoll_wait(s->epoll_fd, &ev, 1, gr_api_client_timeout_ms(s->client));
	while (n < 0 && errno == EINTR);
	if (n == 0)
		errno = ETIMEDOUT;
	return n > 0 ? 0 : -1;
}

// As a controller does (docs/event-loop.md): epoll_wait() only when poll_prepare() returns 0.
static long recv_event_loop(struct client_state *s, uint32_t id) {
	for (;;) {
		long len = gr_api_client_try_recv_into(s->client, id, s->rx, GR_API_MAX_MSG_LEN);
		if (len >= 0 || errno != EAGAIN)
			return len;
		int ready = gr_api_client_poll_prepare(s->client);
		if (ready < 0)
			return -1;
		int waited = ready == 0 ? event_loop_wait(s) : 0, err = errno;
		if (gr_api_client_poll_done(s->client) < 0 && waited == 0)
			return -1;
		if (waited < 0) {
			errno = err;
			return -1;
		}
	}
}

static long recv_oldest(struct client_state *s, struct inflight *call) {
	long len;
	*call = s->fifo[s->head];
	if (s->opts->event_loop)
		len = recv_event_loop(s, call->id);
	else
		len = gr_api_client_recv_into(s->client, call->id, s->rx, GR_API_MAX_MSG_LEN);
	if (s->opts->stamps)
		s->last_ns = call_ns();
	if (len < 0)
		fail("request %" PRIu32 " (%s #%" PRIu64 "): %s",
		     call->id,
		     request_name(s->opts->size),
		     call->seq,
		     strerror(errno));
	s->head = s->head + 1 == s->opts->depth ? 0 : s->head + 1;
	s->used--;
	return len;
}

// Runs after the next request left: a send touches neither s->rx nor the payload past the stamp.
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

uint64_t run_calls(struct client_state *s, uint64_t calls, uint64_t deadline, struct histogram *h) {
	uint64_t sent = 0, done = 0, start = call_ns(), next_progress = start + NSEC_PER_SEC;
	struct inflight call;
	for (s->last_ns = start; sent < calls && s->used < s->opts->depth; sent++)
		send_one(s, call_ns());
	while (s->used > 0) {
		long len = recv_oldest(s, &call);
		// The next request leaves first, stamped with the clock read that ended this one:
		// the checks run while it is in flight, not between response and request.
		if (sent < calls && (deadline == 0 || s->last_ns < deadline)) {
			send_one(s, s->last_ns);
			sent++;
		}
		check_response(s, &call, len);
		done++;
		if (!s->opts->stamps) {
			if ((done & NO_STAMPS_CLOCK_MASK) == 0)
				s->last_ns = call_ns();
		} else if (h != NULL) {
			hist_add(h, s->last_ns - call.sent_ns);
		}
		if (!s->progress || (done & PROGRESS_CHECK_MASK) != 0 || s->last_ns < next_progress)
			continue;
		fprintf(stderr, "%s: %" PRIu64, log_prefix, done);
		if (deadline == 0)
			fprintf(stderr, "/%" PRIu64, calls);
		double rate = (double)done * NSEC_PER_SEC / (double)(s->last_ns - start);
		fprintf(stderr, " calls, %.0f calls/s\n", rate);
		next_progress = s->last_ns + NSEC_PER_SEC;
	}
	return done;
}

uint64_t call_alone(struct client_state *s) {
	struct inflight call;
	send_one(s, call_ns());
	check_response(s, &call, recv_oldest(s, &call));
	return s->last_ns - call.sent_ns;
}

struct gr_api_client *connect_client(const struct options *o, enum gr_api_transport t) {
	struct gr_api_client_opts opts = {.transport = t, .spin_us = o->spin_us};
	opts.version = "ping2_perf";
	return gr_api_client_connect_opts(o->sock_path, &opts);
}

static uint32_t channel_backing(struct gr_api_client *c) {
	long id = gr_api_client_send(c, GR_SHM_CHANNEL_LIST, 0, NULL);
	struct gr_shm_channel_info *info;
	uint32_t backing = 0;
	size_t len;
	int ret;
	FAIL_IF(id <= 0, "send GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	while ((ret = gr_api_client_stream_next(c, (uint32_t)id, (void **)&info, &len)) == 1) {
		if (len != sizeof(*info))
			fail("GR_SHM_CHANNEL_LIST: entry of %zu bytes, expected %zu",
			     len,
			     sizeof(*info));
		backing = info->client_pid == getpid() ? info->backing : backing;
		free(info);
	}
	FAIL_IF(ret < 0, "GR_SHM_CHANNEL_LIST: %s", strerror(errno));
	FAIL_IF(backing == 0, "GR_SHM_CHANNEL_LIST lists no channel of pid %d", (int)getpid());
	return backing;
}

struct gr_api_client *
connect_measured(const struct options *o, enum gr_api_transport t, uint32_t *backing) {
	struct gr_api_client *c = connect_client(o, t), *other;
	int err = errno;
	if (c == NULL && err == ENOTSUP && t == GR_API_TRANSPORT_SHM &&
	    (other = connect_client(o, GR_API_TRANSPORT_AUTO)) != NULL) { // it says why shm failed
		const char *why = gr_api_client_transport_reason(other);
		if (gr_api_client_transport(other) != GR_API_TRANSPORT_SHM)
			fprintf(stderr, "%s: shm not available: %s\n", log_prefix, why);
		gr_api_client_disconnect(other);
	}
	if (c == NULL)
		fail("connect %s (transport %s): %s", o->sock_path, transport_name(t), strerror(err)
		);
	*backing = gr_api_client_transport(c) == GR_API_TRANSPORT_SHM ? channel_backing(c) : 0;
	if (o->secondary && t != GR_API_TRANSPORT_SOCKET && *backing != GR_SHM_BACKING_MEMZONE)
		fail("--secondary, but no memzone channel: %s", gr_api_client_transport_reason(c));
	return c;
}
