// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The messages the library knows (gr_api_message_register()): a name and a
// response length per type, for gr_api_message_name() and for the size check
// of gr_api_client_recv() and gr_api_client_event_recv(). The library's own
// headers register theirs the way a program does: this file includes
// gr_api_client_impl.h first.
//
// An open-addressing table that only grows: registrations take a lock, and
// lookups, one per gr_api_client_recv(), take none. An entry is written
// whole before it is published, and never changes once published.

#include <gr_api_client_impl.h>

#include "client_priv.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Slots of the table, a power of two with room to spare: at most
// GR_API_MESSAGES_MAX of them (three quarters) are ever used, so a probe
// always ends at a free slot, after one or two steps at that load.
#define MESSAGE_SLOTS 1024
_Static_assert(GR_API_MESSAGES_MAX < MESSAGE_SLOTS, "a free slot ends every probe");
_Static_assert((MESSAGE_SLOTS & (MESSAGE_SLOTS - 1)) == 0, "slots are a power of two");

// Room for gr_api_message_name() of an unknown type: "0x%08x?" and a NUL.
#define MESSAGE_UNKNOWN_NAME_LEN 16

struct message {
	// Set, with a release store, once the fields below are written; read
	// with an acquire load by lookups, which then see those fields whole.
	bool published;
	bool stream;
	uint32_t type;
	size_t resp_size;
	char *name; // malloc'ed copy
};

static struct message messages[MESSAGE_SLOTS];
static unsigned n_messages; // under messages_lock
static pthread_mutex_t messages_lock = PTHREAD_MUTEX_INITIALIZER;

// Knuth's multiplicative hash: the types of one module are consecutive ids,
// which the top bits of the product spread over the table.
static unsigned message_slot(uint32_t type) {
	return (unsigned)((type * UINT32_C(2654435761)) >> 22) & (MESSAGE_SLOTS - 1);
}

static const struct message *message_find(uint32_t type) {
	for (unsigned i = message_slot(type);; i = (i + 1) & (MESSAGE_SLOTS - 1)) {
		const struct message *m = &messages[i];
		// Pairs with the release store of gr_api_message_register():
		// a published entry is seen with its fields.
		if (!__atomic_load_n(&m->published, __ATOMIC_ACQUIRE))
			return NULL;
		if (m->type == type)
			return m;
	}
}

GR_API_EXPORT int
gr_api_message_register(uint32_t type, const char *name, size_t resp_size, bool stream) {
	int ret = 0;

	if (name == NULL || name[0] == '\0')
		return -EINVAL;
	pthread_mutex_lock(&messages_lock);
	unsigned i = message_slot(type);
	for (; messages[i].published; i = (i + 1) & (MESSAGE_SLOTS - 1)) {
		if (messages[i].type == type) {
			ret = strcmp(messages[i].name, name) == 0 ? 0 : -EEXIST;
			goto out;
		}
	}
	if (n_messages >= GR_API_MESSAGES_MAX) {
		ret = -ENOSPC;
		goto out;
	}
	struct message *m = &messages[i];
	m->name = strdup(name);
	if (m->name == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	m->type = type;
	m->resp_size = resp_size;
	m->stream = stream;
	n_messages++;
	// Publish last: a lookup that sees the flag sees the fields above.
	__atomic_store_n(&m->published, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&messages_lock);
	return ret;
}

GR_API_EXPORT const char *gr_api_message_name(uint32_t type) {
	static __thread char unknown[MESSAGE_UNKNOWN_NAME_LEN];
	const struct message *m = message_find(type);

	if (m != NULL)
		return m->name;
	snprintf(unknown, sizeof(unknown), "0x%08x?", (unsigned)type);
	return unknown;
}

int client_message_check(uint32_t type, size_t len) {
	const struct message *m = message_find(type);

	if (m == NULL || len >= m->resp_size)
		return 0;
	// A stream ends with an empty response, whatever its responses' length.
	if (m->stream && len == 0)
		return 0;
	return -EMSGSIZE;
}
