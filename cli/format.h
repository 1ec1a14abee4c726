// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Numbers and durations for people: tables show them short, JSON exact.

#pragma once

#include <stddef.h>
#include <stdint.h>

// Room for any string below.
#define FORMAT_LEN 32

// 999, 1.2K, 3.4M, 5.6G... (powers of 1000, one decimal past 1000).
const char *format_count(char buf[FORMAT_LEN], uint64_t value);

// Bytes in powers of 1024: 999B, 1.2KiB, 4.0MiB, 128.0KiB.
const char *format_bytes(char buf[FORMAT_LEN], uint64_t bytes);

// 850ms, 45s, 2m03s, 1h02m, 3d04h.
const char *format_duration_ms(char buf[FORMAT_LEN], uint64_t ms);

// A latency in microseconds with three significant digits: 0.512, 8.61, 123.
const char *format_us(char buf[FORMAT_LEN], double ns);
