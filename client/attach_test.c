// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Attaching a memfd channel: the client checks the attach response and its
// descriptors, maps the channel when all is right, and otherwise stays on
// the socket, says why, and leaks no descriptor.

#include "fake_daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// Attach with this response and these fds; expect failure err and a reason
// starting with why. A channel granted (status 0) but unusable must be
// given back with GR_SHM_DETACH; a refused one (status not 0) must not.
// Then check the client is still on a working socket and closed every
// descriptor it received.
static void expect_attach_fails(
	struct fake_daemon *d,
	uint32_t status,
	const struct gr_shm_attach_resp *resp,
	size_t resp_len,
	const int *fds,
	unsigned n_fds,
	int err,
	const char *why
) {
	unsigned fds_before = fake_daemon_count_fds();
	uint32_t ping_id = 2;
	fake_daemon_write(d, 1, status, resp, resp_len, fds, n_fds);
	if (status == 0)
		fake_daemon_write(d, ping_id++, 0, NULL, 0, NULL, 0); // the detach's answer
	assert_int_equal(client_shm_attach(d->client), err);
	fake_daemon_read_attach(d);
	if (status == 0)
		fake_daemon_read_detach(d);
	const char *reason = gr_api_client_transport_reason(d->client);
	if (strncmp(reason, why, strlen(why)) != 0)
		fail_msg("reason \"%s\", expected \"%s...\"", reason, why);
	assert_int_equal(gr_api_client_transport(d->client), GR_API_TRANSPORT_SOCKET);
	assert_int_equal(fake_daemon_count_fds(), fds_before);

	// Still usable on the socket: a ping goes out and its answer comes back,
	// and nothing else was sent before it.
	fake_daemon_write(d, ping_id, 0, NULL, 0, NULL, 0);
	assert_int_equal(gr_api_client_send(d->client, GR_PING, 0, NULL), ping_id);
	struct gr_api_request hdr;
	fake_daemon_read_all(d->sock, &hdr, sizeof(hdr));
	assert_int_equal(hdr.type, GR_PING);
	assert_int_equal(gr_api_client_recv_len(d->client, ping_id, NULL), 0);
}

static void attach_ok(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	unsigned fds_before = fake_daemon_count_fds();
	fake_daemon_write(d, 1, 0, &resp, sizeof(resp), fds, 3);
	assert_int_equal(client_shm_attach(d->client), 0);
	fake_daemon_read_attach(d);
	assert_int_equal(gr_api_client_transport(d->client), GR_API_TRANSPORT_SHM);
	assert_string_equal(gr_api_client_transport_reason(d->client), "");
	// The client keeps the three descriptors it received, no more.
	assert_int_equal(fake_daemon_count_fds(), fds_before + 3);
}

static void refused_enotsup(void **state) {
	struct fake_daemon *d = *state;
	expect_attach_fails(
		d,
		ENOTSUP,
		NULL,
		0,
		NULL,
		0,
		-ENOTSUP,
		"daemon offers no shared-memory channel (ENOTSUP)"
	);
}

static void refused_other(void **state) {
	struct fake_daemon *d = *state;
	expect_attach_fails(d, EBUSY, NULL, 0, NULL, 0, -ENOTSUP, "daemon refused the channel");
}

static void layout_mismatch(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	resp.layout_version = SHMCHAN_LAYOUT_VERSION + 1;
	char why[64];
	snprintf(
		why,
		sizeof(why),
		"layout version mismatch: client %d, daemon %d",
		SHMCHAN_LAYOUT_VERSION,
		SHMCHAN_LAYOUT_VERSION + 1
	);
	expect_attach_fails(d, 0, &resp, sizeof(resp), fds, 3, -EPROTO, why);
}

static void short_response(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	expect_attach_fails(d, 0, &resp, sizeof(resp) - 4, fds, 3, -ENOTSUP, "attach response of");
}

// A memzone handed to a process that is no DPDK secondary of the daemon
// (this one links DPDK but never ran rte_eal_init()) names memory it cannot
// see: refused, the two doorbells closed.
static void memzone_backing(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	resp.backing = GR_SHM_BACKING_MEMZONE;
	resp.n_fds = 2;
	expect_attach_fails(d, 0, &resp, sizeof(resp), fds, 2, -ENOTSUP, "daemon offered backing");
}

static void missing_fd(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	expect_attach_fails(d, 0, &resp, sizeof(resp), fds, 2, -ENOTSUP, "bad fds received");
}

static void extra_fd(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[4];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	fds[3] = fds[2];
	expect_attach_fails(d, 0, &resp, sizeof(resp), fds, 4, -ENOTSUP, "bad fds received");
}

static void n_fds_mismatch(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	resp.n_fds = 2;
	expect_attach_fails(d, 0, &resp, sizeof(resp), fds, 3, -ENOTSUP, "bad fds received");
}

static void doorbell_not_eventfd(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3], pipe_fds[2];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	assert_int_equal(pipe2(pipe_fds, O_CLOEXEC), 0);
	fds[0] = pipe_fds[0];
	expect_attach_fails(
		d,
		0,
		&resp,
		sizeof(resp),
		fds,
		3,
		-ENOTSUP,
		"bad fds received: the request doorbell is not an eventfd"
	);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}

// The response doorbell is a socket (the daemon's end of it is its own): an
// eventfd there is refused.
static void response_doorbell_not_socket(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	int efd = eventfd(0, EFD_CLOEXEC);
	assert_true(efd >= 0);
	fds[1] = efd;
	expect_attach_fails(
		d,
		0,
		&resp,
		sizeof(resp),
		fds,
		3,
		-ENOTSUP,
		"bad fds received: the response doorbell is not a socket"
	);
	close(efd);
}

static void memory_not_regular(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	fds[2] = fds[0];
	expect_attach_fails(d, 0, &resp, sizeof(resp), fds, 3, -ENOTSUP, "bad fds received");
}

// A memfd the daemon did not seal could shrink under the mapping.
static void memfd_not_sealed(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	int unsealed = memfd_create("client-test-unsealed", MFD_CLOEXEC);
	assert_true(unsealed >= 0);
	assert_int_equal(ftruncate(unsealed, (off_t)d->g.region_size), 0);
	fds[2] = unsealed;
	expect_attach_fails(d, 0, &resp, sizeof(resp), fds, 3, -ENOTSUP, "cannot map the channel");
	close(unsealed);
}

static void bad_geometry(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	resp.resp_ring_off = resp.region_size;
	expect_attach_fails(d, 0, &resp, sizeof(resp), fds, 3, -ENOTSUP, "bad channel geometry");
}

// A memfd on hugetlbfs (MFD_HUGETLB), sealed and of the right size: the
// daemon can punch a hole in it, and the client's next access to that page
// dies of SIGBUS unless a free huge page replaces it. Refused: the client
// maps ordinary shared memory only. Skipped on a host with no huge page
// free.
static void memfd_hugetlb(void **state) {
	struct fake_daemon *d = *state;
	struct gr_shm_attach_resp resp;
	int fds[3];
	if (!fake_daemon_channel_huge(d))
		skip();
	fake_daemon_attach_resp(d, &resp, fds);
	expect_attach_fails(
		d,
		0,
		&resp,
		sizeof(resp),
		fds,
		3,
		-ENOTSUP,
		"bad fds received: the memory fd is not ordinary shared memory"
	);
}

// The daemon closing the socket during attach is no reason to stay on it.
static void eof_during_attach(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_close_sock(d);
	int ret = client_shm_attach(d->client);
	assert_true(ret == -EPIPE || ret == -ECONNRESET);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(attach_ok),
		FAKE_DAEMON_TEST(refused_enotsup),
		FAKE_DAEMON_TEST(refused_other),
		FAKE_DAEMON_TEST(layout_mismatch),
		FAKE_DAEMON_TEST(short_response),
		FAKE_DAEMON_TEST(memzone_backing),
		FAKE_DAEMON_TEST(missing_fd),
		FAKE_DAEMON_TEST(extra_fd),
		FAKE_DAEMON_TEST(n_fds_mismatch),
		FAKE_DAEMON_TEST(doorbell_not_eventfd),
		FAKE_DAEMON_TEST(response_doorbell_not_socket),
		FAKE_DAEMON_TEST(memory_not_regular),
		FAKE_DAEMON_TEST(memfd_not_sealed),
		FAKE_DAEMON_TEST(memfd_hugetlb),
		FAKE_DAEMON_TEST(bad_geometry),
		FAKE_DAEMON_TEST(eof_during_attach),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
