// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchanctl trace replay FILE: send the requests of a saved trace to the
// daemon again, in their order, on one connection, and compare each final
// status with the one saved.

#include "trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

// Why an entry is not sent again, or NULL: it is.
static const char *replay_skip(const struct gr_shm_trace_entry *e) {
	switch (e->type) {
	case GR_HELLO:
		return "GR_HELLO: the replay's connection says its own";
	case GR_SHM_ATTACH:
	case GR_SHM_DETACH:
		return "the channel's attach or detach: the replay's transport is its own";
	case GR_EVENT_SUBSCRIBE:
	case GR_EVENT_UNSUBSCRIBE:
	case GR_SHM_EVENT_SUBSCRIBE:
		return "an event subscription";
	}
	if (e->flags & GR_SHM_TRACE_REPLY)
		return NULL;
	if (e->req_len > 0 && !(e->flags & GR_SHM_TRACE_CAPTURED))
		return "payload not captured";
	if (e->captured_len < e->req_len)
		return "payload longer than what was captured";
	if (e->responses == 0 && !(e->flags & GR_SHM_TRACE_DEFERRED))
		return "no response was sent (its client was gone)";
	return NULL;
}

// The status a deferred request at index i was answered with: its reply's,
// further on in the trace; -1 if the trace does not hold it.
static int64_t deferred_status(const struct gr_shm_trace_entry *e, size_t n, size_t i) {
	for (size_t k = i + 1; k < n; k++)
		if ((e[k].flags & GR_SHM_TRACE_REPLY) && e[k].pid == e[i].pid &&
		    e[k].id == e[i].id && e[k].type == e[i].type)
			return e[k].status;
	return -1;
}

// Errors of the client library itself, not a status of the daemon's: the
// replay cannot go on.
static bool replay_broken(int err) {
	return err == ETIMEDOUT || err == ECONNRESET || err == EPIPE || err == ECANCELED ||
	       err == EBADMSG;
}

// Send e and take its responses: one, or, for a stream (more than one
// response saved), up to the empty one that ends it or an error. Returns
// the final status (0 or an errno value), or -errno if the replay broke.
static int replay_one(struct gr_api_client *c, const struct gr_shm_trace_entry *e) {
	void *rx = NULL;
	long id;
	int ret;

	id = gr_api_client_send(c, e->type, e->req_len, e->req_len > 0 ? e->payload : NULL);
	if (id < 0)
		return -errno;
	for (;;) {
		ret = gr_api_client_recv(c, e->type, (uint32_t)id, &rx);
		if (ret < 0)
			return replay_broken(-ret) ? ret : -ret;
		if (e->responses <= 1 || rx == NULL)
			break;
		free(rx);
		rx = NULL;
	}
	free(rx);
	return 0;
}

int trace_replay(const struct cli_opts *opts, int argc, char **argv) {
	size_t n, sent = 0, skipped = 0, differ = 0, unknown = 0;
	int status = EXIT_SUCCESS, got;
	struct gr_shm_trace_entry *e;
	struct gr_api_client *c;
	const char *why;
	int64_t want;

	if (argc != 2) {
		fprintf(stderr, "usage: shmchanctl trace replay FILE\n");
		return EX_USAGE;
	}
	status = trace_file_read(argv[1], &e, &n);
	if (status != 0)
		return status;
	c = cli_connect(opts, GR_API_TRANSPORT_SOCKET, &status);
	if (c == NULL) {
		free(e);
		return status;
	}
	for (size_t i = 0; i < n; i++) {
		if (e[i].flags & GR_SHM_TRACE_REPLY)
			continue; // the answer of a deferred request before it
		why = replay_skip(&e[i]);
		if (why != NULL) {
			printf("#%zu %s id %u: skipped: %s\n",
			       i,
			       gr_api_message_name(e[i].type),
			       e[i].id,
			       why);
			skipped++;
			continue;
		}
		want = e[i].flags & GR_SHM_TRACE_DEFERRED ? deferred_status(e, n, i) : e[i].status;
		got = replay_one(c, &e[i]);
		if (got < 0) {
			status = cli_fail(opts, "trace replay: sending to", -got);
			break;
		}
		sent++;
		if (want < 0) {
			printf("#%zu %s id %u: status %d (its deferred reply is not in the "
			       "trace)\n",
			       i,
			       gr_api_message_name(e[i].type),
			       e[i].id,
			       got);
			unknown++;
		} else if (got != want) {
			printf("#%zu %s id %u: status %d, saved %d\n",
			       i,
			       gr_api_message_name(e[i].type),
			       e[i].id,
			       got,
			       (int)want);
			differ++;
		}
	}
	gr_api_client_disconnect(c);
	free(e);
	if (status != EXIT_SUCCESS)
		return status;
	printf("%zu replayed: %zu with the saved status, %zu with another, %zu unknown; %zu "
	       "skipped\n",
	       sent,
	       sent - differ - unknown,
	       differ,
	       unknown,
	       skipped);
	return differ > 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
