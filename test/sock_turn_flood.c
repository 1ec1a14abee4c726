// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Socket clients that pipeline expensive requests: CONNS raw connections of
// one process, each sending GR_LOG_LEVEL_LIST with show_all (about 200
// streamed responses each) as fast as its socket takes them, and reading
// and dropping whatever comes back, so that the daemon always finds a full
// socket buffer of them to serve and never pauses the connection for its
// output. test/sock_turn_fairness.sh runs it beside a latency probe, and
// test/sock_stop_under_load.sh stops the daemon under it.
//
// Prints "ready" once every connection got its first bytes back. Runs until
// SIGTERM, or until the daemon has closed every connection (it stopped).
// Then prints one line of key=value: requests sent, bytes received, and the
// connections the daemon closed.
//
// usage: sock_turn_flood SOCK CONNS

#include "check.h"
#include "raw_sock.h"

#include <gr_api.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

// Connections at most: more than the daemon serves per process by default
// (--max-conn-per-pid), so a test that asks for more raises that bound.
#define FLOOD_CONNS_MAX 256
// Requests written per send: one socket buffer's worth and more.
#define FLOOD_CHUNK_REQUESTS 1024
// Bytes read per recv: what comes back is dropped.
#define FLOOD_RECV_LEN (256u << 10)
// Poll timeout: SIGTERM interrupts it anyway.
#define FLOOD_POLL_MS 1000

struct list_request {
	struct gr_api_request hdr;
	struct gr_log_level_list_req req;
} __attribute__((packed));

static volatile sig_atomic_t stop;

static void on_term(int sig) {
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv) {
	static struct list_request chunk[FLOOD_CHUNK_REQUESTS];
	static uint8_t drop[FLOOD_RECV_LEN];
	struct sigaction sa = {.sa_handler = on_term};
	struct pollfd pfd[FLOOD_CONNS_MAX];
	size_t offset[FLOOD_CONNS_MAX] = {0};
	bool got[FLOOD_CONNS_MAX] = {false};
	uint64_t sent = 0, received = 0;
	unsigned conns, open, ready = 0;
	char *end;

	CHECK(argc == 3, "usage: %s SOCK CONNS", argv[0]);
	conns = (unsigned)strtoul(argv[2], &end, 10);
	CHECK(*end == '\0' && conns > 0 && conns <= FLOOD_CONNS_MAX,
	      "CONNS '%s' is not 1 to %d",
	      argv[2],
	      FLOOD_CONNS_MAX);
	CHECK(sigaction(SIGTERM, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
	for (unsigned i = 0; i < FLOOD_CHUNK_REQUESTS; i++) {
		chunk[i].hdr = (struct gr_api_request){
			.id = i + 1,
			.type = GR_LOG_LEVEL_LIST,
			.payload_len = sizeof(chunk[i].req),
		};
		chunk[i].req.show_all = true;
	}
	for (unsigned c = 0; c < conns; c++) {
		pfd[c].fd = raw_connect(argv[1]);
		raw_hello(pfd[c].fd, 1);
		pfd[c].events = POLLIN | POLLOUT;
	}
	open = conns;
	while (!stop && open > 0) {
		int n = poll(pfd, conns, FLOOD_POLL_MS);
		CHECK(n >= 0 || errno == EINTR, "poll: %s", strerror(errno));
		for (unsigned c = 0; n > 0 && c < conns; c++) {
			if (pfd[c].fd < 0 || pfd[c].revents == 0)
				continue;
			if (pfd[c].revents & POLLOUT) {
				ssize_t w =
					send(pfd[c].fd,
					     (const uint8_t *)chunk + offset[c],
					     sizeof(chunk) - offset[c],
					     MSG_DONTWAIT | MSG_NOSIGNAL);
				if (w > 0) {
					offset[c] = (offset[c] + (size_t)w) % sizeof(chunk);
					sent += (uint64_t)w / sizeof(chunk[0]);
				}
			}
			if (pfd[c].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t r = recv(pfd[c].fd, drop, sizeof(drop), MSG_DONTWAIT);
				if (r > 0) {
					received += (uint64_t)r;
					if (!got[c] && ++ready == conns) {
						printf("ready\n");
						fflush(stdout);
					}
					got[c] = true;
				} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
					// The daemon closed it: it stopped.
					close(pfd[c].fd);
					pfd[c].fd = -1;
					open--;
				}
			}
		}
	}
	printf("conns=%u sent=%" PRIu64 " received_bytes=%" PRIu64 " closed_by_daemon=%u\n",
	       conns,
	       sent,
	       received,
	       conns - open);
	for (unsigned c = 0; c < conns; c++)
		if (pfd[c].fd >= 0)
			close(pfd[c].fd);
	return EXIT_SUCCESS;
}
