// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The daemon's log, captured in memory for the unit tests that count its
// lines (api_fault_log_test.c, event_full_log_test.c).

#pragma once

#include <stdint.h>

// cmocka group setup and teardown: the DPDK log goes to memory, every log
// type at debug level; teardown restores stderr and frees the capture.
int log_capture_setup(void **state);
int log_capture_teardown(void **state);

// Lines logged so far that hold a and b (b NULL: a alone).
unsigned log_lines(const char *a, const char *b);

// CLOCK_MONOTONIC in ns.
uint64_t log_capture_now_ns(void);
