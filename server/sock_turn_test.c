// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A socket connection's turn is bounded by the work it causes, not by the
// bytes one read brought: a client that pipelines requests streaming many
// responses each, or large ones, is served SOCK_TURN_RESPONSES responses
// (SOCK_TURN_BYTES bytes) of them, then another ready client is served
// before the rest. And a stop is noticed between requests: a loop told to
// stop serves no further request of the turn, and a SIGTERM waits for at
// most a turn of the busy client.
//
// Each server runs in a forked child with its own event loop, on a socket in
// this test's own mktemp folder, and is stopped by its pid. Every handler
// writes its request's 1-byte tag to a pipe, in the order served: the test
// reads the order of service from it.

#include "api.h"
#include "dispatch_test.h"
#include "sock.h"
#include "sock_test_client.h"

// child_die_with_parent(), shared with the integration tests.
#include "check.h"

#include <event2/event.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#define TEST_MODULE 0x7e58
// Streams STREAM_RESPONSES responses, then the final empty one.
#define TEST_STREAM GR_MSG_TYPE(TEST_MODULE, 0x01)
// Answers BIG_LEN bytes.
#define TEST_BIG GR_MSG_TYPE(TEST_MODULE, 0x02)
// Tells the server's loop to stop, then answers.
#define TEST_STOP GR_MSG_TYPE(TEST_MODULE, 0x03)

#define STREAM_RESPONSES 50
#define STREAM_PAYLOAD_LEN 8
// Two of them pass SOCK_TURN_BYTES.
#define BIG_LEN (48u << 10)
// Requests the busy client pipelines in one write: far more than one turn
// serves, few enough that one read takes them all (13 bytes each).
#define BUSY_REQUESTS 40
// The other client's tag, and the busy one's.
#define TAG_OTHER 'B'
#define TAG_BUSY 'A'

struct tagged_request {
	struct gr_api_request hdr;
	char tag;
} __attribute__((packed));

static char tmpdir[] = "/tmp/shmchand_sock_turn_test.XXXXXX";

struct server {
	pid_t pid;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

// Parent side: the server not yet reaped, killed by the teardown if an
// assertion failed before it was stopped.
static struct server *running;
// Each handler writes its tag to order_pipe[1]; the first one served then
// waits for a byte on order_go[0] (when hold_first is set).
static int order_pipe[2] = {-1, -1};
static int order_go[2] = {-1, -1};
static bool hold_first;
// Child side: the loop TEST_STOP stops.
static struct event_base *child_base;

static void note_served(const void *request) {
	char go;

	if (write(order_pipe[1], request, 1) != 1)
		abort();
	if (hold_first) {
		hold_first = false;
		// A signal may come meanwhile (SIGTERM, which the loop watches).
		while (read(order_go[0], &go, 1) != 1)
			if (errno != EINTR)
				abort();
	}
}

static struct gr_api_out stream_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	static const uint8_t entry[STREAM_PAYLOAD_LEN];

	(void)len;
	note_served(request);
	for (unsigned i = 0; i < STREAM_RESPONSES; i++)
		gr_api_send(ctx, sizeof(entry), entry);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out big_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	static const uint8_t big[BIG_LEN];

	(void)len;
	(void)ctx;
	note_served(request);
	return gr_api_out_borrowed(0, sizeof(big), big);
}

static struct gr_api_out stop_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)len;
	(void)ctx;
	note_served(request);
	event_base_loopbreak(child_base);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler stream_h = {
	.name = "TEST_STREAM",
	.request_type = TEST_STREAM,
	.request_len = 1,
	.callback = stream_handler,
};
static struct gr_api_handler big_h = {
	.name = "TEST_BIG",
	.request_type = TEST_BIG,
	.request_len = 1,
	.callback = big_handler,
};
static struct gr_api_handler stop_h = {
	.name = "TEST_STOP",
	.request_type = TEST_STOP,
	.request_len = 1,
	.callback = stop_handler,
};

static void on_sigterm(evutil_socket_t sig, short what, void *base) {
	(void)sig;
	(void)what;
	event_base_loopbreak(base);
}

// Child: serve path until its loop is stopped (SIGTERM, or TEST_STOP), as
// main.c does, then stop the server and exit 0; 1 if it did not start.
// Writes one byte to ready once it listens.
static void __attribute__((noreturn)) server_child(const char *path, int ready) {
	struct event *sigterm;

	child_base = event_base_new();
	if (child_base == NULL)
		_exit(1);
	sigterm = evsignal_new(child_base, SIGTERM, on_sigterm, child_base);
	if (sigterm == NULL || evsignal_add(sigterm, NULL) < 0)
		_exit(1);
	if (sock_server_init(child_base, path, 0600, (gid_t)-1) < 0)
		_exit(1);
	if (write(ready, "R", 1) != 1)
		_exit(1);
	close(ready);
	event_base_dispatch(child_base);
	sock_server_fini();
	event_free(sigterm);
	event_base_free(child_base);
	_exit(0);
}

static void server_start(struct server *s, const char *name) {
	pid_t parent = getpid();
	int ready[2];
	char byte;

	snprintf(s->path, sizeof(s->path), "%s/%s", tmpdir, name);
	assert_int_equal(pipe2(order_pipe, O_CLOEXEC), 0);
	assert_int_equal(pipe2(order_go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		child_die_with_parent(parent);
		close(ready[0]);
		server_child(s->path, ready[1]);
	}
	close(ready[1]);
	close(order_pipe[1]);
	close(order_go[0]);
	running = s;
	assert_int_equal(read(ready[0], &byte, 1), 1);
	close(ready[0]);
}

// The child must exit 0 on its own (its loop was stopped), having removed
// its socket.
static void server_wait(struct server *s) {
	int status;

	assert_int_equal(waitpid(s->pid, &status, 0), s->pid);
	running = NULL;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(access(s->path, F_OK), -1);
}

static void server_close_pipes(void) {
	close(order_pipe[0]);
	close(order_go[1]);
	order_pipe[0] = order_go[1] = -1;
}

// The order of service once every tagged request was served or the child
// exited: the tags read from the pipe, up to cap. Returns how many.
static size_t order_read(char *order, size_t cap) {
	size_t got = 0;
	ssize_t n;

	while (got < cap) {
		wait_fd(order_pipe[0], POLLIN, WAIT_MS);
		n = read(order_pipe[0], order + got, cap - got);
		assert_true(n >= 0);
		if (n == 0)
			break; // the child exited
		got += (size_t)n;
	}
	return got;
}

static void burst_send(int fd, uint32_t type, unsigned n) {
	static struct tagged_request burst[BUSY_REQUESTS];

	for (unsigned i = 0; i < n; i++) {
		burst[i].hdr = (struct gr_api_request){.id = i + 2, .type = type, .payload_len = 1};
		burst[i].tag = TAG_BUSY;
	}
	write_all(fd, burst, n * sizeof(burst[0]));
}

// The busy client sends its burst of type; the server, serving its first
// request, waits until the other client's request of type is there too.
// Returns how many of the busy client's requests were served before the
// other client's.
static size_t served_before_other(uint32_t type, const char *name, size_t response_len) {
	struct tagged_request quiet = {{.id = 2, .type = type, .payload_len = 1}, TAG_OTHER};
	static char order[BUSY_REQUESTS + 1];
	struct server s;
	size_t position;
	int busy, other;
	char *at;

	hold_first = true;
	server_start(&s, name);
	busy = client_connect(s.path);
	other = client_connect(s.path);
	hello(busy);
	hello(other);
	burst_send(busy, type, BUSY_REQUESTS);
	wait_fd(order_pipe[0], POLLIN, WAIT_MS);
	write_all(other, &quiet, sizeof(quiet));
	assert_int_equal(write(order_go[1], "G", 1), 1);

	assert_int_equal(order_read(order, sizeof(order)), sizeof(order));
	at = memchr(order, TAG_OTHER, sizeof(order));
	assert_non_null(at);
	position = (size_t)(at - order);
	// Every response reaches its client whole, in order.
	static uint8_t body[BIG_LEN];
	for (unsigned i = 0; i < (type == TEST_STREAM ? STREAM_RESPONSES : 1); i++) {
		expect_response(other, 2, 0, (uint32_t)response_len);
		read_all(other, body, response_len);
	}
	if (type == TEST_STREAM)
		expect_response(other, 2, 0, 0);
	close(busy);
	close(other);
	assert_int_equal(kill(s.pid, SIGTERM), 0);
	server_wait(&s);
	server_close_pipes();
	return position;
}

// Requests that stream STREAM_RESPONSES + 1 responses each: a turn serves as
// many as produce SOCK_TURN_RESPONSES, then the other client comes.
static void turn_bounded_by_responses(void **state) {
	size_t per_request = STREAM_RESPONSES + 1;
	size_t expected = (SOCK_TURN_RESPONSES + per_request - 1) / per_request;
	size_t position;

	(void)state;
	position = served_before_other(TEST_STREAM, "responses.sock", STREAM_PAYLOAD_LEN);
	print_message(
		"the other client was served after %zu of the busy one's %u requests of %zu"
		" responses (turn: %u responses)\n",
		position,
		BUSY_REQUESTS,
		per_request,
		SOCK_TURN_RESPONSES
	);
	assert_int_equal(position, expected);
}

// Requests answered BIG_LEN bytes each: a turn serves as many as produce
// SOCK_TURN_BYTES, then the other client comes.
static void turn_bounded_by_bytes(void **state) {
	size_t per_request = sizeof(struct gr_api_response) + BIG_LEN;
	size_t expected = (SOCK_TURN_BYTES + per_request - 1) / per_request;
	size_t position;

	(void)state;
	position = served_before_other(TEST_BIG, "bytes.sock", BIG_LEN);
	print_message(
		"the other client was served after %zu of the busy one's %u requests of %zu"
		" bytes (turn: %u bytes)\n",
		position,
		BUSY_REQUESTS,
		per_request,
		SOCK_TURN_BYTES
	);
	assert_int_equal(position, expected);
}

// A handler stops the loop: the requests pipelined behind it in the same
// read are not served, and the server stops at once.
static void stop_noticed_between_requests(void **state) {
	static char order[BUSY_REQUESTS];
	struct server s;
	size_t served;
	int fd;

	(void)state;
	hold_first = false;
	server_start(&s, "stop.sock");
	fd = client_connect(s.path);
	hello(fd);
	burst_send(fd, TEST_STOP, BUSY_REQUESTS);
	server_wait(&s);
	served = order_read(order, sizeof(order));
	print_message(
		"%zu of %u pipelined requests served after the stop\n",
		served - 1,
		BUSY_REQUESTS
	);
	assert_int_equal(served, 1);
	close(fd);
	server_close_pipes();
}

// SIGTERM while a client pipelines requests that stream many responses: the
// server stops after at most a turn of it more, not after its whole batch.
static void sigterm_waits_one_turn(void **state) {
	size_t per_request = STREAM_RESPONSES + 1;
	size_t per_turn = (SOCK_TURN_RESPONSES + per_request - 1) / per_request;
	static char order[BUSY_REQUESTS];
	struct server s;
	size_t served;
	int fd;

	(void)state;
	hold_first = true;
	server_start(&s, "sigterm.sock");
	fd = client_connect(s.path);
	hello(fd);
	burst_send(fd, TEST_STREAM, BUSY_REQUESTS);
	wait_fd(order_pipe[0], POLLIN, WAIT_MS);
	// Pending in the child before its handler returns: its loop sees it on
	// its next iteration.
	assert_int_equal(kill(s.pid, SIGTERM), 0);
	assert_int_equal(write(order_go[1], "G", 1), 1);
	server_wait(&s);
	served = order_read(order, sizeof(order));
	print_message(
		"%zu of %u pipelined requests served in all, %zu per turn\n",
		served,
		BUSY_REQUESTS,
		per_turn
	);
	assert_true(served <= 2 * per_turn);
	close(fd);
	server_close_pipes();
}

static int setup(void **state) {
	(void)state;
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	assert_int_equal(dispatch_test_handlers(), 0);
	assert_int_equal(gr_api_server_handler_register(&stream_h), 0);
	assert_int_equal(gr_api_server_handler_register(&big_h), 0);
	assert_int_equal(gr_api_server_handler_register(&stop_h), 0);
	return 0;
}

// After a failed assertion: stop the server by its pid.
static int kill_leftover_server(void **state) {
	(void)state;
	if (running == NULL)
		return 0;
	kill(running->pid, SIGKILL);
	waitpid(running->pid, NULL, 0);
	unlink(running->path);
	running = NULL;
	server_close_pipes();
	return 0;
}

static int teardown(void **state) {
	(void)state;
	return rmdir(tmpdir);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(turn_bounded_by_responses, kill_leftover_server),
		cmocka_unit_test_teardown(turn_bounded_by_bytes, kill_leftover_server),
		cmocka_unit_test_teardown(stop_noticed_between_requests, kill_leftover_server),
		cmocka_unit_test_teardown(sigterm_waits_one_turn, kill_leftover_server),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
