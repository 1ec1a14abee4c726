// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Public entry points of the client library: request ids, sends, matching
// responses to requests, the stash of responses that arrived early, and a
// handle's end. Connecting is connect.c's; the transports live in sock.c and
// shm.c.

#include "client_priv.h"
#include "shm_fast.h"

#include <gr_api_client.h>
// request_send is on every call's path: guarded (shmchan_probes.h).
#define SHMCHAN_PROBES_SEMAPHORES 1
#include <shmchan_probes.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

SHMCHAN_PROBE_SEMAPHORE(request_send);

#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_SEC 1000000000ull

struct gr_api_client *client_new(int sock, int spin_us) {
	struct gr_api_client *c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto fail;
	c->sock = sock;
	c->transport = GR_API_TRANSPORT_SOCKET;
	c->next_id = 1;
	client_spin_init(&c->spin, spin_us);
	c->timeout_ms = GR_API_TIMEOUT_NONE;
	c->wait_fd = -1;
	c->sleep_fd = -1;
	c->loadavg_fd = -1;
	for (unsigned b = 0; b < CLIENT_STASH_BUCKETS; b++)
		STAILQ_INIT(&c->stash[b]);
	STAILQ_INIT(&c->events);
	c->rbuf = malloc(CLIENT_READAHEAD_LEN);
	if (c->rbuf == NULL)
		goto fail;
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

static void abandoned_forget(struct gr_api_client *c, uint32_t id);

// Inlined into the sends, as take() into the receives: a send is one
// function down to the channel's enqueue.
static inline __attribute__((always_inline)) long
send_batch(struct gr_api_client *c, uint32_t type, size_t len, const void *data, bool more) {
	if (len > GR_API_MAX_MSG_LEN || (data == NULL && len > 0))
		return -EINVAL;
	if (c->dead)
		return client_dead_errno(c);

	// Grout's subscribe asks for events in Grout's framing, which no
	// response parser can tell from a response: this library asks shmchand
	// for tagged ones, on both transports, so that one handle gets both.
	// A daemon that took one of Grout's API versions only, not ours, is no
	// shmchand: it gets Grout's requests.
	bool grout_event_req = false;
	if (type == GR_EVENT_SUBSCRIBE || type == GR_EVENT_UNSUBSCRIBE) {
		bool grout_daemon = c->api_version == GR_API_VERSION_GROUT_MAIN ||
				    c->api_version == GR_API_VERSION_GROUT_0_17;
		if (type == GR_EVENT_SUBSCRIBE && !grout_daemon)
			type = GR_SHM_EVENT_SUBSCRIBE;
		else
			grout_event_req = grout_daemon;
	}

	uint32_t id = c->next_id;
	// Ids are never 0 (a response to id 0 is an event): skip it on wrap.
	c->next_id = id + 1 == 0 ? 1 : id + 1;
	if (c->next_id == 1)
		c->ids_wrapped = true;
	// An id abandoned 2^32 requests ago is taken again: its answer came
	// long since, and the new request's must not be dropped.
	if (c->n_abandoned > 0)
		abandoned_forget(c, id);

	struct gr_api_request hdr = {.id = id, .type = type, .payload_len = (uint32_t)len};
	int ret;
	if (c->transport == GR_API_TRANSPORT_SHM)
		ret = client_shm_send(c, &hdr, data, len, more);
	else
		ret = client_sock_send(c, &hdr, data, len);
	if (ret < 0)
		return ret;
	if (SHMCHAN_PROBE_ON(request_send))
		SHMCHAN_PROBE(request_send, c, id, type, len, c->transport == GR_API_TRANSPORT_SHM);
	if (grout_event_req) {
		c->grout_event_req_id = id;
		c->grout_event_req_type = type;
	}
	return id;
}

long client_send_batch(
	struct gr_api_client *c,
	uint32_t type,
	size_t len,
	const void *data,
	bool more
) {
	return send_batch(c, type, len, data, more);
}

long client_send(struct gr_api_client *c, uint32_t type, size_t len, const void *data) {
	return send_batch(c, type, len, data, false);
}

int client_drop(struct gr_api_client *c, int err) {
	c->protocol_errors++;
	if (!c->dead) {
		c->dead = true;
		c->dead_err = err;
		// Not close(): the descriptor may sit in the caller's event loop
		// (gr_api_client_fd()), which now sees it readable at EOF.
		(void)shutdown(c->sock, SHUT_RDWR);
	}
	return -err;
}

// Never inlined: with link-time optimisation, GCC 12 inlines it into the
// receive paths of the programs that link the static library and then
// mistakes the caller's receive buffer for what it frees
// (-Wfree-nonheap-object).
__attribute__((noinline)) void client_stash_entry_free(struct client_stash_entry *e) {
	free(e->payload);
	free(e);
}

unsigned client_stash_count(const struct gr_api_client *c) {
	return c->stash_n;
}

static struct client_stash_bucket *stash_bucket(struct gr_api_client *c, uint32_t id) {
	return &c->stash[id % CLIENT_STASH_BUCKETS];
}

// What a stashed response counts against CLIENT_STASH_MAX_BYTES.
static size_t stash_cost(const struct gr_api_response *hdr) {
	return sizeof(struct client_stash_entry) + hdr->payload_len;
}

// Take the oldest stashed response to for_id, NULL if none. Walks one
// bucket: the responses stashed for ids congruent to for_id.
static struct client_stash_entry *stash_take(struct gr_api_client *c, uint32_t for_id) {
	if (c->stash_n == 0)
		return NULL;
	struct client_stash_bucket *b = stash_bucket(c, for_id);
	struct client_stash_entry *e;
	STAILQ_FOREACH (e, b, next) {
		if (e->hdr.for_id == for_id) {
			STAILQ_REMOVE(b, e, client_stash_entry, next);
			c->stash_n--;
			c->stash_bytes -= stash_cost(&e->hdr);
			return e;
		}
	}
	return NULL;
}

static int stash_put(struct gr_api_client *c, const struct client_msg *msg) {
	size_t cost = stash_cost(&msg->hdr);
	if (c->stash_bytes + cost > CLIENT_STASH_MAX_BYTES)
		return client_drop(c, ENOBUFS);
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
	STAILQ_INSERT_TAIL(stash_bucket(c, msg->hdr.for_id), e, next);
	c->stash_n++;
	c->stash_bytes += cost;
	return 0;
}

static void stash_free_all(struct gr_api_client *c) {
	for (unsigned b = 0; b < CLIENT_STASH_BUCKETS; b++) {
		struct client_stash_entry *e;
		while ((e = STAILQ_FIRST(&c->stash[b])) != NULL) {
			STAILQ_REMOVE_HEAD(&c->stash[b], next);
			client_stash_free(e);
		}
	}
	c->stash_n = 0;
	c->stash_bytes = 0;
}

static bool abandoned_has(const struct gr_api_client *c, uint32_t id) {
	for (unsigned i = 0; i < c->n_abandoned; i++)
		if (c->abandoned[i] == id)
			return true;
	return false;
}

// Remember id as abandoned; the oldest one goes when the ring is full.
static void abandoned_add(struct gr_api_client *c, uint32_t id) {
	if (abandoned_has(c, id))
		return;
	c->abandoned[c->abandoned_next] = id;
	c->abandoned_next = (c->abandoned_next + 1) % CLIENT_ABANDONED_MAX;
	if (c->n_abandoned < CLIENT_ABANDONED_MAX)
		c->n_abandoned++;
}

static void abandoned_forget(struct gr_api_client *c, uint32_t id) {
	for (unsigned i = 0; i < c->n_abandoned; i++)
		if (c->abandoned[i] == id)
			c->abandoned[i] = 0; // no response has id 0: the slot is dead
}

uint64_t client_clock_ns(void) {
	struct timespec ts;
	// CLOCK_MONOTONIC is served by the vDSO: no system call.
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

int client_wait_ms(struct gr_api_client *c, int *ms) {
	*ms = -1;
	if (c->timeout_ms < 0)
		return 0;
	uint64_t now = client_clock_ns();
	if (c->deadline_ns == 0)
		c->deadline_ns = now + (uint64_t)c->timeout_ms * NSEC_PER_MSEC;
	if (now >= c->deadline_ns)
		return -ETIMEDOUT;
	*ms = (int)((c->deadline_ns - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
	return 0;
}

bool client_deadline_passed(struct gr_api_client *c, uint64_t now_ns) {
	if (c->timeout_ms < 0)
		return false;
	if (c->deadline_ns == 0)
		c->deadline_ns = now_ns + (uint64_t)c->timeout_ms * NSEC_PER_MSEC;
	return now_ns >= c->deadline_ns;
}

int client_route_budget_check(struct gr_api_client *c, unsigned routed, bool wait) {
	if (!wait)
		return routed >= CLIENT_TRY_ROUTE_MAX ? -EAGAIN : 0;
	return client_deadline_passed(c, client_clock_ns()) ? -ETIMEDOUT : 0;
}

// Whether this handle sent a request of id (not 0).
static bool id_sent(const struct gr_api_client *c, uint32_t id) {
	return c->ids_wrapped || id < c->next_id;
}

// A message other than the wanted response: queued (an event), dropped (a
// late answer) or stashed. A response to an id never sent answers nothing:
// the daemon is broken, or no daemon of ours. Returns 0 or -errno.
static int route_other(struct gr_api_client *c, const struct client_msg *msg) {
	if (msg->hdr.for_id == 0)
		return client_event_queue(c, msg);
	if (!id_sent(c, msg->hdr.for_id))
		return client_drop(c, EPROTO);
	if (c->n_abandoned > 0 && abandoned_has(c, msg->hdr.for_id))
		return 0; // the late answer of a receive that timed out
	return stash_put(c, msg);
}

int client_route(struct gr_api_client *c, const struct client_msg *msg, uint32_t want_id) {
	if (msg->hdr.for_id == want_id && want_id != 0)
		return 1;
	return route_other(c, msg);
}

// Inlined into the receives (always_inline, as take() and recv_common()
// below): a busy controller's receive is one function down to the channel's
// wait, not a stack of calls each saving registers and copying the message.
static inline __attribute__((always_inline)) int next_msg(
	struct gr_api_client *c,
	struct client_msg *msg,
	bool wait,
	const struct client_into *into
) {
	if (c->transport == GR_API_TRANSPORT_SHM)
		return client_shm_next_msg(c, msg, wait, into);
	return client_sock_next_msg(c, msg, wait);
}

int client_next_msg(
	struct gr_api_client *c,
	struct client_msg *msg,
	bool wait,
	const struct client_into *into
) {
	return next_msg(c, msg, wait, into);
}

// take() once the first message read was another than for_id's response:
// route it and read on. Out of line: a pipeline in order never comes here.
static __attribute__((noinline)) int take_after_other(
	struct gr_api_client *c,
	uint32_t for_id,
	bool wait,
	const struct client_into *into,
	struct client_msg *msg
) {
	// A daemon that keeps other messages coming must not hold the call:
	// with them the transport never waits, which is where the deadline is
	// read otherwise.
	unsigned routed = 0;
	for (;;) {
		int ret = route_other(c, msg);
		if (ret < 0)
			return ret;
		ret = client_route_budget(c, &routed, wait);
		if (ret < 0)
			return ret;
		ret = next_msg(c, msg, wait, into);
		if (ret < 0 || msg->hdr.for_id == for_id)
			return ret;
	}
}

static inline __attribute__((always_inline)) int
take(struct gr_api_client *c,
     uint32_t for_id,
     bool wait,
     const struct client_into *into,
     struct client_msg *msg,
     struct client_stash_entry **entry) {
	*entry = NULL;
	if (c->dead)
		return client_dead_errno(c);
	// stash_take() out of line only when the stash holds anything: a
	// receive in order finds it empty.
	if (c->stash_n > 0)
		*entry = stash_take(c, for_id);
	if (*entry != NULL) {
		msg->hdr = (*entry)->hdr;
		msg->payload = (*entry)->payload;
		return 0;
	}
	int ret = next_msg(c, msg, wait, into);
	if (ret < 0 || msg->hdr.for_id == for_id)
		return ret;
	return take_after_other(c, for_id, wait, into, msg);
}

int client_take(
	struct gr_api_client *c,
	uint32_t for_id,
	bool wait,
	const struct client_into *into,
	struct client_msg *msg,
	struct client_stash_entry **entry
) {
	return take(c, for_id, wait, into, msg, entry);
}

GR_API_EXPORT int gr_api_client_disconnect(struct gr_api_client *c) {
	if (c == NULL)
		return 0;
	client_shm_detach(c);
	client_sock_fds_close(c);
	stash_free_all(c);
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

static inline __attribute__((always_inline)) long send_common(
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
	client_call_start(c);
	long id = send_batch(c, req_type, tx_len, tx_data, more);
	if (id < 0) {
		errno = (int)-id;
		return -1;
	}
	return id;
}

// Grout's convention: a negative errno, and errno set to it.
static long errno_return(long ret) {
	return ret < 0 ? -errno : ret;
}

GR_API_EXPORT long int
gr_api_client_send(struct gr_api_client *c, uint32_t req_type, size_t tx_len, const void *tx_data) {
	return errno_return(send_common(c, req_type, tx_len, tx_data, false));
}

GR_API_EXPORT long gr_api_client_send_more(
	struct gr_api_client *c,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data
) {
	return errno_return(send_common(c, req_type, tx_len, tx_data, true));
}

GR_API_EXPORT long gr_api_client_send_batch(
	struct gr_api_client *c,
	size_t n,
	const struct gr_api_client_req *reqs,
	long *ids
) {
	if (c == NULL || (n > 0 && (reqs == NULL || ids == NULL))) {
		errno = EINVAL;
		return -1;
	}
	// All or nothing for bad arguments: check them all first.
	for (size_t i = 0; i < n; i++) {
		if (reqs[i].tx_len > GR_API_MAX_MSG_LEN ||
		    (reqs[i].tx_data == NULL && reqs[i].tx_len > 0)) {
			errno = EINVAL;
			return -1;
		}
	}
	client_call_start(c);
	size_t sent = 0;
	long id = 0;
	for (; sent < n; sent++) {
		id = client_send_batch(
			c,
			reqs[sent].req_type,
			reqs[sent].tx_len,
			reqs[sent].tx_data,
			true
		);
		if (id < 0)
			break;
		ids[sent] = id;
	}
	// The one doorbell of the batch, also for the part sent before a
	// failure.
	if (sent > 0 && c->transport == GR_API_TRANSPORT_SHM && c->chan != NULL)
		client_shm_flush(c);
	if (id < 0) {
		errno = (int)-id;
		return sent > 0 ? (long)sent : -1;
	}
	return (long)sent;
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

// Without wait, take for_id's response only if it is there.
static inline __attribute__((always_inline)) int recv_common(
	struct gr_api_client *c,
	uint32_t for_id,
	bool wait,
	const struct client_into *into,
	struct client_msg *msg,
	struct client_stash_entry **entry
) {
	*entry = NULL;
	if (c == NULL || for_id == 0)
		return -EINVAL;
	if (c->n_abandoned > 0 && abandoned_has(c, for_id))
		return -ECANCELED;
	int ret = take(c, for_id, wait, into, msg, entry);
	if (ret == -ETIMEDOUT)
		abandoned_add(c, for_id);
	if (ret < 0)
		return ret;
	if (msg->hdr.status != 0) {
		client_stash_free(*entry);
		*entry = NULL;
		return -client_status_errno(msg->hdr.status);
	}
	return 0;
}

int client_recv_common(
	struct gr_api_client *c,
	uint32_t for_id,
	bool wait,
	const struct client_into *into,
	struct client_msg *msg,
	struct client_stash_entry **entry
) {
	return recv_common(c, for_id, wait, into, msg, entry);
}

// gr_api_client_recv_len() and gr_api_client_try_recv(). Inlined into
// each, as recv_copy(): a public receive is one function down to the
// channel's look.
static inline __attribute__((always_inline)) long
recv_alloc(struct gr_api_client *c, uint32_t for_id, bool wait, void **rx_data) {
	struct client_stash_entry *entry;
	struct client_msg msg;
	if (rx_data != NULL)
		*rx_data = NULL;
	int ret = recv_common(c, for_id, wait, NULL, &msg, &entry);
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

// gr_api_client_recv_into() and gr_api_client_try_recv_into().
static inline __attribute__((always_inline)) long
recv_copy(struct gr_api_client *c, uint32_t for_id, bool wait, void *buf, size_t buf_len) {
	const struct client_into into = {.for_id = for_id, .buf = buf, .len = buf_len};
	struct client_stash_entry *entry;
	struct client_msg msg;
	int ret = recv_common(c, for_id, wait, buf != NULL ? &into : NULL, &msg, &entry);
	if (ret < 0)
		goto fail;

	uint32_t len = msg.hdr.payload_len;
	if (len > buf_len || (buf == NULL && len > 0))
		ret = -EMSGSIZE;
	else if (len > 0 && msg.payload != buf) // not copied straight from the ring
		memcpy(buf, msg.payload, len);
	client_stash_free(entry);
	if (ret < 0)
		goto fail;
	return len;
fail:
	errno = -ret;
	return -1;
}

GR_API_EXPORT long
gr_api_client_recv_len(struct gr_api_client *c, uint32_t for_id, void **rx_data) {
	if (c != NULL)
		client_call_start(c);
	return recv_alloc(c, for_id, true, rx_data);
}

// Grout's receive from a length-returning one's result (len, or -1 with
// errno; the payload in *rx): the payload checked against req_type's
// registered length, and Grout's return convention.
static int grout_result(uint32_t req_type, long len, void **rx) {
	if (len < 0)
		return -errno;
	int ret = client_message_check(req_type, (size_t)len);
	if (ret < 0) {
		if (rx != NULL) {
			free(*rx);
			*rx = NULL;
		}
		errno = -ret;
		return ret;
	}
	return 0;
}

GR_API_EXPORT int
gr_api_client_recv(struct gr_api_client *c, uint32_t req_type, uint32_t for_id, void **rx_data) {
	return grout_result(req_type, gr_api_client_recv_len(c, for_id, rx_data), rx_data);
}

GR_API_EXPORT long
gr_api_client_recv_into(struct gr_api_client *c, uint32_t for_id, void *buf, size_t buf_len) {
	if (c != NULL)
		client_call_start(c);
	return recv_copy(c, for_id, true, buf, buf_len);
}

GR_API_EXPORT long
gr_api_client_try_recv(struct gr_api_client *c, uint32_t for_id, void **rx_data) {
	return recv_alloc(c, for_id, false, rx_data);
}

GR_API_EXPORT long
gr_api_client_try_recv_into(struct gr_api_client *c, uint32_t for_id, void *buf, size_t buf_len) {
	return recv_copy(c, for_id, false, buf, buf_len);
}

GR_API_EXPORT long gr_api_client_send_recv_len(
	struct gr_api_client *c,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data,
	void **rx_data
) {
	if (rx_data != NULL)
		*rx_data = NULL;
	// One deadline for the send (a full ring) and the receive.
	long id = send_common(c, req_type, tx_len, tx_data, false);
	if (id < 0)
		return -1;
	return recv_alloc(c, (uint32_t)id, true, rx_data);
}

GR_API_EXPORT int gr_api_client_send_recv(
	struct gr_api_client *c,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data,
	void **rx_data
) {
	long len = gr_api_client_send_recv_len(c, req_type, tx_len, tx_data, rx_data);
	return grout_result(req_type, len, rx_data);
}

GR_API_EXPORT int
__gr_api_client_stream_drain(struct gr_api_client *c, uint32_t req_type, uint32_t for_id) {
	int ms;

	if (c == NULL) {
		errno = EINVAL;
		return -EINVAL;
	}
	// One deadline for the whole rest of the stream, from now: each
	// response is a receive of its own, and a daemon that never ends the
	// stream would hold the caller for ever.
	client_call_start(c);
	(void)client_wait_ms(c, &ms);
	for (;;) {
		void *payload;
		long len = recv_alloc(c, for_id, true, &payload);
		int ret = grout_result(req_type, len, &payload);
		if (ret < 0 || payload == NULL)
			return ret;
		free(payload);
		if (client_deadline_passed(c, client_clock_ns())) {
			// The rest is dropped as it comes, as after a receive
			// that timed out.
			abandoned_add(c, for_id);
			errno = ETIMEDOUT;
			return -ETIMEDOUT;
		}
	}
}

GR_API_EXPORT long gr_api_client_send_recv_into(
	struct gr_api_client *c,
	uint32_t req_type,
	size_t tx_len,
	const void *tx_data,
	void *buf,
	size_t buf_len
) {
	// One deadline for the send (a full ring) and the receive.
	long id = send_common(c, req_type, tx_len, tx_data, false);
	if (id < 0)
		return -1;
	return recv_copy(c, (uint32_t)id, true, buf, buf_len);
}

GR_API_EXPORT int gr_api_client_stream_next(
	struct gr_api_client *c,
	uint32_t for_id,
	void **rx_data,
	size_t *rx_len
) {
	long len = gr_api_client_recv_len(c, for_id, rx_data);
	if (len < 0)
		return -1;
	if (rx_len != NULL)
		*rx_len = (size_t)len;
	return len > 0 ? 1 : 0;
}

GR_API_EXPORT int gr_api_client_fd(struct gr_api_client *c) {
	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (c->transport != GR_API_TRANSPORT_SHM)
		return c->sock;
	int ret = client_shm_wait_fd(c);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

GR_API_EXPORT int gr_api_client_poll_prepare(struct gr_api_client *c) {
	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (c->dead) {
		errno = -client_dead_errno(c);
		return -1;
	}
	// Something a try call returns without reading the fd: a stashed
	// response, a queued event, a whole message in the read-ahead buffer, a message in the
	// ring (client_shm_poll_prepare()).
	if (c->stash_n > 0 || !STAILQ_EMPTY(&c->events) || client_sock_buffered(c))
		return 1;
	if (c->transport == GR_API_TRANSPORT_SHM)
		return client_shm_poll_prepare(c);
	return 0;
}

GR_API_EXPORT int gr_api_client_poll_done(struct gr_api_client *c) {
	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (c->transport != GR_API_TRANSPORT_SHM)
		return 0;
	int ret = client_shm_poll_done(c);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}
