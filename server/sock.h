// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The Unix stream socket server of shmchand: listener, client connections,
// and the "socket" api_transport. Main thread only.

#pragma once

#include <event2/event.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

// A client whose pending output passes this many bytes is paused: the daemon
// reads no more of its requests until the output drains below
// SOCK_OUTPUT_LOW. 4 MiB is 32 maximum-size responses.
#define SOCK_OUTPUT_HIGH (4u << 20)
#define SOCK_OUTPUT_LOW (1u << 20)
// A turn of a connection (the requests one read of it brought, served in a
// row on the main thread, which every socket client shares) ends once the
// requests it served produced this many responses, each request counting
// for one at least, or SOCK_TURN_BYTES bytes of them, or once the loop was
// told to stop. The rest waits for the connection's next turn, after every
// other connection that is ready. 128 responses: a client pipelining up to
// 128 GR_PING2 is served its whole batch in one turn and one write, while
// one whose every request streams 200 responses (GR_LOG_LEVEL_LIST) is
// served one request per turn, some tens of microseconds.
#define SOCK_TURN_RESPONSES 128
// Two socket buffers' worth of responses at most before the others are
// served; a response larger than this ends a turn alone.
#define SOCK_TURN_BYTES (64u << 10)
// A paused client still above SOCK_OUTPUT_HIGH after this long, or a closing
// client whose last responses are not read within it, is disconnected.
#define SOCK_OUTPUT_STALL_SEC 5
// Events are moved from a subscriber's backlog to its connection's output
// only while that output holds less than this: the backlog, not libevent,
// holds what a client does not read, and it is bounded and counts losses.
// 256 KiB is two of the largest events.
#define SOCK_EVENT_OUTPUT_MAX (256u << 10)
// GR_API_SERVER_MAX_CLIENTS connections are served at once; more are
// refused (see below). Of those, the last GR_API_SERVER_ROOT_RESERVED only
// root's processes may take: whatever the other users hold, an
// administrator can still connect.
// A refused connection is not closed bare: the daemon waits at most
// SOCK_REFUSE_WAIT_MS for its first request (the client's GR_HELLO), answers
// it with the reason as its status and closes, so that the client's connect
// fails with that errno:
//   EMFILE  its process holds server_conf.max_conn_per_pid connections
//   EUSERS  its uid (not root) holds server_conf.max_conn_per_uid
//   ENFILE  the server holds GR_API_SERVER_MAX_CLIENTS connections, or
//           GR_API_SERVER_MAX_CLIENTS - GR_API_SERVER_ROOT_RESERVED and the
//           client is not root,
//           or its open files limit has no room for the connection (for
//           another user than root: none that leaves root's; fd_budget.h)
// A client that sends its hello right after connect (as the client library
// does) is answered at once. At most SOCK_REFUSED_MAX refused connections
// wait for theirs at once; past that a refused connection that has sent
// nothing yet is closed at once (its client sees ECONNRESET).
#define SOCK_REFUSE_WAIT_MS 1000
#define SOCK_REFUSED_MAX 256

// Create the socket at path (never abstract, at most sizeof(sun_path) - 1
// bytes), remove a stale socket file nobody answers on, bind, chmod to mode,
// chown to gid unless it is (gid_t)-1, listen, and serve clients on base.
// Returns 0, -EINVAL (bad path), -EADDRINUSE (another daemon answers on
// path), -EEXIST (path is not a socket) or another -errno.
int sock_server_init(struct event_base *base, const char *path, mode_t mode, gid_t gid);

// The checks of sock_server_init() that need no event loop, for main() to
// make before EAL init, so that a daemon that cannot serve path creates
// nothing: check path, refuse if another daemon answers there or if it is
// not a socket, and remove a stale socket file. Logs why it refuses.
// Returns 0, -EINVAL, -EADDRINUSE, -EEXIST or another -errno.
int sock_server_check(const char *path);

// Stop listening, close every connection (calling each lease_lost), and
// remove the socket file if it is still the one we created. Idempotent.
void sock_server_fini(void);

// What a connection carried on the socket: requests and responses, with
// their bytes (headers included).
struct sock_conn_counters {
	uint64_t requests;
	uint64_t req_bytes;
	uint64_t responses;
	uint64_t resp_bytes;
};

struct gr_api_ctx;

// Called for one connection: its dispatch state, whether its lease (of a
// channel, if it attached one) still holds, its counters and its age.
typedef void (*sock_client_walk_fn
)(const struct gr_api_ctx *ctx,
  bool lease_held,
  const struct sock_conn_counters *counters,
  uint64_t age_ns,
  void *arg);

// Call fn for every open connection, in accept order, and return how many.
// Any thread. fn runs under the connection table's lock: while it runs no
// connection is added or freed and no lease ends, so a lease held stays
// held. fn must not call back into the socket server (no gr_api_send(): copy
// what it needs and send after the walk).
unsigned sock_clients_walk(sock_client_walk_fn fn, void *arg);
