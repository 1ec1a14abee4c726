// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The helpers of bench_util.h, documented there.

#include "bench_util.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

void fail(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", log_prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_FAILURE);
}

void sleep_ns(uint64_t ns) {
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void die_with_parent(pid_t parent) {
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
		fail("prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
	// After the prctl: a parent that dies from now on kills us; one that
	// died before has left us to another parent already.
	if (getppid() != parent)
		_exit(EXIT_FAILURE);
}

static uint64_t timeval_ns(const struct timeval *tv) {
	return (uint64_t)tv->tv_sec * NSEC_PER_SEC + (uint64_t)tv->tv_usec * 1000;
}

uint64_t rusage_cpu_ns(const struct rusage *ru) {
	return timeval_ns(&ru->ru_utime) + timeval_ns(&ru->ru_stime);
}

uint64_t parse_number(const char *opt, const char *arg, uint64_t min, uint64_t max) {
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	// strtoull() takes "-1" as a huge positive number: refuse any sign.
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || v < min || v > max)
		fail("%s: '%s' is not a number from %" PRIu64 " to %" PRIu64, opt, arg, min, max);
	return v;
}

int seconds_from_string(const char *arg, double max, double *seconds) {
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	// !(v > 0) also refuses a NaN.
	if (errno != 0 || end == arg || *end != '\0' || !(v > 0) || v > max)
		return -EINVAL;
	*seconds = v;
	return 0;
}

void payload_fill(uint8_t *buf, size_t len) {
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
}
