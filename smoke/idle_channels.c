// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "idle_channels.h"
#include "bench_util.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

// Descriptors a shm client holds: its socket, two doorbells, the memfd
// (closed once mapped, but held while attaching), with room to spare.
#define IDLE_CHANNEL_FDS 6
// Descriptors the rest of ping2_perf needs: stdio, the pipes to its clients
// and their /proc and perf counters.
#define OTHER_FDS 1024

struct idle_channels {
	unsigned n;
	struct gr_api_client *clients[];
};

static void nofile_raise(unsigned n) {
	rlim_t want = (rlim_t)n * IDLE_CHANNEL_FDS + OTHER_FDS;
	struct rlimit lim;

	if (getrlimit(RLIMIT_NOFILE, &lim) < 0 || lim.rlim_cur >= want)
		return;
	lim.rlim_cur = lim.rlim_max < want ? lim.rlim_max : want;
	if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
		fail("--idle-channels %u: setrlimit(RLIMIT_NOFILE): %s", n, strerror(errno));
}

struct idle_channels *idle_channels_open(const char *sock_path, unsigned n) {
	const struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SHM,
		.spin_us = 0, // never waits but for the one GR_PING
		.version = "ping2_perf idle",
	};
	struct idle_channels *ic = calloc(1, sizeof(*ic) + n * sizeof(ic->clients[0]));

	if (ic == NULL)
		fail("--idle-channels %u: %s", n, strerror(ENOMEM));
	nofile_raise(n);
	for (unsigned i = 0; i < n; i++) {
		struct gr_api_client *c = gr_api_client_connect_opts(sock_path, &opts);
		if (c == NULL)
			fail("--idle-channels: connect %u of %u over shm: %s%s",
			     i + 1,
			     n,
			     strerror(errno),
			     errno == EMFILE ? " (the daemon's --max-conn-per-pid)" : "");
		ic->clients[ic->n++] = c;
		if (gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL) != 0)
			fail("--idle-channels: GR_PING on channel %u: %s", i + 1, strerror(errno));
	}
	return ic;
}

void idle_channels_close(struct idle_channels *ic) {
	if (ic == NULL)
		return;
	for (unsigned i = 0; i < ic->n; i++)
		gr_api_client_disconnect(ic->clients[i]);
	free(ic);
}
