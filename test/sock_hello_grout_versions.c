// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// GR_HELLO at each API version a client may speak, as raw bytes written from
// the wire layout (no struct of ours): Grout v0.17.0 (9) gets an empty
// response, Grout's main branch (10) a 2-byte gr_hello_resp with max_ifaces
// 0, shmchan's own version (1) an empty one; any other version EBADMSG, and
// the connection is still not past hello. After each accepted hello a ping
// is answered.
//
// usage: sock_hello_grout_versions SOCK (under test/with_daemon.sh)

#include "check.h"
#include "raw_sock.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

// Grout's wire layout: request header (id, type, payload_len: three u32),
// hello payload (u32 api_version, 128-byte NUL-terminated string).
#define WIRE_REQ_HDR_LEN 12
#define WIRE_HELLO_LEN (4 + 128)
#define WIRE_RESP_HDR_LEN 12
// GR_HELLO and GR_PING: module 0xcafe, ids 0x1981 and 0x1987.
#define WIRE_GR_HELLO 0xcafe1981u
#define WIRE_GR_PING 0xcafe1987u
#define WIRE_EBADMSG 74u
#define WIRE_EPERM 1u

static void put_u32(uint8_t *p, uint32_t v) {
	memcpy(p, &v, sizeof(v)); // host order, as the wire is
}

static uint32_t get_u32(const uint8_t *p) {
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static void send_hello(int fd, uint32_t id, uint32_t api_version) {
	uint8_t msg[WIRE_REQ_HDR_LEN + WIRE_HELLO_LEN] = {0};

	put_u32(msg, id);
	put_u32(msg + 4, WIRE_GR_HELLO);
	put_u32(msg + 8, WIRE_HELLO_LEN);
	put_u32(msg + 12, api_version);
	memcpy(msg + 16, "grout v0.17.0", sizeof("grout v0.17.0"));
	CHECK(raw_send_bytes(fd, msg, sizeof(msg)) == 0, "hello %u: connection closed", api_version
	);
}

// Receive one response header and exactly expect_len payload bytes.
static void expect_resp(
	int fd,
	uint32_t id,
	uint32_t status,
	uint32_t expect_len,
	uint8_t *payload,
	const char *what
) {
	uint8_t hdr[WIRE_RESP_HDR_LEN];

	CHECK(raw_recv_exact(fd, hdr, sizeof(hdr)) == 1, "%s: no response", what);
	CHECK(get_u32(hdr) == id, "%s: for_id %u, expected %u", what, get_u32(hdr), id);
	CHECK(get_u32(hdr + 4) == status,
	      "%s: status %u, expected %u",
	      what,
	      get_u32(hdr + 4),
	      status);
	CHECK(get_u32(hdr + 8) == expect_len,
	      "%s: payload of %u bytes, expected %u",
	      what,
	      get_u32(hdr + 8),
	      expect_len);
	if (expect_len > 0)
		CHECK(raw_recv_exact(fd, payload, expect_len) == 1, "%s: payload cut", what);
}

static void send_ping(int fd, uint32_t id) {
	uint8_t msg[WIRE_REQ_HDR_LEN];

	put_u32(msg, id);
	put_u32(msg + 4, WIRE_GR_PING);
	put_u32(msg + 8, 0);
	CHECK(raw_send_bytes(fd, msg, sizeof(msg)) == 0, "ping: connection closed");
}

// An accepted version: its response, then a ping is served.
static void check_accepted(const char *sock, uint32_t version, uint32_t resp_len) {
	uint8_t payload[2] = {0xff, 0xff};
	char what[64];
	int fd = raw_connect(sock);

	snprintf(what, sizeof(what), "hello version %u", version);
	send_hello(fd, 7, version);
	expect_resp(fd, 7, 0, resp_len, payload, what);
	if (resp_len == 2) {
		uint16_t max_ifaces;
		memcpy(&max_ifaces, payload, sizeof(max_ifaces));
		CHECK(max_ifaces == 0, "%s: max_ifaces %u, expected 0", what, max_ifaces);
	}
	send_ping(fd, 8);
	expect_resp(fd, 8, 0, 0, NULL, "ping after hello");
	close(fd);
	printf("%s: %u-byte response: ok\n", what, resp_len);
}

static void check_refused(const char *sock, uint32_t version) {
	char what[64];
	int fd = raw_connect(sock);

	snprintf(what, sizeof(what), "hello version %u", version);
	send_hello(fd, 3, version);
	expect_resp(fd, 3, WIRE_EBADMSG, 0, NULL, what);
	// Not past hello: a ping is refused.
	send_ping(fd, 4);
	expect_resp(fd, 4, WIRE_EPERM, 0, NULL, "ping after a refused hello");
	close(fd);
	printf("%s: EBADMSG: ok\n", what);
}

int main(int argc, char **argv) {
	static const uint32_t refused[] = {0, 2, 8, 11, 0xffffffffu};

	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	check_accepted(argv[1], 9, 0);
	check_accepted(argv[1], 10, 2);
	check_accepted(argv[1], 1, 0);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		check_refused(argv[1], refused[i]);
	return 0;
}
