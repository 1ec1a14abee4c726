// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "raw_sock.h"
#include "check.h"

#include <shmchan.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

void raw_set_timeout(int fd, unsigned ms) {
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
	CHECK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0,
	      "SO_RCVTIMEO: %s",
	      strerror(errno));
	CHECK(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == 0,
	      "SO_SNDTIMEO: %s",
	      strerror(errno));
}

int raw_connect(const char *sock_path) {
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0, "socket: %s", strerror(errno));
	CHECK(strlen(sock_path) < sizeof(addr.sun_path), "socket path too long");
	strcpy(addr.sun_path, sock_path);
	CHECK(connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0,
	      "connect %s: %s",
	      sock_path,
	      strerror(errno));
	raw_set_timeout(fd, RAW_RECV_TIMEOUT_MS);
	return fd;
}

int raw_send_bytes(int fd, const void *buf, size_t len) {
	const uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			return -errno;
		CHECK(n > 0, "send: %s", n < 0 ? strerror(errno) : "sent nothing");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int raw_send_request(
	int fd,
	uint32_t id,
	uint32_t type,
	uint32_t payload_len,
	const void *payload,
	size_t sent_len
) {
	struct gr_api_request hdr = {.id = id, .type = type, .payload_len = payload_len};
	uint8_t *msg = malloc(sizeof(hdr) + sent_len);
	int ret;

	CHECK(msg != NULL, "malloc");
	memcpy(msg, &hdr, sizeof(hdr));
	if (sent_len > 0)
		memcpy(msg + sizeof(hdr), payload, sent_len);
	ret = raw_send_bytes(fd, msg, sizeof(hdr) + sent_len);
	free(msg);
	return ret;
}

int raw_recv_exact_fds(int fd, void *buf, size_t len, int *fds, unsigned max_fds, unsigned *n_fds) {
	uint8_t *p = buf;
	size_t got = 0;
	while (got < len) {
		unsigned n_got = 0;
		long n = shmchan_recv_fds(
			fd,
			p + got,
			len - got,
			fds != NULL ? fds + *n_fds : NULL,
			max_fds - *n_fds,
			&n_got
		);
		if (n == -EINTR)
			continue;
		CHECK(n != -EMSGSIZE,
		      "more than %u descriptors came with bytes %zu.. of a message",
		      max_fds - *n_fds,
		      got);
		*n_fds += n_got;
		if (got == 0 && (n == 0 || n == -ECONNRESET))
			return 0;
		if (got == 0 && (n == -EAGAIN || n == -EWOULDBLOCK))
			return -EAGAIN;
		CHECK(n > 0,
		      "message cut after %zu of %zu bytes: %s",
		      got,
		      len,
		      n < 0 ? strerror((int)-n) : "EOF");
		got += (size_t)n;
	}
	return 1;
}

int raw_recv_exact(int fd, void *buf, size_t len) {
	unsigned n_fds = 0;
	return raw_recv_exact_fds(fd, buf, len, NULL, 0, &n_fds);
}

int raw_recv_response_fds(
	int fd,
	struct gr_api_response *resp,
	void *payload,
	size_t cap,
	int *fds,
	unsigned max_fds,
	unsigned *n_fds
) {
	int ret = raw_recv_exact_fds(fd, resp, sizeof(*resp), fds, max_fds, n_fds);
	if (ret <= 0)
		return ret;
	CHECK(resp->payload_len <= GR_API_MAX_MSG_LEN,
	      "response for id %u announces %u bytes",
	      resp->for_id,
	      resp->payload_len);
	uint8_t *buf = resp->payload_len <= cap ? payload : malloc(resp->payload_len);
	CHECK(resp->payload_len == 0 || buf != NULL, "malloc");
	if (resp->payload_len > 0)
		CHECK(raw_recv_exact_fds(fd, buf, resp->payload_len, fds, max_fds, n_fds) == 1,
		      "payload of the response for id %u is missing",
		      resp->for_id);
	if (buf != payload)
		free(buf);
	return 1;
}

int raw_recv_response(int fd, struct gr_api_response *resp, void *payload, size_t cap) {
	unsigned n_fds = 0;
	return raw_recv_response_fds(fd, resp, payload, cap, NULL, 0, &n_fds);
}

void raw_expect_status(int fd, uint32_t id, uint32_t status, const char *what) {
	struct gr_api_response resp;
	int ret = raw_recv_response(fd, &resp, NULL, 0);

	CHECK(ret == 1, "%s: %s", what, ret == 0 ? "connection closed" : "no response");
	CHECK(resp.for_id == id, "%s: response for id %u, expected %u", what, resp.for_id, id);
	CHECK(resp.status == status,
	      "%s: status %u (%s), expected %u (%s)",
	      what,
	      resp.status,
	      strerror((int)resp.status),
	      status,
	      strerror((int)status));
	CHECK(resp.payload_len == 0, "%s: error came with %u bytes", what, resp.payload_len);
}

int raw_hello_version(int fd, uint32_t id, uint32_t api_version) {
	struct gr_hello_req hello = {.api_version = api_version};
	snprintf(hello.version, sizeof(hello.version), "%s", program_invocation_short_name);
	return raw_send_request(fd, id, GR_HELLO, sizeof(hello), &hello, sizeof(hello));
}

void raw_hello(int fd, uint32_t id) {
	CHECK(raw_hello_version(fd, id, GR_API_VERSION) == 0, "hello: connection closed");
	raw_expect_status(fd, id, 0, "hello");
}

void raw_ping(int fd, uint32_t id, const char *what) {
	CHECK(raw_send_request(fd, id, GR_PING, 0, NULL, 0) == 0, "%s: connection closed", what);
	raw_expect_status(fd, id, 0, what);
}

void raw_attach(
	int fd,
	uint32_t id,
	uint32_t backings,
	uint32_t layout_version,
	struct raw_attach_reply *reply
) {
	struct gr_shm_attach_req req = {.backings = backings, .layout_version = layout_version};

	memset(reply, 0, sizeof(*reply));
	CHECK(raw_send_request(fd, id, GR_SHM_ATTACH, sizeof(req), &req, sizeof(req)) == 0,
	      "attach: connection closed");
	int ret = raw_recv_response_fds(
		fd,
		&reply->resp,
		&reply->attach,
		sizeof(reply->attach),
		reply->fds,
		SHMCHAN_FDS_MAX,
		&reply->n_fds
	);
	CHECK(ret == 1, "attach: %s", ret == 0 ? "connection closed" : "no response");
	CHECK(reply->resp.for_id == id,
	      "attach: response for id %u, expected %u",
	      reply->resp.for_id,
	      id);
}

static bool fd_is_anon_inode(int fd) {
	struct stat st;
	// anon_inodefs inodes (eventfd) carry no file type bits.
	return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == 0;
}

void raw_expect_memfd_channel_fds(const int *fds, uint64_t region_size) {
	struct stat st;

	CHECK(fd_is_anon_inode(fds[0]), "request doorbell is not an eventfd");
	CHECK(fstat(fds[1], &st) == 0 && S_ISSOCK(st.st_mode), "response doorbell is not a socket");
	CHECK(fstat(fds[2], &st) == 0 && S_ISREG(st.st_mode), "memory fd is not a memfd");
	CHECK((uint64_t)st.st_size == region_size,
	      "memfd of %jd bytes, region of %llu",
	      (intmax_t)st.st_size,
	      (unsigned long long)region_size);
	int seals = fcntl(fds[2], F_GET_SEALS);
	CHECK(seals >= 0 &&
		      (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) == (F_SEAL_SHRINK | F_SEAL_GROW),
	      "memfd seals %#x",
	      seals);
}

void raw_close_fds(const int *fds, unsigned n) {
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
}
