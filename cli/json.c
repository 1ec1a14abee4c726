// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "json.h"

#include <inttypes.h>
#include <stdlib.h>

// Spaces of indent per level.
#define JSON_INDENT 2
// Below this, a character is a control character that JSON wants escaped.
#define JSON_FIRST_PLAIN 0x20
// From this on (DEL and every byte past ASCII) a byte is escaped too, so
// that the output is ASCII, valid UTF-8, whatever a client sent.
#define JSON_PAST_PLAIN 0x7f

void json_init(struct json *j, FILE *f) {
	j->f = f;
	j->depth = 0;
	j->one_line = false;
	j->first[0] = true;
}

void json_init_line(struct json *j, FILE *f) {
	json_init(j, f);
	j->one_line = true;
}

static void json_quoted(struct json *j, const char *s) {
	fputc('"', j->f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(j->f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", j->f);
		else if (c < JSON_FIRST_PLAIN || c >= JSON_PAST_PLAIN)
			fprintf(j->f, "\\u%04x", c);
		else
			fputc(c, j->f);
	}
	fputc('"', j->f);
}

// Separator, indent and key before a value.
static void json_key(struct json *j, const char *key) {
	if (j->depth > 0 && j->one_line) {
		if (!j->first[j->depth])
			fputs(", ", j->f);
	} else if (j->depth > 0) {
		fputs(j->first[j->depth] ? "\n" : ",\n", j->f);
		fprintf(j->f, "%*s", (int)(j->depth * JSON_INDENT), "");
	}
	j->first[j->depth] = false;
	if (key != NULL) {
		json_quoted(j, key);
		fputs(": ", j->f);
	}
}

static void json_open(struct json *j, const char *key, char c) {
	json_key(j, key);
	fputc(c, j->f);
	// A programming error: the commands nest three levels at most.
	if (j->depth + 1 >= JSON_DEPTH_MAX)
		abort();
	j->first[++j->depth] = true;
}

static void json_close(struct json *j, char c) {
	bool empty = j->first[j->depth];

	j->depth--;
	if (!empty && !j->one_line)
		fprintf(j->f, "\n%*s", (int)(j->depth * JSON_INDENT), "");
	fputc(c, j->f);
}

void json_object_begin(struct json *j, const char *key) {
	json_open(j, key, '{');
}

void json_object_end(struct json *j) {
	json_close(j, '}');
}

void json_array_begin(struct json *j, const char *key) {
	json_open(j, key, '[');
}

void json_array_end(struct json *j) {
	json_close(j, ']');
}

void json_string(struct json *j, const char *key, const char *value) {
	json_key(j, key);
	json_quoted(j, value);
}

void json_u64(struct json *j, const char *key, uint64_t value) {
	json_key(j, key);
	fprintf(j->f, "%" PRIu64, value);
}

void json_i64(struct json *j, const char *key, int64_t value) {
	json_key(j, key);
	fprintf(j->f, "%" PRId64, value);
}

void json_bool(struct json *j, const char *key, bool value) {
	json_key(j, key);
	fputs(value ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key) {
	json_key(j, key);
	fputs("null", j->f);
}

void json_end(struct json *j) {
	fputc('\n', j->f);
}
