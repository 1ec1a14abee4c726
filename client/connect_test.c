// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// gr_api_client_connect(): the hello it says, the errno of each failure and
// the reason gr_api_client_last_error() gives for it, the transport it
// ends on, and the defaults GR_API_CLIENT_OPTS_INIT gives, against a fake daemon listening on a
// socket of its own. The client connects from a thread; the test plays the daemon.

#include "fake_daemon.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

// The daemon's reads give up after this long instead of hanging the test.
#define READ_TIMEOUT_S 5

#define NSEC_PER_USEC 1000ull

struct listener {
	char dir[64];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int fd;
};

static int setup(void **state) {
	struct listener *l = calloc(1, sizeof(*l));
	assert_non_null(l);
	snprintf(l->dir, sizeof(l->dir), "/tmp/client-connect-test.XXXXXX");
	assert_non_null(mkdtemp(l->dir));
	snprintf(l->path, sizeof(l->path), "%s/sock", l->dir);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", l->path);
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(l->fd >= 0);
	assert_int_equal(bind(l->fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(l->fd, 1), 0);
	assert_int_equal(unsetenv("GR_API_TRANSPORT"), 0);
	*state = l;
	return 0;
}

static int teardown(void **state) {
	struct listener *l = *state;
	close(l->fd);
	unlink(l->path);
	rmdir(l->dir);
	free(l);
	return 0;
}

struct connector {
	pthread_t thread;
	const char *path;
	const struct gr_api_client_opts *opts; // NULL: gr_api_client_connect()
	struct gr_api_client *client;
	int err;
	char why[512]; // gr_api_client_last_error() in the connecting thread
};

static void *connector_run(void *arg) {
	struct connector *cn = arg;
	if (cn->opts == NULL)
		cn->client = gr_api_client_connect(cn->path);
	else
		cn->client = gr_api_client_connect_opts(cn->path, cn->opts);
	cn->err = errno;
	snprintf(cn->why, sizeof(cn->why), "%s", gr_api_client_last_error());
	return NULL;
}

// The version gr_api_client_connect() says in its hello.
#define DEFAULT_VERSION "shmchan-client " SHMCHAN_VERSION

// Start a connect and accept it: d is the daemon's end, no client.
static void connect_start(
	struct listener *l,
	struct connector *cn,
	struct fake_daemon *d,
	const struct gr_api_client_opts *opts
) {
	*cn = (struct connector){.path = l->path, .opts = opts};
	assert_int_equal(pthread_create(&cn->thread, NULL, connector_run, cn), 0);
	fake_daemon_init_sock(d, accept4(l->fd, NULL, NULL, SOCK_CLOEXEC));
	assert_true(d->sock >= 0);
	struct timeval tv = {.tv_sec = READ_TIMEOUT_S};
	assert_int_equal(setsockopt(d->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
}

// Join the connect, which must have succeeded: the client is d's from now
// on, and fake_daemon_fini() disconnects it.
static struct gr_api_client *connect_ok(struct connector *cn, struct fake_daemon *d) {
	assert_int_equal(pthread_join(cn->thread, NULL), 0);
	assert_non_null(cn->client);
	assert_string_equal(cn->why, "");
	d->client = cn->client;
	return cn->client;
}

// The reason of a failed connect says what.
static void why_says(const char *why, const char *what) {
	if (strstr(why, what) == NULL)
		fail_msg("reason \"%s\" does not say \"%s\"", why, what);
}

// Join the connect, which must have failed with err, saying what.
static void connect_fails(struct connector *cn, int err, const char *what) {
	assert_int_equal(pthread_join(cn->thread, NULL), 0);
	assert_null(cn->client);
	assert_int_equal(cn->err, err);
	why_says(cn->why, what);
}

// Read the hello of request id, which must name api_version and version,
// and answer it with status and len bytes of resp.
static void daemon_hello_at(
	struct fake_daemon *d,
	uint32_t id,
	uint32_t api_version,
	const char *version,
	uint32_t status,
	const void *resp,
	size_t len
) {
	struct gr_api_request hdr;
	struct gr_hello_req hello;
	fake_daemon_read_all(d->sock, &hdr, sizeof(hdr));
	assert_int_equal(hdr.type, GR_HELLO);
	assert_int_equal(hdr.id, id);
	assert_int_equal(hdr.payload_len, sizeof(hello));
	fake_daemon_read_all(d->sock, &hello, sizeof(hello));
	assert_int_equal(hello.api_version, api_version);
	assert_non_null(memchr(hello.version, '\0', sizeof(hello.version)));
	assert_string_equal(hello.version, version);
	fake_daemon_write(d, hdr.id, status, resp, len, NULL, 0);
}

// The first hello, in shmchan's version, answered with status.
static void daemon_hello(struct fake_daemon *d, const char *version, uint32_t status) {
	daemon_hello_at(d, 1, GR_API_VERSION, version, status, NULL, 0);
}

// Read the attach request (the client's request id) and answer with status.
static void daemon_attach_refuse_at(struct fake_daemon *d, uint32_t id, uint32_t status) {
	fake_daemon_read_attach(d);
	fake_daemon_write(d, id, status, NULL, 0, NULL, 0);
}

// The attach after the first hello (id 2).
static void daemon_attach_refuse(struct fake_daemon *d, uint32_t status) {
	daemon_attach_refuse_at(d, 2, status);
}

static void daemon_attach_answer(struct fake_daemon *d, uint32_t layout_version) {
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_read_attach(d);
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	resp.layout_version = layout_version;
	fake_daemon_write(d, 2, 0, &resp, sizeof(resp), fds, 3);
}

// A ping on the socket and its answer: the client is on the socket and the
// daemon sees a ping, not an attach request.
static void ping_on_socket(struct fake_daemon *d, struct gr_api_client *c) {
	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_true(id > 0);
	struct gr_api_request hdr;
	fake_daemon_read_all(d->sock, &hdr, sizeof(hdr));
	assert_int_equal(hdr.type, GR_PING);
	assert_int_equal(hdr.id, id);
	fake_daemon_write(d, hdr.id, 0, NULL, 0, NULL, 0);
	assert_int_equal(gr_api_client_recv_len(c, (uint32_t)id, NULL), 0);
}

static void socket_by_env(void **state) {
	struct listener *l = *state;
	struct connector cn;
	struct fake_daemon d;
	assert_int_equal(setenv("GR_API_TRANSPORT", "socket", 1), 0);
	connect_start(l, &cn, &d, NULL);
	daemon_hello(&d, DEFAULT_VERSION, 0);
	struct gr_api_client *c = connect_ok(&cn, &d);
	assert_int_equal(gr_api_client_transport(c), GR_API_TRANSPORT_SOCKET);
	assert_string_not_equal(gr_api_client_transport_reason(c), "");
	ping_on_socket(&d, c);
	fake_daemon_fini(&d);
	assert_int_equal(unsetenv("GR_API_TRANSPORT"), 0);
}

static void custom_version(void **state) {
	struct listener *l = *state;
	struct connector cn;
	struct fake_daemon d;
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SOCKET,
		.spin_us = -1,
		.version = "my-controller 2.3",
	};
	connect_start(l, &cn, &d, &opts);
	daemon_hello(&d, "my-controller 2.3", 0);
	ping_on_socket(&d, connect_ok(&cn, &d));
	fake_daemon_fini(&d);
}

// A daemon that speaks none of the versions: three hellos on the one
// connection, shmchan's then Grout's main then v0.17.0's, all refused.
static void version_mismatch(void **state) {
	struct listener *l = *state;
	struct connector cn;
	struct fake_daemon d;
	connect_start(l, &cn, &d, NULL);
	daemon_hello(&d, DEFAULT_VERSION, EBADMSG);
	daemon_hello_at(&d, 2, GR_API_VERSION_GROUT_MAIN, DEFAULT_VERSION, EBADMSG, NULL, 0);
	daemon_hello_at(&d, 3, GR_API_VERSION_GROUT_0_17, DEFAULT_VERSION, EBADMSG, NULL, 0);
	connect_fails(&cn, EBADMSG, "refused API versions 1, 10 and 9 (EBADMSG)");
	fake_daemon_fini(&d);
}

// After the hello a Grout daemon accepted: it answers the attach (request
// attach_id, of a module it does not know) ENOTSUP. The client stays on the
// socket with no error, and keeps the version and the hello response.
static void grout_daemon_connected(
	struct connector *cn,
	struct fake_daemon *d,
	uint32_t attach_id,
	uint32_t api_version,
	uint16_t max_ifaces
) {
	daemon_attach_refuse_at(d, attach_id, ENOTSUP);
	struct gr_api_client *c = connect_ok(cn, d);
	assert_int_equal(gr_api_client_transport(c), GR_API_TRANSPORT_SOCKET);
	assert_int_equal(gr_api_client_api_version(c), api_version);
	assert_non_null(gr_api_client_info(c));
	assert_int_equal(gr_api_client_info(c)->max_ifaces, max_ifaces);
	ping_on_socket(d, c);
	fake_daemon_fini(d);
}

// A daemon as Grout's main branch: it refuses shmchan's version, takes its
// own with its hello response.
static void grout_main_daemon(void **state) {
	struct listener *l = *state;
	struct gr_hello_resp resp = {.max_ifaces = 1024};
	struct connector cn;
	struct fake_daemon d;
	connect_start(l, &cn, &d, NULL);
	daemon_hello(&d, DEFAULT_VERSION, EBADMSG);
	daemon_hello_at(&d, 2, GR_API_VERSION_GROUT_MAIN, DEFAULT_VERSION, 0, &resp, sizeof(resp));
	grout_daemon_connected(&cn, &d, 3, GR_API_VERSION_GROUT_MAIN, 1024);
}

// A daemon as Grout v0.17.0: it takes version 9 alone, with an empty hello
// response.
static void grout_0_17_daemon(void **state) {
	struct listener *l = *state;
	struct connector cn;
	struct fake_daemon d;
	connect_start(l, &cn, &d, NULL);
	daemon_hello(&d, DEFAULT_VERSION, EBADMSG);
	daemon_hello_at(&d, 2, GR_API_VERSION_GROUT_MAIN, DEFAULT_VERSION, EBADMSG, NULL, 0);
	daemon_hello_at(&d, 3, GR_API_VERSION_GROUT_0_17, DEFAULT_VERSION, 0, NULL, 0);
	grout_daemon_connected(&cn, &d, 4, GR_API_VERSION_GROUT_0_17, 0);
}

static void auto_falls_back(void **state) {
	struct listener *l = *state;
	struct connector cn;
	struct fake_daemon d;
	connect_start(l, &cn, &d, NULL);
	daemon_hello(&d, DEFAULT_VERSION, 0);
	daemon_attach_refuse(&d, ENOTSUP);
	struct gr_api_client *c = connect_ok(&cn, &d);
	assert_int_equal(gr_api_client_transport(c), GR_API_TRANSPORT_SOCKET);
	assert_string_equal(
		gr_api_client_transport_reason(c),
		"daemon offers no shared-memory channel (ENOTSUP)"
	);
	ping_on_socket(&d, c);
	fake_daemon_fini(&d);
}

static void shm_forced_not_offered(void **state) {
	struct listener *l = *state;
	struct connector cn;
	struct fake_daemon d;
	struct gr_api_client_opts opts = {.transport = GR_API_TRANSPORT_SHM, .spin_us = -1};
	connect_start(l, &cn, &d, &opts);
	daemon_hello(&d, DEFAULT_VERSION, 0);
	daemon_attach_refuse(&d, ENOTSUP);
	connect_fails(
		&cn,
		ENOTSUP,
		"shm forced, but no channel: daemon offers no shared-memory channel"
	);
	fake_daemon_fini(&d);
}

static void shm_forced_layout_mismatch(void **state) {
	struct listener *l = *state;
	struct connector cn;
	struct fake_daemon d;
	assert_int_equal(setenv("GR_API_TRANSPORT", "shm", 1), 0);
	connect_start(l, &cn, &d, NULL);
	daemon_hello(&d, DEFAULT_VERSION, 0);
	daemon_attach_answer(&d, SHMCHAN_LAYOUT_VERSION + 1);
	// The channel it cannot use is given back before the connect fails.
	fake_daemon_read_detach(&d);
	fake_daemon_write(&d, 3, 0, NULL, 0, NULL, 0);
	connect_fails(&cn, EPROTO, "shm forced, but no channel: layout version mismatch");
	fake_daemon_fini(&d);
	assert_int_equal(unsetenv("GR_API_TRANSPORT"), 0);
}

// Attached: a request goes through the request ring, not the socket.
static void auto_attaches(void **state) {
	struct listener *l = *state;
	struct connector cn;
	struct fake_daemon d;
	connect_start(l, &cn, &d, NULL);
	daemon_hello(&d, DEFAULT_VERSION, 0);
	daemon_attach_answer(&d, SHMCHAN_LAYOUT_VERSION);
	struct gr_api_client *c = connect_ok(&cn, &d);
	assert_int_equal(gr_api_client_transport(c), GR_API_TRANSPORT_SHM);
	assert_string_equal(gr_api_client_transport_reason(c), "");
	assert_int_equal(gr_api_client_api_version(c), GR_API_VERSION);
	assert_int_equal(gr_api_client_info(c)->max_ifaces, 0);

	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	assert_true(id > 0);
	struct gr_api_request hdr;
	assert_int_equal(shmchan_server_recv(d.server, &hdr, sizeof(hdr)), sizeof(hdr));
	assert_int_equal(hdr.type, GR_PING);
	assert_int_equal(hdr.id, id);
	struct gr_api_response resp = {.for_id = hdr.id};
	assert_int_equal(shmchan_server_send(d.server, &resp, sizeof(resp), NULL, 0), 0);
	assert_int_equal(gr_api_client_recv_len(c, (uint32_t)id, NULL), 0);
	fake_daemon_fini(&d);
}

// Connect with opts (NULL: gr_api_client_connect()) and let the fake daemon
// take the hello, which must say the default version, and, when attach is
// set, refuse the attach the client must then ask for. Returns the handle,
// d's to disconnect.
static struct gr_api_client *connect_default_like(
	struct listener *l,
	struct fake_daemon *d,
	const struct gr_api_client_opts *opts,
	bool attach
) {
	struct connector cn;
	connect_start(l, &cn, d, opts);
	daemon_hello(d, DEFAULT_VERSION, 0);
	if (attach)
		daemon_attach_refuse(d, ENOTSUP);
	return connect_ok(&cn, d);
}

// What a handle took from its options: the transport the connect chose,
// its timeout and its spin budget.
static void handles_alike(const struct gr_api_client *a, const struct gr_api_client *b) {
	assert_int_equal(gr_api_client_transport(a), gr_api_client_transport(b));
	assert_string_equal(gr_api_client_transport_reason(a), gr_api_client_transport_reason(b));
	assert_int_equal(gr_api_client_timeout_ms(a), gr_api_client_timeout_ms(b));
	assert_int_equal(a->spin.adaptive, b->spin.adaptive);
	assert_int_equal(a->spin.max_ns, b->spin.max_ns);
	assert_int_equal(a->spin.budget_ns, b->spin.budget_ns);
}

// GR_API_CLIENT_OPTS_INIT is what gr_api_client_connect() does with no
// options, field by field: the same hello version, the environment deciding
// the transport and the timeout, and the adaptive spin, which a
// zero-initialised struct does not have.
static void opts_init_is_connect_default(void **state) {
	struct listener *l = *state;
	const struct gr_api_client_opts init = GR_API_CLIENT_OPTS_INIT;
	const struct gr_api_client_opts zero = {0};
	struct fake_daemon d_default, d_init, d_zero;
	assert_int_equal(unsetenv("GR_API_TIMEOUT_MS"), 0);

	// No environment: both ask for a channel (auto) and get the same
	// handle.
	struct gr_api_client *c_default = connect_default_like(l, &d_default, NULL, true);
	struct gr_api_client *c_init = connect_default_like(l, &d_init, &init, true);
	handles_alike(c_default, c_init);
	assert_true(c_init->spin.adaptive);
	assert_int_equal(
		c_init->spin.max_ns,
		(uint64_t)GR_API_CLIENT_SPIN_US_DEFAULT * NSEC_PER_USEC
	);
	// The trap the macro avoids: a zero-initialised struct sleeps at once.
	struct gr_api_client *c_zero = connect_default_like(l, &d_zero, &zero, true);
	assert_false(c_zero->spin.adaptive);
	assert_int_equal(c_zero->spin.budget_ns, 0);
	fake_daemon_fini(&d_zero);
	fake_daemon_fini(&d_init);
	fake_daemon_fini(&d_default);

	// The environment decides the transport and the timeout of both.
	assert_int_equal(setenv("GR_API_TRANSPORT", "socket", 1), 0);
	assert_int_equal(setenv("GR_API_TIMEOUT_MS", "1234", 1), 0);
	c_default = connect_default_like(l, &d_default, NULL, false);
	c_init = connect_default_like(l, &d_init, &init, false);
	handles_alike(c_default, c_init);
	assert_int_equal(gr_api_client_transport(c_init), GR_API_TRANSPORT_SOCKET);
	assert_int_equal(gr_api_client_timeout_ms(c_init), 1234);
	fake_daemon_fini(&d_init);
	fake_daemon_fini(&d_default);
	assert_int_equal(unsetenv("GR_API_TRANSPORT"), 0);
	assert_int_equal(unsetenv("GR_API_TIMEOUT_MS"), 0);
}

static void no_daemon(void **state) {
	struct listener *l = *state;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/none", l->dir);
	errno = 0;
	assert_null(gr_api_client_connect(path));
	assert_int_equal(errno, ENOENT);
	why_says(gr_api_client_last_error(), "no socket at ");
	why_says(gr_api_client_last_error(), path);

	// A socket file nobody listens on any more.
	close(l->fd);
	l->fd = -1;
	errno = 0;
	assert_null(gr_api_client_connect(l->path));
	assert_int_equal(errno, ECONNREFUSED);
	why_says(gr_api_client_last_error(), "nobody listens on ");
}

static void bad_transport_env(void **state) {
	struct listener *l = *state;
	assert_int_equal(setenv("GR_API_TRANSPORT", "fast", 1), 0);
	errno = 0;
	assert_null(gr_api_client_connect(l->path));
	assert_int_equal(errno, EINVAL);
	why_says(
		gr_api_client_last_error(),
		"GR_API_TRANSPORT=\"fast\": accepted values are auto, shm and socket"
	);
	assert_int_equal(unsetenv("GR_API_TRANSPORT"), 0);
}

// The uid and gid a root test drops to: nobody and nogroup.
#define UNPRIVILEGED_ID 65534

// In a child that is not root (dropped to UNPRIVILEGED_ID when the test
// runs as root, which no mode stops): connecting to a socket of mode 0660
// fails with EACCES and names the mode, the owner and the group. Exits 0
// when it does.
static void permission_child(const char *path) {
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) < 0 || setgid(UNPRIVILEGED_ID) < 0 || setuid(UNPRIVILEGED_ID) < 0))
		_exit(2);
	errno = 0;
	struct gr_api_client *c = gr_api_client_connect(path);
	const char *why = gr_api_client_last_error();
	if (c != NULL || errno != EACCES) {
		fprintf(stderr, "connect: %p, %s\n", (void *)c, strerror(errno));
		_exit(1);
	}
	if (strstr(why, "permission denied: mode 0660, owner ") == NULL ||
	    strstr(why, "group ") == NULL) {
		fprintf(stderr, "reason: %s\n", why);
		_exit(1);
	}
	_exit(0);
}

static void permission_denied(void **state) {
	struct listener *l = *state;
	// The child must reach the socket: its folder (0700 from mkdtemp)
	// opens for search. As non-root the owner loses write on the socket.
	assert_int_equal(chmod(l->dir, 0755), 0);
	if (geteuid() == 0)
		assert_int_equal(chown(l->path, 0, 0), 0);
	assert_int_equal(chmod(l->path, geteuid() == 0 ? 0660 : 0440), 0);
	if (geteuid() != 0) {
		// The mode the reason names is the file's: 0440 here.
		errno = 0;
		assert_null(gr_api_client_connect(l->path));
		assert_int_equal(errno, EACCES);
		why_says(gr_api_client_last_error(), "permission denied: mode 0440, owner ");
		return;
	}
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		permission_child(l->path);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void path_too_long(void **state) {
	(void)state;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	memset(path, 'x', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	errno = 0;
	assert_null(gr_api_client_connect(path));
	assert_int_equal(errno, EINVAL);
	why_says(gr_api_client_last_error(), "socket path of 108 bytes, at most 107");
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(socket_by_env, setup, teardown),
		cmocka_unit_test_setup_teardown(custom_version, setup, teardown),
		cmocka_unit_test_setup_teardown(version_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(grout_main_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(grout_0_17_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(auto_falls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(shm_forced_not_offered, setup, teardown),
		cmocka_unit_test_setup_teardown(shm_forced_layout_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(auto_attaches, setup, teardown),
		cmocka_unit_test_setup_teardown(opts_init_is_connect_default, setup, teardown),
		cmocka_unit_test_setup_teardown(no_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(path_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_transport_env, setup, teardown),
		cmocka_unit_test_setup_teardown(permission_denied, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
