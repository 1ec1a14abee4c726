// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The daemon's open files, counted against its RLIMIT_NOFILE.
//
// Past the limit accept() fails for everyone, root included, and the
// connections kept for root are lost. So the daemon counts what its clients
// make it hold (a connection's socket; a channel's descriptors, as
// channel.c counts them; a held memzone's pidfd) and admits a client of
// another user than root only while what it would hold leaves room for
// GR_API_SERVER_ROOT_RESERVED clients of root with channels; root, while it fits at
// all. The room is the limit less what the daemon held when it started to
// serve (counted in /proc/self/fd: EAL, libevent, the pollers, the
// listener) and FD_BUDGET_SPARE, which covers what is not counted: the
// refused connections waiting (SOCK_REFUSED_MAX), a connection accepted
// before it is judged, the descriptors an attach opens before it is
// counted, DPDK telemetry's clients, the files read at exit.
//
// fd_budget_take() and fd_budget_give() may be called on any thread (the
// call_rcu thread frees channels); the rest on the main thread.

#pragma once

#include "channel.h"
#include "sock.h"

#include <stdbool.h>

// Descriptors a client with a channel makes the daemon hold at most: its
// socket and a memfd channel's (channel.h).
#define FD_BUDGET_PER_CLIENT (1 + CHANNEL_FDS_MAX)
// What the room leaves aside for the uncounted descriptors (above): the
// refused connections waiting, and a margin.
#define FD_BUDGET_MARGIN 128
#define FD_BUDGET_SPARE (SOCK_REFUSED_MAX + FD_BUDGET_MARGIN)

// Count the descriptors open now as what the daemon holds of its own, read
// its limit, and warn if the room cannot hold GR_API_SERVER_MAX_CLIENTS clients with
// channels. Main thread, once serving starts (after the pollers, the
// listener and before the first accept).
void fd_budget_init(void);

// The daemon now holds n more, or n fewer, descriptors for its clients.
void fd_budget_take(unsigned n);
void fd_budget_give(unsigned n);

// Whether a peer (root or not) may make the daemon hold n more descriptors.
bool fd_budget_admits(unsigned n, bool root);

// What the daemon holds for its clients, and the room it has, for the logs.
unsigned fd_budget_held(void);
unsigned fd_budget_room(bool root);
