// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The client half of shm_syscall_count.sh: GR_PING2 calls over the channel
// between two marker system calls, close(SYSCALL_MARK_START) and
// close(SYSCALL_MARK_END), which fail with EBADF and stand out in strace's
// log. Between them a busy channel should make next to no system call.
//
// usage: syscall_count_client SOCK

#include "check.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Descriptors no process has: close() fails with EBADF, and strace shows
// the number (shm_syscall_count.sh looks for them).
#define SYSCALL_MARK_START -1000
#define SYSCALL_MARK_END -1001
#define WARMUP_CALLS 10000
#define MEASURED_CALLS 100000

static void ping2_calls(struct gr_api_client *c, unsigned n, unsigned salt) {
	struct gr_ping2 req, resp;

	for (unsigned i = 0; i < n; i++) {
		memcpy(req.data, &i, sizeof(i));
		memset(req.data + sizeof(i), (int)(uint8_t)(i + salt), sizeof(req.data) - sizeof(i)
		);
		long id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
		CHECK(id > 0, "send GR_PING2 %u: %s", i, strerror(errno));
		long len = gr_api_client_recv_into(c, (uint32_t)id, &resp, sizeof(resp));
		CHECK(len == (long)sizeof(resp), "GR_PING2 %u: %ld: %s", i, len, strerror(errno));
		CHECK(memcmp(&req, &resp, sizeof(req)) == 0, "GR_PING2 %u: echo differs", i);
	}
}

int main(int argc, char **argv) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SHM,
		.spin_us = -1, // the client's default spin budget
		.version = "syscall_count_client",
	};

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	struct gr_api_client *c = gr_api_client_connect_opts(argv[1], &opts);
	CHECK(c != NULL, "connect %s over shm: %s", argv[1], strerror(errno));
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SHM,
	      "not on the channel: %s",
	      gr_api_client_transport_reason(c));

	ping2_calls(c, WARMUP_CALLS, 0);
	uint64_t start = monotonic_ns();
	CHECK(close(SYSCALL_MARK_START) < 0 && errno == EBADF, "start marker");
	ping2_calls(c, MEASURED_CALLS, 1);
	CHECK(close(SYSCALL_MARK_END) < 0 && errno == EBADF, "end marker");
	double s = (double)(monotonic_ns() - start) / 1e9;
	printf("%d GR_PING2 calls in %.3f s: %.0f calls/s\n", MEASURED_CALLS, s, MEASURED_CALLS / s
	);

	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
