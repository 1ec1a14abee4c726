// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl stats --types: the figures of each request type
// (GR_SHM_TYPE_STATS).

#pragma once

#include "cli.h"

// Ask c for them and print them (a table, or JSON with -j). Returns an exit
// status.
int stats_types_run(const struct cli_opts *opts, struct gr_api_client *c);
