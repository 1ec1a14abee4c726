// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl: options shared by every command, the command registry, and
// the choice of the command to run.

#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static struct cli_command *commands;

// Kept in name order, so that --help lists them so.
void cli_register(struct cli_command *cmd) {
	struct cli_command **at = &commands;

	while (*at != NULL && strcmp((*at)->name, cmd->name) < 0)
		at = &(*at)->next;
	cmd->next = *at;
	*at = cmd;
}

static void usage(FILE *f) {
	fprintf(f,
		"Usage: shmchanctl [-s SOCK] [-j] COMMAND [ARGS...]\n"
		"       shmchanctl --version | --help\n"
		"\n"
		"Query shmchand, the shmchan control API daemon, or an application that embeds\n"
		"its server library.\n"
		"\n"
		"Options (before or after the command):\n"
		"  -s, --socket SOCK  the daemon's socket (default %s)\n"
		"  -j, --json         print JSON with exact numbers instead of a table\n"
		"  -h, --help         show this help, or a command's usage after it\n"
		"  -V, --version      show shmchanctl's version\n"
		"\n"
		"Commands:\n",
		GR_API_DEFAULT_SOCK_PATH);
	for (const struct cli_command *cmd = commands; cmd != NULL; cmd = cmd->next)
		fprintf(f, "  %-10s %s\n", cmd->name, cmd->summary);
	fprintf(f,
		"\n"
		"Run 'shmchanctl COMMAND --help' for a command's options.\n"
		"\n"
		"Exit status: 0, or as sysexits(3): 64 bad usage, 65 data refused by the daemon,\n"
		"66 a payload's file unreadable, 69 no daemon on the socket or it went away,\n"
		"70 any other error, 71 out of memory,\n"
		"75 timed out, 76 protocol error or version refused, 77 permission denied,\n"
		"78 bad GR_API_TRANSPORT.\n"
		"See shmchanctl(1).\n");
}

void cli_usage(const struct cli_command *cmd, FILE *f) {
	fprintf(f,
		"Usage: shmchanctl [-s SOCK] [-j] %s%s%s\n  %s\n",
		cmd->name,
		cmd->args[0] != '\0' ? " " : "",
		cmd->args,
		cmd->summary);
	if (cmd->help != NULL) {
		fputc('\n', f);
		cmd->help(f);
	}
}

static const struct option shared_options[] = {
	{"socket", required_argument, NULL, 's'},
	{"json", no_argument, NULL, 'j'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

// Most characters in a command's optstring with the shared ones.
#define OPTSTRING_MAX 64
// Most long options of a command with the shared ones.
#define LONG_OPTIONS_MAX 16
#define SHARED_OPTSTRING "s:jh"

int cli_getopt(
	struct cli_opts *opts,
	const struct cli_command *cmd,
	int argc,
	char **argv,
	const char *optstring,
	int *status
) {
	struct option longopts[LONG_OPTIONS_MAX + 1];
	char all[OPTSTRING_MAX];
	unsigned n = 0;
	int opt;

	for (unsigned i = 0; shared_options[i].name != NULL; i++)
		longopts[n++] = shared_options[i];
	for (unsigned i = 0;
	     cmd->long_options != NULL && cmd->long_options[i].name != NULL && n < LONG_OPTIONS_MAX;
	     i++)
		longopts[n++] = cmd->long_options[i];
	memset(&longopts[n], 0, sizeof(longopts[n]));
	// '+': stop at the first argument that is not an option.
	snprintf(all, sizeof(all), "+" SHARED_OPTSTRING "%s", optstring);
	for (;;) {
		opt = getopt_long(argc, argv, all, longopts, NULL);
		switch (opt) {
		case 's':
			opts->sock_path = optarg;
			continue;
		case 'j':
			opts->json = true;
			continue;
		case 'h':
			cli_usage(cmd, stdout);
			*status = EXIT_SUCCESS;
			return '?';
		case 'V':
			printf("shmchanctl %s\n", SHMCHAN_VERSION);
			*status = EXIT_SUCCESS;
			return '?';
		case '?':
			cli_usage(cmd, stderr);
			*status = EX_USAGE;
			return '?';
		}
		return opt;
	}
}

int main(int argc, char **argv) {
	struct cli_opts opts = {0};
	const struct cli_command *cmd;
	int opt;

	while ((opt = getopt_long(argc, argv, "+s:jhV", shared_options, NULL)) != -1) {
		switch (opt) {
		case 's':
			opts.sock_path = optarg;
			break;
		case 'j':
			opts.json = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		case 'V':
			printf("shmchanctl %s\n", SHMCHAN_VERSION);
			return EXIT_SUCCESS;
		default:
			usage(stderr);
			return EX_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "shmchanctl: no command given\n");
		usage(stderr);
		return EX_USAGE;
	}
	for (cmd = commands; cmd != NULL; cmd = cmd->next) {
		if (strcmp(cmd->name, argv[optind]) == 0)
			break;
	}
	if (cmd == NULL) {
		fprintf(stderr, "shmchanctl: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		return EX_USAGE;
	}
	argc -= optind;
	argv += optind;
	// The command parses its own arguments from its name on; 0 makes
	// getopt start over on the new vector.
	optind = 0;
	return cmd->run(&opts, argc, argv);
}
