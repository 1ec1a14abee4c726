// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "format.h"

#include <inttypes.h>
#include <stdio.h>

#define SI_STEP 1000
#define IEC_STEP 1024
#define MS_PER_S UINT64_C(1000)
#define S_PER_MIN UINT64_C(60)
#define S_PER_HOUR UINT64_C(3600)
#define S_PER_DAY UINT64_C(86400)
#define NS_PER_US 1000.0

const char *format_count(char buf[FORMAT_LEN], uint64_t value) {
	static const char units[] = "KMGTPE";
	double v = (double)value;
	unsigned u = 0;

	if (value < SI_STEP) {
		snprintf(buf, FORMAT_LEN, "%" PRIu64, value);
		return buf;
	}
	v /= SI_STEP;
	// 999.95K would print as 1000.0K: move on to the next unit first.
	while (v >= SI_STEP - 0.05 && units[u + 1] != '\0') {
		v /= SI_STEP;
		u++;
	}
	snprintf(buf, FORMAT_LEN, "%.1f%c", v, units[u]);
	return buf;
}

const char *format_bytes(char buf[FORMAT_LEN], uint64_t bytes) {
	static const char units[] = "KMGTPE";
	double v = (double)bytes;
	unsigned u = 0;

	if (bytes < IEC_STEP) {
		snprintf(buf, FORMAT_LEN, "%" PRIu64 "B", bytes);
		return buf;
	}
	v /= IEC_STEP;
	while (v >= IEC_STEP - 0.05 && units[u + 1] != '\0') {
		v /= IEC_STEP;
		u++;
	}
	snprintf(buf, FORMAT_LEN, "%.1f%ciB", v, units[u]);
	return buf;
}

const char *format_duration_ms(char buf[FORMAT_LEN], uint64_t ms) {
	uint64_t s = ms / MS_PER_S;

	if (s == 0)
		snprintf(buf, FORMAT_LEN, "%" PRIu64 "ms", ms);
	else if (s < S_PER_MIN)
		snprintf(buf, FORMAT_LEN, "%" PRIu64 "s", s);
	else if (s < S_PER_HOUR)
		snprintf(
			buf,
			FORMAT_LEN,
			"%" PRIu64 "m%02" PRIu64 "s",
			s / S_PER_MIN,
			s % S_PER_MIN
		);
	else if (s < S_PER_DAY)
		snprintf(
			buf,
			FORMAT_LEN,
			"%" PRIu64 "h%02" PRIu64 "m",
			s / S_PER_HOUR,
			s % S_PER_HOUR / S_PER_MIN
		);
	else
		snprintf(
			buf,
			FORMAT_LEN,
			"%" PRIu64 "d%02" PRIu64 "h",
			s / S_PER_DAY,
			s % S_PER_DAY / S_PER_HOUR
		);
	return buf;
}

const char *format_us(char buf[FORMAT_LEN], double ns) {
	double us = ns / NS_PER_US;

	if (us < 1)
		snprintf(buf, FORMAT_LEN, "%.3f", us);
	else if (us < 10)
		snprintf(buf, FORMAT_LEN, "%.2f", us);
	else if (us < 100)
		snprintf(buf, FORMAT_LEN, "%.1f", us);
	else
		snprintf(buf, FORMAT_LEN, "%.0f", us);
	return buf;
}
