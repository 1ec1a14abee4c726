// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl stats: the channel counters of the daemon since it started
// (GR_SHM_STATS), or with --types the figures of each request type.

#include "cli.h"
#include "stats_types.h"
#include "format.h"
#include "json.h"
#include "table.h"

#include <gr_shm.h>

#include <stdlib.h>
#include <string.h>

// The fields of the response, named once for the table and the JSON.
#define STATS_FIELDS(X)                                                                            \
	X(requests, "requests")                                                                    \
	X(req_bytes, "request bytes")                                                              \
	X(responses, "responses")                                                                  \
	X(resp_bytes, "response bytes")                                                            \
	X(doorbells_rung, "doorbells rung")                                                        \
	X(sleeps, "poller sleeps")                                                                 \
	X(overflows, "response ring full")                                                         \
	X(detaches, "detaches")                                                                    \
	X(detach_corrupt, "  corrupt region")                                                      \
	X(detach_slow, "  slow reader")                                                            \
	X(detach_lease, "  lease closed")

static void stats_json(const struct gr_shm_stats_resp *s) {
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_u64(&j, "channels", s->channels);
	json_u64(&j, "memzones", s->memzones);
#define FIELD_JSON(field, title) json_u64(&j, #field, s->total.field);
	STATS_FIELDS(FIELD_JSON)
#undef FIELD_JSON
	json_object_end(&j);
	json_end(&j);
}

static int stats_table(const struct gr_shm_stats_resp *s) {
	static const char *const titles[] = {"COUNTER", ">VALUE"};
	struct table *t = table_new(2, titles);
	char f[FORMAT_LEN];

	if (t == NULL)
		return EX_OSERR;
	table_cell(t, "channels attached");
	table_cell(t, "%u", s->channels);
	table_cell(t, "memzones in use");
	table_cell(t, "%u", s->memzones);
#define FIELD_ROW(field, title)                                                                    \
	table_cell(t, title);                                                                      \
	table_cell(                                                                                \
		t,                                                                                 \
		"%s",                                                                              \
		strstr(#field, "bytes") != NULL ? format_bytes(f, s->total.field)                  \
						: format_count(f, s->total.field)                  \
	);
	STATS_FIELDS(FIELD_ROW)
#undef FIELD_ROW
	table_print_free(t, stdout);
	return EXIT_SUCCESS;
}

static int stats_run(struct cli_opts *opts, int argc, char **argv);

static void stats_help(FILE *f) {
	fprintf(f,
		"  -t, --types        per request type: count, errors, handling and queueing "
		"time\n");
}

static const struct option stats_options[] = {
	{"types", no_argument, NULL, 't'},
	{NULL, 0, NULL, 0},
};

static struct cli_command stats_cmd = {
	.name = "stats",
	.args = "[-t]",
	.summary = "channel counters since the daemon started, channels and memzones in use",
	.help = stats_help,
	.run = stats_run,
	.long_options = stats_options,
};
CLI_COMMAND(stats_cmd)

static int stats_run(struct cli_opts *opts, int argc, char **argv) {
	struct gr_shm_stats_resp stats;
	int status = EXIT_SUCCESS, err;
	struct gr_api_client *c;
	bool types = false;
	int opt;

	while ((opt = cli_getopt(opts, &stats_cmd, argc, argv, "t", &status)) != -1) {
		if (opt != 't')
			return status;
		types = true;
	}
	if (optind < argc) {
		cli_usage(&stats_cmd, stderr);
		return EX_USAGE;
	}
	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL)
		return status;
	if (types) {
		status = stats_types_run(opts, c);
		gr_api_client_disconnect(c);
		return status;
	}
	err = cli_request(c, GR_SHM_STATS, &stats, sizeof(stats));
	gr_api_client_disconnect(c);
	if (err != 0)
		return cli_fail(opts, "GR_SHM_STATS on", -err);
	if (opts->json) {
		stats_json(&stats);
		return EXIT_SUCCESS;
	}
	return stats_table(&stats);
}
