// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The helpers of bench_util.h, documented there.

#include "bench_util.h"

#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/wait.h>

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

pid_t fork_peer(void) {
	pid_t parent = getpid(), pid;
	fflush(NULL);
	FAIL_IF((pid = fork()) < 0, "fork: %s", strerror(errno));
	if (pid > 0)
		return pid;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
		fail("prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
	// After the prctl: a parent that dies from now on kills us; one that
	// died before has left us to another parent already.
	if (getppid() != parent)
		_exit(EXIT_FAILURE);
	return 0;
}

int peer_wait(pid_t pid) {
	int status, ret;
	while ((ret = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	return ret < 0 ? -1 : status;
}

bool fd_transfer(int fd, void *buf, size_t len, bool out) {
	for (uint8_t *p = buf; len > 0;) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
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

static void option_set(const struct option_def *d, const char *arg, usage_fn usage) {
	const char *range = d->seconds_range != NULL ? d->seconds_range : "above 0, at most";
	double seconds;
	uint64_t v;
	char *end;
	switch (d->kind) {
	case OPT_TRUE:
	case OPT_FALSE:
		*(bool *)d->field = d->kind == OPT_TRUE;
		break;
	case OPT_HELP:
		usage(false);
	case OPT_NUMBER:
		v = parse_number(d->name, arg, d->min, d->max);
		if (d->width == sizeof(uint64_t))
			*(uint64_t *)d->field = v;
		else
			*(uint32_t *)d->field = (uint32_t)v; // unsigned or int
		break;
	case OPT_SECONDS: // a fraction allowed; !(seconds > 0) also refuses a NaN
		errno = 0;
		seconds = strtod(arg, &end);
		if (errno != 0 || end == arg || *end != '\0' || !(seconds > 0) ||
		    seconds > MAX_SECONDS)
			fail("%s: '%s' is not a number of seconds %s %d",
			     d->name,
			     arg,
			     range,
			     MAX_SECONDS);
		*(double *)d->field = seconds;
		break;
	case OPT_STRING:
		*(const char **)d->field = arg;
		break;
	case OPT_CALL:
		d->parse(d, arg);
		break;
	}
	if (d->given != NULL)
		*d->given = true;
}

// noinline: getopt's tables stay out of main(), where a tool may run its timed loops, and so do
// not take its registers and stack.
__attribute__((noinline)) int
options_parse(int argc, char **argv, const struct option_def *defs, int n, usage_fn usage) {
	struct option long_options[MAX_OPTIONS + 2];
	char short_options[2 * MAX_OPTIONS + 1];
	int n_long = 1, ch, i, arg;
	FAIL_IF(n > MAX_OPTIONS, "%d options, more than %d", n, MAX_OPTIONS);
	long_options[0] = (struct option){"help", no_argument, NULL, 'h'};
	short_options[0] = '\0';
	for (i = 0; i < n; i++) { // getopt key: a short option's letter, a long one's 256 + i
		arg = defs[i].kind >= OPT_NUMBER ? required_argument : no_argument;
		if (defs[i].name[1] == '-')
			long_options[n_long++] =
				(struct option){defs[i].name + 2, arg, NULL, 256 + i};
		else
			strcat(strncat(short_options, defs[i].name + 1, 1), arg ? ":" : "");
	}
	long_options[n_long] = (struct option){NULL, 0, NULL, 0};
	while ((ch = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		for (i = 0; i < n; i++)
			if ((defs[i].name[1] == '-' ? 256 + i : defs[i].name[1]) == ch)
				break;
		if (i == n)
			usage(true);
		option_set(&defs[i], optarg, usage);
	}
	return optind;
}

void payload_fill(uint8_t *buf, size_t len) {
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
}

int compare_u64(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void json_field(const char *key, bool known, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	printf(", \"%s\": ", key);
	if (known)
		vprintf(fmt, ap);
	else
		printf("null");
	va_end(ap);
}
