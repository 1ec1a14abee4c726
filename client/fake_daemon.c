// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "fake_daemon.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

void fake_daemon_init_sock(struct fake_daemon *d, int sock) {
	memset(d, 0, sizeof(*d));
	d->mem.fd = -1;
	d->sock = sock;
}

void fake_daemon_init(struct fake_daemon *d, int spin_us) {
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	fake_daemon_init_sock(d, sv[1]);
	d->client = client_new(sv[0], spin_us);
	assert_non_null(d->client);
}

int fake_daemon_setup(void **state) {
	struct fake_daemon *d = malloc(sizeof(*d));
	assert_non_null(d);
	fake_daemon_init(d, 0);
	*state = d;
	return 0;
}

int fake_daemon_teardown(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_fini(d);
	free(d);
	return 0;
}

void fake_daemon_channel(struct fake_daemon *d) {
	assert_int_equal(shmchan_geometry_init(&d->g, SHMCHAN_RING_CELLS), 0);
	d->g.generation = FAKE_DAEMON_GENERATION;
	assert_int_equal(shmchan_memfd_create(&d->mem, "client-test", d->g.region_size), 0);
	assert_int_equal(shmchan_server_create(&d->mem, &d->g, &d->server), 0);
}

void fake_daemon_attach_resp(
	const struct fake_daemon *d,
	struct gr_shm_attach_resp *resp,
	int fds[3]
) {
	memset(resp, 0, sizeof(*resp));
	resp->layout_version = d->g.layout_version;
	resp->backing = GR_SHM_BACKING_MEMFD;
	resp->region_size = d->g.region_size;
	resp->req_ring_off = d->g.req_ring_off;
	resp->resp_ring_off = d->g.resp_ring_off;
	resp->ring_cells = d->g.ring_cells;
	resp->cell_size = d->g.cell_size;
	resp->n_fds = 3;
	resp->generation = d->g.generation;
	snprintf(resp->name, sizeof(resp->name), "%s", d->mem.name);
	fds[0] = shmchan_server_req_fd(d->server);
	fds[1] = shmchan_server_resp_fd(d->server);
	fds[2] = d->mem.fd;
}

// The largest payloads the tests send.
union fake_daemon_payload {
	struct gr_shm_attach_resp attach;
	struct gr_shm_daemon_info info;
	// A newer daemon's longer info (attach_memzone_test.c).
	uint8_t newer_info[sizeof(struct gr_shm_daemon_info) + FAKE_DAEMON_INFO_NEWER_EXTRA];
};

void fake_daemon_write(
	struct fake_daemon *d,
	uint32_t for_id,
	uint32_t status,
	const void *payload,
	size_t len,
	const int *fds,
	unsigned n_fds
) {
	uint8_t buf[sizeof(struct gr_api_response) + sizeof(union fake_daemon_payload)];
	struct gr_api_response hdr = {.for_id = for_id, .status = status, .payload_len = len};
	FAKE_DAEMON_CHECK(len <= sizeof(buf) - sizeof(hdr));
	memcpy(buf, &hdr, sizeof(hdr));
	if (len > 0)
		memcpy(buf + sizeof(hdr), payload, len);
	size_t total = sizeof(hdr) + len, sent = 0;
	while (sent < total) {
		long n = shmchan_send_fds(
			d->sock,
			buf + sent,
			total - sent,
			fds,
			sent == 0 ? n_fds : 0
		);
		FAKE_DAEMON_CHECK(n > 0);
		sent += (size_t)n;
	}
}

void fake_daemon_read_all(int fd, void *buf, size_t len) {
	while (len > 0) {
		ssize_t n = read(fd, buf, len);
		FAKE_DAEMON_CHECK(n > 0);
		buf = (uint8_t *)buf + n;
		len -= (size_t)n;
	}
}

void fake_daemon_read_attach(struct fake_daemon *d) {
	struct gr_api_request hdr;
	struct gr_shm_attach_req req;
	fake_daemon_read_all(d->sock, &hdr, sizeof(hdr));
	assert_int_equal(hdr.type, GR_SHM_ATTACH);
	assert_int_equal(hdr.payload_len, sizeof(req));
	fake_daemon_read_all(d->sock, &req, sizeof(req));
	assert_int_equal(req.backings, GR_SHM_BACKING_MEMFD);
	assert_int_equal(req.layout_version, SHMCHAN_LAYOUT_VERSION);
}

void fake_daemon_read_detach(struct fake_daemon *d) {
	struct timeval wait = {
		.tv_sec = FAKE_DAEMON_DETACH_WAIT_MS / 1000,
		.tv_usec = FAKE_DAEMON_DETACH_WAIT_MS % 1000 * 1000,
	};
	struct timeval forever = {0};
	struct gr_api_request hdr;

	// A client that never sends it fails the read instead of hanging it.
	FAKE_DAEMON_CHECK(setsockopt(d->sock, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) == 0);
	fake_daemon_read_all(d->sock, &hdr, sizeof(hdr));
	FAKE_DAEMON_CHECK(
		setsockopt(d->sock, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever)) == 0
	);
	FAKE_DAEMON_CHECK(hdr.type == GR_SHM_DETACH);
	FAKE_DAEMON_CHECK(hdr.payload_len == 0);
}

void fake_daemon_attach(struct fake_daemon *d) {
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	// Written before the request: the client's first request has id 1, and
	// the socket buffer holds the answer until the client reads it.
	fake_daemon_write(d, 1, 0, &resp, sizeof(resp), fds, 3);
	assert_int_equal(client_shm_attach(d->client), 0);
	fake_daemon_read_attach(d);
	assert_int_equal(gr_api_client_transport(d->client), GR_API_TRANSPORT_SHM);
	assert_string_equal(gr_api_client_transport_reason(d->client), "");
}

void fake_daemon_close_sock(struct fake_daemon *d) {
	if (d->sock >= 0)
		close(d->sock);
	d->sock = -1;
}

void fake_daemon_fini(struct fake_daemon *d) {
	assert_int_equal(gr_api_client_disconnect(d->client), 0);
	if (d->server != NULL)
		shmchan_server_destroy(d->server);
	shmchan_memfd_destroy(&d->mem);
	fake_daemon_close_sock(d);
}

uint64_t fake_daemon_doorbell_rings(struct fake_daemon *d) {
	struct pollfd pfd = {.fd = shmchan_server_req_fd(d->server), .events = POLLIN};
	uint64_t count = 0;
	if (poll(&pfd, 1, 0) == 1)
		assert_int_equal(read(pfd.fd, &count, sizeof(count)), sizeof(count));
	return count;
}

unsigned fake_daemon_count_fds(void) {
	DIR *dir = opendir("/proc/self/fd");
	assert_non_null(dir);
	unsigned n = 0;
	while (readdir(dir) != NULL)
		n++;
	closedir(dir);
	return n;
}
