// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// EAL's multi-process sockets, whose paths EAL cuts to fit a Unix socket
// address without a word. Main thread only.

#pragma once

#include <stdbool.h>

// Before rte_eal_init(): whether the paths of the multi-process sockets
// EAL will bind in runtime_dir (the primary's, and with secondaries the
// longest a secondary may get) fit in a Unix socket address. prefix: the
// --file-prefix, for the message. Says on standard error what to shorten.
// Returns 0 or -ENAMETOOLONG.
int eal_mp_socket_check(const char *runtime_dir, const char *prefix, bool secondaries);
