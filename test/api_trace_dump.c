// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The API trace against the daemon (started with --trace-size 8), on one
// transport: a dump after a known sequence holds it exactly (ids, types,
// statuses, this pid and transport) and no payload byte with capture off;
// a full trace keeps the newest 8; with capture on the payload's bytes are
// there.
//
//   api_trace_dump SOCK socket|shm

#include "check.h"
#include "transport_arg.h"

#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdlib.h>

#define TRACE_SIZE 8 // the daemon's --trace-size (test/meson.build)
#define WRAP_PINGS 20
#define UNKNOWN_TYPE GR_MSG_TYPE(0x7e57, 0x0001)
#define DUMP_MAX 64

struct dump {
	struct gr_shm_trace_entry e[DUMP_MAX];
	unsigned n;
};

static void trace_set(struct gr_api_client *c, uint32_t flags) {
	struct gr_shm_trace_set_req req = {.flags = flags};
	int ret = gr_api_client_send_recv(c, GR_SHM_TRACE_SET, sizeof(req), &req, NULL);

	CHECK(ret == 0, "GR_SHM_TRACE_SET 0x%x: %s", flags, strerror(-ret));
}

static void dump_get(struct gr_api_client *c, struct dump *d) {
	const struct gr_shm_trace_entry *e;
	int ret;

	d->n = 0;
	gr_api_client_stream_foreach (e, ret, c, GR_SHM_TRACE_DUMP, 0, NULL) {
		CHECK(d->n < DUMP_MAX, "more than %d entries", DUMP_MAX);
		d->e[d->n++] = *e;
	}
	CHECK(ret == 0, "GR_SHM_TRACE_DUMP: %s", strerror(-ret));
}

// Send type with payload; its id, the status in *status.
static uint32_t
request(struct gr_api_client *c, uint32_t type, size_t len, const void *payload, int *status) {
	void *rx = NULL;
	long id = gr_api_client_send(c, type, len, payload);

	CHECK(id > 0, "send 0x%08x: %s", type, strerror(errno));
	*status = -gr_api_client_recv(c, type, (uint32_t)id, &rx);
	free(rx);
	return (uint32_t)id;
}

static bool holds_secret(const struct gr_shm_trace_entry *e, const char *secret) {
	return memmem(e, sizeof(*e), secret, strlen(secret)) != NULL;
}

int main(int argc, char **argv) {
	static const char secret[] = "s3cr3t-payload-bytes";
	uint32_t ids[WRAP_PINGS], want_type[5];
	int status, want_status[5];
	char payload[64] = {0};
	struct gr_api_client *c;
	uint32_t transport;
	struct dump d;

	CHECK(argc == 3, "usage: %s SOCK socket|shm", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	c = connect_forced(argv[1], argv[2], "api_trace_dump");
	transport = strcmp(argv[2], "shm") == 0 ? GR_SHM_TRANSPORT_SHM : GR_SHM_TRANSPORT_SOCKET;
	memcpy(payload, secret, sizeof(secret));

	// A known sequence, capture off.
	trace_set(c, GR_SHM_TRACE_ON | GR_SHM_TRACE_CLEAR);
	for (unsigned i = 0; i < 3; i++) {
		ids[i] = request(c, GR_PING, 0, NULL, &status);
		want_type[i] = GR_PING;
		want_status[i] = 0;
	}
	ids[3] = request(c, GR_SHM_ECHO, sizeof(payload), payload, &status);
	want_type[3] = GR_SHM_ECHO;
	want_status[3] = 0;
	ids[4] = request(c, UNKNOWN_TYPE, 0, NULL, &status);
	CHECK(status == ENOTSUP, "unknown type: %s", strerror(status));
	want_type[4] = UNKNOWN_TYPE;
	want_status[4] = ENOTSUP;
	dump_get(c, &d);
	CHECK(d.n == 5, "%u entries after 5 requests", d.n);
	for (unsigned i = 0; i < 5; i++) {
		const struct gr_shm_trace_entry *e = &d.e[i];

		CHECK(e->id == ids[i] && e->type == want_type[i],
		      "entry %u: id %u type 0x%08x, sent id %u type 0x%08x",
		      i,
		      e->id,
		      e->type,
		      ids[i],
		      want_type[i]);
		CHECK((int)e->status == want_status[i], "entry %u: status %u", i, e->status);
		CHECK(e->pid == getpid(), "entry %u: pid %d", i, e->pid);
		CHECK(e->transport == transport, "entry %u: transport %u", i, e->transport);
		CHECK(e->responses == 1, "entry %u: %u responses", i, e->responses);
		CHECK(!(e->flags & GR_SHM_TRACE_CAPTURED) && e->captured_len == 0,
		      "entry %u captured with capture off",
		      i);
		CHECK(!holds_secret(e, secret), "entry %u holds the payload", i);
	}
	CHECK(d.e[3].req_len == sizeof(payload) && d.e[3].resp_len == sizeof(payload),
	      "echo: %u bytes in, %u out",
	      d.e[3].req_len,
	      d.e[3].resp_len);

	// A full trace keeps the newest.
	for (unsigned i = 0; i < WRAP_PINGS; i++)
		ids[i] = request(c, GR_PING, 0, NULL, &status);
	dump_get(c, &d);
	CHECK(d.n == TRACE_SIZE, "%u entries held, size %d", d.n, TRACE_SIZE);
	for (unsigned i = 0; i < TRACE_SIZE; i++)
		CHECK(d.e[i].id == ids[WRAP_PINGS - TRACE_SIZE + i],
		      "entry %u: id %u, want %u",
		      i,
		      d.e[i].id,
		      ids[WRAP_PINGS - TRACE_SIZE + i]);

	// Capture on: the payload is there.
	trace_set(c, GR_SHM_TRACE_ON | GR_SHM_TRACE_CLEAR | GR_SHM_TRACE_CAPTURE);
	request(c, GR_SHM_ECHO, sizeof(payload), payload, &status);
	dump_get(c, &d);
	CHECK(d.n == 1, "%u entries after a clear and one request", d.n);
	CHECK((d.e[0].flags & GR_SHM_TRACE_CAPTURED) && d.e[0].captured_len == sizeof(payload),
	      "echo: flags 0x%x, %u bytes captured",
	      d.e[0].flags,
	      d.e[0].captured_len);
	CHECK(memcmp(d.e[0].payload, payload, sizeof(payload)) == 0, "captured bytes differ");

	trace_set(c, 0);
	request(c, GR_PING, 0, NULL, &status);
	dump_get(c, &d);
	CHECK(d.n == 1, "%u entries: recorded while off", d.n);
	gr_api_client_disconnect(c);
	printf("api_trace_dump %s: sequence, wrap-around and capture as sent\n", argv[2]);
	return 0;
}
