// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl info: which program serves (shmchand or an application that
// embeds the server library), how it runs, and its limits
// (GR_SHM_DAEMON_INFO).

#include "cli.h"
#include "format.h"
#include "json.h"
#include "table.h"

#include <gr_shm.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *backings_name(uint32_t backings) {
	switch (backings) {
	case 0:
		return "none (--no-shm)";
	case GR_SHM_BACKING_MEMFD:
		return "memfd";
	case GR_SHM_BACKING_MEMFD | GR_SHM_BACKING_MEMZONE:
		return "memfd,memzone";
	}
	return "unknown";
}

// Whether the daemon sent the per-peer limits and event backlog bounds: an
// older one's shorter response is padded with zeros, and a backlog always
// holds an event at least.
static bool reports_peer_limits(const struct gr_shm_daemon_info *info) {
	return info->event_backlog > 0;
}

// A per-peer connection limit: 0 is none.
static const char *conn_limit(char buf[FORMAT_LEN], uint32_t limit, const char *note) {
	if (limit == 0)
		return "no limit";
	snprintf(buf, FORMAT_LEN, "%u%s", limit, note);
	return buf;
}

static void info_json(const struct gr_shm_daemon_info *info) {
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_string(&j, "version", info->version);
	if (info->flags & GR_SHM_INFO_PROGRAM) {
		json_string(&j, "program", info->program);
		json_string(&j, "server_version", info->server_version);
	}
	json_i64(&j, "pid", info->pid);
	json_u64(&j, "uptime_ms", info->uptime_ms);
	json_u64(&j, "start_time", info->start_time);
	json_string(&j, "file_prefix", info->file_prefix);
	json_bool(&j, "hugepages", info->flags & GR_SHM_INFO_HUGEPAGES);
	json_bool(&j, "telemetry", info->flags & GR_SHM_INFO_TELEMETRY);
	json_array_begin(&j, "backings");
	if (info->backings & GR_SHM_BACKING_MEMFD)
		json_string(&j, NULL, "memfd");
	if (info->backings & GR_SHM_BACKING_MEMZONE)
		json_string(&j, NULL, "memzone");
	json_array_end(&j);
	json_u64(&j, "pollers", info->pollers);
	if (info->flags & GR_SHM_INFO_POLLER_NICE) {
		json_i64(&j, "poller_nice", info->poller_nice);
		if (info->poller_nice_wanted == GR_SHM_POLLER_NICE_OFF)
			json_null(&j, "poller_nice_wanted");
		else
			json_i64(&j, "poller_nice_wanted", info->poller_nice_wanted);
		json_bool(
			&j,
			"poller_nice_denied",
			(info->flags & GR_SHM_INFO_POLLER_NICE_DENIED) != 0
		);
	}
	json_object_begin(&j, "spin_us");
	json_u64(&j, "poller", info->poller_spin_us);
	json_u64(&j, "client_default", GR_API_CLIENT_SPIN_US_DEFAULT);
	json_object_end(&j);
	json_object_begin(&j, "limits");
	json_u64(&j, "max_clients", info->max_clients);
	json_u64(&j, "memzone_channels", info->memzone_channels);
	json_u64(&j, "max_msg_len", info->max_msg_len);
	json_u64(&j, "channel_batch", info->channel_batch);
	json_u64(&j, "channel_backlog_bytes", info->channel_backlog_bytes);
	json_u64(&j, "channel_slow_ms", info->channel_slow_ms);
	json_u64(&j, "sock_output_high", info->sock_output_high);
	json_u64(&j, "sock_output_stall_s", info->sock_output_stall_s);
	if (reports_peer_limits(info)) {
		json_u64(&j, "max_conn_per_pid", info->max_conn_per_pid);
		json_u64(&j, "max_conn_per_uid", info->max_conn_per_uid);
		json_u64(&j, "event_backlog", info->event_backlog);
		json_u64(&j, "event_backlog_bytes", info->event_backlog_bytes);
	}
	if (info->flags & GR_SHM_INFO_EVENT_BOUNDS) {
		json_u64(&j, "event_subscriptions", info->event_subs_max);
		json_u64(&j, "event_memory", info->event_memory_bytes);
	}
	json_object_end(&j);
	json_object_end(&j);
	json_end(&j);
}

static int info_table(const struct gr_shm_daemon_info *info) {
	struct table *t = table_new(2, NULL);
	char a[FORMAT_LEN], b[FORMAT_LEN], started[FORMAT_LEN] = "?";
	time_t start = (time_t)info->start_time;
	struct tm tm;

	if (t == NULL)
		return EX_OSERR;
	if (start != 0 && gmtime_r(&start, &tm) != NULL)
		strftime(started, sizeof(started), "%Y-%m-%d %H:%M:%S UTC", &tm);
	if (info->flags & GR_SHM_INFO_PROGRAM) {
		table_cell(t, "program");
		table_cell(t, "%s", info->program);
	}
	table_cell(t, "version");
	table_cell(t, "%s", info->version[0] != '\0' ? info->version : "unknown");
	if (info->flags & GR_SHM_INFO_PROGRAM) {
		table_cell(t, "server library");
		table_cell(t, "%s", info->server_version);
	}
	table_cell(t, "pid");
	table_cell(t, "%d", info->pid);
	table_cell(t, "uptime");
	table_cell(t, "%s (since %s)", format_duration_ms(a, info->uptime_ms), started);
	table_cell(t, "file prefix");
	table_cell(t, "%s", info->file_prefix);
	table_cell(t, "hugepages");
	table_cell(t, "%s", info->flags & GR_SHM_INFO_HUGEPAGES ? "on" : "off");
	table_cell(t, "channels");
	table_cell(t, "%s", backings_name(info->backings));
	table_cell(t, "telemetry");
	table_cell(t, "%s", info->flags & GR_SHM_INFO_TELEMETRY ? "on" : "off");
	table_cell(t, "pollers");
	table_cell(t, "%u", info->pollers);
	if (info->flags & GR_SHM_INFO_POLLER_NICE) {
		table_cell(t, "poller nice");
		if (info->poller_nice_wanted == GR_SHM_POLLER_NICE_OFF)
			table_cell(t, "%d (the daemon's own)", info->poller_nice);
		else if (info->flags & GR_SHM_INFO_POLLER_NICE_DENIED)
			table_cell(
				t,
				"%d (down to %d by its clients: not permitted, see the daemon's "
				"log)",
				info->poller_nice,
				info->poller_nice_wanted
			);
		else
			table_cell(
				t,
				"%d now (down to %d by its clients)",
				info->poller_nice,
				info->poller_nice_wanted
			);
	}
	table_cell(t, "spin budgets");
	table_cell(
		t,
		"poller %u us, client library default %d us",
		info->poller_spin_us,
		GR_API_CLIENT_SPIN_US_DEFAULT
	);
	table_cell(t, "max clients");
	table_cell(t, "%u", info->max_clients);
	table_cell(t, "memzone channels");
	table_cell(t, "%u", info->memzone_channels);
	table_cell(t, "max payload");
	table_cell(t, "%s", format_bytes(a, info->max_msg_len));
	table_cell(t, "channel turn");
	table_cell(t, "%u responses", info->channel_batch);
	table_cell(t, "channel backlog");
	table_cell(
		t,
		"%s, detached after %u ms full",
		format_bytes(a, info->channel_backlog_bytes),
		info->channel_slow_ms
	);
	table_cell(t, "socket backlog");
	table_cell(
		t,
		"%s, disconnected after %u s above it",
		format_bytes(b, info->sock_output_high),
		info->sock_output_stall_s
	);
	if (reports_peer_limits(info)) {
		table_cell(t, "connections per pid");
		table_cell(t, "%s", conn_limit(a, info->max_conn_per_pid, ""));
		table_cell(t, "connections per uid");
		table_cell(t, "%s", conn_limit(a, info->max_conn_per_uid, " (root: no limit)"));
		table_cell(t, "event backlog");
		table_cell(
			t,
			"%u events, %s per subscriber",
			info->event_backlog,
			format_bytes(b, info->event_backlog_bytes)
		);
	}
	if (info->flags & GR_SHM_INFO_EVENT_BOUNDS) {
		table_cell(t, "event subscriptions");
		table_cell(t, "%u per connection", info->event_subs_max);
		table_cell(t, "event memory");
		table_cell(t, "%s in all backlogs", format_bytes(b, info->event_memory_bytes));
	}
	table_print_free(t, stdout);
	return EXIT_SUCCESS;
}

static int info_run(struct cli_opts *opts, int argc, char **argv);

static struct cli_command info_cmd = {
	.name = "info",
	.args = "",
	.summary = "version, pid, uptime, hugepages, pollers, spin budgets and limits",
	.run = info_run,
};
CLI_COMMAND(info_cmd)

static int info_run(struct cli_opts *opts, int argc, char **argv) {
	struct gr_shm_daemon_info info;
	struct gr_api_client *c;
	int status = EXIT_SUCCESS, err;

	if (cli_getopt(opts, &info_cmd, argc, argv, "", &status) != -1)
		return status;
	if (optind < argc) {
		cli_usage(&info_cmd, stderr);
		return EX_USAGE;
	}
	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL)
		return status;
	err = cli_request(c, GR_SHM_DAEMON_INFO, &info, sizeof(info));
	gr_api_client_disconnect(c);
	if (err != 0)
		return cli_fail(opts, "GR_SHM_DAEMON_INFO on", -err);
	info.version[sizeof(info.version) - 1] = '\0';
	info.file_prefix[sizeof(info.file_prefix) - 1] = '\0';
	info.program[sizeof(info.program) - 1] = '\0';
	info.server_version[sizeof(info.server_version) - 1] = '\0';
	if (opts->json) {
		info_json(&info);
		return EXIT_SUCCESS;
	}
	return info_table(&info);
}
