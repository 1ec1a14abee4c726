// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "fd_budget.h"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>

// Descriptors kept for root: its reserved connections, each with a channel.
#define FD_BUDGET_ROOT_RESERVE (GR_API_SERVER_ROOT_RESERVED * FD_BUDGET_PER_CLIENT)

// Every connection with a channel, the spare, and the pidfds of held
// memzones: what the public header tells an application to make room for.
_Static_assert(
	GR_API_SERVER_FDS_MAX == GR_API_SERVER_MAX_CLIENTS * FD_BUDGET_PER_CLIENT +
					 FD_BUDGET_SPARE + CHANNEL_MEMZONE_POOL,
	"gr_api_server.h counts the descriptors as the budget does"
);

// Before fd_budget_init() (the unit tests of the socket): no limit.
static struct {
	unsigned long limit; // RLIMIT_NOFILE when serving started
	unsigned base; // open then
	_Atomic unsigned held; // for the clients since
} budget = {.limit = RLIM_INFINITY};

// The descriptors open now, the one that reads them left out; 0 if they
// cannot be read.
static unsigned fds_open(void) {
	const struct dirent *e;
	unsigned n = 0;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (d == NULL) {
		LOG(WARNING, "/proc/self/fd: %s: open files not counted", strerror(errno));
		return 0;
	}
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

unsigned fd_budget_room(bool root) {
	unsigned long used = (unsigned long)budget.base + FD_BUDGET_SPARE;
	unsigned long room = budget.limit > used ? budget.limit - used : 0;

	if (!root)
		room = room > FD_BUDGET_ROOT_RESERVE ? room - FD_BUDGET_ROOT_RESERVE : 0;
	return room > UINT32_MAX ? UINT32_MAX : (unsigned)room;
}

void fd_budget_init(void) {
	unsigned long needed;
	struct rlimit lim;

	budget.limit = getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : RLIM_INFINITY;
	budget.base = fds_open();
	needed = (unsigned long)budget.base + GR_API_SERVER_FDS_MAX;
	LOG(INFO,
	    "open files: limit %lu, %u open at start; per client 1 for its connection, %d for"
	    " a memfd channel, %d for a memzone channel",
	    budget.limit,
	    budget.base,
	    CHANNEL_FDS_MAX,
	    CHANNEL_FDS_MEMZONE);
	if (budget.limit >= needed)
		return;
	LOG(WARNING,
	    "open files limited to %lu, under the %lu that %d clients with channels need: room"
	    " for %u clients with channels of other users than root, and %d more of root's;"
	    " past that, other users' connections are refused (ENFILE) and their attaches"
	    " stay on the socket. Raise the limit (LimitNOFILE= of the systemd unit, ulimit"
	    " -n) to %lu",
	    budget.limit,
	    needed,
	    GR_API_SERVER_MAX_CLIENTS,
	    fd_budget_room(false) / FD_BUDGET_PER_CLIENT,
	    GR_API_SERVER_ROOT_RESERVED,
	    needed);
}

void fd_budget_take(unsigned n) {
	atomic_fetch_add_explicit(&budget.held, n, memory_order_relaxed);
}

void fd_budget_give(unsigned n) {
	atomic_fetch_sub_explicit(&budget.held, n, memory_order_relaxed);
}

unsigned fd_budget_held(void) {
	return atomic_load_explicit(&budget.held, memory_order_relaxed);
}

bool fd_budget_admits(unsigned n, bool root) {
	return (unsigned long)fd_budget_held() + n <= fd_budget_room(root);
}
