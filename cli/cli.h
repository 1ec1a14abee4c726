// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl: the operator's CLI of shmchand, over the client library. Each
// command group lives in a file of its own and registers itself with
// CLI_COMMAND; main.c parses the options every command shares and runs the
// command named on the command line.

#pragma once

#include <gr_api_client.h>

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sysexits.h>

// What every command accepts: -s SOCK and -j, before or after its name.
struct cli_opts {
	const char *sock_path; // NULL: GR_API_DEFAULT_SOCK_PATH
	bool json; // print JSON (exact numbers) instead of tables
};

struct cli_command {
	const char *name;
	const char *args; // its own options and arguments, for the usage line
	const char *summary; // one line for shmchanctl --help
	// Print its options and arguments, one line each, for CMD --help (NULL:
	// it has none).
	void (*help)(FILE *);
	// Run with argv[0] the command's name. Returns an exit status
	// (EXIT_SUCCESS or one of sysexits.h).
	int (*run)(struct cli_opts *, int argc, char **argv);
	// Its own long options, ended by a zeroed one (NULL: none), each
	// with its short letter in the optstring given to cli_getopt().
	const struct option *long_options;
	struct cli_command *next;
};

// Register a command: from a constructor (CLI_COMMAND), before main().
void cli_register(struct cli_command *);

#define CLI_COMMAND(cmd)                                                                           \
	static void __attribute__((constructor)) cli_register_##cmd(void) {                        \
		cli_register(&cmd);                                                                \
	}

// getopt() over a command's arguments that also takes -s SOCK, -j, -h and
// -V. Returns the next option of optstring, -1 at the end, or '?' when the
// command must not run: after a bad option (usage on stderr, *status
// EX_USAGE), -h (usage on stdout) or -V (the version), *status 0 then.
int cli_getopt(
	struct cli_opts *,
	const struct cli_command *,
	int argc,
	char **argv,
	const char *optstring,
	int *status
);

// Print the command's usage line to f.
void cli_usage(const struct cli_command *, FILE *f);

// Connect (socket only unless transport says otherwise, or
// GR_API_TRANSPORT does with GR_API_TRANSPORT_AUTO). On failure prints why
// and returns NULL with *status an exit status.
struct gr_api_client *
cli_connect(const struct cli_opts *, enum gr_api_transport transport, int *status);

// The exit status (sysexits.h) for an errno value of the client library.
int cli_exit_status(int err);

// Print "shmchanctl: what: reason" with a hint for the usual causes, and
// return cli_exit_status(err).
int cli_fail(const struct cli_opts *, const char *what, int err);

// One request whose response is a struct of resp_len bytes: a longer
// payload (a newer daemon) is cut, a shorter one (an older daemon) padded
// with zeros. Returns 0 or -errno.
int cli_request(struct gr_api_client *, uint32_t type, void *resp, size_t resp_len);

// A stream request: every response, each resp_len bytes (cut or padded as
// in cli_request), in a malloc'ed array *items of *n, all within the
// handle's timeout and 16 MiB. Returns 0 or -errno: -ETIMEDOUT (the stream
// did not end in time), -EPROTO (it went past 16 MiB).
int cli_stream(struct gr_api_client *, uint32_t type, size_t resp_len, void **items, size_t *n);

// cli_stream() of a request with a payload of req_len bytes.
int cli_stream_req(
	struct gr_api_client *,
	uint32_t type,
	size_t req_len,
	const void *req,
	size_t resp_len,
	void **items,
	size_t *n
);

// Names of the public codes of api/gr_shm.h.
const char *cli_channel_state(uint32_t state);
const char *cli_backing(uint32_t backing);
