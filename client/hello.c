// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Hello and the API version: the newest version the daemon speaks, found on
// the one connection, and the hello response of that version
// (gr_api_client_info()).

#include "client_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

// Largest errno value (the kernel's MAX_ERRNO). A status above it is no
// errno: the response is malformed.
#define CLIENT_MAX_ERRNO 4095

// The versions hello offers, newest first. shmchand speaks all three and
// takes the first; a daemon that speaks Grout's only (Grout itself) refuses
// ours with EBADMSG and takes one of its own. Grout keeps a connection open
// after a refused hello, and so does shmchand: the next hello goes on the
// same connection.
static const uint32_t hello_versions[] = {
	GR_API_VERSION,
	GR_API_VERSION_GROUT_MAIN,
	GR_API_VERSION_GROUT_0_17,
};

int client_status_errno(uint32_t status) {
	return status <= CLIENT_MAX_ERRNO ? (int)status : EBADMSG;
}

// One hello at api_version. Returns 0 with the response kept, or -errno.
static int hello_at(struct gr_api_client *c, uint32_t api_version, const char *version) {
	struct gr_hello_req req = {.api_version = api_version};
	struct client_stash_entry *entry;
	struct client_msg msg;

	snprintf(req.version, sizeof(req.version), "%s", version);
	long id = client_send(c, GR_HELLO, sizeof(req), &req);
	if (id < 0)
		return (int)id;
	int ret = client_recv_common(c, (uint32_t)id, true, NULL, &msg, &entry);
	if (ret < 0)
		return ret;
	// The response of the version spoken: empty, or a struct gr_hello_resp
	// that later versions may lengthen (its fields known here are kept).
	memset(&c->hello_resp, 0, sizeof(c->hello_resp));
	size_t len = msg.hdr.payload_len;
	if (len > 0)
		memcpy(&c->hello_resp,
		       msg.payload,
		       len < sizeof(c->hello_resp) ? len : sizeof(c->hello_resp));
	c->api_version = api_version;
	client_stash_free(entry);
	return 0;
}

int client_hello(struct gr_api_client *c, const char *version) {
	int ret = -EBADMSG;

	for (size_t i = 0; i < sizeof(hello_versions) / sizeof(hello_versions[0]); i++) {
		ret = hello_at(c, hello_versions[i], version);
		if (ret != -EBADMSG)
			break;
	}
	return ret;
}

GR_API_EXPORT const struct gr_hello_resp *gr_api_client_info(const struct gr_api_client *c) {
	if (c == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return &c->hello_resp;
}

GR_API_EXPORT uint32_t gr_api_client_api_version(const struct gr_api_client *c) {
	return c != NULL ? c->api_version : 0;
}
