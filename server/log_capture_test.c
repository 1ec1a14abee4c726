// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "log_capture_test.h"
#include "config.h"

#include <rte_log.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define NSEC_PER_SEC 1000000000ull
// Longest log line compared; longer ones are cut there.
#define LOG_LINE_MAX 512

static char *log_buf;
static size_t log_len;
static FILE *log_stream;

int log_capture_setup(void **state) {
	(void)state;
	log_stream = open_memstream(&log_buf, &log_len);
	assert_non_null(log_stream);
	assert_int_equal(rte_openlog_stream(log_stream), 0);
	rte_log_set_global_level(RTE_LOG_DEBUG);
	assert_int_equal(rte_log_set_level(server_logtype, RTE_LOG_DEBUG), 0);
	return 0;
}

int log_capture_teardown(void **state) {
	(void)state;
	rte_openlog_stream(NULL);
	fclose(log_stream);
	free(log_buf);
	return 0;
}

unsigned log_lines(const char *a, const char *b) {
	unsigned n = 0;

	fflush(log_stream);
	for (const char *line = log_buf; line != NULL && *line != '\0';) {
		const char *end = strchr(line, '\n');
		size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
		char copy[LOG_LINE_MAX];

		snprintf(copy, sizeof(copy), "%.*s", (int)len, line);
		if (strstr(copy, a) != NULL && (b == NULL || strstr(copy, b) != NULL))
			n++;
		line = end != NULL ? end + 1 : NULL;
	}
	return n;
}

uint64_t log_capture_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}
