// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl trace: switch the daemon's API trace, show its state, dump
// it, save it to a file (GR_SHM_TRACE_*); replay is trace_replay.c.

#include "trace.h"
#include "json.h"
#include "table.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// Payload bytes a table row shows (JSON shows all those captured).
#define TRACE_TEXT_PAYLOAD 16
// "YYYY-MM-DDTHH:MM:SS.mmmZ" with room for any year gmtime_r() gives.
#define TIME_TEXT_LEN 64

static int trace_run(struct cli_opts *opts, int argc, char **argv);

static void trace_help(FILE *f) {
	fprintf(f,
		"  on [-c] [-C]       record requests; -c/--capture: their first %d payload "
		"bytes too;\n"
		"                     -C/--clear: forget what is held first\n"
		"  off                stop recording (what is held stays)\n"
		"  status             on or off, size, entries held and recorded\n"
		"  dump               the entries held, the oldest first\n"
		"  save FILE          save them to FILE (mode 0600) for replay\n"
		"  replay FILE        send FILE's requests again and compare the statuses\n",
		GR_SHM_TRACE_CAPTURE_LEN);
}

static const struct option trace_options[] = {
	{"capture", no_argument, NULL, 'c'},
	{"clear", no_argument, NULL, 'C'},
	{NULL, 0, NULL, 0},
};

static struct cli_command trace_cmd = {
	.name = "trace",
	.args = "on [-c] [-C] | off | status | dump | save FILE | replay FILE",
	.summary = "the daemon's API trace: the last requests and their responses",
	.help = trace_help,
	.run = trace_run,
	.long_options = trace_options,
};
CLI_COMMAND(trace_cmd)

static const char *transport_name(uint32_t transport) {
	return transport == GR_SHM_TRANSPORT_SHM ? "shm" : "socket";
}

// "0", or the errno's name ("ENOTSUP"), or its number.
static const char *status_name(char buf[16], uint32_t status) {
	const char *name = status != 0 ? strerrorname_np((int)status) : NULL;

	if (name != NULL)
		return name;
	snprintf(buf, 16, "%u", status);
	return buf;
}

// "YYYY-MM-DDTHH:MM:SS.mmmZ".
static const char *time_text(char buf[TIME_TEXT_LEN], uint64_t ns) {
	time_t s = (time_t)(ns / 1000000000ull);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(
		buf,
		TIME_TEXT_LEN,
		"%04d-%02d-%02dT%02d:%02d:%02d.%03uZ",
		tm.tm_year + 1900,
		tm.tm_mon + 1,
		tm.tm_mday,
		tm.tm_hour,
		tm.tm_min,
		tm.tm_sec,
		(unsigned)(ns / 1000000ull % 1000)
	);
	return buf;
}

static void hex_text(char *buf, const uint8_t *bytes, size_t n) {
	for (size_t i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", bytes[i]);
	buf[2 * n] = '\0';
}

static const char *flags_text(char buf[32], uint32_t flags) {
	snprintf(
		buf,
		32,
		"%s%s",
		flags & GR_SHM_TRACE_DEFERRED ? "deferred" : "",
		flags & GR_SHM_TRACE_REPLY ? "reply" : ""
	);
	return buf;
}

static void dump_json(const struct gr_shm_trace_entry *e, size_t n) {
	char hex[2 * GR_SHM_TRACE_CAPTURE_LEN + 1], t[TIME_TEXT_LEN], f[32], s[16];
	struct json j;

	json_init(&j, stdout);
	json_array_begin(&j, NULL);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(&j, NULL);
		json_u64(&j, "time_ns", e[i].time_ns);
		json_string(&j, "time", time_text(t, e[i].time_ns));
		json_i64(&j, "pid", e[i].pid);
		json_string(&j, "transport", transport_name(e[i].transport));
		json_u64(&j, "id", e[i].id);
		json_u64(&j, "type", e[i].type);
		json_string(&j, "type_name", gr_api_message_name(e[i].type));
		json_u64(&j, "req_len", e[i].req_len);
		json_u64(&j, "status", e[i].status);
		json_string(&j, "status_name", status_name(s, e[i].status));
		json_u64(&j, "resp_len", e[i].resp_len);
		json_u64(&j, "responses", e[i].responses);
		json_u64(&j, "handle_ns", e[i].handle_ns);
		json_u64(&j, "queue_ns", e[i].queue_ns);
		json_string(&j, "flags", flags_text(f, e[i].flags));
		if (e[i].flags & GR_SHM_TRACE_CAPTURED) {
			hex_text(hex, e[i].payload, e[i].captured_len);
			json_string(&j, "payload", hex);
		} else {
			json_null(&j, "payload");
		}
		json_object_end(&j);
	}
	json_array_end(&j);
	json_end(&j);
}

static int dump_table(const struct gr_shm_trace_entry *e, size_t n) {
	static const char *const titles[] = {
		"TIME",
		">PID",
		"TRANSPORT",
		">ID",
		"TYPE",
		">LEN",
		"STATUS",
		">RESP",
		">HANDLE us",
		">QUEUE us",
		"FLAGS",
		"PAYLOAD",
	};
	char hex[2 * TRACE_TEXT_PAYLOAD + 1], t[TIME_TEXT_LEN], f[32], s[16];
	struct table *tab = table_new(sizeof(titles) / sizeof(titles[0]), titles);

	if (tab == NULL)
		return EX_OSERR;
	for (size_t i = 0; i < n; i++) {
		size_t shown = e[i].captured_len < TRACE_TEXT_PAYLOAD ? e[i].captured_len
								      : TRACE_TEXT_PAYLOAD;

		table_cell(tab, "%s", time_text(t, e[i].time_ns));
		table_cell(tab, "%d", e[i].pid);
		table_cell(tab, "%s", transport_name(e[i].transport));
		table_cell(tab, "%u", e[i].id);
		table_cell(tab, "%s", gr_api_message_name(e[i].type));
		table_cell(tab, "%u", e[i].req_len);
		table_cell(tab, "%s", status_name(s, e[i].status));
		table_cell(tab, "%u", e[i].resp_len);
		table_cell(tab, "%.3f", (double)e[i].handle_ns / 1000);
		table_cell(tab, "%.3f", (double)e[i].queue_ns / 1000);
		table_cell(tab, "%s", flags_text(f, e[i].flags));
		if (e[i].flags & GR_SHM_TRACE_CAPTURED) {
			hex_text(hex, e[i].payload, shown);
			table_cell(
				tab,
				"%s%s",
				hex,
				e[i].captured_len > shown || e[i].req_len > e[i].captured_len
					? "..."
					: ""
			);
		} else {
			table_cell(tab, "%s", e[i].req_len > 0 ? "(not captured)" : "");
		}
	}
	table_print_free(tab, stdout);
	return EXIT_SUCCESS;
}

static int trace_save(const char *path, const struct gr_shm_trace_entry *e, size_t n) {
	struct trace_file_header h = {
		.version = TRACE_FILE_VERSION,
		.entry_len = sizeof(*e),
		.count = n,
	};
	FILE *f;
	int fd;

	memcpy(h.magic, TRACE_FILE_MAGIC, sizeof(h.magic));
	// Captured payloads may hold secrets: the file is its owner's only.
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		fprintf(stderr, "shmchanctl trace save: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EX_CANTCREAT;
	}
	if (fwrite(&h, sizeof(h), 1, f) != 1 || (n > 0 && fwrite(e, sizeof(*e), n, f) != n) ||
	    fclose(f) != 0) {
		fprintf(stderr, "shmchanctl trace save: %s: %s\n", path, strerror(errno));
		return EX_IOERR;
	}
	printf("%zu entries saved to %s\n", n, path);
	return EXIT_SUCCESS;
}

int trace_file_read(const char *path, struct gr_shm_trace_entry **entries, size_t *n) {
	struct trace_file_header h;
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		fprintf(stderr, "shmchanctl trace replay: %s: %s\n", path, strerror(errno));
		return EX_NOINPUT;
	}
	if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, TRACE_FILE_MAGIC, 8) != 0 ||
	    h.version != TRACE_FILE_VERSION || h.entry_len != sizeof(**entries) ||
	    h.count > TRACE_FILE_ENTRIES_MAX) {
		fprintf(stderr,
			"shmchanctl trace replay: %s: not a trace saved by this shmchanctl\n",
			path);
		fclose(f);
		return EX_DATAERR;
	}
	*entries = calloc(h.count + 1, sizeof(**entries));
	if (*entries == NULL) {
		fclose(f);
		return EX_OSERR;
	}
	if (fread(*entries, sizeof(**entries), h.count, f) != h.count) {
		fprintf(stderr, "shmchanctl trace replay: %s: cut short\n", path);
		free(*entries);
		fclose(f);
		return EX_DATAERR;
	}
	fclose(f);
	*n = h.count;
	return 0;
}

static int trace_set(const struct cli_opts *opts, uint32_t flags) {
	struct gr_shm_trace_set_req req = {.flags = flags};
	int status = EXIT_SUCCESS;
	struct gr_api_client *c;
	void *payload = NULL;
	long len;

	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL)
		return status;
	len = gr_api_client_send_recv_len(c, GR_SHM_TRACE_SET, sizeof(req), &req, &payload);
	free(payload);
	gr_api_client_disconnect(c);
	if (len < 0)
		return cli_fail(opts, "GR_SHM_TRACE_SET on", errno);
	return EXIT_SUCCESS;
}

static int trace_status(const struct cli_opts *opts) {
	struct gr_shm_trace_info info;
	int status = EXIT_SUCCESS, err;
	struct gr_api_client *c;
	struct json j;

	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL)
		return status;
	err = cli_request(c, GR_SHM_TRACE_INFO, &info, sizeof(info));
	gr_api_client_disconnect(c);
	if (err != 0)
		return cli_fail(opts, "GR_SHM_TRACE_INFO on", -err);
	if (opts->json) {
		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		json_bool(&j, "on", info.flags & GR_SHM_TRACE_ON);
		json_bool(&j, "capture", info.flags & GR_SHM_TRACE_CAPTURE);
		json_u64(&j, "size", info.size);
		json_u64(&j, "held", info.held);
		json_u64(&j, "recorded", info.recorded);
		json_object_end(&j);
		json_end(&j);
		return EXIT_SUCCESS;
	}
	printf("trace %s%s, %u of %u entries held, %llu recorded since start\n",
	       info.flags & GR_SHM_TRACE_ON ? "on" : "off",
	       info.flags & GR_SHM_TRACE_CAPTURE ? " (payload capture on)" : "",
	       info.held,
	       info.size,
	       (unsigned long long)info.recorded);
	return EXIT_SUCCESS;
}

// dump (path NULL) or save to path.
static int trace_dump(const struct cli_opts *opts, const char *path) {
	struct gr_shm_trace_entry *e;
	int status = EXIT_SUCCESS, err;
	struct gr_api_client *c;
	size_t n;

	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL)
		return status;
	err = cli_stream(c, GR_SHM_TRACE_DUMP, sizeof(*e), (void **)&e, &n);
	gr_api_client_disconnect(c);
	if (err != 0)
		return cli_fail(opts, "GR_SHM_TRACE_DUMP on", -err);
	if (path != NULL)
		status = trace_save(path, e, n);
	else if (opts->json)
		dump_json(e, n);
	else
		status = dump_table(e, n);
	free(e);
	return status;
}

static int trace_run(struct cli_opts *opts, int argc, char **argv) {
	uint32_t flags = GR_SHM_TRACE_ON;
	int opt, status = EXIT_SUCCESS;
	const char *sub;

	// Shared options may come before the sub-command.
	if (cli_getopt(opts, &trace_cmd, argc, argv, "", &status) != -1)
		return status;
	if (optind >= argc) {
		cli_usage(&trace_cmd, stderr);
		return EX_USAGE;
	}
	sub = argv[optind];
	argc -= optind;
	argv += optind;
	optind = 0;
	if (strcmp(sub, "replay") == 0)
		return trace_replay(opts, argc, argv);
	while ((opt = cli_getopt(opts, &trace_cmd, argc, argv, "cC", &status)) != -1) {
		if (opt == 'c' && strcmp(sub, "on") == 0)
			flags |= GR_SHM_TRACE_CAPTURE;
		else if (opt == 'C' && strcmp(sub, "on") == 0)
			flags |= GR_SHM_TRACE_CLEAR;
		else if (opt == 'c' || opt == 'C') {
			cli_usage(&trace_cmd, stderr);
			return EX_USAGE;
		} else
			return status;
	}
	if (strcmp(sub, "save") == 0 && argc - optind == 1)
		return trace_dump(opts, argv[optind]);
	if (argc - optind != 0) {
		cli_usage(&trace_cmd, stderr);
		return EX_USAGE;
	}
	if (strcmp(sub, "on") == 0)
		return trace_set(opts, flags);
	if (strcmp(sub, "off") == 0)
		return trace_set(opts, 0);
	if (strcmp(sub, "status") == 0)
		return trace_status(opts);
	if (strcmp(sub, "dump") == 0)
		return trace_dump(opts, NULL);
	cli_usage(&trace_cmd, stderr);
	return EX_USAGE;
}
