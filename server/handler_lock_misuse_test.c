// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The calls that would wait for their own caller refuse at once instead:
// gr_api_server_lock() in a handler, or a second time on one thread, and
// gr_api_server_handler_register(), gr_api_server_start() and
// gr_api_server_stop() there too, return -EDEADLK; gr_api_server_unlock()
// without the lock (in a handler too) returns -EPERM, releasing nothing;
// gr_api_server_stop() off the thread of conf.base's loop returns -EPERM.
// Each says why in the log. The handler's client is answered, the server
// serves on, and the stop that follows returns with every thread gone, on
// the library's thread and on the test's own base. Before, the handler's
// lock waited for ever, and so did every stop after it.

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

#define TEST_MISUSE GR_MSG_TYPE(0x7e5a, 1)
#define TEST_LATE GR_MSG_TYPE(0x7e5a, 2)
// Every wait of the test is bounded by this.
#define WAIT_MS 5000

// What TEST_MISUSE's handler got from each call, in its response.
struct misuse_results {
	int32_t lock;
	int32_t unlock;
	int32_t register_;
	int32_t start;
	int32_t stop;
};

static char tmpdir[] = "/tmp/server_handler_lock_misuse_test.XXXXXX";
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

static unsigned threads_now(void) {
	const struct dirent *e;
	unsigned n = 0;
	DIR *d = opendir("/proc/self/task");

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
	conf->log_type = "handler_lock_misuse_test";
	conf->base = base;
}

static struct gr_api_out late(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(0, 0, NULL);
}

static struct gr_api_handler late_h = {
	.name = "TEST_LATE",
	.request_type = TEST_LATE,
	.callback = late};

static struct gr_api_out misuse(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	struct misuse_results *r = malloc(sizeof(*r));
	struct gr_api_server_conf conf;

	(void)request;
	(void)len;
	(void)ctx;
	if (r == NULL)
		return gr_api_out(ENOMEM, 0, NULL);
	conf_of_test(&conf, NULL);
	r->lock = gr_api_server_lock();
	r->unlock = gr_api_server_unlock();
	r->register_ = gr_api_server_handler_register(&late_h);
	r->start = gr_api_server_start(&conf);
	r->stop = gr_api_server_stop();
	return gr_api_out(0, sizeof(*r), r);
}

static struct gr_api_handler misuse_h = {
	.name = "TEST_MISUSE",
	.request_type = TEST_MISUSE,
	.callback = misuse,
};

// Read len bytes from fd; with base, this thread runs base's loop while it
// waits, as the server is served there.
static void read_all(int fd, void *buf, size_t len, struct event_base *base) {
	size_t got = 0;

	for (unsigned turns = 0; got < len && turns < WAIT_MS; turns++) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (base != NULL)
			event_base_loop(base, EVLOOP_NONBLOCK);
		if (poll(&pfd, 1, 1) != 1)
			continue;
		n = recv(fd, (char *)buf + got, len - got, 0);
		assert_true(n > 0);
		got += (size_t)n;
	}
	assert_int_equal(got, len);
}

// A client says hello, sends TEST_MISUSE, then GR_PING: both answered.
// Returns what the handler's calls returned.
static struct misuse_results misuse_in_handler(struct event_base *base) {
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct {
		struct gr_api_request hdr;
		struct gr_hello_req hello;
		struct gr_api_request misuse;
		struct gr_api_request ping;
	} __attribute__((packed)) out = {
		.hdr = {.id = 1, .type = GR_HELLO, .payload_len = sizeof(struct gr_hello_req)},
		.hello = {.api_version = GR_API_VERSION, .version = "handler_lock_misuse_test"},
		.misuse = {.id = 2, .type = TEST_MISUSE},
		.ping = {.id = 3, .type = GR_PING},
	};
	struct gr_api_response resp;
	struct misuse_results r;
	int fd;

	strcpy(addr.sun_path, sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(send(fd, &out, sizeof(out), MSG_NOSIGNAL), (ssize_t)sizeof(out));
	read_all(fd, &resp, sizeof(resp), base);
	assert_int_equal(resp.for_id, 1);
	assert_int_equal(resp.status, 0);
	read_all(fd, &resp, sizeof(resp), base);
	assert_int_equal(resp.for_id, 2);
	assert_int_equal(resp.status, 0);
	assert_int_equal(resp.payload_len, sizeof(r));
	read_all(fd, &r, sizeof(r), base);
	read_all(fd, &resp, sizeof(resp), base);
	assert_int_equal(resp.for_id, 3);
	assert_int_equal(resp.status, 0);
	close(fd);
	if (base != NULL)
		event_base_loop(base, EVLOOP_NONBLOCK);
	return r;
}

static void refused_in_handler(struct event_base *base) {
	unsigned threads = threads_now();
	struct gr_api_server_conf conf;
	struct misuse_results r;

	conf_of_test(&conf, base);
	assert_int_equal(gr_api_server_start(&conf), 0);
	r = misuse_in_handler(base);
	assert_int_equal(r.lock, -EDEADLK);
	assert_int_equal(r.unlock, -EPERM);
	assert_int_equal(r.register_, -EDEADLK);
	assert_int_equal(r.start, -EDEADLK);
	assert_int_equal(r.stop, -EDEADLK);
	assert_true(log_lines("gr_api_server_lock() in a handler", "refused (EDEADLK)") >= 1);
	assert_true(log_lines("gr_api_server_stop() in a handler", "refused (EDEADLK)") >= 1);
	assert_int_equal(gr_api_server_stop(), 0);
	assert_int_equal(threads_now(), threads);
	assert_int_equal(access(sock_path, F_OK), -1);
}

static void refused_in_handler_library_thread(void **state) {
	(void)state;
	refused_in_handler(NULL);
}

static void refused_in_handler_own_base(void **state) {
	struct event_base *base = event_base_new();

	(void)state;
	assert_non_null(base);
	refused_in_handler(base);
	event_base_free(base);
}

// The application's own thread, holding the lock: what would wait for it
// refuses; an unlock it does not hold refuses too.
static void refused_with_lock_held(void **state) {
	struct gr_api_server_conf conf;

	(void)state;
	conf_of_test(&conf, NULL);
	assert_int_equal(gr_api_server_lock(), 0);
	assert_int_equal(gr_api_server_lock(), -EDEADLK);
	assert_int_equal(gr_api_server_handler_register(&late_h), -EDEADLK);
	assert_int_equal(gr_api_server_start(&conf), -EDEADLK);
	assert_int_equal(gr_api_server_stop(), -EDEADLK);
	assert_int_equal(gr_api_server_unlock(), 0);
	assert_int_equal(gr_api_server_unlock(), -EPERM);
	// The first of each kind on this thread: logged at once.
	assert_int_equal(
		log_lines("gr_api_server_lock() with the handler lock held", "not recursive"),
		1
	);
	assert_int_equal(
		log_lines(
			"gr_api_server_unlock() without gr_api_server_lock() on this thread",
			NULL
		),
		1
	);
	// Free again: a registration takes it.
	assert_int_equal(gr_api_server_handler_register(&late_h), 0);
}

static void *stop_elsewhere(void *arg) {
	*(int *)arg = gr_api_server_stop();
	return NULL;
}

// With conf.base, the stop belongs to the thread of its loop: from another
// it refuses, and the server serves on.
static void stop_off_the_loop_thread_refused(void **state) {
	struct event_base *base = event_base_new();
	struct gr_api_server_conf conf;
	struct misuse_results r;
	pthread_t thread;
	int ret = 0;

	(void)state;
	assert_non_null(base);
	conf_of_test(&conf, base);
	assert_int_equal(gr_api_server_start(&conf), 0);
	assert_int_equal(pthread_create(&thread, NULL, stop_elsewhere, &ret), 0);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(ret, -EPERM);
	r = misuse_in_handler(base);
	assert_int_equal(r.stop, -EDEADLK);
	assert_int_equal(gr_api_server_stop(), 0);
	event_base_free(base);
}

static int setup(void **state) {
	char prefix[64];
	char *eal_argv[] = {
		"handler_lock_misuse_test",
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

	snprintf(prefix, sizeof(prefix), "handler_lock_misuse_test-%d", (int)getpid());
	assert_true(rte_eal_init((int)(sizeof(eal_argv) / sizeof(eal_argv[0])) - 1, eal_argv) >= 0);
	assert_non_null(mkdtemp(tmpdir));
	snprintf(sock_path, sizeof(sock_path), "%s/s", tmpdir);
	assert_int_equal(gr_api_server_handler_register(&misuse_h), 0);
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
	// The library's thread first: its handler's lines are the first of
	// their kinds there, logged at once (the log is counted as a whole).
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refused_with_lock_held),
		cmocka_unit_test(refused_in_handler_library_thread),
		cmocka_unit_test(refused_in_handler_own_base),
		cmocka_unit_test(stop_off_the_loop_thread_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
