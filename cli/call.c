// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl call: send any request, by number or by a name the server
// lists (GR_SHM_TYPE_LIST), with a payload given as hex or read from a
// file, and print the response: its status and its payload as hex; with
// -S, every response of a stream up to its end.

#include "cli.h"
#include "json.h"
#include "types.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

// Bytes a hex dump line shows.
#define HEX_LINE_BYTES 16
// Payload bytes of a stream's responses printed at most: as much as the
// other commands keep of a list (cli_stream()); a server that streams more
// is not one to believe.
#define CALL_STREAM_MAX_BYTES (16u << 20)

struct call_opts {
	enum gr_api_transport transport;
	bool stream;
	uint32_t type;
	const char *type_name; // NULL: type is a number
	uint8_t *payload;
	size_t len;
};

static void call_help(FILE *f) {
	fprintf(f,
		"  TYPE      a request type: a number (0xcafe1987) or a name that 'shmchanctl "
		"types'\n"
		"            lists (GR_PING, case aside)\n"
		"  HEX       the payload as hex digits, two per byte, blanks between bytes "
		"allowed\n"
		"  @FILE     the payload read from FILE (@- : standard input)\n"
		"  -S        a stream: print every response up to the empty one that ends it\n"
		"  -t MODE   transport: socket (default), shm or auto (GR_API_TRANSPORT "
		"decides)\n");
}

static int call_run(struct cli_opts *opts, int argc, char **argv);

static struct cli_command call_cmd = {
	.name = "call",
	.args = "[-S] [-t auto|shm|socket] TYPE [HEX | @FILE]",
	.summary = "send any request and print its response's status and payload as hex",
	.help = call_help,
	.run = call_run,
};
CLI_COMMAND(call_cmd)

static int hex_digit(char c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

// Parse hex into co->payload. Returns -1 (done) or an exit status.
static int payload_from_hex(struct call_opts *co, const char *hex) {
	size_t digits = 0;
	int high = -1;

	co->payload = malloc(strlen(hex) / 2 + 1);
	if (co->payload == NULL)
		return EX_OSERR;
	for (const char *p = hex; *p != '\0'; p++) {
		int d = hex_digit(*p);

		if (isspace((unsigned char)*p) && high < 0)
			continue;
		if (d < 0) {
			fprintf(stderr,
				"shmchanctl call: '%c' in the payload is no hex digit%s\n",
				isprint((unsigned char)*p) ? *p : '?',
				isspace((unsigned char)*p) ? " (a blank inside a byte)" : "");
			return EX_USAGE;
		}
		digits++;
		if (high < 0) {
			high = d;
		} else {
			co->payload[co->len++] = (uint8_t)(high << 4 | d);
			high = -1;
		}
	}
	if (high >= 0) {
		fprintf(stderr,
			"shmchanctl call: the payload has an odd number of hex digits (%zu): two "
			"per byte\n",
			digits);
		return EX_USAGE;
	}
	return -1;
}

// Read path (- for standard input) into co->payload, at most
// GR_API_MAX_MSG_LEN bytes. Returns -1 (done) or an exit status.
static int payload_from_file(struct call_opts *co, const char *path) {
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	int err;

	if (f == NULL) {
		fprintf(stderr, "shmchanctl call: cannot read %s: %s\n", path, strerror(errno));
		return EX_NOINPUT;
	}
	// One byte more than allowed: a longer file is refused, not cut.
	co->payload = malloc(GR_API_MAX_MSG_LEN + 1);
	if (co->payload == NULL) {
		if (f != stdin)
			fclose(f);
		return EX_OSERR;
	}
	co->len = fread(co->payload, 1, GR_API_MAX_MSG_LEN + 1, f);
	err = ferror(f) ? errno : 0;
	if (f != stdin)
		fclose(f);
	if (err != 0) {
		fprintf(stderr, "shmchanctl call: cannot read %s: %s\n", path, strerror(err));
		return EX_NOINPUT;
	}
	if (co->len > GR_API_MAX_MSG_LEN) {
		fprintf(stderr,
			"shmchanctl call: %s holds more than %u bytes (GR_API_MAX_MSG_LEN)\n",
			path,
			GR_API_MAX_MSG_LEN);
		return EX_USAGE;
	}
	return -1;
}

// Parse the options and arguments into co. Returns -1 (run) or an exit
// status.
static int call_parse(struct cli_opts *opts, int argc, char **argv, struct call_opts *co) {
	int opt, status = EXIT_SUCCESS;
	unsigned long value;
	char *end;

	while ((opt = cli_getopt(opts, &call_cmd, argc, argv, "St:", &status)) != -1) {
		switch (opt) {
		case 'S':
			co->stream = true;
			break;
		case 't':
			if (strcmp(optarg, "auto") == 0) {
				co->transport = GR_API_TRANSPORT_AUTO;
			} else if (strcmp(optarg, "shm") == 0) {
				co->transport = GR_API_TRANSPORT_SHM;
			} else if (strcmp(optarg, "socket") == 0) {
				co->transport = GR_API_TRANSPORT_SOCKET;
			} else {
				fprintf(stderr,
					"shmchanctl call: -t takes auto, shm or socket, not '%s'\n",
					optarg);
				return EX_USAGE;
			}
			break;
		default:
			return status;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		cli_usage(&call_cmd, stderr);
		return EX_USAGE;
	}
	if (isdigit((unsigned char)argv[optind][0])) {
		errno = 0;
		value = strtoul(argv[optind], &end, 0);
		if (errno != 0 || *end != '\0' || value > UINT32_MAX) {
			fprintf(stderr,
				"shmchanctl call: '%s' is no request type: a number up to "
				"0xffffffff, or a name\n",
				argv[optind]);
			return EX_USAGE;
		}
		co->type = (uint32_t)value;
	} else {
		co->type_name = argv[optind];
	}
	if (argc - optind == 1)
		return -1;
	if (argv[optind + 1][0] == '@')
		return payload_from_file(co, argv[optind + 1] + 1);
	return payload_from_hex(co, argv[optind + 1]);
}

// Find co->type_name among the types the server serves. Returns -1 (found)
// or an exit status.
static int type_resolve(struct cli_opts *opts, struct gr_api_client *c, struct call_opts *co) {
	struct gr_shm_type_info *infos;
	size_t n;
	int err;

	err = cli_types_get(c, &infos, &n);
	if (err != 0)
		return cli_fail(opts, "GR_SHM_TYPE_LIST (to find the type's number) on", -err);
	err = cli_type_find(infos, n, co->type_name, &co->type);
	free(infos);
	if (err == -ENOENT) {
		fprintf(stderr,
			"shmchanctl call: the server at %s serves no request named '%s' "
			"('shmchanctl types' lists them)\n",
			opts->sock_path != NULL ? opts->sock_path : GR_API_DEFAULT_SOCK_PATH,
			co->type_name);
		return EX_USAGE;
	}
	if (err == -EEXIST) {
		fprintf(stderr,
			"shmchanctl call: several request types are named '%s': give its number "
			"('shmchanctl types' lists them)\n",
			co->type_name);
		return EX_USAGE;
	}
	return -1;
}

static void hex_print(const uint8_t *payload, size_t len) {
	for (size_t i = 0; i < len; i++) {
		if (i % HEX_LINE_BYTES == 0)
			printf("%s%08zx ", i > 0 ? "\n" : "", i);
		printf(" %02x", payload[i]);
	}
	if (len > 0)
		putchar('\n');
}

static void hex_json(struct json *j, const char *key, const uint8_t *payload, size_t len) {
	static const char digits[] = "0123456789abcdef";
	char *hex = malloc(2 * len + 1);

	if (hex == NULL) {
		json_null(j, key);
		return;
	}
	for (size_t i = 0; i < len; i++) {
		hex[2 * i] = digits[payload[i] >> 4];
		hex[2 * i + 1] = digits[payload[i] & 0xf];
	}
	hex[2 * len] = '\0';
	json_string(j, key, hex);
	free(hex);
}

// Errors of the client library's own, not a status the server answered:
// the connection, the protocol, the timeout.
static bool transport_error(int err) {
	switch (err) {
	case ECONNRESET:
	case EPIPE:
	case ETIMEDOUT:
	case EPROTO:
	case ENOBUFS:
	case EBADMSG:
	case ECANCELED:
		return true;
	}
	return false;
}

// Receive the responses to id and print them. Returns an exit status.
static int
call_recv(struct cli_opts *opts, struct gr_api_client *c, long id, struct call_opts *co) {
	uint8_t *buf = malloc(GR_API_MAX_MSG_LEN);
	size_t responses = 0, total = 0;
	uint32_t status = 0;
	struct json j;
	long len;

	if (buf == NULL)
		return EX_OSERR;
	if (opts->json) {
		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		json_u64(&j, "type", co->type);
		if (co->stream)
			json_array_begin(&j, "responses");
	}
	for (;;) {
		len = gr_api_client_recv_into(c, (uint32_t)id, buf, GR_API_MAX_MSG_LEN);
		if (len < 0 && transport_error(errno)) {
			int err = errno;

			free(buf);
			if (opts->json) {
				if (co->stream)
					json_array_end(&j);
				json_object_end(&j);
				json_end(&j);
			}
			return cli_fail(opts, "the response from", err);
		}
		status = len < 0 ? (uint32_t)errno : 0;
		// One response; or a stream's end: an empty one, or an error.
		if (!co->stream || len <= 0)
			break;
		total += (size_t)len;
		if (total > CALL_STREAM_MAX_BYTES) {
			free(buf);
			return cli_fail(opts, "the stream from", EPROTO);
		}
		responses++;
		if (opts->json) {
			hex_json(&j, NULL, buf, (size_t)len);
		} else {
			printf("response %zu: %ld bytes\n", responses, len);
			hex_print(buf, (size_t)len);
		}
	}
	if (opts->json) {
		if (co->stream)
			json_array_end(&j);
		json_u64(&j, "status", status);
		json_string(&j, "error", status != 0 ? strerror((int)status) : "");
		if (!co->stream)
			hex_json(&j, "payload", buf, len > 0 ? (size_t)len : 0);
		json_object_end(&j);
		json_end(&j);
	} else if (co->stream) {
		printf("end: status %u (%s), %zu responses\n",
		       status,
		       status != 0 ? strerror((int)status) : "OK",
		       responses);
	} else {
		printf("status %u (%s), %ld bytes\n",
		       status,
		       status != 0 ? strerror((int)status) : "OK",
		       len > 0 ? len : 0);
		hex_print(buf, len > 0 ? (size_t)len : 0);
	}
	free(buf);
	// A status the server answered is data it refused (sysexits.h).
	return status == 0 ? EXIT_SUCCESS : EX_DATAERR;
}

static int call_run(struct cli_opts *opts, int argc, char **argv) {
	struct call_opts co = {.transport = GR_API_TRANSPORT_SOCKET};
	struct gr_api_client *c;
	int status;
	long id;

	status = call_parse(opts, argc, argv, &co);
	if (status >= 0)
		goto out;
	c = cli_connect(opts, co.transport, &status);
	if (c == NULL)
		goto out;
	if (co.type_name != NULL)
		status = type_resolve(opts, c, &co);
	if (status < 0) {
		id = gr_api_client_send(c, co.type, co.len, co.payload);
		if (id < 0)
			status = cli_fail(opts, "cannot send to", errno);
		else
			status = call_recv(opts, c, id, &co);
	}
	gr_api_client_disconnect(c);
out:
	free(co.payload);
	return status;
}
