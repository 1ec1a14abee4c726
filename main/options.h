// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchand's own options, those before "--": their parsing into
// shmchand_config, and the help text. Main thread only, before EAL init.

#pragma once

#include <gr_api_server.h>

// What parse_options() found besides the configuration.
enum {
	OPTIONS_RUN,
	OPTIONS_HELP,
	OPTIONS_VERSION,
};

// Print the help text to standard output. d: the server's defaults.
void usage(const struct gr_api_server_conf *d);

// Parse the daemon's own options, argv[1] up to argc (the caller cut argv
// at "--"). Returns OPTIONS_RUN, OPTIONS_HELP (--help), OPTIONS_VERSION
// (--version), or -EINVAL after printing why.
int parse_options(int argc, char **argv);
