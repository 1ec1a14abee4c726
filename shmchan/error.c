// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Failure reasons. The library prints nothing: the function that knows why a
// call fails records it here, once, and the caller logs it with its own
// logger (the daemon's LOG, the client library's transport reason).

#include "region.h"

#include <stdarg.h>
#include <stdio.h>

// Long enough for one line naming a field and two values.
#define SHMCHAN_ERROR_LEN 160

static __thread char last_error[SHMCHAN_ERROR_LEN];

int shmchan_fail(int err, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

const char *shmchan_last_error(void) {
	return last_error;
}
