// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The socket server, without EAL: socket path rules (abstract, too long,
// stale file, live server, not a socket), mode and removal at shutdown, the
// lease callback, fd passing (the server's own handlers'), bounded output (a client that does not
// read is paused, then served in full once it reads), no SIGPIPE for a client gone, and bounded
// reads (a client that sent much cannot keep another waiting for all of it).
//
// Each server runs in a forked child with its own event loop, on a socket in
// this test's own mktemp folder, and is stopped by its pid.

#include "api.h"
#include "dispatch_test.h"
#include "config.h"
#include "sock.h"
#include "sock_test_client.h"

// child_die_with_parent(), shared with the integration tests.
#include "check.h"

#include <gr_shm.h>
#include <shmchan.h>

#include <event2/event.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

// Request types of handlers registered by this test only.
#define TEST_MODULE 0x7e57
#define TEST_LEASE GR_MSG_TYPE(TEST_MODULE, 0x10) // sets a lease_lost callback
#define TEST_FDS GR_MSG_TYPE(TEST_MODULE, 0x11) // answers with one fd
#define TEST_FILL GR_MSG_TYPE(TEST_MODULE, 0x12) // a stream of FILL_RESPONSES
#define TEST_ORDER GR_MSG_TYPE(TEST_MODULE, 0x13) // logs its 1-byte payload
#define TEST_ALIGN GR_MSG_TYPE(TEST_MODULE, 0x14) // EFAULT if its payload is misaligned

// How long the bounded-output test waits for a stuck sender to move again.
#define STUCK_MS 1000
// Bounded-output test: requests sent, each of this payload.
#define FLOOD_REQUESTS 128
#define FLOOD_PAYLOAD GR_API_MAX_MSG_LEN
#define FLOOD_MSG (sizeof(struct gr_api_request) + FLOOD_PAYLOAD)
// The server holds at most SOCK_OUTPUT_HIGH of output, one response over it,
// one request of input, and the kernel's socket buffers (a few hundred KiB
// each way): a client that does not read can push no more than this.
#define FLOOD_MAX_UNREAD (2 * SOCK_OUTPUT_HIGH)
#define FDS_PAYLOAD "fds!"
// TEST_FILL's stream: 3 MiB, below SOCK_OUTPUT_HIGH and well above what
// the socket buffer toward the client takes (about 240 KiB with the default
// wmem of 208 KiB).
#define FILL_RESPONSES 24
#define FILL_LEN GR_API_MAX_MSG_LEN
#define FILL_MSG (sizeof(struct gr_api_response) + FILL_LEN)
// Bounded-reads test: the busy client's requests, sent at once, 53 KiB in
// all: more than the server reads of one connection in one turn, few enough
// that the socket buffers hold them (and their answers) and that the order
// log fits in a pipe.
#define BURST_REQUESTS 4096
// Alignment test: requests of payloads 0 to this - 1 bytes, every skew
// twice over.
#define ALIGN_REQUESTS (2 * GR_API_SERVER_PAYLOAD_ALIGN)

static char tmpdir[] = "/tmp/shmchand_sock_test.XXXXXX";

struct server {
	pid_t pid;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lease_pipe; // read end: one byte per lease_lost call
};

// Parent side: the server started and not yet reaped, killed by the test's
// teardown if an assertion failed before it was stopped.
static struct server *running;
// Child side: lease_lost writes one byte to this pipe.
static int lease_pipe_wr = -1;
// Child side: the fd passed by TEST_FDS.
static int passed_fd = -1;
// TEST_ORDER writes its payload byte to order_pipe[1], in the order served;
// the first one then waits for a byte on order_go[0].
static int order_pipe[2] = {-1, -1};
static int order_go[2] = {-1, -1};
static bool order_went;

static void on_lease_lost(void *arg, bool peer_closed) {
	char byte = 'L';

	(void)arg;
	(void)peer_closed;
	if (write(lease_pipe_wr, &byte, 1) != 1)
		abort();
}

static struct gr_api_out lease_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	ctx->lease_lost = on_lease_lost;
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out fds_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct gr_api_out out;
	char *payload = strdup(FDS_PAYLOAD);

	(void)request;
	(void)len;
	(void)ctx;
	out = gr_api_out(0, sizeof(FDS_PAYLOAD), payload);
	out.fds = &passed_fd;
	out.n_fds = 1;
	return out;
}

static struct gr_api_out fill_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	static const uint8_t zeros[FILL_LEN];

	(void)request;
	(void)len;
	for (unsigned i = 0; i < FILL_RESPONSES; i++)
		gr_api_send(ctx, sizeof(zeros), zeros);
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_out order_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	char go;

	(void)len;
	(void)ctx;
	if (write(order_pipe[1], request, 1) != 1)
		abort();
	if (!order_went) {
		order_went = true;
		if (read(order_go[0], &go, 1) != 1)
			abort();
	}
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler lease_h = {
	.name = "TEST_LEASE",
	.request_type = TEST_LEASE,
	.callback = lease_handler,
};
// Descriptors travel with the responses of the server's own handlers only
// (its attach): this one is registered as the server registers its own.
static struct gr_api_handler fds_h[] = {{
	.name = "TEST_FDS",
	.request_type = TEST_FDS,
	.callback = fds_handler,
}};
static API_HANDLER_TABLE(fds_table, fds_h);
static struct gr_api_handler fill_h = {
	.name = "TEST_FILL",
	.request_type = TEST_FILL,
	.callback = fill_handler,
};
static struct gr_api_out align_handler(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)len;
	(void)ctx;
	return gr_api_out(
		(uintptr_t)request % GR_API_SERVER_PAYLOAD_ALIGN == 0 ? 0 : EFAULT,
		0,
		NULL
	);
}

static struct gr_api_handler align_h = {
	.name = "TEST_ALIGN",
	.request_type = TEST_ALIGN,
	.callback = align_handler,
};
static struct gr_api_handler order_h = {
	.name = "TEST_ORDER",
	.request_type = TEST_ORDER,
	.request_len = 1,
	.callback = order_handler,
};

static void on_sigterm(evutil_socket_t sig, short what, void *base) {
	(void)sig;
	(void)what;
	event_base_loopbreak(base);
}

// Child: serve path until SIGTERM, as main.c does. Exits 0 after a clean
// shutdown, 1 if the server did not start; writes one byte to ready once it
// listens.
static void __attribute__((noreturn)) server_child(const char *path, mode_t mode, int ready) {
	struct event_base *base = event_base_new();
	struct event *sigterm;
	int fds[2];

	// SIGPIPE's default action, as an application that chose none: the
	// server must never raise it.
	if (base == NULL || pipe2(fds, O_CLOEXEC) < 0 || signal(SIGPIPE, SIG_DFL) == SIG_ERR)
		_exit(1);
	passed_fd = fds[0];
	sigterm = evsignal_new(base, SIGTERM, on_sigterm, base);
	if (sigterm == NULL || evsignal_add(sigterm, NULL) < 0)
		_exit(1);
	if (sock_server_init(base, path, mode, (gid_t)-1) < 0)
		_exit(1);
	if (write(ready, "R", 1) != 1)
		_exit(1);
	close(ready);
	event_base_dispatch(base);
	sock_server_fini();
	event_free(sigterm);
	event_base_free(base);
	_exit(0);
}

static void server_start(struct server *s, const char *name, mode_t mode) {
	pid_t parent = getpid();
	int ready[2], lease[2];
	char byte;

	snprintf(s->path, sizeof(s->path), "%s/%s", tmpdir, name);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(lease, O_CLOEXEC), 0);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		child_die_with_parent(parent);
		close(ready[0]);
		close(lease[0]);
		lease_pipe_wr = lease[1];
		server_child(s->path, mode, ready[1]);
	}
	close(ready[1]);
	close(lease[1]);
	s->lease_pipe = lease[0];
	running = s;
	assert_int_equal(read(ready[0], &byte, 1), 1);
	close(ready[0]);
}

// SIGTERM, then the child must exit 0, have removed its socket, and have
// called no lease_lost the test did not consume.
static void server_stop(struct server *s) {
	int status;
	char byte;

	assert_int_equal(kill(s->pid, SIGTERM), 0);
	assert_int_equal(waitpid(s->pid, &status, 0), s->pid);
	running = NULL;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(access(s->path, F_OK), -1);
	assert_int_equal(read(s->lease_pipe, &byte, 1), 0);
	close(s->lease_pipe);
}

static void path_rules(void **state) {
	struct event_base *base = event_base_new();
	char path[256];
	int fd;

	(void)state;
	assert_non_null(base);
	assert_int_equal(sock_server_init(base, "", 0600, (gid_t)-1), -EINVAL);
	assert_int_equal(sock_server_init(base, "@shmchand", 0600, (gid_t)-1), -EINVAL);
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(sock_server_init(base, path, 0600, (gid_t)-1), -EINVAL);

	// A regular file is never removed.
	snprintf(path, sizeof(path), "%s/regular", tmpdir);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sock_server_init(base, path, 0600, (gid_t)-1), -EEXIST);
	assert_int_equal(access(path, F_OK), 0);
	unlink(path);
	event_base_free(base);
}

static void stale_socket_replaced_live_refused(void **state) {
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct event_base *base = event_base_new();
	struct server s;
	int fd;

	(void)state;
	assert_non_null(base);
	// A socket file nobody listens on: removed, and the server starts.
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/stale.sock", tmpdir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(fd);
	server_start(&s, "stale.sock", 0600);

	// A live server on it: a second one refuses and leaves the file.
	assert_int_equal(sock_server_init(base, s.path, 0600, (gid_t)-1), -EADDRINUSE);
	assert_int_equal(access(s.path, F_OK), 0);
	fd = client_connect(s.path);
	hello(fd);
	close(fd);
	server_stop(&s);
	event_base_free(base);
}

static void mode_applied(void **state) {
	struct server s;
	struct stat st;

	(void)state;
	server_start(&s, "mode.sock", 0604);
	assert_int_equal(stat(s.path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0604);
	server_stop(&s);
}

static void lease_lost_once_on_close(void **state) {
	struct server s;
	char byte;
	int fd;

	(void)state;
	server_start(&s, "lease.sock", 0600);
	fd = client_connect(s.path);
	hello(fd);
	send_request(fd, 2, TEST_LEASE, NULL, 0);
	expect_response(fd, 2, 0, 0);
	close(fd);
	wait_fd(s.lease_pipe, POLLIN, WAIT_MS);
	assert_int_equal(read(s.lease_pipe, &byte, 1), 1);

	// Still serving; stopping does not end the closed client's lease again.
	fd = client_connect(s.path);
	hello(fd);
	close(fd);
	server_stop(&s);
}

static void lease_lost_at_shutdown(void **state) {
	struct server s;
	int fd, status;
	char byte;

	(void)state;
	server_start(&s, "lease-stop.sock", 0600);
	fd = client_connect(s.path);
	hello(fd);
	send_request(fd, 2, TEST_LEASE, NULL, 0);
	expect_response(fd, 2, 0, 0);
	assert_int_equal(kill(s.pid, SIGTERM), 0);
	wait_fd(s.lease_pipe, POLLIN, WAIT_MS);
	assert_int_equal(read(s.lease_pipe, &byte, 1), 1);
	expect_eof(fd);
	close(fd);
	assert_int_equal(waitpid(s.pid, &status, 0), s.pid);
	running = NULL;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(s.lease_pipe);
}

static void fds_passed_with_response(void **state) {
	char buf[sizeof(struct gr_api_response) + sizeof(FDS_PAYLOAD)];
	struct gr_api_response resp;
	unsigned n_fds = 0;
	struct server s;
	int fd, got[2];
	struct stat st;
	long n;

	(void)state;
	server_start(&s, "fds.sock", 0600);
	fd = client_connect(s.path);
	hello(fd);
	send_request(fd, 2, TEST_FDS, NULL, 0);
	wait_fd(fd, POLLIN, WAIT_MS);
	n = shmchan_recv_fds(fd, buf, sizeof(buf), got, 2, &n_fds);
	assert_true(n > 0);
	assert_int_equal(n_fds, 1);
	if ((size_t)n < sizeof(buf))
		read_all(fd, buf + n, sizeof(buf) - (size_t)n);
	memcpy(&resp, buf, sizeof(resp));
	assert_int_equal(resp.for_id, 2);
	assert_int_equal(resp.status, 0);
	assert_int_equal(resp.payload_len, sizeof(FDS_PAYLOAD));
	assert_string_equal(buf + sizeof(resp), FDS_PAYLOAD);
	// The fd is the read end of the child's pipe.
	assert_int_equal(fstat(got[0], &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	close(got[0]);

	// Still a normal connection afterwards.
	send_request(fd, 3, GR_PING, NULL, 0);
	expect_response(fd, 3, 0, 0);
	close(fd);
	server_stop(&s);
}

// Read len bytes, collecting the fds that come with them (at most 2).
// Returns how many fds came.
static unsigned read_with_fds(int fd, void *buf, size_t len, int *fds) {
	unsigned n_fds = 0, got;
	size_t have = 0;

	while (have < len) {
		long n;
		wait_fd(fd, POLLIN, WAIT_MS);
		n = shmchan_recv_fds(
			fd,
			(char *)buf + have,
			len - have,
			fds + n_fds,
			2 - n_fds,
			&got
		);
		assert_true(n > 0);
		n_fds += got;
		have += (size_t)n;
	}
	return n_fds;
}

static void fds_follow_pipelined_response(void **state) {
	char buf[2 * sizeof(struct gr_api_response) + sizeof(FDS_PAYLOAD)];
	struct gr_api_request reqs[2] = {
		{.id = 2, .type = GR_PING},
		{.id = 3, .type = TEST_FDS},
	};
	struct gr_api_response resp;
	struct server s;
	int fd, got[2];

	(void)state;
	server_start(&s, "fds-pipelined.sock", 0600);
	fd = client_connect(s.path);
	hello(fd);
	// One write: the ping's response is still queued in the server when the
	// fd response is sent, and must leave first.
	write_all(fd, reqs, sizeof(reqs));
	assert_int_equal(read_with_fds(fd, buf, sizeof(buf), got), 1);
	close(got[0]);
	memcpy(&resp, buf, sizeof(resp));
	assert_int_equal(resp.for_id, 2);
	assert_int_equal(resp.payload_len, 0);
	memcpy(&resp, buf + sizeof(resp), sizeof(resp));
	assert_int_equal(resp.for_id, 3);
	assert_int_equal(resp.status, 0);
	assert_int_equal(resp.payload_len, sizeof(FDS_PAYLOAD));
	assert_string_equal(buf + 2 * sizeof(resp), FDS_PAYLOAD);
	close(fd);
	server_stop(&s);
}

static uint8_t *flood_message(uint32_t id) {
	static uint8_t msg[FLOOD_MSG];
	struct gr_api_request req = {.id = id, .type = GR_SHM_ECHO, .payload_len = FLOOD_PAYLOAD};

	memcpy(msg, &req, sizeof(req));
	for (size_t i = sizeof(req); i < FLOOD_MSG; i++)
		msg[i] = (uint8_t)(i * 13);
	memcpy(msg + sizeof(req), &id, sizeof(id));
	return msg;
}

// Send from the flood until the socket stays full for stuck_ms. Returns the
// bytes sent so far; *offset is the position in the flood.
static size_t flood_until_stuck(int fd, size_t *offset, int stuck_ms) {
	size_t total = FLOOD_REQUESTS * FLOOD_MSG;
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};

	while (*offset < total) {
		size_t in_msg = *offset % FLOOD_MSG;
		const uint8_t *msg = flood_message(100 + (uint32_t)(*offset / FLOOD_MSG));
		ssize_t n = send(fd, msg + in_msg, FLOOD_MSG - in_msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			assert_int_equal(errno, EAGAIN);
			if (poll(&pfd, 1, stuck_ms) == 0)
				break;
			continue;
		}
		*offset += (size_t)n;
	}
	return *offset;
}

static void unread_output_pauses_client(void **state) {
	static uint8_t resp_buf[2 * FLOOD_MSG];
	size_t offset = 0, have = 0, sent;
	uint32_t next_id = 100;
	struct server s;
	int fd;

	(void)state;
	server_start(&s, "flood.sock", 0600);
	fd = client_connect(s.path);
	hello(fd);

	sent = flood_until_stuck(fd, &offset, STUCK_MS);
	print_message("client pushed %zu bytes before the server paused it\n", sent);
	assert_true(sent >= SOCK_OUTPUT_HIGH);
	assert_true(sent < FLOOD_MAX_UNREAD);

	// Read everything back, sending the rest as the server resumes.
	while (next_id < 100 + FLOOD_REQUESTS) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		struct gr_api_response resp;
		uint32_t echoed_id;
		ssize_t n;

		if (offset < FLOOD_REQUESTS * FLOOD_MSG)
			pfd.events |= POLLOUT;
		assert_int_equal(poll(&pfd, 1, WAIT_MS), 1);
		if (pfd.revents & POLLOUT)
			flood_until_stuck(fd, &offset, 0);
		if (!(pfd.revents & POLLIN))
			continue;
		n = recv(fd, resp_buf + have, sizeof(resp_buf) - have, MSG_DONTWAIT);
		assert_true(n > 0);
		have += (size_t)n;
		while (have >= FLOOD_MSG) {
			const uint8_t *expected = flood_message(next_id);
			memcpy(&resp, resp_buf, sizeof(resp));
			assert_int_equal(resp.for_id, next_id);
			assert_int_equal(resp.status, 0);
			assert_int_equal(resp.payload_len, FLOOD_PAYLOAD);
			memcpy(&echoed_id, resp_buf + sizeof(resp), sizeof(echoed_id));
			assert_int_equal(echoed_id, next_id);
			assert_memory_equal(
				resp_buf + sizeof(resp),
				expected + sizeof(resp),
				FLOOD_PAYLOAD
			);
			memmove(resp_buf, resp_buf + FLOOD_MSG, have - FLOOD_MSG);
			have -= FLOOD_MSG;
			next_id++;
		}
	}
	close(fd);
	server_stop(&s);
}

static void fds_behind_queued_output_closes(void **state) {
	struct gr_api_request reqs[2] = {
		{.id = 2, .type = TEST_FILL},
		{.id = 3, .type = TEST_FDS},
	};
	struct server s;
	char buf[65536];
	long n, total = 0;
	int fd;

	(void)state;
	server_start(&s, "fds-busy.sock", 0600);
	fd = client_connect(s.path);
	hello(fd);
	// One write, so both requests are served in one read callback: the fd
	// response finds the stream's output queued, more than the socket takes.
	write_all(fd, reqs, sizeof(reqs));
	// The fds cannot pass behind it: the server closes the connection
	// instead of answering, dropping what it had not written. Read nothing
	// before the close: a client reading meanwhile could drain the stream as
	// fast as the server writes it, and the fds would then pass (seen under
	// AddressSanitizer, where the server is slower).
	wait_fd(fd, POLLRDHUP, WAIT_MS);
	for (;;) {
		wait_fd(fd, POLLIN, WAIT_MS);
		n = recv(fd, buf, sizeof(buf), 0);
		assert_true(n >= 0);
		if (n == 0)
			break;
		total += n;
	}
	assert_true(total < (long)(FILL_RESPONSES * FILL_MSG));
	close(fd);
	server_stop(&s);
}

// A client that sent many requests at once does not keep another waiting
// until all of them are served: the server reads a bounded amount of one
// connection per turn of its loop, then serves the others. The busy client
// sends its burst; the server, serving the burst's first request (it has
// read what it reads of it at once), waits in the handler until the other
// client's request is there too; then every request left of the burst is
// either in the server's input already or still in the socket, and the
// other client's must come before the last of them.
static void busy_client_does_not_starve_another(void **state) {
	static struct {
		struct gr_api_request req;
		char tag;
	} __attribute__((packed)) burst[BURST_REQUESTS];
	struct {
		struct gr_api_request req;
		char tag;
	} __attribute__((packed)) quiet = {{.id = 2, .type = TEST_ORDER, .payload_len = 1}, 'B'};
	static char order[BURST_REQUESTS + 1];
	struct server s;
	size_t got = 0, position;
	int busy, other;

	(void)state;
	assert_int_equal(pipe2(order_pipe, O_CLOEXEC), 0);
	assert_int_equal(pipe2(order_go, O_CLOEXEC), 0);
	server_start(&s, "busy.sock", 0600);
	busy = client_connect(s.path);
	other = client_connect(s.path);
	hello(busy);
	hello(other);
	for (unsigned i = 0; i < BURST_REQUESTS; i++) {
		burst[i].req =
			(struct gr_api_request){.id = i + 2, .type = TEST_ORDER, .payload_len = 1};
		burst[i].tag = 'A';
	}

	write_all(busy, burst, sizeof(burst));
	// The server serves the burst's first request and waits.
	wait_fd(order_pipe[0], POLLIN, WAIT_MS);
	assert_int_equal(read(order_pipe[0], order, 1), 1);
	assert_int_equal(order[0], 'A');
	got = 1;
	write_all(other, &quiet, sizeof(quiet));
	assert_int_equal(write(order_go[1], "G", 1), 1);

	expect_response(other, 2, 0, 0);
	for (unsigned i = 0; i < BURST_REQUESTS; i++)
		expect_response(busy, i + 2, 0, 0);
	while (got < sizeof(order)) {
		ssize_t n;
		wait_fd(order_pipe[0], POLLIN, WAIT_MS);
		n = read(order_pipe[0], order + got, sizeof(order) - got);
		assert_true(n > 0);
		got += (size_t)n;
	}
	assert_non_null(memchr(order, 'B', sizeof(order)));
	position = (size_t)((char *)memchr(order, 'B', sizeof(order)) - order);
	print_message(
		"the other client was served after %zu of the %u requests\n",
		position,
		BURST_REQUESTS
	);
	assert_true(position < BURST_REQUESTS);
	close(busy);
	close(other);
	server_stop(&s);
	close(order_pipe[0]);
	close(order_pipe[1]);
	close(order_go[0]);
	close(order_go[1]);
}

static int setup(void **state) {
	(void)state;
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	assert_int_equal(dispatch_test_handlers(), 0);
	assert_int_equal(gr_api_server_handler_register(&lease_h), 0);
	assert_int_equal(api_table_register(&fds_table), 0);
	assert_int_equal(gr_api_server_handler_register(&fill_h), 0);
	assert_int_equal(gr_api_server_handler_register(&order_h), 0);
	assert_int_equal(gr_api_server_handler_register(&align_h), 0);
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
	close(running->lease_pipe);
	running = NULL;
	return 0;
}

static int teardown(void **state) {
	(void)state;
	return rmdir(tmpdir);
}

// A client that asked for a stream and went away without reading it: the
// server's writes to it fail with EPIPE, and the process the server runs
// in, which keeps SIGPIPE's default action (death), serves the next client
// and stops cleanly.
static void client_gone_raises_no_sigpipe(void **state) {
	struct server s;
	int fd;

	(void)state;
	server_start(&s, "sigpipe.sock", 0600);
	fd = client_connect(s.path);
	hello(fd);
	send_request(fd, 2, TEST_FILL, NULL, 0);
	// The stream is on its way: more of it waits in the server's output
	// than the socket holds.
	wait_fd(fd, POLLIN, WAIT_MS);
	close(fd);
	fd = client_connect(s.path);
	hello(fd);
	close(fd);
	server_stop(&s);
}

// Payloads of every length modulo the alignment, pipelined in one write:
// each reaches its handler aligned to GR_API_SERVER_PAYLOAD_ALIGN, so a
// struct with 8-byte fields is read in place.
static void payloads_aligned(void **state) {
	static uint8_t batch[ALIGN_REQUESTS * (sizeof(struct gr_api_request) + ALIGN_REQUESTS)];
	size_t len = 0;
	struct server s;
	int fd;

	(void)state;
	server_start(&s, "align.sock", 0600);
	fd = client_connect(s.path);
	hello(fd);
	for (uint32_t i = 0; i < ALIGN_REQUESTS; i++) {
		struct gr_api_request req = {.id = 10 + i, .type = TEST_ALIGN, .payload_len = i};

		memcpy(batch + len, &req, sizeof(req));
		len += sizeof(req) + i;
	}
	write_all(fd, batch, len);
	for (uint32_t i = 0; i < ALIGN_REQUESTS; i++)
		expect_response(fd, 10 + i, 0, 0);
	close(fd);
	server_stop(&s);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(path_rules, kill_leftover_server),
		cmocka_unit_test_teardown(stale_socket_replaced_live_refused, kill_leftover_server),
		cmocka_unit_test_teardown(mode_applied, kill_leftover_server),
		cmocka_unit_test_teardown(lease_lost_once_on_close, kill_leftover_server),
		cmocka_unit_test_teardown(lease_lost_at_shutdown, kill_leftover_server),
		cmocka_unit_test_teardown(fds_passed_with_response, kill_leftover_server),
		cmocka_unit_test_teardown(fds_follow_pipelined_response, kill_leftover_server),
		cmocka_unit_test_teardown(unread_output_pauses_client, kill_leftover_server),
		cmocka_unit_test_teardown(fds_behind_queued_output_closes, kill_leftover_server),
		cmocka_unit_test_teardown(client_gone_raises_no_sigpipe, kill_leftover_server),
		cmocka_unit_test_teardown(payloads_aligned, kill_leftover_server),
		cmocka_unit_test_teardown(
			busy_client_does_not_starve_another,
			kill_leftover_server
		),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
