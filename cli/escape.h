// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Text from the daemon, made safe for a terminal: a name, a version or a
// reason a daemon sent could hold escape sequences (set the window title,
// clear the screen, move the cursor) or line breaks that forge lines of
// output. Every byte below 0x20, 0x7f and every byte from 0x80 on is written
// \xNN, and a backslash \\, so that what is printed is the daemon's text,
// byte for byte, in plain ASCII. JSON output escapes the same bytes itself
// (json.c).

#pragma once

#include <stdio.h>

// A malloc'ed escaped copy of s, or NULL when out of memory.
char *escape_dup(const char *s);

// Write s escaped to f.
void escape_fputs(const char *s, FILE *f);
