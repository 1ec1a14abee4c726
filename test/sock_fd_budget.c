// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The daemon's open files are counted, not guessed (server/fd_budget.h):
//
//   sock_fd_budget SOCK DAEMON_PID count CONN_FDS CHANNEL_FDS
//     CLIENTS socket clients make the daemon hold CONN_FDS descriptors each
//     more, counted in /proc/DAEMON_PID/fd; CLIENTS clients with a memfd
//     channel CONN_FDS + CHANNEL_FDS each (the numbers the daemon says it
//     counts); once they are gone, the count is back where it was.
//   sock_fd_budget SOCK DAEMON_PID fill OTHER_UID
//     As root, against a daemon with a low RLIMIT_NOFILE and no per-peer
//     limits: a process of OTHER_UID connects (transport auto) until it is
//     refused. Its last attaches are refused with ENFILE and those clients
//     stay on the socket, then its connections are refused with ENFILE.
//     Root then connects GR_API_SERVER_ROOT_RESERVED clients, each served on a
//     channel: the room kept for root is there whatever the others took.
//     The daemon never reaches its limit.
//
// (run by sock_fd_budget.sh)

#include "check.h"

#include <gr_api.h>
#include <gr_api_client.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

// Clients of each kind the count mode opens.
#define CLIENTS 8
// The daemon's GR_API_SERVER_ROOT_RESERVED (server/gr_api_server.h): root's clients, each with a
// channel.
#define ROOT_CLIENTS 64
// Most clients the fill mode's other user opens before it expects a refusal.
#define FILL_MAX 1024
// A closed client's descriptors go after the daemon's grace period.
#define SETTLE_WAIT_MS 3000
#define SETTLE_POLL_US 10000
#define SETTLE_STEP_US 100000

static const char *sock_path;
static pid_t daemon_pid;

static struct gr_api_client *connect_on(enum gr_api_transport transport) {
	struct gr_api_client_opts opts = {
		.transport = transport,
		.spin_us = -1,
		.version = "sock_fd_budget",
	};
	return gr_api_client_connect_opts(sock_path, &opts);
}

static unsigned daemon_fds(void) {
	return proc_count_entries(daemon_pid, "fd");
}

// Wait until the daemon holds want descriptors; fail after SETTLE_WAIT_MS.
static void expect_daemon_fds(unsigned want, const char *what) {
	uint64_t deadline = monotonic_ns() + SETTLE_WAIT_MS * 1000000ull;
	unsigned n;

	while ((n = daemon_fds()) != want && monotonic_ns() < deadline)
		usleep(SETTLE_POLL_US);
	CHECK(n == want, "%s: the daemon holds %u descriptors, expected %u", what, n, want);
}

static void count(unsigned conn_fds, unsigned channel_fds) {
	struct gr_api_client *socket_clients[CLIENTS], *shm_clients[CLIENTS];
	// Earlier connections (the script's readiness probe) end a little later.
	unsigned base = proc_count_settled(daemon_pid, "fd", SETTLE_STEP_US);

	for (unsigned i = 0; i < CLIENTS; i++) {
		socket_clients[i] = connect_on(GR_API_TRANSPORT_SOCKET);
		CHECK(socket_clients[i] != NULL, "socket client %u: %s", i, strerror(errno));
	}
	expect_daemon_fds(base + CLIENTS * conn_fds, "socket clients");
	for (unsigned i = 0; i < CLIENTS; i++) {
		shm_clients[i] = connect_on(GR_API_TRANSPORT_SHM);
		CHECK(shm_clients[i] != NULL, "channel client %u: %s", i, strerror(errno));
	}
	expect_daemon_fds(
		base + CLIENTS * conn_fds + CLIENTS * (conn_fds + channel_fds),
		"clients with memfd channels"
	);
	printf("%u socket clients: %u descriptors each; %u with memfd channels: %u each\n",
	       CLIENTS,
	       conn_fds,
	       CLIENTS,
	       conn_fds + channel_fds);
	for (unsigned i = 0; i < CLIENTS; i++) {
		CHECK(gr_api_client_disconnect(socket_clients[i]) == 0, "disconnect");
		CHECK(gr_api_client_disconnect(shm_clients[i]) == 0, "disconnect");
	}
	expect_daemon_fds(base, "every client gone");
}

// What the other user got.
struct fill_result {
	unsigned on_shm;
	unsigned on_socket;
	int last_errno; // of the connect that failed
	bool attach_enfile; // a socket client's reason names ENFILE
};

// In a child of uid: connect until refused, report, hold until the parent
// closes its end of release.
static pid_t fill_as(uid_t uid, int result_fd, const int release[2]) {
	pid_t pid = child_fork();
	if (pid != 0)
		return pid;
	close(release[1]);
	struct fill_result r = {0};
	struct gr_api_client *c, *last_shm = NULL;
	char byte;

	CHECK(setresgid(uid, uid, uid) == 0 && setresuid(uid, uid, uid) == 0,
	      "setresuid %d: %s",
	      (int)uid,
	      strerror(errno));
	// The clients are held (never disconnected) until the process exits.
	for (unsigned n = 0; n < FILL_MAX && (c = connect_on(GR_API_TRANSPORT_AUTO)) != NULL; n++) {
		if (gr_api_client_transport(c) == GR_API_TRANSPORT_SHM) {
			r.on_shm++;
			last_shm = c;
			continue;
		}
		r.on_socket++;
		if (strstr(gr_api_client_transport_reason(c), strerror(ENFILE)) != NULL)
			r.attach_enfile = true;
	}
	r.last_errno = errno;
	// The room was a whole number of clients with channels (it depends on
	// what the daemon held at start): none was left for a connection
	// without one. Give one channel client back and take one socket
	// client: the room is then a connection and less than a channel, and
	// the next client connects but its attach is refused.
	if (r.on_socket == 0 && r.last_errno == ENFILE && last_shm != NULL) {
		CHECK(gr_api_client_disconnect(last_shm) == 0, "disconnect: %s", strerror(errno));
		r.on_shm--;
		// The daemon counts the channel's descriptors back once it has
		// freed them, after its grace period: a socket client admitted
		// before then would take the room of the connection alone.
		usleep(SETTLE_WAIT_MS * 1000);
		c = connect_on(GR_API_TRANSPORT_SOCKET);
		CHECK(c != NULL, "a socket client after a channel client left: %s", strerror(errno)
		);
		while ((c = connect_on(GR_API_TRANSPORT_AUTO)) != NULL) {
			if (gr_api_client_transport(c) == GR_API_TRANSPORT_SHM) {
				r.on_shm++;
				continue;
			}
			r.on_socket++;
			if (strstr(gr_api_client_transport_reason(c), strerror(ENFILE)) != NULL)
				r.attach_enfile = true;
		}
		r.last_errno = errno;
	}
	CHECK(write(result_fd, &r, sizeof(r)) == sizeof(r), "write: %s", strerror(errno));
	(void)!read(release[0], &byte, 1);
	_exit(EXIT_SUCCESS);
}

static void fill(uid_t other) {
	struct gr_api_client *root[ROOT_CLIENTS];
	int result[2], release[2];
	struct fill_result r;
	struct rlimit lim;

	if (geteuid() != 0) {
		printf("SKIP: filling the daemon as another uid needs root\n");
		exit(TEST_SKIP);
	}
	CHECK(pipe2(result, O_CLOEXEC) == 0 && pipe2(release, O_CLOEXEC) == 0, "pipe2");
	pid_t pid = fill_as(other, result[1], release);
	close(release[0]);
	CHECK(read(result[0], &r, sizeof(r)) == sizeof(r), "the client of uid %d died", (int)other);
	printf("uid %d: %u clients on channels, %u on the socket, then %s\n",
	       (int)other,
	       r.on_shm,
	       r.on_socket,
	       strerror(r.last_errno));
	CHECK(r.last_errno == ENFILE,
	      "uid %d: refused with %s, expected ENFILE",
	      (int)other,
	      strerror(r.last_errno));
	CHECK(r.on_shm > 0 && r.on_socket > 0 && r.attach_enfile,
	      "uid %d: expected channels, then attaches refused with ENFILE that stay on the"
	      " socket",
	      (int)other);

	for (unsigned i = 0; i < ROOT_CLIENTS; i++) {
		root[i] = connect_on(GR_API_TRANSPORT_AUTO);
		CHECK(root[i] != NULL, "root client %u: %s", i, strerror(errno));
		CHECK(gr_api_client_transport(root[i]) == GR_API_TRANSPORT_SHM,
		      "root client %u on the socket: %s",
		      i,
		      gr_api_client_transport_reason(root[i]));
		CHECK(gr_api_client_send_recv(root[i], GR_PING, 0, NULL, NULL) == 0,
		      "root client %u: ping: %s",
		      i,
		      strerror(errno));
	}
	CHECK(prlimit(daemon_pid, RLIMIT_NOFILE, NULL, &lim) == 0, "prlimit: %s", strerror(errno));
	unsigned n = daemon_fds();
	printf("root: %u clients on channels beside them; the daemon holds %u of its %llu"
	       " descriptors\n",
	       ROOT_CLIENTS,
	       n,
	       (unsigned long long)lim.rlim_cur);
	CHECK(n < lim.rlim_cur, "the daemon reached its limit");
	for (unsigned i = 0; i < ROOT_CLIENTS; i++)
		CHECK(gr_api_client_disconnect(root[i]) == 0, "disconnect");
	close(release[1]);
	int status = child_reap(pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the other uid's client failed");
}

static unsigned number_arg(const char *arg) {
	char *end;
	unsigned long v = strtoul(arg, &end, 10);
	CHECK(*end == '\0' && end != arg, "'%s' is not a number", arg);
	return (unsigned)v;
}

int main(int argc, char **argv) {
	CHECK(argc >= 4,
	      "usage: %s SOCK DAEMON_PID count CONN_FDS CHANNEL_FDS | fill OTHER_UID",
	      argv[0]);
	sock_path = argv[1];
	daemon_pid = (pid_t)number_arg(argv[2]);
	watchdog_start(TEST_WATCHDOG_S);
	children_guard();

	if (strcmp(argv[3], "count") == 0 && argc == 6)
		count(number_arg(argv[4]), number_arg(argv[5]));
	else if (strcmp(argv[3], "fill") == 0 && argc == 5)
		fill((uid_t)number_arg(argv[4]));
	else
		CHECK(false, "bad arguments");
	return EXIT_SUCCESS;
}
