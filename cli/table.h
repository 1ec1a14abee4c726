// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Tables with aligned columns: text left-aligned, numbers right-aligned.

#pragma once

#include <stdbool.h>
#include <stdio.h>

struct table;

// A table of n_cols columns with these titles (NULL: no title line); a
// title starting with '>' is right-aligned (the '>' is not printed).
// Returns NULL if out of memory.
struct table *table_new(unsigned n_cols, const char *const titles[]);

// Append a cell to the current row (printf format), escaped (escape.h): a
// cell may quote the daemon. After n_cols cells the next cell starts a new
// row. Returns 0 or -ENOMEM.
int table_cell(struct table *, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Print the table, columns two spaces apart, and free it.
void table_print_free(struct table *, FILE *f);
