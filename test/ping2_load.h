// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A busy, well-behaved client: GR_PING2 requests kept in flight on one
// connection, every echo checked against what was sent.

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
