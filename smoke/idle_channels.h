// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Idle channels for ping2_perf --idle-channels: connections of this process
// that attach a shared-memory channel and then send nothing, so that a
// benchmark measures what channels that are attached but idle cost the busy
// ones on their poller.

#pragma once

// At most this many: the daemon's most connections (it serves 1024).
#define IDLE_CHANNELS_MAX 1000

struct idle_channels;

// Connect n clients to sock_path over shm, each with one checked GR_PING on
// its channel, and keep them attached. Exits through fail() with the reason
// if one cannot be had (the daemon's per-process connection limit,
// --max-conn-per-pid, counts them). Raises the process's open-file limit to
// its hard limit if n needs it.
struct idle_channels *idle_channels_open(const char *sock_path, unsigned n);

// Disconnect them all and free ic (NULL: nothing).
void idle_channels_close(struct idle_channels *ic);
