// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl events: subscribe (GR_EVENT_SUBSCRIBE, every type or the ones
// named) and print each event as it comes, one line each: its time of
// arrival, its type, and its payload, decoded for the shm module's events.
// -j prints one JSON object per line (JSON Lines).

#include "cli.h"
#include "json.h"

#include <gr_shm.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_MS 1000000L
// The payload bytes a table line shows of an event it cannot decode; -j
// gives all of them.
#define EVENTS_TEXT_HEX_MAX 64
// "2026-01-02T03:04:05.678Z" and its NUL.
#define EVENTS_TIME_LEN 32
// Room for a name out of an event, escaped for a line of text.
#define EVENTS_NAME_LEN (GR_SHM_NAME_LEN + 1)
// Below it, or from it on, a byte of a name is shown as '?' on a text line.
#define EVENTS_FIRST_PRINTABLE 0x20
#define EVENTS_PAST_PRINTABLE 0x7f

// The event types known by name, for the arguments and the output.
static const struct {
	const char *name;
	uint32_t type;
} event_types[] = {
	{"all", GR_EVENT_ALL},
	{"channel-attached", GR_SHM_EVENT_CHANNEL_ATTACHED},
	{"channel-detached", GR_SHM_EVENT_CHANNEL_DETACHED},
	{"lost", GR_SHM_EVENT_LOST},
	{"test", GR_SHM_EVENT_TEST},
};
#define EVENT_TYPES (sizeof(event_types) / sizeof(event_types[0]))

// SIGINT and SIGTERM end the command with status 0. The client library
// retries a wait a signal interrupts, so the handler itself ends the
// process, unless a line is being printed: then it leaves that to the loop,
// once the line is out, so that no line is cut.
static volatile sig_atomic_t events_printing;
static volatile sig_atomic_t events_stop;

static void on_stop_signal(int sig) {
	(void)sig;
	if (!events_printing)
		_exit(EXIT_SUCCESS);
	events_stop = 1;
}

static const char *type_name(uint32_t type) {
	for (size_t i = 0; i < EVENT_TYPES; i++) {
		if (event_types[i].type == type)
			return event_types[i].name;
	}
	return NULL;
}

// A type by name, or in hex ("0x53488001" or "53488001"). Returns 0 or
// -EINVAL.
static int type_parse(const char *arg, uint32_t *type) {
	unsigned long value;
	char *end;

	for (size_t i = 0; i < EVENT_TYPES; i++) {
		if (strcmp(arg, event_types[i].name) == 0) {
			*type = event_types[i].type;
			return 0;
		}
	}
	errno = 0;
	value = strtoul(arg, &end, 16);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || value > UINT32_MAX)
		return -EINVAL;
	*type = (uint32_t)value;
	return 0;
}

static const char *reason_name(uint32_t reason) {
	switch (reason) {
	case GR_SHM_DETACH_LEASE:
		return "lease";
	case GR_SHM_DETACH_CORRUPT:
		return "corrupt";
	case GR_SHM_DETACH_SLOW:
		return "slow";
	case GR_SHM_DETACH_REQUEST:
		return "request";
	}
	return "unknown";
}

// The wall-clock time of now, in UTC, to the millisecond.
static void time_now(char buf[EVENTS_TIME_LEN]) {
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, EVENTS_TIME_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, EVENTS_TIME_LEN - n, ".%03ldZ", ts.tv_nsec / NS_PER_MS);
}

// A name out of an event: up to its NUL or its field's end; for a line of
// text, unprintable bytes become '?' (JSON escapes them itself).
static void name_copy(char dst[EVENTS_NAME_LEN], const char src[GR_SHM_NAME_LEN], bool text) {
	size_t n = strnlen(src, GR_SHM_NAME_LEN);

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];
		bool printable = c >= EVENTS_FIRST_PRINTABLE && c < EVENTS_PAST_PRINTABLE;

		dst[i] = text && (!printable || c == ' ') ? '?' : (char)c;
	}
	dst[n] = '\0';
}

static void hex_print(FILE *f, const uint8_t *data, size_t len) {
	for (size_t i = 0; i < len; i++)
		fprintf(f, "%02x", data[i]);
}

// A JSON string of the hex of data.
static int hex_string(const uint8_t *data, size_t len, char **hex) {
	static const char digits[] = "0123456789abcdef";
	char *s = malloc(2 * len + 1);

	if (s == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		s[2 * i] = digits[data[i] >> 4];
		s[2 * i + 1] = digits[data[i] & 0xf];
	}
	s[2 * len] = '\0';
	*hex = s;
	return 0;
}

static int event_json(const char *when, const struct gr_api_event *ev) {
	const uint8_t *payload = (const uint8_t *)(ev + 1);
	const char *name = type_name(ev->ev_type);
	char type_hex[sizeof("0x00000000")];
	char str[EVENTS_NAME_LEN];
	char *hex = NULL;
	struct json j;

	snprintf(type_hex, sizeof(type_hex), "0x%08x", ev->ev_type);
	json_init_line(&j, stdout);
	json_object_begin(&j, NULL);
	json_string(&j, "time", when);
	json_string(&j, "type", name != NULL ? name : type_hex);
	json_u64(&j, "ev_type", ev->ev_type);
	json_u64(&j, "len", ev->payload_len);
	if (ev->ev_type == GR_SHM_EVENT_CHANNEL_ATTACHED &&
	    ev->payload_len >= sizeof(struct gr_shm_event_channel)) {
		struct gr_shm_event_channel e;

		memcpy(&e, payload, sizeof(e));
		name_copy(str, e.name, false);
		json_i64(&j, "pid", e.pid);
		json_string(&j, "backing", cli_backing(e.backing));
		json_string(&j, "name", str);
	} else if (ev->ev_type == GR_SHM_EVENT_CHANNEL_DETACHED && ev->payload_len >= sizeof(struct gr_shm_event_channel_detached)) {
		struct gr_shm_event_channel_detached e;

		memcpy(&e, payload, sizeof(e));
		name_copy(str, e.name, false);
		json_i64(&j, "pid", e.pid);
		json_string(&j, "reason", reason_name(e.reason));
		json_string(&j, "name", str);
	} else if (ev->ev_type == GR_SHM_EVENT_LOST && ev->payload_len >= sizeof(struct gr_shm_event_lost)) {
		struct gr_shm_event_lost e;

		memcpy(&e, payload, sizeof(e));
		json_u64(&j, "count", e.count);
	} else {
		if (hex_string(payload, ev->payload_len, &hex) < 0)
			return -ENOMEM;
		json_string(&j, "data", hex);
		free(hex);
	}
	json_object_end(&j);
	json_end(&j);
	return 0;
}

static void event_text(const char *when, const struct gr_api_event *ev) {
	const uint8_t *payload = (const uint8_t *)(ev + 1);
	const char *name = type_name(ev->ev_type);
	char str[EVENTS_NAME_LEN];
	size_t shown;

	if (name != NULL)
		printf("%s %s", when, name);
	else
		printf("%s 0x%08x", when, ev->ev_type);
	if (ev->ev_type == GR_SHM_EVENT_CHANNEL_ATTACHED &&
	    ev->payload_len >= sizeof(struct gr_shm_event_channel)) {
		struct gr_shm_event_channel e;

		memcpy(&e, payload, sizeof(e));
		name_copy(str, e.name, true);
		printf(" pid=%d backing=%s name=%s\n", e.pid, cli_backing(e.backing), str);
	} else if (ev->ev_type == GR_SHM_EVENT_CHANNEL_DETACHED && ev->payload_len >= sizeof(struct gr_shm_event_channel_detached)) {
		struct gr_shm_event_channel_detached e;

		memcpy(&e, payload, sizeof(e));
		name_copy(str, e.name, true);
		printf(" pid=%d reason=%s name=%s\n", e.pid, reason_name(e.reason), str);
	} else if (ev->ev_type == GR_SHM_EVENT_LOST && ev->payload_len >= sizeof(struct gr_shm_event_lost)) {
		struct gr_shm_event_lost e;

		memcpy(&e, payload, sizeof(e));
		printf(" count=%llu\n", (unsigned long long)e.count);
	} else {
		shown = ev->payload_len < EVENTS_TEXT_HEX_MAX ? ev->payload_len
							      : EVENTS_TEXT_HEX_MAX;
		printf(" len=0x%zx", ev->payload_len);
		if (shown > 0) {
			fputs(" data=", stdout);
			hex_print(stdout, payload, shown);
			if (shown < ev->payload_len)
				fputs("...", stdout);
		}
		putchar('\n');
	}
}

static int events_run(struct cli_opts *opts, int argc, char **argv);

// The names of event_types, "all, channel-attached, ..., test".
static void type_names_print(FILE *f) {
	for (size_t i = 0; i < EVENT_TYPES; i++)
		fprintf(f, "%s%s", i > 0 ? ", " : "", event_types[i].name);
}

static void events_help(FILE *f) {
	fputs("  -c COUNT   stop after COUNT events (default: at SIGINT or SIGTERM)\n"
	      "  TYPE       an event type: ",
	      f);
	type_names_print(f);
	fputs(",\n"
	      "             or a hex value such as 0x53488001 (default: all)\n",
	      f);
}

static struct cli_command events_cmd = {
	.name = "events",
	.args = "[-c COUNT] [TYPE...]",
	.summary = "print the daemon's events as they come (all types, or each TYPE)",
	.help = events_help,
	.run = events_run,
};
CLI_COMMAND(events_cmd)

// Options and types of the command line. Returns -1 to go on, else the
// exit status.
static int events_parse(
	struct cli_opts *opts,
	int argc,
	char **argv,
	unsigned long *count,
	uint32_t **types,
	size_t *n_types
) {
	int opt, status = EXIT_SUCCESS;
	char *end;

	while ((opt = cli_getopt(opts, &events_cmd, argc, argv, "c:", &status)) != -1) {
		if (opt != 'c')
			return status;
		errno = 0;
		*count = strtoul(optarg, &end, 10);
		if (errno != 0 || *end != '\0' || optarg[0] == '-' || *count == 0) {
			fprintf(stderr,
				"shmchanctl events: -c takes a count > 0, not '%s'\n",
				optarg);
			return EX_USAGE;
		}
	}
	*n_types = (size_t)(argc - optind);
	if (*n_types == 0)
		*n_types = 1; // every type
	*types = calloc(*n_types, sizeof(**types));
	if (*types == NULL)
		return EX_OSERR;
	(*types)[0] = GR_EVENT_ALL;
	for (size_t i = 0; optind + (int)i < argc; i++) {
		const char *arg = argv[optind + (int)i];

		if (type_parse(arg, &(*types)[i]) < 0) {
			fprintf(stderr, "shmchanctl events: '%s' is no event type: ", arg);
			type_names_print(stderr);
			fputs(", or a hex value\n", stderr);
			free(*types);
			return EX_USAGE;
		}
	}
	return -1;
}

static int events_subscribe(struct gr_api_client *c, const uint32_t *types, size_t n_types) {
	for (size_t i = 0; i < n_types; i++) {
		struct gr_event_subscribe_req req = {.ev_type = types[i]};

		if (gr_api_client_send_recv_len(c, GR_EVENT_SUBSCRIBE, sizeof(req), &req, NULL) < 0)
			return -errno;
	}
	return 0;
}

static int events_run(struct cli_opts *opts, int argc, char **argv) {
	struct sigaction sa = {.sa_handler = on_stop_signal};
	char when[EVENTS_TIME_LEN];
	unsigned long count = 0, seen = 0;
	struct gr_api_event *ev;
	struct gr_api_client *c;
	uint32_t *types = NULL;
	size_t n_types = 0;
	int status, ret;

	status = events_parse(opts, argc, argv, &count, &types, &n_types);
	if (status >= 0)
		return status;
	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL) {
		free(types);
		return status;
	}
	ret = events_subscribe(c, types, n_types);
	free(types);
	if (ret < 0) {
		gr_api_client_disconnect(c);
		return cli_fail(opts, "GR_EVENT_SUBSCRIBE on", -ret);
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	status = EXIT_SUCCESS;
	while (count == 0 || seen < count) {
		ret = gr_api_client_event_recv(c, &ev);
		if (ret < 0) {
			status = cli_fail(opts, "events from", -ret);
			break;
		}
		// The signal handler reads it: set before any byte is printed.
		events_printing = 1;
		time_now(when);
		if (opts->json)
			ret = event_json(when, ev);
		else
			event_text(when, ev);
		fflush(stdout);
		events_printing = 0;
		free(ev);
		if (ret < 0) {
			status = cli_fail(opts, "events from", -ret);
			break;
		}
		seen++;
		if (events_stop)
			break;
	}
	gr_api_client_disconnect(c);
	return status;
}
