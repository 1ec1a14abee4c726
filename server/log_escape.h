// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Text a client wrote, made safe for the log: a line of the log must say
// what the daemon saw, never what a client wants it to seem to say. A
// newline in a hello's version string would otherwise start a line of the
// client's making, and a terminal escape in it would reach whoever reads
// the log. Any thread.

#pragma once

#include <stddef.h>

// Room log_escape() needs for a string of n bytes, NUL included: each byte
// may become four ("\xNN").
#define LOG_ESCAPE_LEN(n) (4 * (n) + 1)

// Copy the NUL-terminated src into dst (len >= 1 bytes) for the log:
// printable ASCII as is, a backslash as "\\", any other byte (control
// characters, DEL, every byte above 0x7f) as "\xNN". Stops where the next
// byte's text would not fit, never in the middle of an escape; dst is
// always NUL-terminated. Returns dst.
char *log_escape(char *dst, size_t len, const char *src);
