// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl stats --types: per request type, its count, errors, and the
// handler's time and the wait before it, from their log2 histograms.

#include "stats_types.h"
#include "format.h"
#include "json.h"
#include "table.h"

#include <gr_shm.h>

#include <stdlib.h>

// The upper bound, in ns, of the bucket where the quantile q (0..1) of a
// histogram of count entries falls: a log2 histogram says no more.
static double hist_quantile_ns(const uint64_t *hist, uint64_t count, double q) {
	uint64_t rank = (uint64_t)(q * (double)count + 0.5), seen = 0;

	if (rank == 0)
		rank = 1;
	for (unsigned b = 0; b < GR_SHM_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= rank)
			return (double)(2ull << b);
	}
	return (double)(2ull << (GR_SHM_HIST_BUCKETS - 1));
}

static void types_json(const struct gr_shm_type_stats *t, size_t n) {
	struct json j;

	json_init(&j, stdout);
	json_array_begin(&j, NULL);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(&j, NULL);
		json_u64(&j, "type", t[i].type);
		json_string(&j, "name", t[i].name);
		json_u64(&j, "count", t[i].count);
		json_u64(&j, "errors", t[i].errors);
		json_u64(&j, "rejected", t[i].rejected);
		json_u64(&j, "deferred", t[i].deferred);
		json_u64(&j, "handle_ns_sum", t[i].handle_ns_sum);
		json_u64(&j, "queue_ns_sum", t[i].queue_ns_sum);
		// Bucket b: [2^b, 2^(b+1)) ns, the first from 0, the last open.
		json_array_begin(&j, "handle_hist_log2_ns");
		for (unsigned b = 0; b < GR_SHM_HIST_BUCKETS; b++)
			json_u64(&j, NULL, t[i].handle_hist[b]);
		json_array_end(&j);
		json_array_begin(&j, "queue_hist_log2_ns");
		for (unsigned b = 0; b < GR_SHM_HIST_BUCKETS; b++)
			json_u64(&j, NULL, t[i].queue_hist[b]);
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_end(&j);
}

static int types_table(const struct gr_shm_type_stats *t, size_t n) {
	static const char *const titles[] = {
		"TYPE",
		"NAME",
		">COUNT",
		">ERRORS",
		">REJECTED",
		">DEFERRED",
		">HANDLE AVG us",
		">P99 <=",
		">QUEUE AVG us",
		">P99 <=",
	};
	struct table *tab = table_new(sizeof(titles) / sizeof(titles[0]), titles);
	char f[FORMAT_LEN];

	if (tab == NULL)
		return EX_OSERR;
	for (size_t i = 0; i < n; i++) {
		double count = t[i].count > 0 ? (double)t[i].count : 1;

		table_cell(tab, "0x%08x", t[i].type);
		table_cell(tab, "%s", t[i].name);
		table_cell(tab, "%s", format_count(f, t[i].count));
		table_cell(tab, "%s", format_count(f, t[i].errors));
		table_cell(tab, "%s", format_count(f, t[i].rejected));
		table_cell(tab, "%s", format_count(f, t[i].deferred));
		if (t[i].count == 0) {
			for (unsigned c = 0; c < 4; c++)
				table_cell(tab, "-");
			continue;
		}
		table_cell(tab, "%s", format_us(f, (double)t[i].handle_ns_sum / count));
		table_cell(
			tab,
			"%s",
			format_us(f, hist_quantile_ns(t[i].handle_hist, t[i].count, 0.99))
		);
		table_cell(tab, "%s", format_us(f, (double)t[i].queue_ns_sum / count));
		table_cell(
			tab,
			"%s",
			format_us(f, hist_quantile_ns(t[i].queue_hist, t[i].count, 0.99))
		);
	}
	table_print_free(tab, stdout);
	return EXIT_SUCCESS;
}

int stats_types_run(const struct cli_opts *opts, struct gr_api_client *c) {
	struct gr_shm_type_stats *t;
	size_t n;
	int err, status;

	err = cli_stream(c, GR_SHM_TYPE_STATS, sizeof(*t), (void **)&t, &n);
	if (err != 0)
		return cli_fail(opts, "GR_SHM_TYPE_STATS on", -err);
	if (opts->json) {
		types_json(t, n);
		status = EXIT_SUCCESS;
	} else {
		status = types_table(t, n);
	}
	free(t);
	return status;
}
