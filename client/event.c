// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Events of the client library: tagged events (responses with for_id 0)
// are taken from the stream by whichever call reads it, checked, and queued
// here until gr_api_client_event_recv() hands them out, oldest first, within
// CLIENT_EVENTS_MAX and CLIENT_EVENTS_MAX_BYTES.

#include "client_priv.h"

#include <gr_api_client.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int event_push(struct gr_api_client *c, struct gr_api_event *ev, size_t len) {
	struct client_event *e = malloc(sizeof(*e));

	if (e == NULL)
		return -ENOMEM;
	e->ev = ev;
	e->len = len;
	STAILQ_INSERT_TAIL(&c->events, e, next);
	c->n_events++;
	c->event_bytes += len;
	return 0;
}

// Queue a GR_SHM_EVENT_LOST with the count of the events dropped since the
// last one, in their place: after every event kept before them. It is not
// held to the bounds (one small event, and the count starts again).
static void event_lost_push(struct gr_api_client *c) {
	struct gr_shm_event_lost lost = {.count = c->events_lost};
	struct gr_api_event hdr = {.ev_type = GR_SHM_EVENT_LOST, .payload_len = sizeof(lost)};
	struct gr_api_event *ev = malloc(sizeof(hdr) + sizeof(lost));

	if (ev == NULL)
		return; // counted still: pushed with the next room
	memcpy(ev, &hdr, sizeof(hdr));
	memcpy((uint8_t *)ev + sizeof(hdr), &lost, sizeof(lost));
	if (event_push(c, ev, sizeof(hdr) + sizeof(lost)) < 0) {
		free(ev);
		return;
	}
	c->events_lost = 0;
}

// How many events one that arrives to a full queue stands for: one, or the
// count of a GR_SHM_EVENT_LOST, which is the daemon's own drops.
static uint64_t event_count(const struct gr_api_event *hdr, const void *payload) {
	struct gr_shm_event_lost lost;

	if (hdr->ev_type != GR_SHM_EVENT_LOST || hdr->payload_len < sizeof(lost))
		return 1;
	memcpy(&lost, (const uint8_t *)payload + sizeof(*hdr), sizeof(lost));
	return lost.count;
}

int client_event_queue(struct gr_api_client *c, const struct client_msg *msg) {
	struct gr_api_event hdr;
	struct gr_api_event *ev;
	size_t len = msg->hdr.payload_len;

	if (msg->hdr.status != 0 || len < sizeof(hdr))
		goto bad;
	memcpy(&hdr, msg->payload, sizeof(hdr));
	if (hdr.payload_len != len - sizeof(hdr))
		goto bad;
	if (c->n_events >= CLIENT_EVENTS_MAX || c->event_bytes + len > CLIENT_EVENTS_MAX_BYTES) {
		// Saturated, not wrapped: a daemon's count can be anything, and
		// a wrapped sum would tell of fewer events lost than were.
		uint64_t count = event_count(&hdr, msg->payload);
		c->events_lost =
			c->events_lost > UINT64_MAX - count ? UINT64_MAX : c->events_lost + count;
		return 0;
	}
	// Events were dropped before this one, which fits: say so first.
	if (c->events_lost > 0)
		event_lost_push(c);
	ev = malloc(len);
	if (ev == NULL)
		return -ENOMEM;
	memcpy(ev, msg->payload, len);
	if (event_push(c, ev, len) < 0) {
		free(ev);
		return -ENOMEM;
	}
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
	c->n_events = 0;
	c->event_bytes = 0;
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
		ret = client_dead_errno(c);
		goto fail;
	}
	client_call_start(c);
	unsigned routed = 0;
	while (STAILQ_EMPTY(&c->events)) {
		// Responses that arrive meanwhile are stashed for their
		// receivers (or dropped, late answers): a daemon that keeps
		// them coming must not hold the call past its deadline.
		ret = client_next_msg(c, &msg, wait, NULL);
		if (ret == 0)
			ret = client_route(c, &msg, 0);
		if (ret == 0 && STAILQ_EMPTY(&c->events))
			ret = client_route_budget(c, &routed, wait);
		if (ret < 0)
			goto fail;
	}
	e = STAILQ_FIRST(&c->events);
	STAILQ_REMOVE_HEAD(&c->events, next);
	c->n_events--;
	c->event_bytes -= e->len;
	struct gr_api_event *ev = e->ev;
	free(e);
	// The room just made: the count of what was dropped goes after the
	// events kept before it.
	if (c->events_lost > 0)
		event_lost_push(c);
	// As Grout's: an event shorter than its type's payload is refused.
	ret = client_message_check(ev->ev_type, ev->payload_len);
	if (ret < 0) {
		free(ev);
		goto fail;
	}
	*event = ev;
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

GR_API_EXPORT int
gr_api_client_event_try_recv(struct gr_api_client *c, struct gr_api_event **event) {
	return event_take(c, false, event);
}
