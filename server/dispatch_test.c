// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "dispatch_test.h"
#include "api.h"

int dispatch_test_handlers(void) {
	static const struct api_handler_table *const tables[] = {
		&handlers_main,
		&handlers_log,
		&handlers_echo,
	};
	int ret = 0;

	for (unsigned i = 0; i < sizeof(tables) / sizeof(tables[0]) && ret == 0; i++)
		ret = api_table_register(tables[i]);
	return ret;
}
