// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A busy, well-behaved client: GR_PING2 requests kept in flight on one
// connection, every echo checked against what was sent; for a healthy client
// beside hostile or killed ones, until SIGTERM with a stall watch, or until
// the process is killed.

#pragma once

#include <gr_api_client.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

// Keep depth GR_PING2 requests in flight on c (1..PING2_LOAD_DEPTH_MAX)
// until *stop is set, then receive the requests still in flight and return.
// Each verified echo adds one to *done. Any error (a failed call, a wrong
// echo) ends the process through CHECK. Calling thread owns c.
void ping2_load(
	struct gr_api_client *c,
	unsigned depth,
	const volatile sig_atomic_t *stop,
	_Atomic uint64_t *done
);

#define PING2_LOAD_DEPTH_MAX 64

// Make SIGTERM end ping2_load_until_term(). Call it before anything the test
// script may interrupt (connect, attach): a SIGTERM that comes before the load
// still ends the client cleanly.
void ping2_load_stop_on_term(void);

// ping2_load() on c until SIGTERM (see ping2_load_stop_on_term()), watched by
// a thread: if no echo is checked for stall_ms, the process prints "WHO: no
// echo for ... stalled" and exits 1 at once, as the daemon let a client that
// did nothing wrong stall. Returns the echoes checked. Call it once per
// process, from the thread that owns c.
uint64_t
ping2_load_until_term(struct gr_api_client *c, unsigned depth, unsigned stall_ms, const char *who);

// ping2_load() on c until the process is killed, each verified echo added to
// *done: for a client that a test kills at a moment of its choosing. Calling
// thread owns c.
void __attribute__((noreturn))
ping2_load_until_killed(struct gr_api_client *c, unsigned depth, _Atomic uint64_t *done);
