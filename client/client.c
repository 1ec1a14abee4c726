// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Public entry points of the client library: connect, transport choice,
// request ids, matching responses to requests and the stash of responses
// that arrived early. The transports live in sock.c and shm.c.

#include "client_priv.h"

#include <gr_api_client.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

// Environment variable that picks the transport when the options do not.
#define CLIENT_TRANSPORT_ENV "GR_API_TRANSPORT"

#define CLIENT_DEFAULT_VERSION "shmchan-client " SHMCHAN_VERSION

#define NSEC_PER_USEC 1000ull

// Largest errno value (the kernel's MAX_ERRNO). A status above it is no
// errno: the response is malformed.
#define CLIENT_MAX_ERRNO 4095

// The errno of a response's non-zero status.
static int status_errno(uint32_t status) {
	return status <= CLIENT_MAX_ERRNO ? (int)status : EBADMSG;
}

int client_transport_choose(
	const struct gr_api_client_opts *opts,
	const char *env,
	enum gr_api_transport *out
) {
	if (opts != NULL && opts->transport != GR_API_TRANSPORT_AUTO) {
		if (opts->transport != GR_API_TRANSPORT_SOCKET &&
		    opts->transport != GR_API_TRANSPORT_SHM)
			return -EINVAL;
		*out = opts->transport;
		return 0;
	}
	if (env == NULL || env[0] == '\0' || strcmp(env, "auto") == 0)
		*out = GR_API_TRANSPORT_AUTO;
	else if (strcmp(env, "shm") == 0)
		*out = GR_API_TRANSPORT_SHM;
	else if (strcmp(env, "socket") == 0)
		*out = GR_API_TRANSPORT_SOCKET;
	else
		return -EINVAL;
	return 0;
}

struct gr_api_client *client_new(int sock, int spin_us) {
	struct gr_api_client *c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto fail;
	c->sock = sock;
	c->transport = GR_API_TRANSPORT_SOCKET;
	c->next_id = 1;
	if (spin_us < 0)
		spin_us = GR_API_CLIENT_SPIN_US_DEFAULT;
	c->spin_ns = (uint64_t)spin_us * NSEC_PER_USEC;
	STAILQ_INIT(&c->stash);
	STAILQ_INIT(&c->events);
#ifdef SHMCHAN_CLIENT_READAHEAD
	c->rbuf = malloc(CLIENT_READAHEAD_LEN);
	if (c->rbuf == NULL)
		goto fail;
#endif
	c->msg_buf = malloc(CLIENT_MSG_MAX);
	if (c->msg_buf == NULL)
		goto fail;
	return c;
fail:
	if (c != NULL) {
		free(c->rbuf);
		free(c);
	}
	close(sock);
	errno = ENOMEM;
	return NULL;
}

long client_send_batch(
	struct gr_api_client *c,
	uint32_t type,
	size_t len,
	const void *data,
	bool more
) {
	if (len > GR_API_MAX_MSG_LEN || (data == NULL && len > 0))
		return -EINVAL;
	if (c->dead)
		return -ECONNRESET;

	// Grout's subscribe asks for events in Grout's framing, which no
	// response parser can tell from a response: this library asks for
	// tagged ones, on both transports, so that one handle gets both.
	if (type == GR_EVENT_SUBSCRIBE)
		type = GR_SHM_EVENT_SUBSCRIBE;

	uint32_t id = c->next_id;
	// Ids are never 0 (a response to id 0 is an event): skip it on wrap.
	c->next_id = id + 1 == 0 ? 1 : id + 1;

	struct gr_api_request hdr = {.id = id, .type = type, .payload_len = (uint32_t)len};
	int ret;
	if (c->transport == GR_API_TRANSPORT_SHM)
		ret = client_shm_send(c, &hdr, data, len, more);
	else
		ret = client_sock_send(c, &hdr, data, len);
	if (ret < 0)
		return ret;
	return id;
}

long client_send(struct gr_api_client *c, uint32_t type, size_t len, const void *data) {
	return client_send_batch(c, type, len, data, false);
}

int client_check_hdr(struct gr_api_client *c, const struct gr_api_response *hdr) {
	if (hdr->payload_len > CLIENT_MAX_PAYLOAD) {
		c->dead = true;
		return -EBADMSG;
	}
	return 0;
}

void client_stash_free(struct client_stash_entry *e) {
	if (e == NULL)
		return;
	free(e->payload);
	free(e);
}

unsigned client_stash_count(const struct gr_api_client *c) {
	const struct client_stash_entry *e;
	unsigned n = 0;
	STAILQ_FOREACH (e, &c->stash, next)
		n++;
	return n;
}

// Take the oldest stashed response to for_id, NULL if none.
static struct client_stash_entry *stash_take(struct gr_api_client *c, uint32_t for_id) {
	struct client_stash_entry *e;
	STAILQ_FOREACH (e, &c->stash, next) {
		if (e->hdr.for_id == for_id) {
			STAILQ_REMOVE(&c->stash, e, client_stash_entry, next);
			return e;
		}
	}
	return NULL;
}

static int stash_put(struct gr_api_client *c, const struct client_msg *msg) {
	struct client_stash_entry *e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->hdr = msg->hdr;
	if (msg->hdr.payload_len > 0) {
		e->payload = malloc(msg->hdr.payload_len);
		if (e->payload == NULL) {
			free(e);
			return -ENOMEM;
		}
		memcpy(e->payload, msg->payload, msg->hdr.payload_len);
	}
	STAILQ_INSERT_TAIL(&c->stash, e, next);
	return 0;
}

int client_route(struct gr_api_client *c, const struct client_msg *msg, uint32_t want_id) {
	if (msg->hdr.for_id == 0)
		return client_event_queue(c, msg);
	if (msg->hdr.for_id == want_id)
		return 1;
	return stash_put(c, msg);
}

static int next_msg(struct gr_api_client *c, struct client_msg *msg) {
	if (c->transport == GR_API_TRANSPORT_SHM)
		return client_shm_next_msg(c, msg);
	return client_sock_next_msg(c, msg);
}

int client_take(
	struct gr_api_client *c,
	uint32_t for_id,
	struct client_msg *msg,
	struct client_stash_entry **entry
) {
	*entry = NULL;
	if (c->dead)
		return -ECONNRESET;
	*entry = stash_take(c, for_id);
	if (*entry != NULL) {
		msg->hdr = (*entry)->hdr;
		msg->payload = (*entry)->payload;
		return 0;
	}
	for (;;) {
		int ret = next_msg(c, msg);
		if (ret < 0)
			return ret;
		ret = client_route(c, msg, for_id);
		if (ret < 0)
			return ret;
		if (ret == 1)
			return 0;
	}
}

int client_hello(struct gr_api_client *c, const char *version) {
	struct gr_hello_req req = {.api_version = GR_API_VERSION};
	snprintf(req.version, sizeof(req.version), "%s", version);

	long id = client_send(c, GR_HELLO, sizeof(req), &req);
	if (id < 0)
		return (int)id;
	struct client_stash_entry *entry;
	struct client_msg msg;
	int ret = client_take(c, (uint32_t)id, &msg, &entry);
	if (ret < 0)
		return ret;
	client_stash_free(entry);
	return msg.hdr.status == 0 ? 0 : -status_errno(msg.hdr.status);
}

static int client_connect_socket(const char *sock_path) {
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(sock_path) >= sizeof(addr.sun_path))
		return -EINVAL;
	strcpy(addr.sun_path, sock_path);

	int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	int ret;
	do
		ret = connect(sock, (const struct sockaddr *)&addr, sizeof(addr));
	while (ret < 0 && errno == EINTR);
	if (ret < 0) {
		ret = -errno;
		close(sock);
		return ret;
	}
	return sock;
}

GR_API_EXPORT struct gr_api_client *
gr_api_client_connect_opts(const char *sock_path, const struct gr_api_client_opts *opts) {
	enum gr_api_transport transport;
	int ret = client_transport_choose(opts, getenv(CLIENT_TRANSPORT_ENV), &transport);
	if (ret < 0)
		goto fail;

	int sock = client_connect_socket(sock_path != NULL ? sock_path : GR_API_DEFAULT_SOCK_PATH);
	if (sock < 0) {
		ret = sock;
		goto fail;
	}
	struct gr_api_client *c = client_new(sock, opts != NULL ? opts->spin_us : -1);
	if (c == NULL)
		return NULL;

	const char *version =
		opts != NULL && opts->version != NULL ? opts->version : CLIENT_DEFAULT_VERSION;
	ret = client_hello(c, version);
	if (ret < 0)
		goto fail_client;

	if (transport == GR_API_TRANSPORT_SOCKET) {
		snprintf(c->reason, sizeof(c->reason), "socket transport requested");
		return c;
	}
	ret = client_shm_attach(c);
	if (ret == 0)
		return c;
	// In auto mode the client stays on the socket when the channel cannot be
	// had (c->reason says why), but not when the socket itself failed.
	if (transport == GR_API_TRANSPORT_AUTO && (ret == -ENOTSUP || ret == -EPROTO))
		return c;
fail_client:
	gr_api_client_disconnect(c);
fail:
	errno = -ret;
	return NULL;
}

GR_API_EXPORT struct gr_api_client *gr_api_client_connect(const char *sock_path) {
	return gr_api_client_connect_opts(sock_path, NULL);
}

GR_API_EXPORT int gr_api_client_disconnect(struct gr_api_client *c) {
	if (c == NULL)
		return 0;
	client_shm_detach(c);
	client_sock_fds_close(c);
	struct client_stash_entry *e;
	while ((e = STAILQ_FIRST(&c->stash)) != NULL) {
		STAILQ_REMOVE_HEAD(&c->stash, next);
		client_stash_free(e);
	}
	client_events_free(c);
	int ret = close(c->sock);
	int err = errno;
	free(c->rbuf);
	free(c->msg_buf);
	free(c);
	if (ret < 0) {
		errno = err;
		return -1;
	}
	return 0;
}

GR_API_EXPORT enum gr_api_transport gr_api_client_transport(const struct gr_api_client *c) {
	if (c == NULL)
		return GR_API_TRANSPORT_SOCKET;
	return c->transport;
}

GR_API_EXPORT const char *gr_api_client_transport_reason(const struct gr_api_client *c) {
	if (c == NULL)
		return "";
	return c->reason;
}

static long send_common(
	struct gr_api_client *c,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data,
	bool more
) {
	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	long id = client_send_batch(c, req_type, tx_len, tx_data, more);
	if (id < 0) {
		errno = (int)-id;
		return -1;
	}
	return id;
}

GR_API_EXPORT long
gr_api_client_send(struct gr_api_client *c, uint32_t req_type, size_t tx_len, const void *tx_data) {
	return send_common(c, req_type, tx_len, tx_data, false);
}

GR_API_EXPORT long gr_api_client_send_more(
	struct gr_api_client *c,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data
) {
	return send_common(c, req_type, tx_len, tx_data, true);
}

GR_API_EXPORT int gr_api_client_flush(struct gr_api_client *c) {
	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (c->transport == GR_API_TRANSPORT_SHM && c->chan != NULL)
		client_shm_flush(c);
	return 0;
}

// Wait for for_id and fail with the response's status. On success the
// caller owns *entry (may be NULL) and msg.
static int recv_common(
	struct gr_api_client *c,
	uint32_t for_id,
	struct client_msg *msg,
	struct client_stash_entry **entry
) {
	if (c == NULL || for_id == 0)
		return -EINVAL;
	int ret = client_take(c, for_id, msg, entry);
	if (ret < 0)
		return ret;
	if (msg->hdr.status != 0) {
		client_stash_free(*entry);
		return -status_errno(msg->hdr.status);
	}
	return 0;
}

GR_API_EXPORT long gr_api_client_recv(struct gr_api_client *c, uint32_t for_id, void **rx_data) {
	struct client_stash_entry *entry;
	struct client_msg msg;
	if (rx_data != NULL)
		*rx_data = NULL;
	int ret = recv_common(c, for_id, &msg, &entry);
	if (ret < 0)
		goto fail;

	uint32_t len = msg.hdr.payload_len;
	if (rx_data != NULL && len > 0) {
		if (entry != NULL) {
			// The stash already holds a malloc'ed copy: hand it over.
			*rx_data = entry->payload;
			entry->payload = NULL;
		} else {
			*rx_data = malloc(len);
			if (*rx_data == NULL) {
				ret = -ENOMEM;
				goto fail;
			}
			memcpy(*rx_data, msg.payload, len);
		}
	}
	client_stash_free(entry);
	return len;
fail:
	errno = -ret;
	return -1;
}

GR_API_EXPORT long
gr_api_client_recv_into(struct gr_api_client *c, uint32_t for_id, void *buf, size_t buf_len) {
	struct client_stash_entry *entry;
	struct client_msg msg;
	int ret = recv_common(c, for_id, &msg, &entry);
	if (ret < 0)
		goto fail;

	uint32_t len = msg.hdr.payload_len;
	if (len > buf_len || (buf == NULL && len > 0))
		ret = -EMSGSIZE;
	else if (len > 0)
		memcpy(buf, msg.payload, len);
	client_stash_free(entry);
	if (ret < 0)
		goto fail;
	return len;
fail:
	errno = -ret;
	return -1;
}

GR_API_EXPORT long gr_api_client_send_recv(
	struct gr_api_client *c,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data,
	void **rx_data
) {
	if (rx_data != NULL)
		*rx_data = NULL;
	long id = gr_api_client_send(c, req_type, tx_len, tx_data);
	if (id < 0)
		return -1;
	return gr_api_client_recv(c, (uint32_t)id, rx_data);
}

GR_API_EXPORT int gr_api_client_stream_next(
	struct gr_api_client *c,
	uint32_t for_id,
	void **rx_data,
	size_t *rx_len
) {
	long len = gr_api_client_recv(c, for_id, rx_data);
	if (len < 0)
		return -1;
	if (rx_len != NULL)
		*rx_len = (size_t)len;
	return len > 0 ? 1 : 0;
}
