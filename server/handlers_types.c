// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Introspection: the names applications give their modules
// (gr_api_server_module_name()), and GR_SHM_TYPE_LIST, which lists every
// request type the server serves, the application's and its own, with the
// handler's name, the module's and the shortest request accepted.

#include "api.h"
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The names of modules, under the handler lock: written by
// gr_api_server_module_name() on any thread, read by GR_SHM_TYPE_LIST.
static struct {
	uint16_t module;
	char name[GR_SHM_MODULE_NAME_LEN];
} module_names[GR_API_SERVER_MODULE_NAMES_MAX];
static unsigned n_module_names;

// The server's own modules: named by the library, never by an application.
static const char *own_module_name(uint16_t module) {
	switch (module) {
	case GR_MAIN_MODULE:
		return "main";
	case GR_SHM_MODULE:
		return "shm";
	}
	return NULL;
}

// A module name is a word a shell and a log line take as is: letters,
// digits, '_', '-' and '.', 1 to GR_SHM_MODULE_NAME_LEN - 1 of them.
static bool module_name_valid(const char *name) {
	size_t len = strnlen(name, GR_SHM_MODULE_NAME_LEN);

	if (len == 0 || len == GR_SHM_MODULE_NAME_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && strchr("_-.", name[i]) == NULL)
			return false;
	return true;
}

// Handler lock held: the index of module in module_names[], or -1.
static int module_index(uint16_t module) {
	for (unsigned i = 0; i < n_module_names; i++)
		if (module_names[i].module == module)
			return (int)i;
	return -1;
}

GR_API_EXPORT int gr_api_server_module_name(uint16_t module, const char *name) {
	int i, ret = 0;

	if (api_lock_held()) {
		api_misuse(
			API_MISUSE_REGISTER,
			"gr_api_server_module_name(0x%04x) %s: refused (EDEADLK)",
			module,
			api_lock_holder()
		);
		return -EDEADLK;
	}
	if (own_module_name(module) != NULL) {
		LOG(ERR,
		    "module 0x%04x is the server's own (%s): not renamed (EPERM)",
		    module,
		    own_module_name(module));
		return -EPERM;
	}
	if (name != NULL && !module_name_valid(name)) {
		LOG(ERR,
		    "module 0x%04x: a name is 1 to %d letters, digits, '_', '-' or '.' (EINVAL)",
		    module,
		    GR_SHM_MODULE_NAME_LEN - 1);
		return -EINVAL;
	}
	api_lock();
	i = module_index(module);
	if (name == NULL) {
		if (i >= 0)
			module_names[i] = module_names[--n_module_names];
	} else if (i >= 0) {
		snprintf(module_names[i].name, sizeof(module_names[i].name), "%s", name);
	} else if (n_module_names < GR_API_SERVER_MODULE_NAMES_MAX) {
		module_names[n_module_names].module = module;
		snprintf(module_names[n_module_names].name, GR_SHM_MODULE_NAME_LEN, "%s", name);
		n_module_names++;
	} else {
		ret = -ENOSPC;
	}
	api_unlock();
	if (ret == -ENOSPC)
		LOG(ERR,
		    "module 0x%04x: more than %u module names (GR_API_SERVER_MODULE_NAMES_MAX)",
		    module,
		    GR_API_SERVER_MODULE_NAMES_MAX);
	return ret;
}

void api_module_name_get(uint16_t module, char name[GR_SHM_MODULE_NAME_LEN]) {
	const char *own = own_module_name(module);
	int i;

	if (own != NULL) {
		snprintf(name, GR_SHM_MODULE_NAME_LEN, "%s", own);
		return;
	}
	i = module_index(module);
	snprintf(name, GR_SHM_MODULE_NAME_LEN, "%s", i >= 0 ? module_names[i].name : "");
}

static int type_info_cmp(const void *a, const void *b) {
	const struct gr_shm_type_info *x = a, *y = b;

	return x->type < y->type ? -1 : x->type > y->type;
}

// Main thread or poller, under the handler lock. The registry is copied
// and sorted first, then streamed: at most GR_API_SERVER_HANDLERS_MAX
// responses of 112 bytes, which every transport's backlog takes whole.
static struct gr_api_out type_list(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct api_handler_entry entries[GR_API_SERVER_HANDLERS_MAX];
	struct gr_shm_type_info *infos;
	unsigned n;
	int ret = 0;

	(void)request;
	(void)len;
	n = api_handlers_copy(entries, GR_API_SERVER_HANDLERS_MAX);
	infos = calloc(n > 0 ? n : 1, sizeof(*infos));
	if (infos == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	for (unsigned i = 0; i < n; i++) {
		const struct gr_api_handler *h = entries[i].handler;

		infos[i].type = h->request_type;
		infos[i].request_len = h->request_len;
		infos[i].flags = entries[i].own ? GR_SHM_TYPE_SERVER : 0;
		snprintf(infos[i].name, sizeof(infos[i].name), "%s", h->name);
		api_module_name_get((uint16_t)(h->request_type >> 16), infos[i].module);
	}
	qsort(infos, n, sizeof(*infos), type_info_cmp);
	for (unsigned i = 0; i < n && ret == 0; i++)
		ret = gr_api_send(ctx, sizeof(infos[i]), &infos[i]);
	free(infos);
	if (ret < 0)
		return gr_api_out(-ret, 0, NULL);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler handlers_types_array[] = {
	GR_API_HANDLER_INIT(GR_SHM_TYPE_LIST, type_list),
};
API_HANDLER_TABLE(handlers_types, handlers_types_array);
