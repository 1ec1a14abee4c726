// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Bad input on the socket, sent as raw bytes (no client library): garbage,
// truncated and oversized messages, unknown types, short payloads, requests
// before hello, a wrong API version, a client vanishing mid-message. Each
// case runs on a fresh connection, and after each a second, fresh client must
// still get hello and ping answered.
//
// usage: sock_bad_input SOCK (under test/with_daemon.sh)

#include "check.h"
#include "raw_sock.h"

#include <gr_api.h>
#include <gr_shm.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// After garbage, how long silence means the daemon waits for more bytes.
#define GARBAGE_IDLE_MS 300
#define GARBAGE_LEN 1000
// A request type no module serves.
#define UNKNOWN_TYPE GR_MSG_TYPE(0x7777, 0x0001)
// A main-module type past Grout's and ours.
#define UNSERVED_MAIN_TYPE GR_MSG_TYPE(GR_MAIN_MODULE, 0x19ff)
// Payload bytes of the short GR_PING2 case (it needs GR_PING2_LEN).
#define SHORT_PAYLOAD_LEN 10
// An odd payload length, to misalign what follows it.
#define ODD_PAYLOAD_LEN 3
// The vanishing client announces this payload and sends only part of it.
#define VANISH_ANNOUNCED_LEN 100
#define VANISH_SENT_LEN 10

static const char *sock_path;

// A fresh client must get hello and ping answered: the daemon outlived the
// case and still serves others.
static void check_daemon_serves(const char *after) {
	int fd = raw_connect(sock_path);
	raw_hello(fd, 1);
	raw_ping(fd, 2, after);
	close(fd);
	printf("%s: ok\n", after);
}

// Read what the daemon answers to garbage until it closes the connection or
// falls silent waiting for more. Every answer must be an error.
static void drain_errors(int fd, const char *what) {
	struct gr_api_response resp;
	int ret;

	raw_set_timeout(fd, GARBAGE_IDLE_MS);
	while ((ret = raw_recv_response(fd, &resp, NULL, 0)) == 1)
		CHECK(resp.status != 0, "%s: garbage got status 0 for id %u", what, resp.for_id);
}

static void send_garbage(int fd, unsigned seed) {
	uint8_t garbage[GARBAGE_LEN];
	srandom(seed);
	for (size_t i = 0; i < sizeof(garbage); i++)
		garbage[i] = (uint8_t)random();
	// The daemon may close the connection before it has read everything.
	(void)raw_send_bytes(fd, garbage, sizeof(garbage));
}

static void case_garbage_before_hello(unsigned seed) {
	int fd = raw_connect(sock_path);
	send_garbage(fd, seed);
	drain_errors(fd, "garbage before hello");
	close(fd);
}

static void case_garbage_after_hello(unsigned seed) {
	int fd = raw_connect(sock_path);
	raw_hello(fd, 1);
	send_garbage(fd, seed + 1);
	drain_errors(fd, "garbage after hello");
	close(fd);
}

static void case_truncated_header(void) {
	struct gr_api_request hdr = {.id = 1, .type = GR_HELLO, .payload_len = GR_HELLO_REQ_LEN};
	int fd = raw_connect(sock_path);
	(void)raw_send_bytes(fd, &hdr, 5);
	close(fd);
}

// Over the maximum: EMSGSIZE for that id, then the daemon closes.
static void case_oversized_payload(void) {
	struct gr_api_response resp;
	uint32_t id = 7;
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	CHECK(raw_send_request(fd, id, GR_PING2, GR_API_MAX_MSG_LEN + 1, NULL, 0) == 0,
	      "oversized: connection closed before the header went out");
	raw_expect_status(fd, id, EMSGSIZE, "oversized payload_len");
	int ret = raw_recv_response(fd, &resp, NULL, 0);
	CHECK(ret == 0,
	      "oversized: the connection stayed open (%s)",
	      ret == 1 ? "another response came" : "timeout");
	close(fd);
}

// Unknown types answer ENOTSUP and the connection goes on.
static void case_unknown_type(void) {
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	CHECK(raw_send_request(fd, 2, UNKNOWN_TYPE, 0, NULL, 0) == 0, "unknown type: closed");
	raw_expect_status(fd, 2, ENOTSUP, "unknown module");
	CHECK(raw_send_request(fd, 3, UNSERVED_MAIN_TYPE, 0, NULL, 0) == 0, "unknown type: closed");
	raw_expect_status(fd, 3, ENOTSUP, "unserved main module type");
	raw_ping(fd, 4, "ping after unknown types");
	close(fd);
}

// A payload shorter than the request declares: EMSGSIZE, and no echo.
static void case_short_payload(void) {
	uint8_t payload[SHORT_PAYLOAD_LEN];
	int fd = raw_connect(sock_path);

	memset(payload, 0xa5, sizeof(payload));
	raw_hello(fd, 1);
	CHECK(raw_send_request(fd, 2, GR_PING2, sizeof(payload), payload, sizeof(payload)) == 0,
	      "short payload: closed");
	raw_expect_status(fd, 2, EMSGSIZE, "GR_PING2 with 10 bytes");
	raw_ping(fd, 3, "ping after a short payload");
	close(fd);
}

// A payload of odd length leaves the next one misaligned in the daemon's
// input: the next request, a subscribe the handler reads through its struct
// (a u32 field), is served as any other (and UndefinedBehaviorSanitizer,
// in make test SANITIZE=1, finds no misaligned read).
static void case_misaligned_payload(void) {
	uint8_t odd[ODD_PAYLOAD_LEN];
	struct {
		struct gr_api_request hdr;
		uint8_t odd[ODD_PAYLOAD_LEN];
		struct gr_api_request sub_hdr;
		struct gr_event_subscribe_req sub;
	} __attribute__((packed)) burst = {
		.hdr = {.id = 2, .type = GR_SHM_ECHO, .payload_len = ODD_PAYLOAD_LEN},
		.sub_hdr = {.id = 3, .type = GR_EVENT_SUBSCRIBE, .payload_len = sizeof(burst.sub)},
		.sub = {.ev_type = GR_SHM_EVENT_TEST},
	};
	int fd = raw_connect(sock_path);

	memset(odd, 0x5a, sizeof(odd));
	memcpy(burst.odd, odd, sizeof(odd));
	raw_hello(fd, 1);
	// One write: both requests sit in the daemon's buffer at once.
	CHECK(raw_send_bytes(fd, &burst, sizeof(burst)) == 0, "misaligned: closed");
	struct gr_api_response resp;
	uint8_t echo[ODD_PAYLOAD_LEN];
	CHECK(raw_recv_response(fd, &resp, echo, sizeof(echo)) == 1,
	      "echo of 3 bytes: no response");
	CHECK(resp.for_id == 2 && resp.status == 0 && resp.payload_len == sizeof(echo) &&
		      memcmp(echo, odd, sizeof(echo)) == 0,
	      "echo of 3 bytes: id %u status %u, %u bytes",
	      resp.for_id,
	      resp.status,
	      resp.payload_len);
	raw_expect_status(fd, 3, 0, "a subscribe behind a 3-byte payload");
	close(fd);
}

// Before hello the handler must not run: a ping2 gets an error, not an echo.
static void case_request_before_hello(void) {
	struct gr_ping2 req;
	struct gr_api_response resp;
	int fd = raw_connect(sock_path);

	memset(&req, 0x5a, sizeof(req));
	CHECK(raw_send_request(fd, 1, GR_PING2, sizeof(req), &req, sizeof(req)) == 0,
	      "before hello: closed before the request went out");
	int ret = raw_recv_response(fd, &resp, NULL, 0);
	CHECK(ret == 1, "ping2 before hello: %s", ret == 0 ? "closed, no error" : "no response");
	CHECK(resp.for_id == 1, "ping2 before hello: response for id %u", resp.for_id);
	CHECK(resp.status != 0, "ping2 before hello was served");
	CHECK(resp.payload_len == 0,
	      "ping2 before hello: error came with %u bytes",
	      resp.payload_len);
	close(fd);
}

static void case_wrong_hello_version(void) {
	int fd = raw_connect(sock_path);

	CHECK(raw_hello_version(fd, 1, GR_API_VERSION + 1) == 0, "wrong version: closed");
	raw_expect_status(fd, 1, EBADMSG, "hello with a wrong api_version");
	close(fd);
}

// Announce 100 bytes, send 10, vanish.
static void case_vanish_mid_message(void) {
	uint8_t partial[VANISH_SENT_LEN] = {0};
	int fd = raw_connect(sock_path);

	raw_hello(fd, 1);
	CHECK(raw_send_request(
		      fd,
		      2,
		      GR_SHM_ECHO,
		      VANISH_ANNOUNCED_LEN,
		      partial,
		      sizeof(partial)
	      ) == 0,
	      "vanish: closed");
	close(fd);
}

int main(int argc, char **argv) {
	CHECK(argc == 2, "usage: %s SOCK", argv[0]);
	sock_path = argv[1];
	watchdog_start(TEST_WATCHDOG_S);

	// Random bytes, reproducible: the seed is in the log.
	unsigned seed = (unsigned)monotonic_ns();
	printf("garbage seed %u\n", seed);

	check_daemon_serves("before any case");
	case_garbage_before_hello(seed);
	check_daemon_serves("garbage before hello");
	case_garbage_after_hello(seed);
	check_daemon_serves("garbage after hello");
	case_truncated_header();
	check_daemon_serves("truncated header");
	case_oversized_payload();
	check_daemon_serves("oversized payload_len");
	case_unknown_type();
	check_daemon_serves("unknown type");
	case_short_payload();
	case_misaligned_payload();
	check_daemon_serves("short payload");
	case_request_before_hello();
	check_daemon_serves("request before hello");
	case_wrong_hello_version();
	check_daemon_serves("wrong hello version");
	case_vanish_mid_message();
	check_daemon_serves("vanished mid-message");
	return EXIT_SUCCESS;
}
