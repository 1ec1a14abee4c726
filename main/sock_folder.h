// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The check of the socket's folder, before EAL starts. Main thread only.

#pragma once

// Whether the daemon may create its socket at path: its folder exists and
// this user may create files there. Said before EAL starts, with what to do:
// the default path is under /run, where only root may create files.
// Returns 0, or -ENOENT (no such folder, or not a folder) or -EACCES (not
// writable) after saying why on standard error.
int sock_folder_check(const char *path);
