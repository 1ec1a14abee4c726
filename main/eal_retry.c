// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Starting again without hugepages: see eal_retry.h.

#include "eal_retry.h"

#include <errno.h>
#include <linux/close_range.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The options added for the second start.
#define RETRY_ARGS 2

bool eal_retry_wanted(enum hugepage_mode mode, bool hugepages_tried, int err) {
	return mode == HUGEPAGES_AUTO && hugepages_tried && (err == EACCES || err == ENOMEM);
}

int eal_retry_exec(int argc, char *const argv[], int own_argc) {
	char **args = calloc((size_t)argc + RETRY_ARGS + 1, sizeof(*args));
	int n = 0, err;

	if (args == NULL)
		return -ENOMEM;
	for (int i = 0; i < own_argc; i++)
		args[n++] = argv[i];
	// After the user's own options: the last --hugepages given wins.
	args[n++] = "--hugepages";
	args[n++] = "off";
	for (int i = own_argc; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	// What the failed EAL init left open (its config file, its threads'
	// descriptors) must not reach the second start, which opens its own.
	if (close_range(STDERR_FILENO + 1, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		LOG(WARNING, "cannot mark descriptors close-on-exec: %s", strerror(errno));
	// The running binary itself, whatever argv[0] and the PATH say.
	execv("/proc/self/exe", args);
	err = errno;
	free(args);
	return -err;
}
