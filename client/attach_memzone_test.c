// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Attaching as a DPDK secondary. The test plays the secondary without EAL
// (it replaces client_dpdk_probe: its "memzone" is the fake daemon's memfd
// region, mapped here) and a daemon thread answers GR_SHM_DAEMON_INFO and
// GR_SHM_ATTACH as scripted. A secondary of the daemon asks for memzone or
// memfd and maps the named zone; a secondary of another file prefix, or of
// a daemon without hugepages, asks for memfd only and says why; a zone that
// cannot be found or is too small, a response of another prefix or with a
// memfd descriptor too, leaves the client on the socket with a reason and
// every descriptor closed; a refused memzone is retried as memfd. The real
// probe, in this process that links DPDK but never ran rte_eal_init(), finds
// no secondary.

#include "fake_daemon.h"

#include <rte_memzone.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define PREFIX "fake-prefix"
#define ZONE_NAME "shmc-1-0"
// Attach requests one script answers at most: a refused memzone, then memfd.
#define MAX_ATTACHES 2

// What the fake daemon expects and answers, in order.
struct script {
	struct fake_daemon d;
	bool info; // a GR_SHM_DAEMON_INFO comes first
	uint32_t info_status; // its answer: this status, or info_resp if 0
	struct gr_shm_daemon_info info_resp;
	// Bytes of info_resp sent (0: all of it); more than the struct are
	// sent as a newer daemon would, the rest zeros.
	size_t info_len;
	unsigned n_attaches;
	struct {
		uint32_t want_backings; // the client must ask for exactly these
		uint32_t status;
		struct gr_shm_attach_resp resp; // sent when status is 0
		int fds[3];
		unsigned n_fds;
		bool given_back; // the client must answer with GR_SHM_DETACH
	} attach[MAX_ATTACHES];
};

// The secondary this process plays, and its memzone.
static struct rte_memzone fake_zone;
static const char *fake_prefix = PREFIX;
// The library's own probe (dlsym), saved before the tests replace it.
static void (*real_probe)(struct client_dpdk *);

static const struct rte_memzone *fake_lookup(const char *name) {
	return strcmp(name, fake_zone.name) == 0 ? &fake_zone : NULL;
}

static void fake_probe(struct client_dpdk *dpdk) {
	memset(dpdk, 0, sizeof(*dpdk));
	dpdk->secondary = true;
	snprintf(dpdk->file_prefix, sizeof(dpdk->file_prefix), "%s", fake_prefix);
	dpdk->memzone_lookup = fake_lookup;
}

// The daemon thread: answer the scripted requests, in order.
static void info_write(struct script *s, uint32_t id) {
	uint8_t buf[sizeof(s->info_resp) + FAKE_DAEMON_INFO_NEWER_EXTRA] = {0};
	size_t len = s->info_len != 0 ? s->info_len : sizeof(s->info_resp);

	FAKE_DAEMON_CHECK(len <= sizeof(buf));
	memcpy(buf, &s->info_resp, len < sizeof(s->info_resp) ? len : sizeof(s->info_resp));
	fake_daemon_write(&s->d, id, 0, buf, len, NULL, 0);
}

static void *daemon_main(void *arg) {
	struct script *s = arg;
	struct gr_api_request hdr;

	if (s->info) {
		fake_daemon_read_all(s->d.sock, &hdr, sizeof(hdr));
		FAKE_DAEMON_CHECK(hdr.type == GR_SHM_DAEMON_INFO && hdr.payload_len == 0);
		if (s->info_status != 0)
			fake_daemon_write(&s->d, hdr.id, s->info_status, NULL, 0, NULL, 0);
		else
			info_write(s, hdr.id);
	}
	for (unsigned i = 0; i < s->n_attaches; i++) {
		struct gr_shm_attach_req req;
		fake_daemon_read_all(s->d.sock, &hdr, sizeof(hdr));
		FAKE_DAEMON_CHECK(hdr.type == GR_SHM_ATTACH && hdr.payload_len == sizeof(req));
		fake_daemon_read_all(s->d.sock, &req, sizeof(req));
		if (req.backings != s->attach[i].want_backings) {
			fprintf(stderr,
				"daemon: attach %u asks for backings %#x, expected %#x\n",
				i,
				req.backings,
				s->attach[i].want_backings);
			abort();
		}
		if (s->attach[i].status != 0)
			fake_daemon_write(&s->d, hdr.id, s->attach[i].status, NULL, 0, NULL, 0);
		else
			fake_daemon_write(
				&s->d,
				hdr.id,
				0,
				&s->attach[i].resp,
				sizeof(s->attach[i].resp),
				s->attach[i].fds,
				s->attach[i].n_fds
			);
		if (s->attach[i].given_back) {
			fake_daemon_read_detach(&s->d);
			fake_daemon_write(&s->d, hdr.id + 1, 0, NULL, 0, NULL, 0);
		}
	}
	return NULL;
}

static int setup(void **state) {
	struct script *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	fake_daemon_init(&s->d, 0);
	fake_daemon_channel(&s->d);
	// The zone a secondary would find: the region, mapped here.
	snprintf(fake_zone.name, sizeof(fake_zone.name), "%s", ZONE_NAME);
	fake_zone.addr =
		mmap(NULL, s->d.g.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, s->d.mem.fd, 0);
	assert_true(fake_zone.addr != MAP_FAILED);
	fake_zone.len = s->d.g.region_size;
	fake_prefix = PREFIX;
	client_dpdk_probe = fake_probe;

	s->info = true;
	s->info_resp.pid = 1;
	s->info_resp.backings = GR_SHM_BACKING_MEMFD | GR_SHM_BACKING_MEMZONE;
	snprintf(s->info_resp.file_prefix, sizeof(s->info_resp.file_prefix), "%s", PREFIX);
	*state = s;
	return 0;
}

static int teardown(void **state) {
	struct script *s = *state;
	munmap(fake_zone.addr, s->d.g.region_size);
	fake_daemon_fini(&s->d);
	free(s);
	return 0;
}

// Attach answer i of the script: the fake daemon's channel as a memzone
// (two doorbells) or as a memfd (and the memfd).
static void script_attach(struct script *s, unsigned i, uint32_t want_backings, uint32_t backing) {
	fake_daemon_attach_resp(&s->d, &s->attach[i].resp, s->attach[i].fds);
	s->attach[i].want_backings = want_backings;
	s->attach[i].resp.backing = backing;
	if (backing == GR_SHM_BACKING_MEMZONE) {
		s->attach[i].resp.n_fds = 2;
		snprintf(s->attach[i].resp.name, sizeof(s->attach[i].resp.name), "%s", ZONE_NAME);
		snprintf(
			s->attach[i].resp.file_prefix,
			sizeof(s->attach[i].resp.file_prefix),
			"%s",
			PREFIX
		);
	}
	s->attach[i].n_fds = s->attach[i].resp.n_fds;
	s->n_attaches = i + 1;
}

// Run the script against client_shm_attach(). Returns what it returned.
static int run_attach(struct script *s) {
	pthread_t thread;
	assert_int_equal(pthread_create(&thread, NULL, daemon_main, s), 0);
	int ret = client_shm_attach(s->d.client);
	assert_int_equal(pthread_join(thread, NULL), 0);
	return ret;
}

static void expect_reason(const struct script *s, const char *part) {
	const char *reason = gr_api_client_transport_reason(s->d.client);
	if (strstr(reason, part) == NULL)
		fail_msg("reason \"%s\" does not say \"%s\"", reason, part);
}

// One request through the channel, served here.
static void channel_ping(struct script *s) {
	uint8_t buf[SHMCHAN_MSG_MAX];
	long id = gr_api_client_send(s->d.client, GR_PING, 0, NULL);
	assert_true(id > 0);
	int len;
	while ((len = shmchan_server_recv(s->d.server, buf, sizeof(buf))) == 0)
		;
	assert_int_equal(len, sizeof(struct gr_api_request));
	struct gr_api_response hdr = {.for_id = (uint32_t)id};
	assert_int_equal(shmchan_server_send(s->d.server, &hdr, sizeof(hdr), NULL, 0), 0);
	assert_int_equal(gr_api_client_recv_len(s->d.client, (uint32_t)id, NULL), 0);
}

// Still on a working socket: a ping goes out and its answer comes back.
static void socket_ping(struct script *s) {
	assert_int_equal(gr_api_client_transport(s->d.client), GR_API_TRANSPORT_SOCKET);
	long id = gr_api_client_send(s->d.client, GR_PING, 0, NULL);
	assert_true(id > 0);
	struct gr_api_request hdr;
	fake_daemon_read_all(s->d.sock, &hdr, sizeof(hdr));
	assert_int_equal(hdr.type, GR_PING);
	fake_daemon_write(&s->d, (uint32_t)id, 0, NULL, 0, NULL, 0);
	assert_int_equal(gr_api_client_recv_len(s->d.client, (uint32_t)id, NULL), 0);
}

static void memzone_ok(void **state) {
	struct script *s = *state;
	script_attach(s, 0, GR_SHM_BACKING_MEMZONE | GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMZONE);
	unsigned fds_before = fake_daemon_count_fds();
	assert_int_equal(run_attach(s), 0);
	assert_int_equal(gr_api_client_transport(s->d.client), GR_API_TRANSPORT_SHM);
	assert_string_equal(gr_api_client_transport_reason(s->d.client), "");
	// The two doorbells, no memfd.
	assert_int_equal(fake_daemon_count_fds(), fds_before + 2);
	assert_int_equal(s->d.client->chan_backing, GR_SHM_BACKING_MEMZONE);
	channel_ping(s);
}

// The file prefix and the backings are in every release's answer: the
// first release's 80 bytes, or a newer daemon's longer one, tell them.
static void memzone_after_info_of(struct script *s, size_t info_len) {
	s->info_len = info_len;
	script_attach(s, 0, GR_SHM_BACKING_MEMZONE | GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMZONE);
	assert_int_equal(run_attach(s), 0);
	assert_int_equal(s->d.client->chan_backing, GR_SHM_BACKING_MEMZONE);
	assert_string_equal(gr_api_client_transport_reason(s->d.client), "");
	channel_ping(s);
}

static void info_of_older_daemon(void **state) {
	memzone_after_info_of(*state, offsetof(struct gr_shm_daemon_info, version));
}

static void info_of_newer_daemon(void **state) {
	memzone_after_info_of(
		*state,
		sizeof(struct gr_shm_daemon_info) + FAKE_DAEMON_INFO_NEWER_EXTRA
	);
}

static void other_prefix_memfd(void **state) {
	struct script *s = *state;
	fake_prefix = "other-prefix";
	script_attach(s, 0, GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMFD);
	assert_int_equal(run_attach(s), 0);
	assert_int_equal(gr_api_client_transport(s->d.client), GR_API_TRANSPORT_SHM);
	expect_reason(
		s,
		"DPDK secondary of file prefix \"other-prefix\", the daemon's is \"" PREFIX
		"\": memfd"
	);
	channel_ping(s);
}

static void daemon_without_hugepages(void **state) {
	struct script *s = *state;
	s->info_resp.backings = GR_SHM_BACKING_MEMFD;
	script_attach(s, 0, GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMFD);
	assert_int_equal(run_attach(s), 0);
	assert_int_equal(gr_api_client_transport(s->d.client), GR_API_TRANSPORT_SHM);
	expect_reason(s, "without hugepages");
}

// A daemon that does not serve GR_SHM_DAEMON_INFO cannot say its prefix.
static void daemon_tells_nothing(void **state) {
	struct script *s = *state;
	s->info_status = ENOTSUP;
	script_attach(s, 0, GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMFD);
	assert_int_equal(run_attach(s), 0);
	assert_int_equal(gr_api_client_transport(s->d.client), GR_API_TRANSPORT_SHM);
	expect_reason(s, "does not tell its file prefix");
}

// Expect the attach to fail with -ENOTSUP, a reason saying part, the
// memzone channel given back, the client on a working socket, no descriptor
// kept.
static void expect_memzone_refused(struct script *s, const char *part) {
	unsigned fds_before = fake_daemon_count_fds();
	s->attach[0].given_back = true;
	assert_int_equal(run_attach(s), -ENOTSUP);
	expect_reason(s, part);
	assert_int_equal(fake_daemon_count_fds(), fds_before);
	assert_null(s->d.client->chan);
	socket_ping(s);
}

static void zone_not_found(void **state) {
	struct script *s = *state;
	script_attach(s, 0, GR_SHM_BACKING_MEMZONE | GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMZONE);
	snprintf(s->attach[0].resp.name, sizeof(s->attach[0].resp.name), "shmc-1-99");
	expect_memzone_refused(s, "memzone shmc-1-99 not found");
}

static void zone_too_small(void **state) {
	struct script *s = *state;
	script_attach(s, 0, GR_SHM_BACKING_MEMZONE | GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMZONE);
	fake_zone.len = s->d.g.region_size - 1;
	expect_memzone_refused(s, "the channel needs");
}

static void response_of_other_prefix(void **state) {
	struct script *s = *state;
	script_attach(s, 0, GR_SHM_BACKING_MEMZONE | GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMZONE);
	snprintf(s->attach[0].resp.file_prefix, sizeof(s->attach[0].resp.file_prefix), "another");
	expect_memzone_refused(s, "memzone channel of file prefix \"another\"");
}

static void memzone_with_memfd_fd(void **state) {
	struct script *s = *state;
	script_attach(s, 0, GR_SHM_BACKING_MEMZONE | GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMZONE);
	s->attach[0].n_fds = 3;
	expect_memzone_refused(s, "bad fds received");
}

static void name_not_terminated(void **state) {
	struct script *s = *state;
	script_attach(s, 0, GR_SHM_BACKING_MEMZONE | GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMZONE);
	memset(s->attach[0].resp.name, 'x', sizeof(s->attach[0].resp.name));
	expect_memzone_refused(s, "memzone name not terminated");
}

// A daemon short of hugepages refuses the memzone: the client asks again
// for memfd only, and says why it is on memfd.
static void memzone_refused_retry_memfd(void **state) {
	struct script *s = *state;
	s->attach[0].want_backings = GR_SHM_BACKING_MEMZONE | GR_SHM_BACKING_MEMFD;
	s->attach[0].status = ENOMEM;
	script_attach(s, 1, GR_SHM_BACKING_MEMFD, GR_SHM_BACKING_MEMFD);
	assert_int_equal(run_attach(s), 0);
	assert_int_equal(gr_api_client_transport(s->d.client), GR_API_TRANSPORT_SHM);
	assert_int_equal(s->d.client->chan_backing, GR_SHM_BACKING_MEMFD);
	expect_reason(s, "refused a memzone channel");
	channel_ping(s);
}

// This process links DPDK but never ran rte_eal_init(): the real probe
// finds EAL's functions and no secondary. (A memzone handed to a process
// that is no secondary is refused: client/attach_test.c.)
static void real_probe_not_secondary(void **state) {
	struct client_dpdk dpdk;
	(void)state;
	real_probe(&dpdk);
	assert_false(dpdk.secondary);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(memzone_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(other_prefix_memfd, setup, teardown),
		cmocka_unit_test_setup_teardown(info_of_older_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(info_of_newer_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(daemon_without_hugepages, setup, teardown),
		cmocka_unit_test_setup_teardown(daemon_tells_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(zone_not_found, setup, teardown),
		cmocka_unit_test_setup_teardown(zone_too_small, setup, teardown),
		cmocka_unit_test_setup_teardown(response_of_other_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(memzone_with_memfd_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(name_not_terminated, setup, teardown),
		cmocka_unit_test_setup_teardown(memzone_refused_retry_memfd, setup, teardown),
		cmocka_unit_test(real_probe_not_secondary),
	};
	real_probe = client_dpdk_probe;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
