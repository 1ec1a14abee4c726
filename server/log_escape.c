// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "log_escape.h"

#include <stdio.h>
#include <string.h>

// Bytes a byte's text takes at most: "\xNN".
#define ESCAPE_MAX 4

char *log_escape(char *dst, size_t len, const char *src) {
	size_t out = 0;

	for (const unsigned char *c = (const unsigned char *)src; *c != '\0'; c++) {
		char text[ESCAPE_MAX + 1];
		size_t n;

		if (*c == '\\')
			n = (size_t)snprintf(text, sizeof(text), "\\\\");
		else if (*c >= 0x20 && *c < 0x7f)
			n = (size_t)snprintf(text, sizeof(text), "%c", *c);
		else
			n = (size_t)snprintf(text, sizeof(text), "\\x%02x", *c);
		if (out + n >= len)
			break;
		memcpy(dst + out, text, n);
		out += n;
	}
	dst[out] = '\0';
	return dst;
}
