// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The request types a server serves (GR_SHM_TYPE_LIST), for shmchanctl
// types and shmchanctl call.

#pragma once

#include "cli.h"

#include <gr_shm.h>

// Every type the server of c serves, in a malloc'ed array *infos of *n,
// names NUL-terminated. Returns 0 or -errno (cli_stream()'s).
int cli_types_get(struct gr_api_client *c, struct gr_shm_type_info **infos, size_t *n);

// The type named name (a handler's name, case aside) among infos, in
// *type. Returns 0, -ENOENT (none) or -EEXIST (several: give its number).
int cli_type_find(const struct gr_shm_type_info *infos, size_t n, const char *name, uint32_t *type);
