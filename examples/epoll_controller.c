// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// An event-loop controller: one epoll loop that waits on the client's
// descriptor (gr_api_client_fd()) and on a timer of its own, keeps DEPTH
// requests in flight (a 64-byte echo each), and never blocks inside the
// client library: poll_prepare before each wait, poll_done after it, and
// try_recv for every request in flight. The timer watches for progress: a
// daemon that answers nothing for STALL_MS is reported, as is one that dies
// (the descriptor wakes, the next call fails with ECONNRESET).
//
// usage: epoll_controller [SOCK [COUNT [DEPTH]]]
// build: cc epoll_controller.c $(pkg-config --cflags --libs gr_api_client)

#include <gr_api.h>
#include <gr_api_client.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_COUNT 100000
#define DEFAULT_DEPTH 32
#define MAX_DEPTH 1024
// The timer's period, and how long without a response is a stall.
#define TICK_MS 100
#define STALL_MS 5000

// What woke epoll_wait(): the tag in each descriptor's epoll data.
enum source { SOURCE_CLIENT, SOURCE_TIMER };

struct request {
	uint32_t id;
	uint32_t seq; // what its echo carries
};

struct controller {
	struct gr_api_client *client;
	struct request in_flight[MAX_DEPTH];
	unsigned n_in_flight;
	uint64_t sent, done, count;
	unsigned ticks_idle; // timer ticks since the last response
};

static void fill(struct gr_ping2 *p, uint32_t seq) {
	for (size_t i = 0; i < sizeof(p->payload); i += sizeof(seq))
		memcpy(p->payload + i, &seq, sizeof(seq));
}

// Send one more request into slot i. send_more: the next poll_prepare
// wakes a sleeping daemon for the whole batch.
static int send_next(struct controller *ctl, unsigned i) {
	struct gr_ping2 req;
	uint32_t seq = (uint32_t)ctl->sent;
	fill(&req, seq);
	long id = gr_api_client_send_more(ctl->client, GR_PING2, sizeof(req), &req);
	if (id < 0)
		return -1;
	ctl->in_flight[i] = (struct request){.id = (uint32_t)id, .seq = seq};
	ctl->sent++;
	return 0;
}

// Take every response that arrived, without waiting, and refill the
// pipeline. Returns 0, or -1 with errno.
static int take_responses(struct controller *ctl) {
	for (unsigned i = 0; i < ctl->n_in_flight;) {
		struct gr_ping2 resp, want;
		long len = gr_api_client_try_recv_into(
			ctl->client,
			ctl->in_flight[i].id,
			&resp,
			sizeof(resp)
		);
		if (len < 0 && errno == EAGAIN) {
			i++; // not yet
			continue;
		}
		if (len < 0)
			return -1;
		fill(&want, ctl->in_flight[i].seq);
		if (len != (long)sizeof(resp) || memcmp(&resp, &want, sizeof(resp)) != 0) {
			errno = EBADMSG;
			return -1;
		}
		ctl->done++;
		ctl->ticks_idle = 0;
		if (ctl->sent < ctl->count) {
			if (send_next(ctl, i) < 0)
				return -1;
			i++;
		} else {
			ctl->in_flight[i] = ctl->in_flight[--ctl->n_in_flight];
		}
	}
	return 0;
}

static int add_fd(int ep, int fd, enum source source) {
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = source};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int timer_start(void) {
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	const struct timespec tick = {.tv_nsec = TICK_MS * 1000000L};
	const struct itimerspec spec = {.it_interval = tick, .it_value = tick};
	if (fd >= 0 && timerfd_settime(fd, 0, &spec, NULL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int fail(const char *what) {
	fprintf(stderr, "epoll_controller: %s: %s\n", what, strerror(errno));
	return EXIT_FAILURE;
}

int main(int argc, char **argv) {
	const char *sock = argc > 1 ? argv[1] : GR_API_DEFAULT_SOCK_PATH;
	struct controller ctl = {.count = argc > 2 ? strtoull(argv[2], NULL, 10) : DEFAULT_COUNT};
	unsigned depth = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : DEFAULT_DEPTH;
	if (depth == 0 || depth > MAX_DEPTH || ctl.count == 0) {
		fprintf(stderr, "usage: %s [SOCK [COUNT [DEPTH (1..%d)]]]\n", argv[0], MAX_DEPTH);
		return 2;
	}

	ctl.client = gr_api_client_connect(sock);
	if (ctl.client == NULL) {
		fprintf(stderr, "epoll_controller: %s\n", gr_api_client_last_error());
		return EXIT_FAILURE;
	}
	int client_fd = gr_api_client_fd(ctl.client);
	int timer_fd = timer_start();
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (client_fd < 0 || timer_fd < 0 || ep < 0 || add_fd(ep, client_fd, SOURCE_CLIENT) < 0 ||
	    add_fd(ep, timer_fd, SOURCE_TIMER) < 0)
		return fail("setting up the loop");

	while (ctl.n_in_flight < depth && ctl.sent < ctl.count)
		if (send_next(&ctl, ctl.n_in_flight++) < 0)
			return fail("send");

	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	uint64_t sleeps = 0;
	while (ctl.done < ctl.count) {
		// 1 when a response waits already: look without sleeping.
		int ready = gr_api_client_poll_prepare(ctl.client);
		if (ready < 0)
			return fail("poll_prepare");
		struct epoll_event evs[2];
		int n = epoll_wait(ep, evs, 2, ready ? 0 : -1);
		if (n < 0 && errno != EINTR)
			return fail("epoll_wait");
		sleeps += !ready;
		// After every wait that followed a prepare returning 0.
		if (gr_api_client_poll_done(ctl.client) < 0)
			return fail("poll_done");
		for (int i = 0; i < n; i++) {
			uint64_t expirations;
			if (evs[i].data.u32 != SOURCE_TIMER ||
			    read(timer_fd, &expirations, sizeof(expirations)) < 0)
				continue;
			ctl.ticks_idle += (unsigned)expirations;
			if (ctl.ticks_idle * TICK_MS >= STALL_MS) {
				fprintf(stderr,
					"epoll_controller: no response for %d ms, %u in flight: "
					"daemon stopped?\n",
					STALL_MS,
					ctl.n_in_flight);
				return EXIT_FAILURE;
			}
		}
		if (take_responses(&ctl) < 0)
			return fail("receive");
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	double s =
		(double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
	printf("%s: %llu echoes, %u in flight, in %.3f s (%.0f/s), %llu sleeps\n",
	       gr_api_client_transport(ctl.client) == GR_API_TRANSPORT_SHM ? "shm" : "socket",
	       (unsigned long long)ctl.done,
	       depth,
	       s,
	       (double)ctl.done / s,
	       (unsigned long long)sleeps);
	close(ep);
	close(timer_fd);
	return gr_api_client_disconnect(ctl.client) < 0 ? fail("disconnect") : EXIT_SUCCESS;
}
