// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "table.h"

#include "escape.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Two spaces between two columns.
#define TABLE_GAP "  "
// Cells allocated at first, then doubled.
#define TABLE_INITIAL_CELLS 64

struct table {
	unsigned n_cols;
	const char *const *titles;
	char **cells;
	size_t n_cells, cap;
};

struct table *table_new(unsigned n_cols, const char *const titles[]) {
	struct table *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->n_cols = n_cols;
	t->titles = titles;
	return t;
}

int table_cell(struct table *t, const char *fmt, ...) {
	va_list ap;
	char *cell;
	int ret;

	if (t->n_cells == t->cap) {
		size_t cap = t->cap > 0 ? 2 * t->cap : TABLE_INITIAL_CELLS;
		char **cells = realloc(t->cells, cap * sizeof(*cells));

		if (cells == NULL)
			return -ENOMEM;
		t->cells = cells;
		t->cap = cap;
	}
	va_start(ap, fmt);
	ret = vasprintf(&cell, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return -ENOMEM;
	// Cells hold what the daemon sent (names, versions): escaped, so that
	// none reaches the terminal as a control sequence or a line break.
	t->cells[t->n_cells] = escape_dup(cell);
	free(cell);
	if (t->cells[t->n_cells] == NULL)
		return -ENOMEM;
	t->n_cells++;
	return 0;
}

static bool right_aligned(const struct table *t, unsigned col) {
	return t->titles != NULL && t->titles[col][0] == '>';
}

static const char *title(const struct table *t, unsigned col) {
	return t->titles[col] + (right_aligned(t, col) ? 1 : 0);
}

static void
print_row(const struct table *t, const char *const row[], const size_t width[], FILE *f) {
	for (unsigned col = 0; col < t->n_cols; col++) {
		bool last = col + 1 == t->n_cols;
		int w = (int)width[col];

		if (right_aligned(t, col))
			fprintf(f, "%*s", w, row[col]);
		else if (last)
			fputs(row[col], f); // no trailing spaces
		else
			fprintf(f, "%-*s", w, row[col]);
		fputs(last ? "\n" : TABLE_GAP, f);
	}
}

void table_print_free(struct table *t, FILE *f) {
	const char *row[t->n_cols];
	size_t width[t->n_cols];

	for (unsigned col = 0; col < t->n_cols; col++) {
		width[col] = t->titles != NULL ? strlen(title(t, col)) : 0;
		for (size_t i = col; i < t->n_cells; i += t->n_cols) {
			size_t len = strlen(t->cells[i]);
			if (len > width[col])
				width[col] = len;
		}
	}
	if (t->titles != NULL) {
		for (unsigned col = 0; col < t->n_cols; col++)
			row[col] = title(t, col);
		print_row(t, row, width, f);
	}
	for (size_t i = 0; i + t->n_cols <= t->n_cells; i += t->n_cols) {
		for (unsigned col = 0; col < t->n_cols; col++)
			row[col] = t->cells[i + col];
		print_row(t, row, width, f);
	}
	for (size_t i = 0; i < t->n_cells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}
