// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Per-peer connection limits of the daemon (--max-conn-per-pid,
// --max-conn-per-uid): one process, or one user, cannot take every
// connection the daemon serves and lock the others out.
//
//   sock_conn_limits SOCK pid PER_PID
//     A hog process opens HOG_CONNS connections, saying hello on each at
//     once: exactly PER_PID are served, every other one is answered EMFILE
//     (and gr_api_client_connect() in the hog fails with EMFILE). Meanwhile
//     another process connects, attaches a channel and is served on it.
//   sock_conn_limits SOCK uid PER_PID PER_UID OTHER_UID
//     As root: two processes of OTHER_UID (not root) take connections until
//     refused: the first gets PER_PID, then EMFILE; the second gets
//     PER_UID - PER_PID, then EUSERS. Root and OTHER_UID - 1 still connect.
//   sock_conn_limits SOCK reuse PER_PID
//     As root: a process opens PER_PID connections (one more is refused
//     EMFILE), passes them to this one, which keeps them, and exits; the next
//     process to get its pid (/proc/sys/kernel/ns_last_pid) is served: the
//     cap counts the process that connected, not a number that came back.
//
// (run by sock_conn_limits.sh)

#include "check.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

// More than the server's GR_API_SERVER_MAX_CLIENTS (1024): today's hog took them all.
#define HOG_CONNS 1100
// Descriptors this process needs besides the hog's connections.
#define FDS_MARGIN 64
// Bound of one connect, of the wait for every hog answer, and of the
// victim's connect, attach and ping.
#define CONNECT_TIMEOUT_MS 2000
#define ANSWERS_WAIT_MS 10000
#define VICTIM_WAIT_S 5
// Most connections a uid-mode client takes before it expects a refusal.
#define TAKE_MAX 512
// A refused connection that has not said hello yet: its hello comes this
// late and is still answered; one that never says it is closed within
// SILENT_CLOSE_MS (the daemon waits 1 s, SOCK_REFUSE_WAIT_MS).
#define LATE_HELLO_MS 200
#define SILENT_CLOSE_MS 3000
// The reuse case: the most connections it passes, and how often it tries to
// have the kernel give the pid again (another process may take it first).
// Before that it waits longer than a tick of the clock that dates a process's
// start (USER_HZ: 100 a second), so that the new process starts later. A
// process that took the pid and lives on (on a host busy with other forks)
// keeps it from every try: after REUSE_TRIES the case starts over with a new
// first process, at most REUSE_ROUNDS times.
#define REUSE_CONNS_MAX 16
#define REUSE_TRIES 20
#define REUSE_ROUNDS 20
#define REUSE_AFTER_US 30000
#define NS_LAST_PID "/proc/sys/kernel/ns_last_pid"

static const char *sock_path;

// What the hog saw on its connections.
struct hog_result {
	unsigned served; // hello answered 0
	unsigned emfile; // hello answered EMFILE
	unsigned other_status; // hello answered another error
	unsigned closed; // closed without an answer
	unsigned silent; // no answer within ANSWERS_WAIT_MS
	unsigned not_connected; // connect() failed
	int lib_errno; // errno of one more gr_api_client_connect()
	uint32_t late_status; // answer to a hello sent LATE_HELLO_MS after connect
	int silent_end; // recv() of a connection that says nothing: 0 at EOF
	unsigned silent_end_ms; // and how long it took
};

static void raise_fd_limit(rlim_t want) {
	struct rlimit lim;

	CHECK(getrlimit(RLIMIT_NOFILE, &lim) == 0, "getrlimit: %s", strerror(errno));
	if (lim.rlim_cur >= want)
		return;
	if (lim.rlim_max < want && geteuid() == 0)
		lim.rlim_max = want;
	if (lim.rlim_max < want) {
		printf("SKIP: open files limited to %llu, need %llu\n",
		       (unsigned long long)lim.rlim_max,
		       (unsigned long long)want);
		exit(TEST_SKIP);
	}
	lim.rlim_cur = want;
	CHECK(setrlimit(RLIMIT_NOFILE, &lim) == 0, "setrlimit: %s", strerror(errno));
}

// A connected socket, or -1 if connect() failed or took longer than
// CONNECT_TIMEOUT_MS (the daemon's listen backlog full).
static int connect_bounded(void) {
	struct timeval tv = {.tv_sec = CONNECT_TIMEOUT_MS / 1000};
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0, "socket: %s", strerror(errno));
	CHECK(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == 0,
	      "SO_SNDTIMEO: %s",
	      strerror(errno));
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock_path);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool send_hello(int fd, uint32_t id) {
	struct {
		struct gr_api_request hdr;
		struct gr_hello_req hello;
	} __attribute__((packed)) msg = {
		.hdr = {.id = id, .type = GR_HELLO, .payload_len = sizeof(struct gr_hello_req)},
		.hello = {.api_version = GR_API_VERSION, .version = "sock_conn_limits hog"},
	};
	return send(fd, &msg, sizeof(msg), MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof(msg);
}

static struct gr_api_client *connect_socket(void) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SOCKET,
		.spin_us = -1,
		.version = "sock_conn_limits",
	};
	return gr_api_client_connect_opts(sock_path, &opts);
}

// Sort each hog connection by the answer to its hello: the first 12 bytes
// it gets, EOF, or nothing within the bound.
static void hog_collect(struct pollfd *pfd, unsigned n, struct hog_result *r) {
	uint64_t deadline = monotonic_ns() + ANSWERS_WAIT_MS * 1000000ull;
	unsigned left = n;

	while (left > 0 && monotonic_ns() < deadline) {
		int ready = poll(pfd, n, 100);
		CHECK(ready >= 0 || errno == EINTR, "poll: %s", strerror(errno));
		for (unsigned i = 0; i < n && ready > 0; i++) {
			struct gr_api_response resp;
			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			ssize_t got = recv(pfd[i].fd, &resp, sizeof(resp), MSG_DONTWAIT);
			if (got < 0 && errno == EAGAIN)
				continue;
			if (got != (ssize_t)sizeof(resp))
				r->closed++;
			else if (resp.status == 0)
				r->served++;
			else if (resp.status == EMFILE)
				r->emfile++;
			else
				r->other_status++;
			// Served ones stay open: the hog holds them. The others
			// are closed by the daemon: stop watching them.
			if (got != (ssize_t)sizeof(resp) || resp.status != 0)
				close(pfd[i].fd);
			pfd[i].fd = -(pfd[i].fd + 1);
			left--;
		}
	}
	r->silent = left;
}

// The hog: HOG_CONNS connections, hello on each, all kept open; its result
// goes to result_fd, and it holds its connections until release_fd closes.
static void hog_main(int result_fd, int release_fd) {
	struct pollfd *pfd = calloc(HOG_CONNS, sizeof(*pfd));
	struct hog_result r = {0};
	unsigned n = 0;
	char byte;

	CHECK(pfd != NULL, "calloc");
	for (unsigned i = 0; i < HOG_CONNS; i++) {
		int fd = connect_bounded();
		if (fd < 0 || !send_hello(fd, 1)) {
			if (fd >= 0)
				close(fd);
			r.not_connected++;
			continue;
		}
		pfd[n].fd = fd;
		pfd[n].events = POLLIN;
		n++;
	}
	hog_collect(pfd, n, &r);

	// Refused connections that do not say hello at once.
	struct gr_api_response resp = {0};
	int late = connect_bounded();
	CHECK(late >= 0, "hog: late connect");
	usleep(LATE_HELLO_MS * 1000);
	CHECK(send_hello(late, 1), "hog: late hello: %s", strerror(errno));
	struct timeval tv = {.tv_sec = SILENT_CLOSE_MS / 1000};
	CHECK(setsockopt(late, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0, "SO_RCVTIMEO");
	if (recv(late, &resp, sizeof(resp), MSG_WAITALL) == (ssize_t)sizeof(resp))
		r.late_status = resp.status;
	close(late);
	int silent = connect_bounded();
	CHECK(silent >= 0, "hog: silent connect");
	CHECK(setsockopt(silent, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0, "SO_RCVTIMEO");
	uint64_t start = monotonic_ns();
	r.silent_end = (int)recv(silent, &resp, sizeof(resp), 0);
	r.silent_end_ms = (unsigned)((monotonic_ns() - start) / 1000000);
	close(silent);

	errno = 0;
	struct gr_api_client *c = connect_socket();
	r.lib_errno = c == NULL ? errno : 0;
	gr_api_client_disconnect(c);
	CHECK(write(result_fd, &r, sizeof(r)) == sizeof(r), "hog: write: %s", strerror(errno));
	(void)!read(release_fd, &byte, 1);
	_exit(EXIT_SUCCESS);
}

// Another process, while the hog holds its connections: connect (auto),
// attach a channel, be served on it.
static void victim_main(void) {
	struct gr_api_client_opts opts = {.spin_us = -1, .version = "sock_conn_limits victim"};
	struct gr_shm_stats_resp stats;

	watchdog_start(VICTIM_WAIT_S);
	struct gr_api_client *c = gr_api_client_connect_opts(sock_path, &opts);
	CHECK(c != NULL, "victim: connect beside the hog: %s", strerror(errno));
	CHECK(gr_api_client_transport(c) == GR_API_TRANSPORT_SHM,
	      "victim: no channel: %s",
	      gr_api_client_transport_reason(c));
	long id = gr_api_client_send(c, GR_SHM_STATS, 0, NULL);
	CHECK(id > 0, "victim: send: %s", strerror(errno));
	long len = gr_api_client_recv_into(c, (uint32_t)id, &stats, sizeof(stats));
	CHECK(len == (long)sizeof(stats), "victim: GR_SHM_STATS: %s", strerror(errno));
	CHECK(stats.channels == 1, "victim: %u channels", stats.channels);
	CHECK(gr_api_client_disconnect(c) == 0, "victim: disconnect: %s", strerror(errno));
	printf("victim: connected, attached a channel and was served beside the hog\n");
	fflush(stdout);
	_exit(EXIT_SUCCESS);
}

static void pid_limit(unsigned per_pid) {
	int result[2], release[2];
	struct hog_result r;

	raise_fd_limit(HOG_CONNS + FDS_MARGIN);
	CHECK(pipe2(result, O_CLOEXEC) == 0 && pipe2(release, O_CLOEXEC) == 0, "pipe2");
	pid_t hog = child_fork();
	if (hog == 0) {
		close(release[1]);
		hog_main(result[1], release[0]);
	}
	close(release[0]);
	CHECK(read(result[0], &r, sizeof(r)) == sizeof(r), "the hog died");
	printf("hog: %u connections served, %u refused EMFILE, %u other errors, %u closed"
	       " without an answer, %u unanswered, %u not connected; one more connect: %s\n",
	       r.served,
	       r.emfile,
	       r.other_status,
	       r.closed,
	       r.silent,
	       r.not_connected,
	       strerror(r.lib_errno));

	// Beside the hog, holding what it was given.
	pid_t victim = child_fork();
	if (victim == 0)
		victim_main();
	int status = child_reap(victim);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the victim failed (%#x)", status);

	CHECK(r.served == per_pid, "the hog was served %u connections, limit %u", r.served, per_pid
	);
	CHECK(r.emfile == HOG_CONNS - per_pid,
	      "%u of the hog's %u extra connections refused with EMFILE",
	      r.emfile,
	      HOG_CONNS - per_pid);
	CHECK(r.lib_errno == EMFILE,
	      "gr_api_client_connect() past the limit: %s, expected EMFILE",
	      strerror(r.lib_errno));
	CHECK(r.late_status == EMFILE,
	      "a hello %d ms after connect was answered %u, expected EMFILE",
	      LATE_HELLO_MS,
	      r.late_status);
	CHECK(r.silent_end == 0,
	      "a refused connection that said nothing: recv %d after %u ms, expected EOF",
	      r.silent_end,
	      r.silent_end_ms);
	printf("hog: a late hello answered EMFILE; a silent connection closed after %u ms\n",
	       r.silent_end_ms);
	close(release[1]);
	status = child_reap(hog);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the hog failed (%#x)", status);
}

// In a child of uid: take connections until one is refused; expect want of
// them and then errno err. Holds them until release[1] closes. Writes 1 to
// done_fd once it has its answer.
static pid_t take_as(uid_t uid, unsigned want, int err, int done_fd, const int release[2]) {
	pid_t pid = child_fork();
	if (pid != 0)
		return pid;
	close(release[1]);
	int release_fd = release[0];
	static struct gr_api_client *held[TAKE_MAX];
	unsigned n = 0;
	char byte = 1;

	CHECK(setresgid(uid, uid, uid) == 0 && setresuid(uid, uid, uid) == 0,
	      "setresuid %d: %s",
	      (int)uid,
	      strerror(errno));
	while (n < TAKE_MAX && (held[n] = connect_socket()) != NULL)
		n++;
	int got = errno;
	CHECK(n == want, "uid %d: %u connections served, expected %u", (int)uid, n, want);
	CHECK(got == err,
	      "uid %d: connection %u refused with %s, expected %s",
	      (int)uid,
	      n + 1,
	      strerror(got),
	      strerror(err));
	printf("uid %d: %u connections, then %s\n", (int)uid, n, strerror(got));
	fflush(stdout);
	CHECK(write(done_fd, &byte, 1) == 1, "write");
	(void)!read(release_fd, &byte, 1);
	_exit(EXIT_SUCCESS);
}

static void expect_served(uid_t uid, const char *what) {
	pid_t pid = child_fork();
	if (pid == 0) {
		if (uid != 0)
			CHECK(setresgid(uid, uid, uid) == 0 && setresuid(uid, uid, uid) == 0,
			      "setresuid %d: %s",
			      (int)uid,
			      strerror(errno));
		struct gr_api_client *c = connect_socket();
		CHECK(c != NULL, "%s: connect: %s", what, strerror(errno));
		CHECK(gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL) == 0,
		      "%s: ping: %s",
		      what,
		      strerror(errno));
		gr_api_client_disconnect(c);
		printf("%s: served\n", what);
		fflush(stdout);
		_exit(EXIT_SUCCESS);
	}
	int status = child_reap(pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed (%#x)", what, status);
}

static void uid_limit(unsigned per_pid, unsigned per_uid, uid_t other) {
	int done[2], release[2];
	char byte;

	if (geteuid() != 0) {
		printf("SKIP: the uid limit needs root (to run clients of another uid)\n");
		exit(TEST_SKIP);
	}
	CHECK(per_pid < per_uid && per_uid - per_pid < per_pid && per_uid <= TAKE_MAX,
	      "limits %u per pid, %u per uid do not make the test",
	      per_pid,
	      per_uid);
	CHECK(pipe2(done, O_CLOEXEC) == 0 && pipe2(release, O_CLOEXEC) == 0, "pipe2");
	pid_t first = take_as(other, per_pid, EMFILE, done[1], release);
	CHECK(read(done[0], &byte, 1) == 1, "the first client of uid %d died", (int)other);
	pid_t second = take_as(other, per_uid - per_pid, EUSERS, done[1], release);
	CHECK(read(done[0], &byte, 1) == 1, "the second client of uid %d died", (int)other);
	expect_served(0, "root, beside a uid at its limit");
	expect_served(other - 1, "another uid, beside a uid at its limit");
	close(release[1]);
	for (pid_t pid = first; pid != 0; pid = pid == first ? second : 0) {
		int status = child_reap(pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "a client of uid %d failed (%#x)",
		      (int)other,
		      status);
	}
}

// The status of the hello on a new connection, or UINT32_MAX if it was not
// answered; the connection in *fd (closed if not answered).
static uint32_t hello_status(int *fd) {
	struct timeval tv = {.tv_sec = CONNECT_TIMEOUT_MS / 1000};
	struct gr_api_response resp;

	*fd = connect_bounded();
	CHECK(*fd >= 0, "connect: %s", strerror(errno));
	CHECK(setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0, "SO_RCVTIMEO");
	if (!send_hello(*fd, 1) || recv(*fd, &resp, sizeof(resp), MSG_WAITALL) != sizeof(resp)) {
		close(*fd);
		*fd = -1;
		return UINT32_MAX;
	}
	return resp.status;
}

// Send n descriptors over the socket to.
static void fds_send(int to, const int *fds, unsigned n) {
	char control[CMSG_SPACE(REUSE_CONNS_MAX * sizeof(int))] = {0};
	char byte = 0;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control,
		.msg_controllen = CMSG_SPACE(n * sizeof(int)),
	};
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cmsg), fds, n * sizeof(int));
	CHECK(sendmsg(to, &msg, 0) == 1, "sendmsg: %s", strerror(errno));
}

// Receive the descriptors of fds_send() into fds (REUSE_CONNS_MAX); returns
// how many.
static unsigned fds_recv(int from, int *fds) {
	char control[CMSG_SPACE(REUSE_CONNS_MAX * sizeof(int))];
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control,
		.msg_controllen = sizeof(control),
	};

	CHECK(recvmsg(from, &msg, MSG_CMSG_CLOEXEC) == 1, "recvmsg: %s", strerror(errno));
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
	CHECK(cmsg != NULL && cmsg->cmsg_type == SCM_RIGHTS, "no descriptors passed");
	unsigned n = (unsigned)((cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int));
	memcpy(fds, CMSG_DATA(cmsg), n * sizeof(int));
	return n;
}

// The first process: PER_PID connections, one more refused, then passed.
static void reuse_first(int to, unsigned per_pid) {
	int fds[REUSE_CONNS_MAX], extra;

	for (unsigned i = 0; i < per_pid; i++)
		CHECK(hello_status(&fds[i]) == 0, "first process: connection %u not served", i);
	CHECK(hello_status(&extra) == EMFILE, "first process: connection %u not refused", per_pid);
	close(extra);
	fds_send(to, fds, per_pid);
	_exit(EXIT_SUCCESS);
}

// Have the kernel give pid to the next fork: a process of this pid namespace
// with CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE) may set the last pid given.
static bool next_pid_is(pid_t pid) {
	FILE *f = fopen(NS_LAST_PID, "w");

	if (f == NULL)
		return false;
	bool ok = fprintf(f, "%d", (int)pid - 1) > 0;
	return fclose(f) == 0 && ok;
}

// One try of the case: a first process's connections, passed here, then
// its pid again in a second process. Returns false when other processes
// took the pid at every try (the caller starts over).
static bool pid_reuse_once(unsigned per_pid) {
	int pair[2], fds[REUSE_CONNS_MAX];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0, "socketpair");
	pid_t first = child_fork();
	if (first == 0)
		reuse_first(pair[1], per_pid);
	// Its connections, kept here: the daemon counts them for its pid.
	CHECK(fds_recv(pair[0], fds) == per_pid, "the first process passed another count");
	int status = child_reap(first);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the first process failed");
	close(pair[0]);
	close(pair[1]);
	usleep(REUSE_AFTER_US);

	for (unsigned tries = 0;; tries++) {
		if (!next_pid_is(first)) {
			printf("SKIP: %s: %s\n", NS_LAST_PID, strerror(errno));
			exit(TEST_SKIP);
		}
		pid_t second = child_fork();
		if (second == 0) {
			int fd;
			if (getpid() != first)
				_exit(2); // another process took it: try again
			uint32_t st = hello_status(&fd);
			printf("pid %d again, in another process: hello answered %s\n",
			       (int)getpid(),
			       st == UINT32_MAX ? "nothing" : strerror((int)st));
			fflush(stdout);
			_exit(st == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
		}
		status = child_reap(second);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
			if (tries < REUSE_TRIES)
				continue;
			for (unsigned i = 0; i < per_pid; i++)
				close(fds[i]);
			return false;
		}
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the second process of pid %d was refused (status %#x): the first one's"
		      " connections, held by another process, count against it",
		      (int)first,
		      status);
		return true;
	}
}

static void pid_reuse(unsigned per_pid) {
	if (geteuid() != 0) {
		printf("SKIP: giving a pid again needs root (%s)\n", NS_LAST_PID);
		exit(TEST_SKIP);
	}
	CHECK(per_pid <= REUSE_CONNS_MAX, "at most %d connections", REUSE_CONNS_MAX);
	for (unsigned round = 1; !pid_reuse_once(per_pid); round++)
		CHECK(round < REUSE_ROUNDS,
		      "%d first processes in a row saw their pid taken by another process",
		      REUSE_ROUNDS);
}

static unsigned number_arg(const char *arg) {
	char *end;
	unsigned long v = strtoul(arg, &end, 10);
	CHECK(*end == '\0' && end != arg && v > 0, "'%s' is not a positive number", arg);
	return (unsigned)v;
}

int main(int argc, char **argv) {
	CHECK(argc >= 3,
	      "usage: %s SOCK pid PER_PID | uid PER_PID PER_UID OTHER_UID | reuse PER_PID",
	      argv[0]);
	sock_path = argv[1];
	watchdog_start(TEST_WATCHDOG_S);
	children_guard();

	if (strcmp(argv[2], "pid") == 0 && argc == 4)
		pid_limit(number_arg(argv[3]));
	else if (strcmp(argv[2], "reuse") == 0 && argc == 4)
		pid_reuse(number_arg(argv[3]));
	else if (strcmp(argv[2], "uid") == 0 && argc == 6)
		uid_limit(number_arg(argv[3]), number_arg(argv[4]), (uid_t)number_arg(argv[5]));
	else
		CHECK(false, "bad arguments");
	return EXIT_SUCCESS;
}
