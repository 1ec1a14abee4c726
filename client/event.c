// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Events of the client library: tagged events (responses with for_id 0)
// are taken from the stream by whichever call reads it, checked, and queued
// here until gr_api_client_event_recv() hands them out, oldest first.

#include "client_priv.h"

#include <gr_api_client.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int client_event_queue(struct gr_api_client *c, const struct client_msg *msg) {
	struct gr_api_event hdr;
	struct client_event *e;

	if (msg->hdr.status != 0 || msg->hdr.payload_len < sizeof(hdr))
		goto bad;
	memcpy(&hdr, msg->payload, sizeof(hdr));
	if (hdr.payload_len != msg->hdr.payload_len - sizeof(hdr))
		goto bad;
	e = malloc(sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->ev = malloc(msg->hdr.payload_len);
	if (e->ev == NULL) {
		free(e);
		return -ENOMEM;
	}
	memcpy(e->ev, msg->payload, msg->hdr.payload_len);
	STAILQ_INSERT_TAIL(&c->events, e, next);
	return 0;
bad:
	c->dead = true;
	return -EBADMSG;
}

void client_events_free(struct gr_api_client *c) {
	struct client_event *e;

	while ((e = STAILQ_FIRST(&c->events)) != NULL) {
		STAILQ_REMOVE_HEAD(&c->events, next);
		free(e->ev);
		free(e);
	}
}

// Take the next event, reading from the daemon while none is queued (wait:
// until one comes or the call's deadline passes; else only what is there).
// Returns 0 or -errno, and sets errno too, as Grout's call does.
static int event_take(struct gr_api_client *c, bool wait, struct gr_api_event **event) {
	struct client_event *e;
	struct client_msg msg;
	int ret = 0;

	if (event == NULL) {
		errno = EINVAL;
		return -EINVAL;
	}
	*event = NULL;
	if (c == NULL) {
		ret = -EINVAL;
		goto fail;
	}
	// As for responses: a dead handle fails, even with events queued.
	if (c->dead) {
		ret = -ECONNRESET;
		goto fail;
	}
	client_call_start(c);
	while (STAILQ_EMPTY(&c->events)) {
		// Responses that arrive meanwhile are stashed for their
		// receivers.
		ret = client_next_msg(c, &msg, wait, NULL);
		if (ret == 0)
			ret = client_route(c, &msg, 0);
		if (ret < 0)
			goto fail;
	}
	e = STAILQ_FIRST(&c->events);
	STAILQ_REMOVE_HEAD(&c->events, next);
	*event = e->ev;
	free(e);
	return 0;
fail:
	errno = -ret;
	return ret;
}

// Grout's signature: the handle is const there, as Grout's socket-only
// client keeps no state a receive changes. Ours parses into the handle's
// buffers and queues, which the caller owns (one thread at a time).
GR_API_EXPORT int
gr_api_client_event_recv(const struct gr_api_client *cc, struct gr_api_event **event) {
	return event_take((struct gr_api_client *)cc, true, event);
}

GR_API_EXPORT int gr_api_client_event_try_recv(struct gr_api_client *c, struct gr_api_event **event) {
	return event_take(c, false, event);
}
