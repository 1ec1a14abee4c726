// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl channels: every shared-memory channel attached now, with its
// counters (GR_SHM_CHANNEL_LIST).

#include "cli.h"
#include "format.h"
#include "json.h"
#include "table.h"

#include <gr_shm.h>

#include <stdlib.h>

static void channels_json(const struct gr_shm_channel_info *infos, size_t n) {
	struct json j;

	json_init(&j, stdout);
	json_array_begin(&j, NULL);
	for (size_t i = 0; i < n; i++) {
		const struct gr_shm_channel_info *ch = &infos[i];
		const struct gr_shm_counters *c = &ch->counters;

		json_object_begin(&j, NULL);
		json_string(&j, "name", ch->name);
		json_i64(&j, "pid", ch->client_pid);
		json_string(&j, "backing", cli_backing(ch->backing));
		json_u64(&j, "poller", ch->poller);
		json_string(&j, "state", cli_channel_state(ch->state));
		json_u64(&j, "requests", c->requests);
		json_u64(&j, "req_bytes", c->req_bytes);
		json_u64(&j, "responses", c->responses);
		json_u64(&j, "resp_bytes", c->resp_bytes);
		json_u64(&j, "doorbells_rung", c->doorbells_rung);
		json_u64(&j, "sleeps", c->sleeps);
		json_u64(&j, "overflows", c->overflows);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_end(&j);
}

static int channels_table(const struct gr_shm_channel_info *infos, size_t n) {
	static const char *const titles[] = {
		"NAME",
		">PID",
		"BACKING",
		">POLLER",
		"STATE",
		">REQUESTS",
		">RESPONSES",
		">IN",
		">OUT",
		">DOORBELLS",
		">SLEEPS",
		">OVERFLOWS",
	};
	struct table *t = table_new(sizeof(titles) / sizeof(titles[0]), titles);
	char f[7][FORMAT_LEN];

	if (t == NULL)
		return EX_OSERR;
	for (size_t i = 0; i < n; i++) {
		const struct gr_shm_channel_info *ch = &infos[i];
		const struct gr_shm_counters *c = &ch->counters;

		table_cell(t, "%s", ch->name);
		table_cell(t, "%d", ch->client_pid);
		table_cell(t, "%s", cli_backing(ch->backing));
		table_cell(t, "%u", ch->poller);
		table_cell(t, "%s", cli_channel_state(ch->state));
		table_cell(t, "%s", format_count(f[0], c->requests));
		table_cell(t, "%s", format_count(f[1], c->responses));
		table_cell(t, "%s", format_bytes(f[2], c->req_bytes));
		table_cell(t, "%s", format_bytes(f[3], c->resp_bytes));
		table_cell(t, "%s", format_count(f[4], c->doorbells_rung));
		table_cell(t, "%s", format_count(f[5], c->sleeps));
		table_cell(t, "%s", format_count(f[6], c->overflows));
	}
	table_print_free(t, stdout);
	return EXIT_SUCCESS;
}

static int channels_run(struct cli_opts *opts, int argc, char **argv);

static struct cli_command channels_cmd = {
	.name = "channels",
	.args = "",
	.summary = "every shared-memory channel attached now, with its counters",
	.run = channels_run,
};
CLI_COMMAND(channels_cmd)

static int channels_run(struct cli_opts *opts, int argc, char **argv) {
	struct gr_shm_channel_info *infos;
	int status = EXIT_SUCCESS, err;
	struct gr_api_client *c;
	void *items;
	size_t n;

	if (cli_getopt(opts, &channels_cmd, argc, argv, "", &status) != -1)
		return status;
	if (optind < argc) {
		cli_usage(&channels_cmd, stderr);
		return EX_USAGE;
	}
	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL)
		return status;
	err = cli_stream(c, GR_SHM_CHANNEL_LIST, sizeof(*infos), &items, &n);
	gr_api_client_disconnect(c);
	if (err != 0)
		return cli_fail(opts, "GR_SHM_CHANNEL_LIST on", -err);
	infos = items;
	for (size_t i = 0; i < n; i++)
		infos[i].name[sizeof(infos[i].name) - 1] = '\0';
	if (opts->json)
		channels_json(infos, n);
	else
		status = channels_table(infos, n);
	free(infos);
	return status;
}
