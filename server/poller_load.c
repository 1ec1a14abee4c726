// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "poller_load.h"

#include <stdio.h>
#include <unistd.h>

bool poller_load_busy(struct poller_load *l, uint64_t now) {
	char buf[128];
	unsigned running;
	ssize_t n;

	if (l->checked != 0 && now - l->checked < l->period)
		return l->busy;
	l->checked = now;
	l->busy = true;
	n = l->fd >= 0 ? pread(l->fd, buf, sizeof(buf) - 1, 0) : -1;
	if (n <= 0)
		return true;
	buf[n] = '\0';
	if (sscanf(buf, "%*s %*s %*s %u/", &running) == 1)
		l->busy = (long)running >= l->cpus;
	return l->busy;
}
