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

static bool poller_load_kept(const struct poller_load *l, uint64_t now) {
	return l->worked != 0 && now - l->worked < l->keep;
}

int poller_load_sleep_ms(const struct poller_load *l, uint64_t now, int timeout_ms) {
	if (!poller_load_kept(l, now))
		return timeout_ms;
	uint64_t wait = l->defer;
	if (l->told != 0 && now - l->told < l->tell_period)
		wait = l->tell_period - (now - l->told);
	uint64_t ms = (wait + l->per_ms - 1) / l->per_ms;
	if (ms == 0)
		ms = 1;
	return timeout_ms < 0 || ms < (uint64_t)timeout_ms ? (int)ms : timeout_ms;
}

bool poller_load_tell_due(const struct poller_load *l, uint64_t now) {
	return poller_load_kept(l, now) && (l->told == 0 || now - l->told >= l->tell_period);
}
