// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "escape.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

// Below this, a byte is a control character (C0).
#define ESCAPE_FIRST_PLAIN 0x20
// From this on, DEL, then bytes a terminal may take for C1 controls (0x9b
// is CSI to some) or for parts of a character it decodes.
#define ESCAPE_PAST_PLAIN 0x7f
// The longest escape of one byte: \xNN.
#define ESCAPE_MAX 4

static bool plain(unsigned char c) {
	return c >= ESCAPE_FIRST_PLAIN && c < ESCAPE_PAST_PLAIN && c != '\\';
}

// Write the escape of c at out; returns its length.
static size_t escape_byte(unsigned char c, char *out) {
	static const char digits[] = "0123456789abcdef";

	if (plain(c)) {
		out[0] = (char)c;
		return 1;
	}
	if (c == '\\') {
		out[0] = out[1] = '\\';
		return 2;
	}
	out[0] = '\\';
	out[1] = 'x';
	out[2] = digits[c >> 4];
	out[3] = digits[c & 0xf];
	return ESCAPE_MAX;
}

char *escape_dup(const char *s) {
	size_t len = strlen(s), n = 0;
	char *out = malloc(ESCAPE_MAX * len + 1);

	if (out == NULL)
		return NULL;
	for (; *s != '\0'; s++)
		n += escape_byte((unsigned char)*s, out + n);
	out[n] = '\0';
	return out;
}

void escape_fputs(const char *s, FILE *f) {
	char buf[ESCAPE_MAX];

	for (; *s != '\0'; s++)
		fwrite(buf, 1, escape_byte((unsigned char)*s, buf), f);
}
