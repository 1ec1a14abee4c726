// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl log level list [-a] | set PATTERN LEVEL: the daemon's log
// types and their levels (GR_LOG_LEVEL_LIST; -a: every DPDK type too), and
// a level set by glob pattern (GR_LOG_LEVEL_SET), as Grout's requests. A
// set of a pattern that matches no log type is answered 0, as by Grout:
// shmchanctl looks in the list first, and says so instead of sending it.

#include "cli.h"
#include "json.h"
#include "table.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// Room for "GR_LOG_LEVEL_SET 'PATTERN' LEVEL on".
#define LOG_SET_WHAT_LEN (GR_LOG_NAME_LEN + sizeof("GR_LOG_LEVEL_SET '' 4294967295 on"))

// rte_log's levels, 1 (GR_LOG_LEVEL_MIN) to 8 (GR_LOG_LEVEL_MAX), by name.
static const char *const level_names[] = {
	"emerg",
	"alert",
	"crit",
	"err",
	"warning",
	"notice",
	"info",
	"debug",
};
_Static_assert(
	sizeof(level_names) / sizeof(level_names[0]) == GR_LOG_LEVEL_MAX - GR_LOG_LEVEL_MIN + 1,
	"a name per level"
);

static const char *level_name(uint32_t level) {
	if (level < GR_LOG_LEVEL_MIN || level > GR_LOG_LEVEL_MAX)
		return "unknown";
	return level_names[level - GR_LOG_LEVEL_MIN];
}

// A level by name (any case) or number. Returns 0 or -EINVAL.
static int level_parse(const char *arg, uint32_t *level) {
	unsigned long value;
	char *end;

	for (uint32_t l = GR_LOG_LEVEL_MIN; l <= GR_LOG_LEVEL_MAX; l++) {
		if (strcasecmp(arg, level_names[l - GR_LOG_LEVEL_MIN]) == 0) {
			*level = l;
			return 0;
		}
	}
	errno = 0;
	value = strtoul(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || value < GR_LOG_LEVEL_MIN ||
	    value > GR_LOG_LEVEL_MAX)
		return -EINVAL;
	*level = (uint32_t)value;
	return 0;
}

// Say that no log type matches the pattern of what.
static int no_match(const struct cli_opts *opts, const char *what) {
	fprintf(stderr,
		"shmchanctl: %s %s: no log type matches the pattern; nothing changed"
		" ('shmchanctl log level list -a' lists them all)\n",
		what,
		opts->sock_path != NULL ? opts->sock_path : GR_API_DEFAULT_SOCK_PATH);
	return EX_DATAERR;
}

// What an error of the daemon means here: EINVAL is the daemon refusing
// the data it was given, ENOENT (an older shmchand's answer) a pattern that
// matches no log type (both EX_DATAERR), whatever else as for every
// command.
static int log_fail(const struct cli_opts *opts, const char *what, int err) {
	if (err == ENOENT)
		return no_match(opts, what);
	if (err != EINVAL)
		return cli_fail(opts, what, err);
	fprintf(stderr,
		"shmchanctl: %s %s: refused: %s (a pattern of 1 to %d characters,"
		" a level %d..%d)\n",
		what,
		opts->sock_path != NULL ? opts->sock_path : GR_API_DEFAULT_SOCK_PATH,
		strerror(err),
		GR_LOG_NAME_LEN - 1,
		GR_LOG_LEVEL_MIN,
		GR_LOG_LEVEL_MAX);
	return EX_DATAERR;
}

static void list_json(const struct gr_log_entry *entries, size_t n) {
	struct json j;

	json_init(&j, stdout);
	json_array_begin(&j, NULL);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(&j, NULL);
		json_string(&j, "name", entries[i].name);
		json_u64(&j, "level", entries[i].level);
		json_string(&j, "level_name", level_name(entries[i].level));
		json_object_end(&j);
	}
	json_array_end(&j);
	json_end(&j);
}

static int list_table(const struct gr_log_entry *entries, size_t n) {
	static const char *const titles[] = {"NAME", "LEVEL"};
	struct table *t = table_new(2, titles);

	if (t == NULL)
		return EX_OSERR;
	for (size_t i = 0; i < n; i++) {
		table_cell(t, "%s", entries[i].name);
		table_cell(t, "%s (%u)", level_name(entries[i].level), entries[i].level);
	}
	table_print_free(t, stdout);
	return EXIT_SUCCESS;
}

static int log_run(struct cli_opts *opts, int argc, char **argv);

static void log_help(FILE *f) {
	fprintf(f,
		"  -a         list every DPDK log type too\n"
		"  PATTERN    a glob of log type names, 1 to %zu characters\n"
		"  LEVEL      %d to %d, or emerg, alert, crit, err, warning, notice, info, debug\n",
		sizeof(((struct gr_log_level_set_req *)0)->pattern) - 1,
		GR_LOG_LEVEL_MIN,
		GR_LOG_LEVEL_MAX);
}

static struct cli_command log_cmd = {
	.name = "log",
	.args = "level list [-a] | level set PATTERN LEVEL",
	.summary = "the daemon's log types and levels (-a: DPDK's too); set a level by pattern",
	.help = log_help,
	.run = log_run,
};
CLI_COMMAND(log_cmd)

static int log_list(struct cli_opts *opts, int argc, char **argv) {
	struct gr_log_level_list_req req = {.show_all = false};
	int opt, status = EXIT_SUCCESS, err;
	struct gr_log_entry *entries;
	struct gr_api_client *c;
	void *items;
	size_t n;

	while ((opt = cli_getopt(opts, &log_cmd, argc, argv, "a", &status)) != -1) {
		if (opt != 'a')
			return status;
		req.show_all = true;
	}
	if (optind < argc) {
		cli_usage(&log_cmd, stderr);
		return EX_USAGE;
	}
	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL)
		return status;
	err = cli_stream_req(c, GR_LOG_LEVEL_LIST, sizeof(req), &req, sizeof(*entries), &items, &n);
	gr_api_client_disconnect(c);
	if (err != 0)
		return log_fail(opts, "GR_LOG_LEVEL_LIST on", -err);
	entries = items;
	for (size_t i = 0; i < n; i++)
		entries[i].name[sizeof(entries[i].name) - 1] = '\0';
	if (opts->json)
		list_json(entries, n);
	else
		status = list_table(entries, n);
	free(entries);
	return status;
}

// How many of the daemon's log types (DPDK's too) match pattern. Returns
// that number, or -errno.
static long types_matching(struct gr_api_client *c, const char *pattern) {
	struct gr_log_level_list_req req = {.show_all = true};
	struct gr_log_entry *entries;
	void *items;
	long matched = 0;
	size_t n;
	int err;

	err = cli_stream_req(c, GR_LOG_LEVEL_LIST, sizeof(req), &req, sizeof(*entries), &items, &n);
	if (err != 0)
		return err;
	entries = items;
	for (size_t i = 0; i < n; i++) {
		entries[i].name[sizeof(entries[i].name) - 1] = '\0';
		matched += fnmatch(pattern, entries[i].name, 0) == 0;
	}
	free(entries);
	return matched;
}

static int log_set(struct cli_opts *opts, int argc, char **argv) {
	struct gr_log_level_set_req req = {0};
	int status = EXIT_SUCCESS;
	struct gr_api_client *c;
	char what[LOG_SET_WHAT_LEN];
	long matched;
	size_t len;

	if (cli_getopt(opts, &log_cmd, argc, argv, "", &status) != -1)
		return status;
	if (argc - optind != 2) {
		cli_usage(&log_cmd, stderr);
		return EX_USAGE;
	}
	len = strlen(argv[optind]);
	if (len == 0 || len >= sizeof(req.pattern)) {
		fprintf(stderr,
			"shmchanctl log level set: a pattern has 1 to %zu characters, not %zu\n",
			sizeof(req.pattern) - 1,
			len);
		return EX_USAGE;
	}
	memcpy(req.pattern, argv[optind], len);
	if (level_parse(argv[optind + 1], &req.level) < 0) {
		fprintf(stderr,
			"shmchanctl log level set: '%s' is no level: %d..%d, or emerg, alert, crit,"
			" err, warning, notice, info, debug\n",
			argv[optind + 1],
			GR_LOG_LEVEL_MIN,
			GR_LOG_LEVEL_MAX);
		return EX_USAGE;
	}
	snprintf(what, sizeof(what), "GR_LOG_LEVEL_SET '%s' %u on", req.pattern, req.level);
	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL)
		return status;
	// The daemon answers a pattern that matches nothing as one that does.
	matched = types_matching(c, req.pattern);
	if (matched <= 0) {
		gr_api_client_disconnect(c);
		if (matched == 0)
			return no_match(opts, what);
		return log_fail(opts, "GR_LOG_LEVEL_LIST on", (int)-matched);
	}
	if (gr_api_client_send_recv_len(c, GR_LOG_LEVEL_SET, sizeof(req), &req, NULL) < 0) {
		int err = errno;

		gr_api_client_disconnect(c);
		return log_fail(opts, what, err);
	}
	gr_api_client_disconnect(c);
	return EXIT_SUCCESS;
}

static int log_run(struct cli_opts *opts, int argc, char **argv) {
	int status = EXIT_SUCCESS;

	// Shared options may come before "level"; the sub-command parses the
	// rest from its own name on.
	if (cli_getopt(opts, &log_cmd, argc, argv, "", &status) != -1)
		return status;
	if (argc - optind < 2 || strcmp(argv[optind], "level") != 0) {
		cli_usage(&log_cmd, stderr);
		return EX_USAGE;
	}
	argc -= optind + 1;
	argv += optind + 1;
	optind = 0;
	if (strcmp(argv[0], "list") == 0)
		return log_list(opts, argc, argv);
	if (strcmp(argv[0], "set") == 0)
		return log_set(opts, argc, argv);
	cli_usage(&log_cmd, stderr);
	return EX_USAGE;
}
