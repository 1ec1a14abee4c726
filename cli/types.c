// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl types: every request type the server serves, the
// application's and the server's own, with its module and the shortest
// request it accepts (GR_SHM_TYPE_LIST); and the lookup of a type by name
// for shmchanctl call.

#include "cli.h"
#include "json.h"
#include "table.h"
#include "types.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cli_types_get(struct gr_api_client *c, struct gr_shm_type_info **infos, size_t *n) {
	void *items;
	int err;

	err = cli_stream(c, GR_SHM_TYPE_LIST, sizeof(**infos), &items, n);
	if (err != 0)
		return err;
	*infos = items;
	// Whatever the server wrote, the names end within their fields.
	for (size_t i = 0; i < *n; i++) {
		(*infos)[i].name[sizeof((*infos)[i].name) - 1] = '\0';
		(*infos)[i].module[sizeof((*infos)[i].module) - 1] = '\0';
	}
	return 0;
}

int cli_type_find(
	const struct gr_shm_type_info *infos,
	size_t n,
	const char *name,
	uint32_t *type
) {
	size_t found = n;

	for (size_t i = 0; i < n; i++) {
		if (strcasecmp(infos[i].name, name) != 0)
			continue;
		if (found != n)
			return -EEXIST;
		found = i;
	}
	if (found == n)
		return -ENOENT;
	*type = infos[found].type;
	return 0;
}

static void types_json(const struct gr_shm_type_info *infos, size_t n) {
	char hex[sizeof("0x12345678")];
	struct json j;

	json_init(&j, stdout);
	json_array_begin(&j, NULL);
	for (size_t i = 0; i < n; i++) {
		const struct gr_shm_type_info *t = &infos[i];

		json_object_begin(&j, NULL);
		snprintf(hex, sizeof(hex), "0x%08x", t->type);
		json_string(&j, "type", hex);
		json_u64(&j, "type_value", t->type);
		json_u64(&j, "module_id", t->type >> 16);
		json_string(&j, "module", t->module);
		json_string(&j, "name", t->name);
		json_u64(&j, "request_len", t->request_len);
		json_string(
			&j,
			"served_by",
			t->flags & GR_SHM_TYPE_SERVER ? "server" : "application"
		);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_end(&j);
}

static int types_table(const struct gr_shm_type_info *infos, size_t n) {
	static const char *const titles[] = {"TYPE", "MODULE", "NAME", ">MIN LEN", "SERVED BY"};
	struct table *t = table_new(sizeof(titles) / sizeof(titles[0]), titles);

	if (t == NULL)
		return EX_OSERR;
	for (size_t i = 0; i < n; i++) {
		const struct gr_shm_type_info *info = &infos[i];

		table_cell(t, "0x%08x", info->type);
		// An unnamed module: its number.
		if (info->module[0] != '\0')
			table_cell(t, "%s", info->module);
		else
			table_cell(t, "0x%04x", info->type >> 16);
		table_cell(t, "%s", info->name);
		table_cell(t, "%u", info->request_len);
		table_cell(t, "%s", info->flags & GR_SHM_TYPE_SERVER ? "server" : "application");
	}
	table_print_free(t, stdout);
	return EXIT_SUCCESS;
}

static int types_run(struct cli_opts *opts, int argc, char **argv);

static struct cli_command types_cmd = {
	.name = "types",
	.args = "",
	.summary = "every request type the server serves, with its module and name",
	.run = types_run,
};
CLI_COMMAND(types_cmd)

static int types_run(struct cli_opts *opts, int argc, char **argv) {
	struct gr_shm_type_info *infos;
	int status = EXIT_SUCCESS, err;
	struct gr_api_client *c;
	size_t n;

	if (cli_getopt(opts, &types_cmd, argc, argv, "", &status) != -1)
		return status;
	if (optind < argc) {
		cli_usage(&types_cmd, stderr);
		return EX_USAGE;
	}
	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL)
		return status;
	err = cli_types_get(c, &infos, &n);
	gr_api_client_disconnect(c);
	if (err != 0)
		return cli_fail(opts, "GR_SHM_TYPE_LIST on", -err);
	if (opts->json)
		types_json(infos, n);
	else
		status = types_table(infos, n);
	free(infos);
	return status;
}
