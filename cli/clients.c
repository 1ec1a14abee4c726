// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl clients: every connection of the daemon, socket-only ones
// included, with its credentials, transport, channel and counters
// (GR_SHM_CLIENT_LIST).

#include "cli.h"
#include "format.h"
#include "json.h"
#include "table.h"

#include <gr_shm.h>

#include <stdlib.h>

static const char *transport_name(uint32_t transport) {
	switch (transport) {
	case GR_SHM_TRANSPORT_SOCKET:
		return "socket";
	case GR_SHM_TRANSPORT_SHM:
		return "shm";
	}
	return "unknown";
}

static void counters_json(struct json *j, const char *key, const struct gr_shm_counters *c) {
	json_object_begin(j, key);
	json_u64(j, "requests", c->requests);
	json_u64(j, "req_bytes", c->req_bytes);
	json_u64(j, "responses", c->responses);
	json_u64(j, "resp_bytes", c->resp_bytes);
	json_u64(j, "doorbells_rung", c->doorbells_rung);
	json_u64(j, "sleeps", c->sleeps);
	json_u64(j, "overflows", c->overflows);
	json_object_end(j);
}

static void clients_json(const struct gr_shm_client_info *infos, size_t n) {
	struct json j;

	json_init(&j, stdout);
	json_array_begin(&j, NULL);
	for (size_t i = 0; i < n; i++) {
		const struct gr_shm_client_info *c = &infos[i];

		json_object_begin(&j, NULL);
		json_i64(&j, "pid", c->pid);
		json_u64(&j, "uid", c->uid);
		json_u64(&j, "gid", c->gid);
		json_string(&j, "transport", transport_name(c->transport));
		json_u64(&j, "connected_ms", c->connected_ms);
		json_object_begin(&j, "socket");
		json_u64(&j, "requests", c->sock_requests);
		json_u64(&j, "req_bytes", c->sock_req_bytes);
		json_u64(&j, "responses", c->sock_responses);
		json_u64(&j, "resp_bytes", c->sock_resp_bytes);
		json_object_end(&j);
		if (c->transport == GR_SHM_TRANSPORT_SHM) {
			json_object_begin(&j, "channel");
			json_string(&j, "name", c->channel);
			json_string(&j, "backing", cli_backing(c->backing));
			json_u64(&j, "poller", c->poller);
			json_string(&j, "state", cli_channel_state(c->channel_state));
			json_object_end(&j);
			counters_json(&j, "channel_counters", &c->channel_counters);
		}
		json_object_end(&j);
	}
	json_array_end(&j);
	json_end(&j);
}

static int clients_table(const struct gr_shm_client_info *infos, size_t n) {
	static const char *const titles[] = {
		">PID",
		">UID",
		"TRANSPORT",
		"CHANNEL",
		"STATE",
		">AGE",
		">REQUESTS",
		">RESPONSES",
		">IN",
		">OUT",
	};
	struct table *t = table_new(sizeof(titles) / sizeof(titles[0]), titles);
	char f[4][FORMAT_LEN], age[FORMAT_LEN];

	if (t == NULL)
		return EX_OSERR;
	for (size_t i = 0; i < n; i++) {
		const struct gr_shm_client_info *c = &infos[i];
		bool shm = c->transport == GR_SHM_TRANSPORT_SHM;
		const struct gr_shm_counters *cc = &c->channel_counters;

		table_cell(t, "%d", c->pid);
		table_cell(t, "%u", c->uid);
		if (shm)
			table_cell(t, "shm (%s)", cli_backing(c->backing));
		else
			table_cell(t, "%s", transport_name(c->transport));
		table_cell(t, "%s", shm ? c->channel : "-");
		table_cell(t, "%s", cli_channel_state(c->channel_state));
		table_cell(t, "%s", format_duration_ms(age, c->connected_ms));
		// What it asked and got, on the socket and on its channel.
		table_cell(t, "%s", format_count(f[0], c->sock_requests + cc->requests));
		table_cell(t, "%s", format_count(f[1], c->sock_responses + cc->responses));
		table_cell(t, "%s", format_bytes(f[2], c->sock_req_bytes + cc->req_bytes));
		table_cell(t, "%s", format_bytes(f[3], c->sock_resp_bytes + cc->resp_bytes));
	}
	table_print_free(t, stdout);
	return EXIT_SUCCESS;
}

static int clients_run(struct cli_opts *opts, int argc, char **argv);

static struct cli_command clients_cmd = {
	.name = "clients",
	.args = "",
	.summary = "every client: pid, uid, transport, channel and counters",
	.run = clients_run,
};
CLI_COMMAND(clients_cmd)

static int clients_run(struct cli_opts *opts, int argc, char **argv) {
	struct gr_shm_client_info *infos = NULL;
	int status = EXIT_SUCCESS, err;
	struct gr_api_client *c;
	void *items;
	size_t n;

	if (cli_getopt(opts, &clients_cmd, argc, argv, "", &status) != -1)
		return status;
	if (optind < argc) {
		cli_usage(&clients_cmd, stderr);
		return EX_USAGE;
	}
	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL)
		return status;
	err = cli_stream(c, GR_SHM_CLIENT_LIST, sizeof(*infos), &items, &n);
	gr_api_client_disconnect(c);
	if (err != 0)
		return cli_fail(opts, "GR_SHM_CLIENT_LIST on", -err);
	infos = items;
	for (size_t i = 0; i < n; i++)
		infos[i].channel[sizeof(infos[i].channel) - 1] = '\0';
	if (opts->json)
		clients_json(infos, n);
	else
		status = clients_table(infos, n);
	free(infos);
	return status;
}
