// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl trace: the API trace's file (trace save, trace replay).

#pragma once

#include "cli.h"

#include <gr_shm.h>

// A saved trace: this header, then count entries (struct
// gr_shm_trace_entry, entry_len bytes each), in host order: it is read on
// the machine that wrote it. Mode 0600: captured payloads may hold secrets.
#define TRACE_FILE_MAGIC "SHMTRACE"
#define TRACE_FILE_VERSION 1
struct trace_file_header {
	char magic[8]; // TRACE_FILE_MAGIC, no NUL
	uint32_t version; // TRACE_FILE_VERSION
	uint32_t entry_len; // sizeof(struct gr_shm_trace_entry)
	uint64_t count;
};

// Most entries a file may hold: the largest trace a server keeps.
#define TRACE_FILE_ENTRIES_MAX 65536

// Read the trace saved in path into a malloc'ed array *entries of *n.
// Returns 0, or an exit status with the reason printed.
int trace_file_read(const char *path, struct gr_shm_trace_entry **entries, size_t *n);

// shmchanctl trace replay FILE (trace_replay.c): argv[0] is "replay".
int trace_replay(const struct cli_opts *opts, int argc, char **argv);
