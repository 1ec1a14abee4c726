// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// gr_api_server_start() and gr_api_server_stop() in one process, as an
// application calls them: on the library's thread, then on the test's own
// base, then on the library's thread again. Each start serves a client; a
// second start is refused; each stop removes the socket and leaves the
// process with the threads and descriptors it had before the start, and
// gr_api_server_info_get() refuses once stopped. A configuration out of
// bounds is refused with nothing started, and so are memzone channels
// asked of an EAL without hugepages, each said in a line that names the
// setting as the application calls it (the field by default). A handler
// for a request type the server serves itself is refused at registration,
// the server stopped or not, and later starts serve as usual. By default
// the socket is in the application's EAL runtime folder.

#include "log_capture_test.h"

#include <gr_api_server.h>

#include <rte_eal.h>

#include <event2/event.h>

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

// Every wait of the test is bounded by this.
#define WAIT_MS 5000

static char tmpdir[] = "/tmp/server_start_stop_test.XXXXXX";
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

// Entries of a /proc/self folder.
static unsigned entries(const char *dir) {
	const struct dirent *e;
	unsigned n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void conf_of_test(struct gr_api_server_conf *conf, struct event_base *base) {
	gr_api_server_conf_init(conf);
	conf->sock_path = sock_path;
	conf->sock_mode = 0600;
	conf->spin_us = 0;
	conf->log_type = "start_stop_test";
	conf->base = base;
}

// What one blocking recv() waits at most.
static void recv_timeout(int fd) {
	struct timeval tv = {.tv_sec = WAIT_MS / 1000};
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
}

// A hello, then a GR_PING2 answered with its payload. With base, this
// thread runs base's loop while it waits: the server is served there.
static void client_served(struct event_base *base) {
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct {
		struct gr_api_request hdr;
		struct gr_hello_req hello;
		struct gr_api_request ping_hdr;
		struct gr_ping2 ping;
	} __attribute__((packed)) out = {
		.hdr = {.id = 1, .type = GR_HELLO, .payload_len = sizeof(struct gr_hello_req)},
		.hello = {.api_version = GR_API_VERSION, .version = "start_stop_test"},
		.ping_hdr = {.id = 2, .type = GR_PING2, .payload_len = sizeof(struct gr_ping2)},
	};
	uint8_t in[2 * sizeof(struct gr_api_response) + sizeof(struct gr_ping2)];
	struct gr_api_response resp;
	size_t got = 0;
	int fd;

	memset(&out.ping, 0x5a, sizeof(out.ping));
	strcpy(addr.sun_path, sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	recv_timeout(fd);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(send(fd, &out, sizeof(out), MSG_NOSIGNAL), (ssize_t)sizeof(out));
	for (unsigned turns = 0; got < sizeof(in) && turns < WAIT_MS; turns++) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (base != NULL)
			event_base_loop(base, EVLOOP_NONBLOCK);
		if (poll(&pfd, 1, 1) != 1)
			continue;
		n = recv(fd, in + got, sizeof(in) - got, 0);
		assert_true(n > 0);
		got += (size_t)n;
	}
	assert_int_equal(got, sizeof(in));
	memcpy(&resp, in, sizeof(resp));
	assert_int_equal(resp.for_id, 1);
	assert_int_equal(resp.status, 0);
	memcpy(&resp, in + sizeof(resp) + resp.payload_len, sizeof(resp));
	assert_int_equal(resp.for_id, 2);
	assert_int_equal(resp.status, 0);
	assert_int_equal(resp.payload_len, sizeof(struct gr_ping2));
	assert_memory_equal(in + 2 * sizeof(resp), &out.ping, sizeof(out.ping));
	close(fd);
	if (base != NULL)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

// Start, serve, refuse a second start, stop: back to where it was.
static void serve_once(struct event_base *base) {
	unsigned threads = entries("/proc/self/task"), fds = entries("/proc/self/fd");
	struct gr_api_server_conf conf;
	struct gr_api_server_info info;

	conf_of_test(&conf, base);
	assert_int_equal(gr_api_server_info_get(&info), -ESRCH);
	assert_int_equal(gr_api_server_start(&conf), 0);
	assert_int_equal(gr_api_server_start(&conf), -EALREADY);
	assert_int_equal(gr_api_server_info_get(&info), 0);
	assert_string_equal(info.conf.sock_path, sock_path);
	assert_ptr_equal(info.conf.base, base);
	// The pollers, and the library's thread when it has no base.
	assert_int_equal(entries("/proc/self/task"), threads + conf.pollers + (base == NULL));
	client_served(base);
	assert_int_equal(gr_api_server_stop(), 0);
	assert_int_equal(access(sock_path, F_OK), -1);
	assert_int_equal(gr_api_server_info_get(&info), -ESRCH);
	assert_int_equal(entries("/proc/self/task"), threads);
	assert_int_equal(entries("/proc/self/fd"), fds);
	assert_int_equal(gr_api_server_stop(), 0); // again: nothing to do
}

// The default socket: in the application's EAL runtime folder, never
// shmchand's path; nothing to check before EAL.
static void default_socket_in_runtime_dir(void **state) {
	char expected[sizeof(sock_path)], test_path[sizeof(sock_path)];
	struct gr_api_server_conf conf;
	struct gr_api_server_info info;

	(void)state;
	gr_api_server_conf_init(&conf);
	assert_null(conf.sock_path);
	conf.sock_mode = 0600;
	conf.spin_us = 0;
	conf.log_type = "start_stop_test";
	assert_int_equal(gr_api_server_socket_check(&conf), 0);
	snprintf(
		expected,
		sizeof(expected),
		"%s/" GR_API_SERVER_SOCK_NAME,
		rte_eal_get_runtime_dir()
	);
	assert_int_equal(gr_api_server_start(&conf), 0);
	assert_int_equal(gr_api_server_info_get(&info), 0);
	assert_string_equal(info.conf.sock_path, expected);
	assert_string_not_equal(info.conf.sock_path, GR_API_DEFAULT_SOCK_PATH);
	memcpy(test_path, sock_path, sizeof(test_path));
	memcpy(sock_path, expected, sizeof(sock_path));
	client_served(NULL);
	assert_int_equal(gr_api_server_stop(), 0);
	assert_int_equal(access(expected, F_OK), -1);
	memcpy(sock_path, test_path, sizeof(sock_path));
}

static void library_thread_then_own_base_then_library_thread(void **state) {
	struct event_base *base = event_base_new();

	(void)state;
	assert_non_null(base);
	serve_once(NULL);
	serve_once(base);
	serve_once(NULL);
	event_base_free(base);
}

static void bad_conf_starts_nothing(void **state) {
	static const struct gr_api_server_conf_names names = {
		.pollers = "-p/--pollers",
		.memzones = "--hugepages on",
	};
	unsigned threads = entries("/proc/self/task");
	struct gr_api_server_conf conf;

	(void)state;
	assert_int_equal(gr_api_server_start(NULL), -EINVAL);
	conf_of_test(&conf, NULL);
	conf.pollers = GR_API_SERVER_MAX_POLLERS + 1;
	assert_int_equal(gr_api_server_start(&conf), -EINVAL);
	assert_int_equal(log_lines("conf.pollers is 17, not 1..16", NULL), 1);
	conf.names = &names;
	assert_int_equal(gr_api_server_start(&conf), -EINVAL);
	assert_int_equal(log_lines("-p/--pollers is 17, not 1..16", NULL), 1);
	// This EAL runs with --no-huge: no secondary could take a memzone.
	conf_of_test(&conf, NULL);
	conf.memzones = true;
	assert_int_equal(gr_api_server_start(&conf), -EINVAL);
	assert_int_equal(
		log_lines(
			"conf.memzones asks for memzone channels, but EAL runs without hugepages"
			" (--no-huge)",
			NULL
		),
		1
	);
	conf.names = &names;
	assert_int_equal(gr_api_server_start(&conf), -EINVAL);
	assert_int_equal(log_lines("--hugepages on asks for memzone channels", NULL), 1);
	conf_of_test(&conf, NULL);
	conf.event_backlog_bytes = GR_API_SERVER_EVENT_BYTES_MIN - 1;
	assert_int_equal(gr_api_server_start(&conf), -EINVAL);
	conf_of_test(&conf, NULL);
	conf.sock_path = "@abstract";
	assert_int_equal(gr_api_server_start(&conf), -EINVAL);
	assert_int_equal(entries("/proc/self/task"), threads);
	assert_int_equal(access(sock_path, F_OK), -1);
}

static struct gr_api_out own_ping2(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)len;
	(void)ctx;
	return gr_api_out_borrowed(0, sizeof(struct gr_ping2), request);
}

// A start that fails late (the socket cannot be bound, once the pollers
// run) undoes what it did: no thread, no descriptor, nothing registered of
// the server's.
static void failed_start_undone(void **state) {
	unsigned threads = entries("/proc/self/task"), fds = entries("/proc/self/fd");
	struct gr_api_server_conf conf;
	struct gr_api_server_info info;

	(void)state;
	conf_of_test(&conf, NULL);
	conf.sock_path = "/nonexistent/start_stop_test.sock";
	assert_int_equal(gr_api_server_start(&conf), -ENOENT);
	conf.base = event_base_new();
	assert_non_null(conf.base);
	assert_int_equal(gr_api_server_start(&conf), -ENOENT);
	event_base_free(conf.base);
	assert_int_equal(entries("/proc/self/task"), threads);
	assert_int_equal(entries("/proc/self/fd"), fds);
	assert_int_equal(gr_api_server_info_get(&info), -ESRCH);
	assert_int_equal(gr_api_server_info_get(NULL), -EINVAL);
}

// A handler for a type of the server's own (Grout's main module, the shm
// module) is refused when it is registered, stopped or running, and said;
// every later start serves, its own GR_PING2 answering. Before, the
// registration of a stopped server passed, and every start after it failed
// with EEXIST.
static void own_type_refused_at_registration(void **state) {
	static struct gr_api_handler ping_of_mine = {
		.name = "ping of mine",
		.request_type = GR_PING,
		.callback = own_ping2,
	};
	static struct gr_api_handler ping2_of_mine = {
		.name = "ping2 of mine",
		.request_type = GR_PING2,
		.callback = own_ping2,
	};
	struct gr_api_server_conf conf;

	(void)state;
	assert_int_equal(gr_api_server_handler_register(&ping_of_mine), -EEXIST);
	assert_int_equal(
		log_lines(
			"ping of mine: request type 0xcafe1987 is GR_PING, which the server serves"
			" itself: refused",
			NULL
		),
		1
	);
	conf_of_test(&conf, NULL);
	assert_int_equal(gr_api_server_start(&conf), 0);
	assert_int_equal(gr_api_server_handler_register(&ping2_of_mine), -EEXIST);
	client_served(NULL);
	assert_int_equal(gr_api_server_stop(), 0);
	assert_int_equal(gr_api_server_start(&conf), 0);
	client_served(NULL);
	assert_int_equal(gr_api_server_stop(), 0);
}

static int setup(void **state) {
	char prefix[64];
	char *eal_argv[] = {
		"start_stop_test",
		"--no-huge",
		"--no-shconf",
		"-m",
		"64",
		"--no-pci",
		"--no-telemetry",
		"-l",
		"0",
		"--file-prefix",
		prefix,
		"--log-level=*:warning",
		NULL,
	};

	(void)state;
	snprintf(prefix, sizeof(prefix), "start_stop_test-%d", (int)getpid());
	assert_true(rte_eal_init((int)(sizeof(eal_argv) / sizeof(eal_argv[0])) - 1, eal_argv) >= 0);
	assert_non_null(mkdtemp(tmpdir));
	snprintf(sock_path, sizeof(sock_path), "%s/s", tmpdir);
	return log_capture_setup(state);
}

static int teardown(void **state) {
	char runtime_dir[256];

	gr_api_server_stop();
	log_capture_teardown(state);
	rmdir(tmpdir);
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(runtime_dir);
	return 0;
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(library_thread_then_own_base_then_library_thread),
		cmocka_unit_test(bad_conf_starts_nothing),
		cmocka_unit_test(failed_start_undone),
		cmocka_unit_test(own_type_refused_at_registration),
		cmocka_unit_test(default_socket_in_runtime_dir),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
