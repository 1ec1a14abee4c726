// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The Unix stream socket server of shmchand: listener, client connections,
// and the "socket" api_transport. Main thread only.

#pragma once

#include <event2/event.h>

#include <sys/types.h>

// A client whose pending output passes this many bytes is paused: the daemon
// reads no more of its requests until the output drains below
// SOCK_OUTPUT_LOW. 4 MiB is 32 maximum-size responses.
#define SOCK_OUTPUT_HIGH (4u << 20)
#define SOCK_OUTPUT_LOW (1u << 20)
// A paused client still above SOCK_OUTPUT_HIGH after this long, or a closing
// client whose last responses are not read within it, is disconnected.
#define SOCK_OUTPUT_STALL_SEC 5
// Events are moved from a subscriber's backlog to its connection's output
// only while that output holds less than this: the backlog, not libevent,
// holds what a client does not read, and it is bounded and counts losses.
// 256 KiB is two of the largest events.
#define SOCK_EVENT_OUTPUT_MAX (256u << 10)
// Connections served at once; more are accepted and closed at once.
#define SOCK_MAX_CLIENTS 1024

// Create the socket at path (never abstract, at most sizeof(sun_path) - 1
// bytes), remove a stale socket file nobody answers on, bind, chmod to mode,
// chown to gid unless it is (gid_t)-1, listen, and serve clients on base.
// Returns 0, -EINVAL (bad path), -EADDRINUSE (another daemon answers on
// path), -EEXIST (path is not a socket) or another -errno.
int sock_server_init(struct event_base *base, const char *path, mode_t mode, gid_t gid);

// Stop listening, close every connection (calling each lease_lost), and
// remove the socket file if it is still the one we created. Idempotent.
void sock_server_fini(void);
