// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The daemon's socket input costs it the bytes it reads, whatever their
// alignment. A client first sends one request of the maximum size (the
// connection's input buffer grows to hold it), then pipelines GR_PING
// requests with a few bytes of payload as fast as the socket takes them, so
// that every read fills the buffer. With 4-byte payloads every payload
// starts aligned; with 1-byte payloads most start misaligned, and a daemon
// that moved all its pending input to realign each one would serve them
// some twenty times slower (quadratic in the buffer). The two kinds run in
// turns, ROUNDS each, and the best rate of each kind is compared: the ratio,
// not a rate, is what must hold, so a loaded machine slows both alike.
//
// usage: sock_input_linear SOCK ratio
//        sock_input_linear SOCK flood MS STOP_FILE
//            misaligned pipelining until the file STOP_FILE exists, for at
//            most MS ms, then print its rate (an attacker for
//            test/sock_input_linear.sh, which ends it once it has measured
//            other clients beside it)
//
// Each round prints "flooding" once its pipelining begins.

#include "check.h"
#include "raw_sock.h"

#include <gr_api.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

// Payload lengths: every payload aligned (a multiple of 4), or most not.
#define ALIGNED_PAYLOAD 4
#define MISALIGNED_PAYLOAD 1
// Length of one round, and rounds of each kind.
#define ROUND_MS 300
#define ROUNDS 3
// Misaligned rate over aligned rate, at least: about 1 when input is linear,
// about 0.05 when each misaligned payload moves the pending input.
#define RATIO_MIN 0.3
// Requests the sender writes at once: 64 KiB of them.
#define SEND_CHUNK (64u << 10)
#define RECV_CHUNK (64u << 10)
#define NSEC_PER_MSEC 1000000ull

struct round {
	int fd;
	uint32_t payload_len;
	atomic_bool stop; // the reader is done: the sender stops
	atomic_bool sent_all; // the sender stopped
};

// Send pipelined GR_PING requests of payload_len bytes until told to stop.
static void *sender(void *arg) {
	struct round *r = arg;
	size_t msg = sizeof(struct gr_api_request) + r->payload_len;
	size_t n = SEND_CHUNK / msg;
	uint8_t *buf = calloc(n, msg);

	CHECK(buf != NULL, "malloc");
	for (size_t i = 0; i < n; i++) {
		struct gr_api_request hdr = {
			.id = (uint32_t)i + 1,
			.type = GR_PING,
			.payload_len = r->payload_len,
		};
		memcpy(buf + i * msg, &hdr, sizeof(hdr));
	}
	while (!atomic_load(&r->stop))
		CHECK(raw_send_bytes(r->fd, buf, n * msg) == 0, "send: the daemon closed");
	free(buf);
	atomic_store(&r->sent_all, true);
	return NULL;
}

// Whether the file stop_path (NULL: none) exists.
static bool stop_file_exists(const char *stop_path) {
	return stop_path != NULL && access(stop_path, F_OK) == 0;
}

// Pipeline requests of payload_len bytes on a new connection for ms
// milliseconds, or until the file stop_path exists, and return the
// responses per second.
static double
pipeline_rate(const char *sock_path, uint32_t payload_len, unsigned ms, const char *stop_path) {
	static uint8_t big[GR_API_MAX_MSG_LEN];
	static uint8_t in[RECV_CHUNK];
	struct round r = {.payload_len = payload_len};
	struct gr_api_response resp;
	uint64_t bytes = 0, start, stop, now = 0;
	pthread_t thread;
	ssize_t n;

	r.fd = raw_connect(sock_path);
	raw_hello(r.fd, 1);
	// The input buffer grows to one maximal request and keeps that size.
	CHECK(raw_send_request(r.fd, 2, GR_PING, sizeof(big), big, sizeof(big)) == 0, "send");
	CHECK(raw_recv_response(r.fd, &resp, NULL, 0) == 1 && resp.for_id == 2 && resp.status == 0,
	      "maximal GR_PING not answered");
	printf("flooding\n");
	fflush(stdout);
	CHECK(pthread_create(&thread, NULL, sender, &r) == 0, "pthread_create");
	start = monotonic_ns();
	stop = start + ms * NSEC_PER_MSEC;
	// Read until the time is up, then on (uncounted) until the sender has
	// seen the stop: a sender blocked on a full socket needs the daemon to
	// read, which needs its output read.
	while (!atomic_load(&r.sent_all)) {
		n = recv(r.fd, in, sizeof(in), 0);
		CHECK(n > 0, "recv: %s", n < 0 ? strerror(errno) : "EOF");
		if (!atomic_load(&r.stop)) {
			bytes += (uint64_t)n;
			now = monotonic_ns();
			if (now >= stop || stop_file_exists(stop_path))
				atomic_store(&r.stop, true);
		}
	}
	pthread_join(thread, NULL);
	close(r.fd);
	return (double)(bytes / sizeof(resp)) / ((double)(now - start) / 1e9);
}

static int run_ratio(const char *sock_path) {
	double best_aligned = 0, best_misaligned = 0;

	for (unsigned i = 0; i < ROUNDS; i++) {
		double a = pipeline_rate(sock_path, ALIGNED_PAYLOAD, ROUND_MS, NULL);
		double m = pipeline_rate(sock_path, MISALIGNED_PAYLOAD, ROUND_MS, NULL);
		printf("round %u: %.0f requests/s with %d-byte payloads, %.0f with %d-byte ones\n",
		       i,
		       a,
		       ALIGNED_PAYLOAD,
		       m,
		       MISALIGNED_PAYLOAD);
		best_aligned = a > best_aligned ? a : best_aligned;
		best_misaligned = m > best_misaligned ? m : best_misaligned;
	}
	double ratio = best_misaligned / best_aligned;
	printf("misaligned / aligned: %.3f (at least %.2f)\n", ratio, RATIO_MIN);
	CHECK(ratio >= RATIO_MIN,
	      "misaligned payloads served %.3f times as fast as aligned ones: the input is not"
	      " linear",
	      ratio);
	printf("socket input linear in its bytes: ok\n");
	return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
	CHECK(argc >= 3, "usage: %s SOCK ratio | SOCK flood MS STOP_FILE", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	if (strcmp(argv[2], "ratio") == 0 && argc == 3)
		return run_ratio(argv[1]);
	CHECK(strcmp(argv[2], "flood") == 0 && argc == 5,
	      "usage: %s SOCK ratio | SOCK flood MS STOP_FILE",
	      argv[0]);
	char *end;
	unsigned long ms = strtoul(argv[3], &end, 10);
	CHECK(*end == '\0' && ms > 0, "MS '%s' is not a positive number", argv[3]);
	printf("flood: %.0f requests/s with %d-byte payloads\n",
	       pipeline_rate(argv[1], MISALIGNED_PAYLOAD, (unsigned)ms, argv[4]),
	       MISALIGNED_PAYLOAD);
	return EXIT_SUCCESS;
}
