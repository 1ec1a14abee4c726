// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Shared-memory channels of the daemon: attach over the socket, the RCU
// registry read by the pollers, detach on lease loss or client fault.

#pragma once

#include <event2/event.h>

// Start the pollers. After EAL init, before the socket accepts clients.
// Returns 0 or -errno. Main thread.
int channel_module_init(struct event_base *base);

// Stop the pollers and free every channel. Main thread, at shutdown.
void channel_module_fini(void);
