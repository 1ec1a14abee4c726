// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A small JSON writer for -j: objects and arrays nested to JSON_DEPTH_MAX,
// strings escaped, integers exact. key is NULL inside an array. Indented,
// or on one line (json_init_line(): a JSON Lines record).

#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_DEPTH_MAX 8

struct json {
	FILE *f;
	unsigned depth;
	bool one_line; // no newline nor indent inside the document
	bool first[JSON_DEPTH_MAX]; // nothing written yet at that depth
};

void json_init(struct json *, FILE *f);
void json_init_line(struct json *, FILE *f);
void json_object_begin(struct json *, const char *key);
void json_object_end(struct json *);
void json_array_begin(struct json *, const char *key);
void json_array_end(struct json *);
void json_string(struct json *, const char *key, const char *value);
void json_u64(struct json *, const char *key, uint64_t value);
void json_i64(struct json *, const char *key, int64_t value);
void json_bool(struct json *, const char *key, bool value);
void json_null(struct json *, const char *key);
// Ends the document with a newline once the outermost value is closed.
void json_end(struct json *);
